//! The vocabulary of PGN tag values that both the writer and the reader
//! must agree on: results, time controls, the names of the variants, and
//! how tag values and names are written safely.

use std::fmt;
use std::str::FromStr;

use fogblast_rules::{Outcome, Variant};

/// A game's result as PGN writes it, in the `Result` tag and at the end of
/// the movetext.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GameResult {
    /// `1-0`
    WhiteWins,
    /// `0-1`
    BlackWins,
    /// `1/2-1/2`
    Draw,
    /// `*`: unfinished, abandoned without a decision, or unknown.
    #[default]
    Unknown,
}

impl GameResult {
    /// The PGN token: `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub const fn as_str(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
            GameResult::Unknown => "*",
        }
    }

    /// The result of a game that ended with `outcome`, or `*` without one.
    pub fn from_outcome(outcome: Option<Outcome>) -> GameResult {
        outcome.map_or(GameResult::Unknown, GameResult::from)
    }
}

impl From<Outcome> for GameResult {
    fn from(outcome: Outcome) -> GameResult {
        match outcome.winner() {
            Some(fogblast_rules::Color::White) => GameResult::WhiteWins,
            Some(fogblast_rules::Color::Black) => GameResult::BlackWins,
            None => GameResult::Draw,
        }
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Text that is not a PGN result.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a PGN result: {0:?} (expected 1-0, 0-1, 1/2-1/2 or *)")]
pub struct ParseResultError(pub String);

impl FromStr for GameResult {
    type Err = ParseResultError;

    fn from_str(s: &str) -> Result<GameResult, ParseResultError> {
        match s {
            "1-0" => Ok(GameResult::WhiteWins),
            "0-1" => Ok(GameResult::BlackWins),
            "1/2-1/2" => Ok(GameResult::Draw),
            "*" => Ok(GameResult::Unknown),
            _ => Err(ParseResultError(s.to_owned())),
        }
    }
}

/// A Fischer clock: initial time and increment per move, in seconds. PGN
/// writes it as `600+5`; games without a clock write `-`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimeControl {
    pub initial_s: u32,
    pub increment_s: u32,
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}+{}", self.initial_s, self.increment_s)
    }
}

/// Text that is not a `TimeControl` tag value this crate understands.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a time control: {0:?} (expected seconds and increment like 600+5, or 600)")]
pub struct ParseTimeControlError(pub String);

/// Parses `600+5`, or `600` for no increment. `-` (no clock) is not a
/// time control: [`crate::PgnGame::time_control`] maps it to `None`.
impl FromStr for TimeControl {
    type Err = ParseTimeControlError;

    fn from_str(s: &str) -> Result<TimeControl, ParseTimeControlError> {
        let err = || ParseTimeControlError(s.to_owned());
        let number = |text: &str| {
            if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            text.parse::<u32>().ok()
        };
        let (initial, increment) = s.split_once('+').unwrap_or((s, "0"));
        Ok(TimeControl { initial_s: number(initial).ok_or_else(err)?, increment_s: number(increment).ok_or_else(err)? })
    }
}

/// The `Variant` tag for a game, following lichess: `Standard`, `Chess960`,
/// `Atomic`, and `Fog of War` (lichess has no fog of war; this is the
/// name players know). Lichess has no name for atomic from a Chess960
/// start either: such games say `Atomic`, and their `FEN` tag, whose
/// castling rights then name rooks off the a- and h-files or a king off
/// the e-file, tells Chess960 castling apart, as python-chess and
/// [`crate::read_games`] read it.
pub(crate) fn variant_tag(variant: Variant, chess960: bool) -> &'static str {
    variant.lichess_name(chess960)
}

/// The variant a `Variant` tag names and whether it says Chess960, for the
/// names lichess, python-chess, Cute Chess and this crate write. `None`
/// for variants Fogblast does not play.
pub(crate) fn variant_from_tag(value: &str) -> Option<(Variant, bool)> {
    let name = value.trim().to_ascii_lowercase();
    let found = match name.as_str() {
        "" | "standard" | "chess" | "normal" | "from position" | "fromposition" => (Variant::Standard, false),
        "chess960" | "chess 960" | "960" | "fischerandom" | "fischerrandom" | "fischer random" => {
            (Variant::Standard, true)
        }
        "atomic" | "atom" | "atomic chess" => (Variant::Atomic, false),
        "atomic960" | "atomic 960" | "atomic chess960" => (Variant::Atomic, true),
        "fog of war" | "fog-of-war" | "fogofwar" | "fog" | "dark" | "dark chess" => (Variant::Fog, false),
        _ => return None,
    };
    Some(found)
}

/// A tag value between the quotes: backslashes and quotes escaped, and
/// line breaks and other control characters (which PGN does not allow in
/// a tag) turned into spaces.
pub(crate) fn escape_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Whether `name` may be a tag name: ASCII letters, digits and `_`,
/// starting with a letter or digit, as the PGN standard's symbol tokens.
pub(crate) fn is_valid_tag_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphanumeric()) && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_parse_and_print() {
        for result in [GameResult::WhiteWins, GameResult::BlackWins, GameResult::Draw, GameResult::Unknown] {
            assert_eq!(result.as_str().parse::<GameResult>(), Ok(result));
        }
        assert!("1:0".parse::<GameResult>().is_err());
        assert_eq!(GameResult::from_outcome(None), GameResult::Unknown);
    }

    #[test]
    fn time_controls_parse_and_print() {
        let tc = TimeControl { initial_s: 600, increment_s: 5 };
        assert_eq!(tc.to_string(), "600+5");
        assert_eq!("600+5".parse(), Ok(tc));
        assert_eq!("60".parse(), Ok(TimeControl { initial_s: 60, increment_s: 0 }));
        for bad in ["-", "", "+5", "600+", "1/60", "-5+1", "99999999999+0"] {
            assert!(bad.parse::<TimeControl>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn every_variant_tag_reads_back() {
        for variant in Variant::ALL {
            for chess960 in [false, true] {
                let (read, _) = variant_from_tag(variant_tag(variant, chess960)).unwrap();
                assert_eq!(read, variant);
            }
        }
        assert_eq!(variant_from_tag("Chess960"), Some((Variant::Standard, true)));
        assert_eq!(variant_from_tag("Crazyhouse"), None);
    }

    #[test]
    fn escapes_values_and_checks_names() {
        assert_eq!(escape_value(r#"a "b" \c"#), r#"a \"b\" \\c"#);
        assert_eq!(escape_value("two\nlines\t"), "two lines ");
        assert!(is_valid_tag_name("WhiteFideId"));
        assert!(is_valid_tag_name("X_1"));
        for bad in ["", "_x", "a b", "a]", "é"] {
            assert!(!is_valid_tag_name(bad), "{bad:?}");
        }
    }
}
