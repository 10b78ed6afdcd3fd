//! The ordinary chess rules the variants share, tested on standard chess one
//! rule per test: checkmate, stalemate, pins, en passant, promotion, castling
//! (Chess960 included), the fifty-move rule, threefold repetition and
//! takebacks through `Game`, and insufficient material as python-chess
//! judges it. Every expected move set, FEN and verdict was taken from
//! python-chess 1.11.2.

use std::collections::BTreeSet;

use fogblast_rules::{CastlingMode, Color, DrawReason, Game, GameError, Outcome, Position, Variant, WinReason};

fn pos(fen: &str) -> Position {
    Position::from_fen(fen, Variant::Standard).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

/// Legal moves as UCI, castling written as king takes rook (as python-chess
/// prints Chess960 boards).
fn uci_moves(pos: &Position) -> BTreeSet<String> {
    pos.legal_moves().iter().map(|m| m.to_uci(CastlingMode::Chess960).to_string()).collect()
}

fn strings(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// The FEN after playing `uci` in `fen`.
fn fen_after(fen: &str, uci: &str) -> String {
    let before = pos(fen);
    let m = before.parse_uci(&uci.parse().unwrap()).unwrap_or_else(|| panic!("{uci} is not legal in {fen}"));
    before.play(m).unwrap().0.fen()
}

fn game_after(start: Position, moves: &[&str]) -> Game {
    let mut game = Game::new(start);
    for uci in moves {
        game.play_uci(uci).unwrap_or_else(|e| panic!("{uci}: {e}"));
    }
    game
}

#[test]
fn checkmate_ends_the_game() {
    let game = game_after(Position::new(Variant::Standard), &["f2f3", "e7e5", "g2g4", "d8h4"]);
    let p = game.position();
    assert!(p.is_check());
    assert!(p.legal_moves().is_empty());
    let mate = Outcome::Decisive { winner: Color::Black, reason: WinReason::Checkmate };
    assert_eq!(game.outcome(), Some(mate));
    assert_eq!(game.clone().play_uci("e2e4"), Err(GameError::Finished(mate)));
}

#[test]
fn stalemate_is_a_draw() {
    let p = pos("k7/8/1Q6/8/8/8/8/4K3 b - - 0 1");
    assert!(!p.is_check());
    assert!(p.legal_moves().is_empty());
    assert_eq!(p.outcome(), Some(Outcome::Draw { reason: DrawReason::Stalemate }));
}

#[test]
fn pinned_pieces_move_only_along_the_pin() {
    // The bishop on d2 is pinned by b4 and may slide to c3 or take; the
    // knight on e2 is pinned by e8 and may not move at all.
    let p = pos("4r1k1/8/8/8/1b6/8/3BN3/4K3 w - - 0 1");
    assert_eq!(uci_moves(&p), strings(&["d2b4", "d2c3", "e1d1", "e1f1", "e1f2"]));
}

#[test]
fn en_passant_removes_the_pawn_that_passed() {
    let fen = "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2";
    assert_eq!(uci_moves(&pos(fen)), strings(&["e1d1", "e1d2", "e1e2", "e1f1", "e1f2", "e5d6", "e5e6"]));
    assert_eq!(fen_after(fen, "e5d6"), "4k3/8/3P4/8/8/8/8/4K3 b - - 0 2");
    // The right lapses after one move.
    let later = game_after(pos(fen), &["e1d1", "e8d8"]);
    assert!(!uci_moves(later.position()).contains("e5d6"));
}

#[test]
fn en_passant_may_not_expose_the_king_along_the_rank() {
    // Taking d5 e.p. would empty the fifth rank between the rook and the king.
    let p = pos("8/8/8/K2pP2r/8/8/8/7k w - d6 0 2");
    assert_eq!(uci_moves(&p), strings(&["a5a4", "a5a6", "a5b4", "a5b5", "a5b6", "e5e6"]));
}

#[test]
fn a_pawn_promotes_to_each_of_four_roles() {
    let fen = "3r3k/4P3/8/8/8/8/8/4K3 w - - 0 1";
    let expected =
        strings(&["e1e2", "e1f1", "e1f2", "e7d8b", "e7d8n", "e7d8q", "e7d8r", "e7e8b", "e7e8n", "e7e8q", "e7e8r"]);
    assert_eq!(uci_moves(&pos(fen)), expected);
    assert_eq!(fen_after(fen, "e7e8q"), "3rQ2k/8/8/8/8/8/8/4K3 b - - 0 1");
    assert_eq!(fen_after(fen, "e7e8r"), "3rR2k/8/8/8/8/8/8/4K3 b - - 0 1");
    assert_eq!(fen_after(fen, "e7e8b"), "3rB2k/8/8/8/8/8/8/4K3 b - - 0 1");
    assert_eq!(fen_after(fen, "e7e8n"), "3rN2k/8/8/8/8/8/8/4K3 b - - 0 1");
    assert_eq!(fen_after(fen, "e7d8n"), "3N3k/8/8/8/8/8/8/4K3 b - - 0 1");
    assert!(pos(&fen_after(fen, "e7e8q")).is_check());
    assert!(!pos(&fen_after(fen, "e7e8b")).is_check());
}

#[test]
fn castling_moves_king_and_rook_and_ends_both_rights() {
    let fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
    let castles: BTreeSet<String> = uci_moves(&pos(fen)).into_iter().filter(|m| m.starts_with("e1")).collect();
    assert_eq!(castles, strings(&["e1a1", "e1d1", "e1d2", "e1e2", "e1f1", "e1f2", "e1h1"]));
    assert_eq!(fen_after(fen, "e1g1"), "r3k2r/8/8/8/8/8/8/R4RK1 b kq - 1 1");
    assert_eq!(fen_after(fen, "e1c1"), "r3k2r/8/8/8/8/8/8/2KR3R b kq - 1 1");
    assert_eq!(fen_after(fen, "e1h1"), fen_after(fen, "e1g1"), "king takes rook names the same move");
}

#[test]
fn castling_needs_empty_squares() {
    let p = pos("r3k2r/8/8/8/8/8/8/RN2K1NR w KQkq - 0 1");
    assert!(!uci_moves(&p).contains("e1a1"));
    assert!(!uci_moves(&p).contains("e1h1"));
}

#[test]
fn castling_may_not_pass_through_check_but_the_rook_may() {
    // f1 is attacked: no O-O. b1 is attacked, but only the rook crosses it.
    let p = pos("1r2kr2/8/8/8/8/8/8/R3K2R w KQ - 0 1");
    let king_moves: BTreeSet<String> = uci_moves(&p).into_iter().filter(|m| m.starts_with("e1")).collect();
    assert_eq!(king_moves, strings(&["e1a1", "e1d1", "e1d2", "e1e2"]));
}

#[test]
fn castling_is_no_way_out_of_check() {
    let p = pos("4k3/8/8/8/4r3/8/8/R3K2R w KQ - 0 1");
    assert_eq!(uci_moves(&p), strings(&["e1d1", "e1d2", "e1f1", "e1f2"]));
}

#[test]
fn chess960_castling_where_king_and_rook_swap_or_stand_adjacent() {
    // King d1, rook c1: O-O-O swaps them.
    assert_eq!(fen_after("4k3/8/8/8/8/8/8/2RK4 w Q - 0 1", "d1c1"), "4k3/8/8/8/8/8/8/2KR4 b - - 1 1");
    // King f1, rook g1: O-O swaps them.
    assert_eq!(fen_after("4k3/8/8/8/8/8/8/5KR1 w K - 0 1", "f1g1"), "4k3/8/8/8/8/8/8/5RK1 b - - 1 1");
    // King b1, rook a1: both jump to c1 and d1.
    assert_eq!(fen_after("4k3/8/8/8/8/8/8/RK6 w Q - 0 1", "b1a1"), "4k3/8/8/8/8/8/8/2KR4 b - - 1 1");
    // King g1 stays where it is; only the rook moves.
    assert_eq!(fen_after("4k3/8/8/8/8/8/8/6KR w K - 0 1", "g1h1"), "4k3/8/8/8/8/8/8/5RK1 b - - 1 1");
}

#[test]
fn chess960_castling_checks_every_square_the_king_crosses() {
    // King b1 to g1 crosses e1, attacked from e8.
    let attacked = pos("4r1k1/8/8/8/8/8/7P/1K5R w K - 0 1");
    assert!(!uci_moves(&attacked).contains("b1h1"));
    let free = pos("6k1/8/8/8/8/8/7P/1K5R w K - 0 1");
    assert!(uci_moves(&free).contains("b1h1"));
    // King g1 to c1: the rook leaving b1 opens c1 to the rook on a1.
    let shielded = pos("k7/8/8/8/8/8/7P/rR4KR w KQ - 0 1");
    let expected = strings(&["b1a1", "b1c1", "b1d1", "b1e1", "b1f1", "g1f1", "g1f2", "g1g2", "g1h1", "h2h3", "h2h4"]);
    assert_eq!(uci_moves(&shielded), expected);
}

#[test]
fn the_fifty_move_rule_draws_at_halfmove_100() {
    let draw = Some(Outcome::Draw { reason: DrawReason::FiftyMoves });
    assert_eq!(pos("4k3/8/8/8/8/8/4P3/R3K3 w - - 100 80").outcome(), draw);
    assert_eq!(pos("4k3/8/8/8/8/8/4P3/R3K3 w - - 99 80").outcome(), None);
    let game = game_after(pos("4k3/8/8/8/8/8/4P3/R3K3 w - - 99 80"), &["a1b1"]);
    assert_eq!(game.position().halfmoves(), 100);
    assert_eq!(game.outcome(), draw);
    // A checkmate on the hundredth half-move is still a checkmate.
    let game = game_after(pos("6k1/5ppp/8/8/8/8/8/R3K3 w - - 99 80"), &["a1a8"]);
    assert_eq!(game.outcome(), Some(Outcome::Decisive { winner: Color::White, reason: WinReason::Checkmate }));
}

#[test]
fn threefold_repetition_draws_through_game() {
    let shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"];
    let mut game = game_after(Position::new(Variant::Standard), &shuffle);
    assert_eq!(game.repetitions(), 2);
    for uci in &shuffle[..3] {
        game.play_uci(uci).unwrap();
    }
    assert_eq!(game.outcome(), None);
    game.play_uci(shuffle[3]).unwrap();
    assert_eq!(game.repetitions(), 3);
    assert_eq!(game.outcome(), Some(Outcome::Draw { reason: DrawReason::ThreefoldRepetition }));
}

#[test]
fn a_lost_castling_right_makes_the_position_differ() {
    // After the rooks step out and back the board is the start's again, but
    // the king-side rights are gone: the start does not count as repeated.
    let start = pos("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
    let out_and_back = ["h1g1", "h8g8", "g1h1", "g8h8"];
    let mut game = game_after(start, &out_and_back);
    assert_eq!(game.position().board(), start.board());
    assert_eq!(game.position().fen(), "r3k2r/8/8/8/8/8/8/R3K2R w Qq - 4 3");
    assert_eq!(game.repetitions(), 1);
    for uci in out_and_back {
        game.play_uci(uci).unwrap();
    }
    // Twice with the rights Qq, never three times with the start.
    assert_eq!(game.repetitions(), 2);
    assert_eq!(game.outcome(), None);
    // The position after ply 2, both rooks on g, stands there a third time
    // at ply 10.
    game.play_uci("h1g1").unwrap();
    assert_eq!(game.outcome(), None);
    game.play_uci("h8g8").unwrap();
    assert_eq!(game.repetitions(), 3);
    assert_eq!(game.outcome(), Some(Outcome::Draw { reason: DrawReason::ThreefoldRepetition }));
}

#[test]
fn an_en_passant_square_no_legal_move_can_use_does_not_make_the_position_differ() {
    // After d7d5 the pawn on e5 attacks d6, but taking would expose its king
    // along the fifth rank. python-chess therefore counts the position after
    // d7d5 as the same as the ones after each king shuffle: the third
    // occurrence comes at the ninth ply, not the tenth.
    let moves = ["d7d5", "a5a4", "h1g1", "a4a5", "g1h1", "a5a4", "h1g1", "a4a5", "g1h1"];
    let game = game_after(pos("8/3p4/8/K3P2r/8/8/8/7k b - - 0 1"), &moves);
    assert_eq!(game.repetitions(), 3);
    assert_eq!(game.outcome(), Some(Outcome::Draw { reason: DrawReason::ThreefoldRepetition }));
}

#[test]
fn undo_restores_the_exact_position() {
    let moves = ["e2e4", "g8f6", "e4e5", "d7d5", "e1e2", "d8d6"];
    let mut game = Game::new(Position::new(Variant::Standard));
    let mut seen = vec![*game.position()];
    for uci in moves {
        game.play_uci(uci).unwrap();
        seen.push(*game.position());
    }
    // After d7d5 an en passant square, after e1e2 lost castling rights.
    assert_eq!(seen[4].fen(), "rnbqkb1r/ppp1pppp/5n2/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3");
    assert_eq!(seen[5].fen(), "rnbqkb1r/ppp1pppp/5n2/3pP3/8/8/PPPPKPPP/RNBQ1BNR b kq - 1 3");
    for plies in (0..moves.len()).rev() {
        game.undo(1);
        assert_eq!(game.ply(), plies);
        assert_eq!(*game.position(), seen[plies]);
    }
    game.play_uci("e2e4").unwrap();
    game.undo(10);
    assert_eq!(*game.position(), Position::new(Variant::Standard));
    assert!(game.moves().is_empty());
}

/// `(white cannot win, black cannot win)` for `fen`.
fn cannot_win(fen: &str) -> (bool, bool) {
    let p = pos(fen);
    (p.has_insufficient_material(Color::White), p.has_insufficient_material(Color::Black))
}

#[test]
fn insufficient_material_as_python_chess_judges_it() {
    // A lone minor piece against a bare king.
    assert_eq!(cannot_win("8/8/8/4k3/8/8/8/4KN2 w - - 0 1"), (true, true));
    assert_eq!(cannot_win("8/8/8/4k3/8/8/8/4KB2 w - - 0 1"), (true, true));
    // Bishops all on one colour (f1, f5 light).
    assert_eq!(cannot_win("8/8/8/4kb2/8/8/8/4KB2 w - - 0 1"), (true, true));
    let drawn = pos("8/8/8/4kb2/8/8/8/4KB2 w - - 0 1");
    assert_eq!(drawn.outcome(), Some(Outcome::Draw { reason: DrawReason::InsufficientMaterial }));
    // Opposite-coloured bishops (f1 light, g5 dark) can mate with help.
    assert_eq!(cannot_win("8/8/8/4k1b1/8/8/8/4KB2 w - - 0 1"), (false, false));
    // Knight against bishop, or knight against knight: mate is possible.
    assert_eq!(cannot_win("8/8/8/4kb2/8/8/8/4KN2 w - - 0 1"), (false, false));
    assert_eq!(cannot_win("8/8/8/4kn2/8/8/8/4KN2 w - - 0 1"), (false, false));
    // Two knights can mate (with help), a knight against a queen cannot.
    assert_eq!(cannot_win("8/8/8/4k3/8/8/8/3NKN2 w - - 0 1"), (false, true));
    assert_eq!(cannot_win("8/8/8/4kq2/8/8/8/4KN2 w - - 0 1"), (true, false));
}
