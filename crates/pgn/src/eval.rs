//! Evaluation comments, `[%eval ...]`, as lichess writes them in an
//! analysed game's PGN: after each move, the engine's score of the position
//! it led to, from white's side, in pawns (`0.17`, `-1.5`) or as moves to a
//! forced mate (`#3` white mates, `#-2` black mates).

use std::fmt;

/// One position's score from white's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eval {
    /// Centipawns.
    Cp(i32),
    /// Moves to a forced mate: positive when white mates.
    Mate(i32),
}

impl fmt::Display for Eval {
    /// `0.17`, `-0.3`, `1.0`, `#3`, `#-2`: pawns with at most two decimals
    /// and at least one, as lichess writes them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Eval::Mate(moves) => write!(f, "#{moves}"),
            Eval::Cp(cp) => {
                let sign = if cp < 0 { "-" } else { "" };
                let (pawns, hundredths) = (cp.unsigned_abs() / 100, cp.unsigned_abs() % 100);
                if hundredths % 10 == 0 {
                    write!(f, "{sign}{pawns}.{}", hundredths / 10)
                } else {
                    write!(f, "{sign}{pawns}.{hundredths:02}")
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_as_lichess_writes_them() {
        let cases = [
            (Eval::Cp(17), "0.17"),
            (Eval::Cp(-30), "-0.3"),
            (Eval::Cp(100), "1.0"),
            (Eval::Cp(0), "0.0"),
            (Eval::Cp(-5), "-0.05"),
            (Eval::Cp(1234), "12.34"),
            (Eval::Mate(3), "#3"),
            (Eval::Mate(-2), "#-2"),
        ];
        for (eval, text) in cases {
            assert_eq!(eval.to_string(), text);
        }
    }
}
