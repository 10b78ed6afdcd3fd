//! The options `fogblast uci` declares at `uci`, how their values are read,
//! and what some of them mean: the win/draw/loss model behind
//! `UCI_ShowWDL` and the levels `UCI_Elo` maps to.

use std::fmt::{self, Write as _};
use std::time::Duration;

use fogblast_rules::{CastlingMode, Variant};

use crate::level::Level;
use crate::search::MATE;

/// What kind of value an option takes, as UCI declares it.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Check,
    Spin {
        min: i64,
        max: i64,
    },
    /// The choices, then other names accepted for them.
    Combo {
        vars: &'static [&'static str],
        aliases: &'static [(&'static str, &'static str)],
    },
    Text,
}

/// One declared option.
#[derive(Debug)]
pub(super) struct Declared {
    pub(super) name: &'static str,
    kind: Kind,
    default: &'static str,
}

pub(super) const HASH: &str = "Hash";
pub(super) const THREADS: &str = "Threads";
pub(super) const SYZYGY_PATH: &str = "SyzygyPath";
pub(super) const UCI_VARIANT: &str = "UCI_Variant";

/// The lowest and highest `UCI_Elo`.
const ELO_RANGE: (i64, i64) = (800, 2400);

/// Every option, in the order `uci` lists them. The defaults are the
/// session's starting values ([`Options::new`] reads them from here).
pub(super) const DECLARED: &[Declared] = &[
    Declared {
        name: UCI_VARIANT,
        kind: Kind::Combo {
            vars: &[Variant::Atomic.uci_name(), Variant::Standard.uci_name()],
            aliases: &[(Variant::Standard.name(), Variant::Standard.uci_name())],
        },
        default: Variant::Atomic.uci_name(),
    },
    Declared { name: HASH, kind: Kind::Spin { min: 1, max: 1024 }, default: "16" },
    Declared { name: "UCI_Chess960", kind: Kind::Check, default: "false" },
    Declared { name: THREADS, kind: Kind::Spin { min: 1, max: 1024 }, default: "1" },
    Declared { name: "Move Overhead", kind: Kind::Spin { min: 0, max: 5000 }, default: "10" },
    Declared { name: "MultiPV", kind: Kind::Spin { min: 1, max: 64 }, default: "1" },
    Declared { name: "Ponder", kind: Kind::Check, default: "false" },
    Declared { name: "UCI_ShowWDL", kind: Kind::Check, default: "false" },
    Declared { name: "UCI_LimitStrength", kind: Kind::Check, default: "false" },
    Declared { name: "UCI_Elo", kind: Kind::Spin { min: ELO_RANGE.0, max: ELO_RANGE.1 }, default: "2400" },
    Declared { name: SYZYGY_PATH, kind: Kind::Text, default: "<empty>" },
];

/// The declared names, for messages: `UCI_Variant, Hash, ...`.
pub(super) fn names() -> String {
    DECLARED.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
}

/// The declared option named `name`, in any case.
pub(super) fn find(name: &str) -> Option<&'static Declared> {
    DECLARED.iter().find(|d| d.name.eq_ignore_ascii_case(name))
}

/// A value read for a declared option.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Value {
    Check(bool),
    Spin(i64),
    Combo(&'static str),
    Text(String),
}

impl Declared {
    /// Reads `text` as this option's value; the error says what was
    /// expected.
    pub(super) fn parse(&self, text: &str) -> Result<Value, String> {
        match self.kind {
            Kind::Check => match text.to_ascii_lowercase().as_str() {
                "true" => Ok(Value::Check(true)),
                "false" => Ok(Value::Check(false)),
                _ => Err("true or false".to_owned()),
            },
            Kind::Spin { min, max } => match text.parse::<i64>() {
                Ok(n) if (min..=max).contains(&n) => Ok(Value::Spin(n)),
                _ => Err(format!("a whole number from {min} to {max}")),
            },
            Kind::Combo { vars, aliases } => {
                let alias = aliases.iter().find(|(alias, _)| alias.eq_ignore_ascii_case(text)).map(|&(_, var)| var);
                let var = vars.iter().copied().find(|var| var.eq_ignore_ascii_case(text)).or(alias);
                var.map(Value::Combo).ok_or_else(|| vars.join(" or "))
            }
            // `<empty>` is how UCI writes an empty string.
            Kind::Text if text == "<empty>" => Ok(Value::Text(String::new())),
            Kind::Text => Ok(Value::Text(text.to_owned())),
        }
    }
}

impl fmt::Display for Declared {
    /// The `option name ... type ...` line of the handshake.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            Kind::Check => "check",
            Kind::Spin { .. } => "spin",
            Kind::Combo { .. } => "combo",
            Kind::Text => "string",
        };
        write!(f, "option name {} type {kind} default {}", self.name, self.default)?;
        match self.kind {
            Kind::Spin { min, max } => write!(f, " min {min} max {max}"),
            Kind::Combo { vars, .. } => vars.iter().try_for_each(|var| write!(f, " var {var}")),
            Kind::Check | Kind::Text => Ok(()),
        }
    }
}

/// The options' current values.
#[derive(Clone, Copy, Debug)]
pub(super) struct Options {
    pub(super) variant: Variant,
    pub(super) hash_mb: usize,
    pub(super) chess960: bool,
    /// Asked for, not used: the search runs on one thread.
    pub(super) threads: usize,
    /// Kept back from the remaining clock before the time is planned.
    pub(super) move_overhead: Duration,
    pub(super) multipv: usize,
    pub(super) ponder: bool,
    pub(super) show_wdl: bool,
    pub(super) limit_strength: bool,
    pub(super) elo: u32,
}

