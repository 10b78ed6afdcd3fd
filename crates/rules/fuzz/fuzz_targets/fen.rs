//! Any text handed to the FEN parser: errors must come back as values, and
//! every position it accepts must print and re-parse to itself, generate
//! moves, and stay a valid position after each of them.

#![no_main]

use fogblast_rules::{Fen, Position, Variant};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for variant in Variant::ALL {
        if let Ok(pos) = Position::from_fen(text, variant) {
            check_position(&pos, variant);
        }
    }
});

fn check_position(pos: &Position, variant: Variant) {
    let fen = pos.fen();
    let reparsed = Position::from_fen(&fen, variant).unwrap_or_else(|e| panic!("{fen} does not re-parse: {e}"));
    assert_eq!(reparsed, *pos, "{fen} re-parses to another position");
    assert_eq!(reparsed.fen(), fen);

    let shredder = Fen::from_position(pos).to_shredder_string();
    let reparsed =
        Position::from_fen(&shredder, variant).unwrap_or_else(|e| panic!("{shredder} does not re-parse: {e}"));
    assert_eq!(reparsed, *pos, "{shredder} re-parses to another position");

    for m in pos.legal_moves() {
        let (next, _) = pos.play(m).unwrap_or_else(|e| panic!("generated move rejected: {e}"));
        assert_eq!(
            Position::from_setup(next.to_setup(), variant),
            Ok(next),
            "{} after {m:?} from {fen} is not a valid position",
            next.fen()
        );
        let next_fen = next.fen();
        assert_eq!(
            Position::from_fen(&next_fen, variant),
            Ok(next),
            "{next_fen} after {m:?} does not re-parse to itself"
        );
    }
}
