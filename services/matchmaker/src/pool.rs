//! What a pool is: the seeks that may be paired together, those of one
//! variant, one clock and one kind (rated or casual). A pool's name is how
//! it appears in Redis keys, leases and metrics, so it is made and read
//! back in one place, and checked like any input.

use fogblast_proto::game::{ClockSettings, Variant};

/// One pool's identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PoolKey {
    pub variant: Variant,
    /// `(initial_ms, increment_ms)`; `None` for games without a clock.
    pub clock: Option<(u32, u32)>,
    pub rated: bool,
}

/// The variant as the protocol spells it (the rules' name), in pool names
/// and records; `unspecified` for one a message left unset.
pub fn variant_name(variant: Variant) -> &'static str {
    fogblast_rules::Variant::try_from(variant).map_or("unspecified", fogblast_rules::Variant::name)
}

/// The variant [`variant_name`] names; `None` for anything else, and for
/// `unspecified`.
pub fn variant_from_name(name: &str) -> Option<Variant> {
    fogblast_rules::Variant::from_name(name).map(Variant::from)
}

impl PoolKey {
    pub fn new(variant: Variant, clock: Option<&ClockSettings>, rated: bool) -> PoolKey {
        PoolKey { variant, clock: clock.map(|c| (c.initial_ms, c.increment_ms)), rated }
    }

    pub fn clock_settings(&self) -> Option<ClockSettings> {
        self.clock.map(|(initial_ms, increment_ms)| ClockSettings { initial_ms, increment_ms })
    }

    /// `atomic-180000+2000-rated`, `fog-none-casual`.
    pub fn name(&self) -> String {
        let clock = match self.clock {
            Some((initial, increment)) => format!("{initial}+{increment}"),
            None => "none".to_owned(),
        };
        let kind = if self.rated { "rated" } else { "casual" };
        format!("{}-{clock}-{kind}", variant_name(self.variant))
    }

    /// Reads a name made by [`PoolKey::name`]; `None` for anything else.
    pub fn parse(name: &str) -> Option<PoolKey> {
        let mut parts = name.split('-');
        let (variant, clock, kind) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let variant = variant_from_name(variant)?;
        let clock = match clock {
            "none" => None,
            text => {
                let (initial, increment) = text.split_once('+')?;
                Some((initial.parse().ok()?, increment.parse().ok()?))
            }
        };
        let rated = match kind {
            "rated" => true,
            "casual" => false,
            _ => return None,
        };
        Some(PoolKey { variant, clock, rated })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_junk_is_refused() {
        for key in [
            PoolKey { variant: Variant::Atomic, clock: Some((180_000, 2_000)), rated: true },
            PoolKey { variant: Variant::Fog, clock: None, rated: false },
            PoolKey { variant: Variant::Standard, clock: Some((60_000, 0)), rated: false },
        ] {
            assert_eq!(PoolKey::parse(&key.name()), Some(key));
        }
        assert_eq!(
            PoolKey { variant: Variant::Atomic, clock: Some((180_000, 2_000)), rated: true }.name(),
            "atomic-180000+2000-rated"
        );
        for junk in
            ["", "atomic", "atomic-none", "chess-none-rated", "fog-1+x-rated", "fog-none-maybe", "fog-none-rated-x"]
        {
            assert_eq!(PoolKey::parse(junk), None, "{junk}");
        }
    }

    #[test]
    fn variants_are_named_as_the_protocol_names_them() {
        let names = [Variant::Standard, Variant::Atomic, Variant::Fog, Variant::Unspecified].map(variant_name);
        assert_eq!(names, ["standard", "atomic", "fog", "unspecified"]);
        for variant in [Variant::Standard, Variant::Atomic, Variant::Fog] {
            assert_eq!(variant_from_name(variant_name(variant)), Some(variant));
        }
        assert_eq!(variant_from_name("unspecified"), None);
        assert_eq!(PoolKey::parse("unspecified-none-casual"), None);
    }
}