impl Options {
    /// Every option at its declared default.
    pub(super) fn new() -> Options {
        let mut options = Options {
            variant: Variant::Atomic,
            hash_mb: 1,
            chess960: false,
            threads: 1,
            move_overhead: Duration::ZERO,
            multipv: 1,
            ponder: false,
            show_wdl: false,
            limit_strength: false,
            elo: 0,
        };
        for declared in DECLARED {
            let value = declared.parse(declared.default).expect("a declared default is a valid value");
            options.set(declared.name, value);
        }
        options
    }

    /// Sets the declared option `name` to `value` (a value its
    /// [`Declared::parse`] read). Options without a value to keep
    /// (`SyzygyPath`) change nothing.
    pub(super) fn set(&mut self, name: &str, value: Value) {
        let count = |n: i64| usize::try_from(n).unwrap_or(0);
        match (name, value) {
            (UCI_VARIANT, Value::Combo(var)) => {
                self.variant = if var == Variant::Standard.uci_name() { Variant::Standard } else { Variant::Atomic }
            }
            (HASH, Value::Spin(mb)) => self.hash_mb = count(mb),
            ("UCI_Chess960", Value::Check(on)) => self.chess960 = on,
            (THREADS, Value::Spin(n)) => self.threads = count(n),
            ("Move Overhead", Value::Spin(ms)) => self.move_overhead = Duration::from_millis(ms.unsigned_abs()),
            ("MultiPV", Value::Spin(n)) => self.multipv = count(n),
            ("Ponder", Value::Check(on)) => self.ponder = on,
            ("UCI_ShowWDL", Value::Check(on)) => self.show_wdl = on,
            ("UCI_LimitStrength", Value::Check(on)) => self.limit_strength = on,
            ("UCI_Elo", Value::Spin(elo)) => self.elo = u32::try_from(elo).unwrap_or(0),
            _ => {}
        }
    }

    pub(super) fn castling_mode(&self) -> CastlingMode {
        CastlingMode::for_game(self.chess960)
    }

    /// The level the engine plays at, when `UCI_LimitStrength` is on.
    pub(super) fn level(&self) -> Option<Level> {
        self.limit_strength.then(|| level_for_elo(self.elo))
    }
}

/// The level a `UCI_Elo` plays as: below 1200 Easy, below 1800 Medium,
/// from 1800 Hard. The bounds are nominal: the levels are calibrated
/// against each other and a newcomer (docs/engine.md), not on an Elo
/// scale.
pub(super) fn level_for_elo(elo: u32) -> Level {
    match elo {
        ..1200 => Level::Easy,
        1200..1800 => Level::Medium,
        _ => Level::Hard,
    }
}

/// Win, draw and loss chances in per mille for a score in centipawns, from
/// the side to move's point of view: `win = 1000 / (1 + e^((A - cp) / B))`
/// and `loss` the same for `-cp`, with `A` = 80 and `B` = 60; the draw
/// is the rest. A level score gives 209/582/209, +100 gives 583/370/47
/// and +300 gives 975/23/2. The model is not fitted to game results.
/// Mate scores are a certain win (1000/0/0) or loss (0/0/1000).
pub(super) fn wdl(score: i32) -> (u32, u32, u32) {
    const A: f64 = 80.0;
    const B: f64 = 60.0;
    if score >= MATE - 1_000 {
        return (1000, 0, 0);
    }
    if score <= -(MATE - 1_000) {
        return (0, 0, 1000);
    }
    let cp = f64::from(score);
    let chance = |cp: f64| (1000.0 / (1.0 + ((A - cp) / B).exp())).round() as u32;
    let win = chance(cp).min(1000);
    let loss = chance(-cp).min(1000 - win);
    (win, 1000 - win - loss, loss)
}

/// ` wdl W D L`, appended to an info line's score.
pub(super) fn push_wdl(line: &mut String, (win, draw, loss): (u32, u32, u32)) {
    let _ = write!(line, " wdl {win} {draw} {loss}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_handshake_lines_read_back_their_defaults() {
        for declared in DECLARED {
            assert!(declared.parse(declared.default).is_ok(), "{declared}");
        }
        let hash = find("hash").unwrap().to_string();
        assert_eq!(hash, "option name Hash type spin default 16 min 1 max 1024");
        let options = Options::new();
        assert_eq!((options.hash_mb, options.multipv, options.elo), (16, 1, 2400));
        assert_eq!(options.move_overhead, Duration::from_millis(10));
    }

    #[test]
    fn wdl_sums_to_a_thousand_and_follows_the_score() {
        let mut last_win = 0;
        for score in (-3_000..=3_000).step_by(7) {
            let (win, draw, loss) = wdl(score);
            assert_eq!(win + draw + loss, 1000, "{score}");
            assert!(win >= last_win, "{score}");
            assert_eq!(wdl(-score), (loss, draw, win), "{score}");
            last_win = win;
        }
        assert_eq!(wdl(0), (209, 582, 209));
        assert_eq!(wdl(MATE - 3), (1000, 0, 0));
        assert_eq!(wdl(-MATE + 2), (0, 0, 1000));
    }

    #[test]
    fn elo_maps_to_the_levels() {
        assert_eq!(level_for_elo(ELO_RANGE.0 as u32), Level::Easy);
        assert_eq!(level_for_elo(1199), Level::Easy);
        assert_eq!(level_for_elo(1200), Level::Medium);
        assert_eq!(level_for_elo(1799), Level::Medium);
        assert_eq!(level_for_elo(ELO_RANGE.1 as u32), Level::Hard);
    }
}
