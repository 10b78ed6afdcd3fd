//! Random games: the first byte picks a variant and a start, each further
//! byte picks one of the legal moves, for up to `MAX_PLIES` plies. Every
//! position on the way must agree with itself: UCI text, `play` and
//! `play_unchecked`, validation, FEN and perft.

#![no_main]

use fogblast_rules::perft::perft;
use fogblast_rules::{CastlingMode, Move, MoveList, Position, Uci, Variant, STARTING_FEN};
use libfuzzer_sys::fuzz_target;

const MAX_PLIES: usize = 200;

/// Starts valid in all three variants: castling with inner and outer rooks
/// (X-FEN and Shredder-FEN), en passant, promotions and crowded boards.
const STARTS: [&str; 8] = [
    STARTING_FEN,
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq -",
    "8/8/8/8/8/8/2k5/rR4KR w KQ -",
    "4rrk1/pbbp2p1/1ppnp3/3n1pqp/3N1PQP/1PPNP3/PBBP2P1/4RRK1 w Ff -",
    "r1k1r2q/p1ppp1pp/8/8/8/8/P1PPP1PP/R1K1R2Q w KQkq -",
    "rnbqkbnr/p1p2ppp/8/Pp1pp3/4P3/8/1PPP1PPP/RNBQKBNR w KQkq b6",
    "1rrrrrk1/1PPPPPPP/8/8/8/8/8/6K1 b - -",
    "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ -",
];

fuzz_target!(|data: &[u8]| {
    let Some((&head, choices)) = data.split_first() else { return };
    let variant = Variant::ALL[usize::from(head) % Variant::ALL.len()];
    let start = STARTS[usize::from(head) / Variant::ALL.len() % STARTS.len()];
    let mut pos = Position::from_fen(start, variant).expect("every start is valid in every variant");
    for &choice in choices.iter().take(MAX_PLIES) {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        check_perft(&pos, &moves);
        pos = check_play(&pos, moves[usize::from(choice) % moves.len()]);
    }
});

/// perft(2) counts the moves of each child.
fn check_perft(pos: &Position, moves: &MoveList) {
    let children: u64 = moves
        .iter()
        .map(|&m| {
            let (child, _) = pos.play(m).unwrap_or_else(|e| panic!("generated move rejected: {e}"));
            child.legal_moves().len() as u64
        })
        .sum();
    assert_eq!(perft(pos, 2), children, "perft 2 of {}", pos.fen());
}

/// Checks `m`'s UCI text, plays it both ways and checks the result;
/// returns the new position.
fn check_play(pos: &Position, m: Move) -> Position {
    let fen = pos.fen();
    for mode in [CastlingMode::Standard, CastlingMode::Chess960] {
        let uci = m.to_uci(mode);
        assert_eq!(uci.to_string().parse::<Uci>(), Ok(uci), "{uci} does not re-parse");
        assert_eq!(pos.parse_uci(&uci), Some(m), "{uci} ({mode:?}) in {fen}");
    }
    let (next, effects) = pos.play(m).unwrap_or_else(|e| panic!("generated move rejected: {e}"));
    let mut unchecked = *pos;
    unchecked.play_unchecked(m);
    assert_eq!(next, unchecked, "play and play_unchecked differ for {m:?} in {fen}");

    let changed = effects.changed_squares();
    for (sq, piece) in pos.board().pieces().chain(next.board().pieces()) {
        if pos.board().piece_at(sq) != next.board().piece_at(sq) {
            assert!(changed.contains(sq), "{m:?} in {fen} changed {sq} ({piece:?}) but its effects omit it");
        }
    }

    let variant = pos.variant();
    assert_eq!(Position::from_setup(next.to_setup(), variant), Ok(next), "{m:?} in {fen} leaves an invalid position");
    let next_fen = next.fen();
    let reparsed =
        Position::from_fen(&next_fen, variant).unwrap_or_else(|e| panic!("{next_fen} does not re-parse: {e}"));
    assert_eq!(reparsed, next, "{next_fen} re-parses to another position");
    assert_eq!(reparsed.fen(), next_fen);
    next
}
