//! `generate_legal_captures` yields exactly the captures among the legal
//! moves, in every variant, over positions from random play.

use std::collections::BTreeSet;

use fogblast_rules::{CastlingMode, MoveList, Position, Variant};

const STARTS: [&str; 5] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1",
    "rnbqkbnr/p1p2ppp/8/Pp1pp3/4P3/8/1PPP1PPP/RNBQKBNR w KQkq b6 0 1",
];

fn names(moves: impl IntoIterator<Item = fogblast_rules::Move>) -> BTreeSet<String> {
    moves.into_iter().map(|m| m.to_uci(CastlingMode::Chess960).to_string()).collect()
}

#[test]
fn captures_are_the_legal_captures() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut checked = 0;
    for variant in Variant::ALL {
        for fen in STARTS {
            for _game in 0..20 {
                let mut pos = Position::from_fen(fen, variant).unwrap();
                for _ply in 0..60 {
                    let legal = pos.legal_moves();
                    let mut captures = MoveList::new();
                    pos.generate_legal_captures(&mut captures);
                    let expected = names(legal.iter().copied().filter(|m| m.is_capture()));
                    assert_eq!(names(captures.iter().copied()), expected, "{variant} {}", pos.fen());
                    assert_eq!(captures.len(), expected.len(), "duplicates in {}", pos.fen());
                    checked += 1;
                    if legal.is_empty() {
                        break;
                    }
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    pos.play_unchecked(legal[(state % legal.len() as u64) as usize]);
                }
            }
        }
    }
    assert!(checked > 5_000, "{checked}");
}
