//! The variants the server plays.

use std::fmt;
use std::str::FromStr;

/// Which rules a position follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Variant {
    /// FIDE chess.
    Standard,
    /// Every capture explodes; see `docs/rules.md`.
    #[default]
    Atomic,
    /// Fog of war (dark chess): no check, capture the king to win, each side
    /// sees only what its pieces reach.
    Fog,
}

impl Variant {
    pub const ALL: [Variant; 3] = [Variant::Standard, Variant::Atomic, Variant::Fog];

    /// The lowercase name used on the wire, on the command line, in
    /// subjects, pool names and the archive: `standard`, `atomic`, `fog`.
    /// [`Variant::from_name`] reads it back.
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Standard => "standard",
            Variant::Atomic => "atomic",
            Variant::Fog => "fog",
        }
    }

    /// The variant [`Variant::name`] names, spelled exactly so; `None`
    /// for anything else. [`FromStr`] is the lenient reader for people.
    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|variant| variant.name() == name)
    }

    /// The name in a sentence: `standard`, `atomic`, `fog of war`.
    pub const fn prose_name(self) -> &'static str {
        match self {
            Variant::Fog => "fog of war",
            _ => self.name(),
        }
    }

    /// Lichess's key of the variant (its API's `variant` parameter and
    /// `variant.key`): `standard`, `chess960`, `atomic`, `fogOfWar`. Only
    /// standard chess has a Chess960 key of its own.
    pub const fn lichess_key(self, chess960: bool) -> &'static str {
        match (self, chess960) {
            (Variant::Standard, false) => "standard",
            (Variant::Standard, true) => "chess960",
            (Variant::Atomic, _) => "atomic",
            (Variant::Fog, _) => "fogOfWar",
        }
    }

    /// The variant a lichess key names, and whether it is Chess960; `None`
    /// for a key this server does not play.
    pub fn from_lichess_key(key: &str) -> Option<(Variant, bool)> {
        Variant::ALL
            .into_iter()
            .flat_map(|variant| [(variant, false), (variant, true)])
            .find(|&(variant, chess960)| variant.lichess_key(chess960) == key)
            .map(|(variant, chess960)| (variant, chess960 && variant == Variant::Standard))
    }

    /// Lichess's display name, as in its API's `variant.name` and the PGN
    /// `Variant` tag: `Standard`, `Chess960`, `Atomic`, `Fog of War`.
    pub const fn lichess_name(self, chess960: bool) -> &'static str {
        match (self, chess960) {
            (Variant::Standard, false) => "Standard",
            (Variant::Standard, true) => "Chess960",
            (Variant::Atomic, _) => "Atomic",
            (Variant::Fog, _) => "Fog of War",
        }
    }

    /// Lichess's short name (`variant.short`): `Std`, `960`, `Atom`, `Fog`.
    pub const fn lichess_short_name(self, chess960: bool) -> &'static str {
        match (self, chess960) {
            (Variant::Standard, false) => "Std",
            (Variant::Standard, true) => "960",
            (Variant::Atomic, _) => "Atom",
            (Variant::Fog, _) => "Fog",
        }
    }

    /// The value of the UCI option `UCI_Variant`: `chess`, `atomic`, `fog`.
    pub const fn uci_name(self) -> &'static str {
        match self {
            Variant::Standard => "chess",
            _ => self.name(),
        }
    }

    /// Whether Chess960 starting positions may be used.
    pub const fn allows_chess960(self) -> bool {
        !matches!(self, Variant::Fog)
    }

    /// Whether a side may leave its king attacked (no check).
    pub const fn has_check(self) -> bool {
        !matches!(self, Variant::Fog)
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a variant.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown variant {0:?} (expected standard, atomic or fog)")]
pub struct ParseVariantError(pub String);

impl FromStr for Variant {
    type Err = ParseVariantError;

    fn from_str(s: &str) -> Result<Variant, ParseVariantError> {
        let lower = s.to_ascii_lowercase();
        let alias = match lower.as_str() {
            "chess" => Some(Variant::Standard),
            "fogofwar" | "fog-of-war" | "dark" => Some(Variant::Fog),
            _ => None,
        };
        Variant::from_name(&lower).or(alias).ok_or_else(|| ParseVariantError(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_as_its_variant() {
        for variant in Variant::ALL {
            assert_eq!(Variant::from_name(variant.name()), Some(variant));
            assert_eq!(variant.name().parse(), Ok(variant));
            assert_eq!(variant.to_string(), variant.name());
            for chess960 in [false, true] {
                let key = variant.lichess_key(chess960);
                let played = chess960 && variant == Variant::Standard;
                assert_eq!(Variant::from_lichess_key(key), Some((variant, played)), "{key}");
            }
        }
        let names: Vec<_> = Variant::ALL.map(Variant::name).into();
        assert_eq!(names, ["standard", "atomic", "fog"]);
    }

    #[test]
    fn each_spelling_keeps_its_own_names() {
        let spell = |f: fn(Variant) -> &'static str| Variant::ALL.map(f);
        assert_eq!(spell(Variant::prose_name), ["standard", "atomic", "fog of war"]);
        assert_eq!(spell(Variant::uci_name), ["chess", "atomic", "fog"]);
        assert_eq!(spell(|v| v.lichess_key(false)), ["standard", "atomic", "fogOfWar"]);
        assert_eq!(spell(|v| v.lichess_key(true)), ["chess960", "atomic", "fogOfWar"]);
        assert_eq!(spell(|v| v.lichess_name(false)), ["Standard", "Atomic", "Fog of War"]);
        assert_eq!(spell(|v| v.lichess_name(true)), ["Chess960", "Atomic", "Fog of War"]);
        assert_eq!(spell(|v| v.lichess_short_name(false)), ["Std", "Atom", "Fog"]);
        assert_eq!(spell(|v| v.lichess_short_name(true)), ["960", "Atom", "Fog"]);
    }

    #[test]
    fn exact_names_are_exact_and_the_lenient_reader_takes_aliases() {
        for other in ["", "Atomic", "chess", "fogOfWar", "unspecified", "crazyhouse"] {
            assert_eq!(Variant::from_name(other), None, "{other}");
        }
        assert_eq!(Variant::from_lichess_key("fog"), None);
        assert_eq!("Atomic".parse(), Ok(Variant::Atomic));
        assert_eq!("CHESS".parse(), Ok(Variant::Standard));
        for fog in ["fog", "FogOfWar", "fog-of-war", "dark"] {
            assert_eq!(fog.parse(), Ok(Variant::Fog), "{fog}");
        }
        assert_eq!("crazyhouse".parse::<Variant>(), Err(ParseVariantError("crazyhouse".into())));
    }
}
