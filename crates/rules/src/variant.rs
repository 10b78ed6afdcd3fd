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

    /// The lowercase name used on the wire and on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Standard => "standard",
            Variant::Atomic => "atomic",
            Variant::Fog => "fog",
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
        match s.to_ascii_lowercase().as_str() {
            "standard" | "chess" => Ok(Variant::Standard),
            "atomic" => Ok(Variant::Atomic),
            "fog" | "fogofwar" | "fog-of-war" | "dark" => Ok(Variant::Fog),
            _ => Err(ParseVariantError(s.to_owned())),
        }
    }
}
