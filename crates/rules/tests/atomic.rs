//! Atomic chess as `docs/rules.md` states it, one rule per test: what an
//! explosion removes (and what `MoveEffects` reports of it), en passant,
//! castling rights, which moves are legal, check and connected kings, castling
//! safety, and how games end (exploded king, mate, stalemate, insufficient
//! material, repetition, fifty moves, the flag). Every expected move set, FEN
//! and verdict was taken from python-chess 1.11.2 (`chess.variant.AtomicBoard`).

use std::collections::BTreeSet;

use fogblast_rules::{
    Bitboard, CastlingMode, Color, DrawReason, Game, GameError, MoveEffects, Outcome, Piece, Position, Square, Variant,
    WinReason,
};

fn pos(fen: &str) -> Position {
    Position::from_fen(fen, Variant::Atomic).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

/// Legal moves as UCI, castling written as king takes rook (as python-chess
/// prints Chess960 boards).
fn uci_moves(pos: &Position) -> BTreeSet<String> {
    pos.legal_moves().iter().map(|m| m.to_uci(CastlingMode::Chess960).to_string()).collect()
}

fn strings(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn sq(name: &str) -> Square {
    name.parse().unwrap()
}

fn squares(names: &[&str]) -> Bitboard {
    names.iter().map(|name| sq(name)).collect()
}

fn play(pos: &Position, uci: &str) -> (Position, MoveEffects) {
    let m = pos.parse_uci(&uci.parse().unwrap()).unwrap_or_else(|| panic!("{uci} is not legal in {}", pos.fen()));
    pos.play(m).unwrap()
}

/// The exploded pieces as (square, FEN letter), order ignored.
fn exploded(effects: &MoveEffects) -> BTreeSet<(Square, char)> {
    effects.exploded.iter().map(|&(square, piece)| (square, piece.char())).collect()
}

fn pieces(items: &[(&str, char)]) -> BTreeSet<(Square, char)> {
    items.iter().map(|&(name, c)| (sq(name), c)).collect()
}

fn piece(c: char) -> Piece {
    Piece::from_char(c).unwrap()
}

#[test]
fn explosion_removes_capturer_captured_and_adjacent_non_pawns_of_both_colours() {
    // Nf4xd5: around d5 stand pieces and pawns of both colours.
    let before = pos("6k1/8/2npR3/2Pqb3/3rPN2/8/8/6K1 w - - 0 1");
    let (after, effects) = play(&before, "f4d5");
    // The pawns on d6, c5 and e4 survive; everything else around d5 goes.
    assert_eq!(after.fen(), "6k1/8/3p4/2P5/4P3/8/8/6K1 b - - 0 1");
    assert_eq!(effects.captured, Some((sq("d5"), piece('q'))));
    assert_eq!(effects.explosion, Some(sq("d5")));
    assert_eq!(exploded(&effects), pieces(&[("d5", 'N'), ("c6", 'n'), ("e6", 'R'), ("e5", 'b'), ("d4", 'r')]));
    assert_eq!(effects.changed_squares(), squares(&["f4", "d5", "c6", "e6", "e5", "d4"]));
}

#[test]
fn explosion_takes_kings_too() {
    // Nc5xb7 explodes the black king on a8 next to b7.
    let before = pos("k7/1p6/8/2N5/4r3/8/8/4K3 w - - 0 1");
    let (after, effects) = play(&before, "c5b7");
    assert_eq!(after.fen(), "8/8/8/8/4r3/8/8/4K3 b - - 0 1");
    assert_eq!(exploded(&effects), pieces(&[("b7", 'N'), ("a8", 'k')]));
    assert_eq!(after.board().king_of(Color::Black), None);
}

#[test]
fn en_passant_explodes_around_the_target_square() {
    // exd6 e.p.: the blast is centred on d6, so the knight on c7 goes and
    // the bishop on c4 (next to the captured pawn on d5) stays.
    let before = pos("4k3/2n5/8/3pP3/2B5/8/8/4K3 w - d6 0 2");
    assert!(uci_moves(&before).contains("e5d6"));
    let (after, effects) = play(&before, "e5d6");
    assert_eq!(after.fen(), "4k3/8/8/8/2B5/8/8/4K3 b - - 0 2");
    assert_eq!(effects.captured, Some((sq("d5"), piece('p'))));
    assert_eq!(effects.explosion, Some(sq("d6")));
    assert_eq!(exploded(&effects), pieces(&[("d6", 'P'), ("c7", 'n')]));
}

#[test]
fn an_exploded_rook_takes_only_its_own_castling_right() {
    // Bxg7 explodes the rook on h8 but not the king on e8.
    let before = pos("r3k2r/6p1/8/8/8/8/1B6/R3K2R w KQkq - 0 1");
    let (after, _) = play(&before, "b2g7");
    assert_eq!(after.fen(), "r3k3/8/8/8/8/8/8/R3K2R b KQq - 0 1");
    assert_eq!(after.castling_rooks(), squares(&["a1", "h1", "a8"]));
    assert!(uci_moves(&after).contains("e8a8"), "black still castles long");
}

#[test]
fn an_exploded_king_takes_both_castling_rights() {
    // Qxd7 explodes the king on e8; both black rooks stay on the board.
    let before = pos("r3k2r/3p4/8/8/8/8/8/R2QK2R w KQkq - 0 1");
    let (after, _) = play(&before, "d1d7");
    assert_eq!(after.board().rooks(), squares(&["a1", "h1", "a8", "h8"]));
    assert_eq!(after.castling_rooks(), squares(&["a1", "h1"]));
    assert_eq!(after.fen(), "r6r/8/8/8/8/8/8/R3K2R b KQ - 0 1");
}

#[test]
fn the_king_never_captures() {
    // The undefended knight on d2 stands next to the white king.
    let p = pos("4k3/8/8/8/8/8/3n4/4K3 w - - 0 1");
    assert_eq!(uci_moves(&p), strings(&["e1d1", "e1e2", "e1f2"]));
}

#[test]
fn a_capture_that_explodes_your_own_king_is_illegal() {
    // Rxd2 would explode the white king on e1.
    let p = pos("4k3/8/8/3R4/8/8/3n4/4K3 w - - 0 1");
    let rook_moves = ["d5a5", "d5b5", "d5c5", "d5d3", "d5d4", "d5d6", "d5d7", "d5d8", "d5e5", "d5f5", "d5g5", "d5h5"];
    let mut expected = strings(&rook_moves);
    expected.extend(strings(&["e1d1", "e1e2", "e1f2"]));
    assert_eq!(uci_moves(&p), expected);
}

#[test]
fn a_capture_that_explodes_both_kings_is_illegal() {
    // Rxd2 would explode the black king on c2 and the white king on e1.
    let both = pos("8/8/8/3R4/8/8/2kn4/4K3 w - - 0 1");
    assert!(!uci_moves(&both).contains("d5d2"));
    assert!(uci_moves(&both).contains("d5d3"));
    // With the white king away from d2 the same capture wins.
    let only_theirs = pos("8/8/8/3R4/8/8/2kn4/6K1 w - - 0 1");
    assert!(uci_moves(&only_theirs).contains("d5d2"));
}

#[test]
fn exploding_the_enemy_king_is_legal_even_when_it_leaves_you_in_check() {
    // White is in check from e4; Nxb7 ignores it and explodes the king on a8.
    let p = pos("k7/1p6/8/2N5/4r3/8/8/4K3 w - - 0 1");
    assert!(p.is_check());
    assert_eq!(uci_moves(&p), strings(&["c5b7", "c5e4", "e1d1", "e1d2", "e1f1", "e1f2"]));
    let (after, _) = play(&p, "c5b7");
    assert!(after.legal_moves().is_empty());
    assert_eq!(after.outcome(), Some(Outcome::Decisive { winner: Color::White, reason: WinReason::KingExploded }));
}

#[test]
fn a_capture_must_not_leave_your_king_in_check() {
    // The knight on e2 shields the king from the rook on e8: Qxd3 would
    // explode it, and the knight itself may not capture anything.
    let p = pos("4r2k/p7/8/8/8/Q2p4/4N3/4K3 w - - 0 1");
    let expected = strings(&[
        "a3a1", "a3a2", "a3a4", "a3a5", "a3a6", "a3a7", "a3b2", "a3b3", "a3b4", "a3c1", "a3c3", "a3c5", "a3d6", "a3e7",
        "a3f8", "e1d1", "e1d2", "e1f1", "e1f2",
    ]);
    assert_eq!(uci_moves(&p), expected);
}

#[test]
fn check_comes_from_pieces_other_than_the_king() {
    // A rook and a knight check together; both are reported.
    let p = pos("4k3/8/3N4/8/8/8/8/4R1K1 b - - 0 1");
    assert_eq!(p.checkers(), squares(&["e1", "d6"]));
    assert_eq!(uci_moves(&p), strings(&["e8d7", "e8d8", "e8f8"]));
}

#[test]
fn connected_kings_are_never_in_check() {
    // The rook on a4 attacks e4, but the kings touch.
    let p = pos("8/8/8/4k3/r3K3/8/7P/8 w - - 0 1");
    assert!(p.kings_connected());
    assert!(!p.is_check());
    assert!(p.checkers().is_empty());
    // The pawn may move, and the king may stay on the rook's line (d4, f4).
    let expected = strings(&["e4d3", "e4d4", "e4d5", "e4e3", "e4f3", "e4f4", "e4f5", "h2h3", "h2h4"]);
    assert_eq!(uci_moves(&p), expected);
}

#[test]
fn a_king_may_step_onto_an_attacked_square_next_to_the_enemy_king() {
    // The rook on a4 attacks the fourth rank: d4 and e4 touch the black
    // king, c4 does not.
    let p = pos("8/8/8/4k3/r7/3K4/7P/8 w - - 0 1");
    let expected = strings(&["d3c2", "d3c3", "d3d2", "d3d4", "d3e2", "d3e3", "d3e4", "h2h3", "h2h4"]);
    assert_eq!(uci_moves(&p), expected);
}

#[test]
fn check_returns_when_the_kings_separate() {
    let connected = pos("8/8/8/4k3/r3K3/8/7P/8 b - - 0 1");
    let (after, _) = play(&connected, "e5e6");
    assert!(!after.kings_connected());
    assert_eq!(after.checkers(), squares(&["a4"]));
    assert_eq!(uci_moves(&after), strings(&["e4d3", "e4d5", "e4e3", "e4e5", "e4f3", "e4f5"]));
}

#[test]
fn castling_needs_a_safe_start_path_and_destination() {
    let free = pos("4k3/8/8/8/8/8/7P/4K2R w K - 0 1");
    let expected = strings(&["e1d1", "e1d2", "e1e2", "e1f1", "e1f2", "e1h1", "h1f1", "h1g1", "h2h3", "h2h4"]);
    assert_eq!(uci_moves(&free), expected);
    // The start is attacked (check from e5).
    let in_check = pos("k7/8/8/4r3/8/8/7P/4K2R w K - 0 1");
    assert_eq!(uci_moves(&in_check), strings(&["e1d1", "e1d2", "e1f1", "e1f2"]));
    // The path (f1) is attacked.
    let through = pos("4kr2/8/8/8/8/8/7P/4K2R w K - 0 1");
    assert_eq!(uci_moves(&through), strings(&["e1d1", "e1d2", "e1e2", "h1f1", "h1g1", "h2h3", "h2h4"]));
    // The destination (g1) is attacked.
    let into = pos("4k1r1/8/8/8/8/8/7P/4K2R w K - 0 1");
    let expected = strings(&["e1d1", "e1d2", "e1e2", "e1f1", "e1f2", "h1f1", "h1g1", "h2h3", "h2h4"]);
    assert_eq!(uci_moves(&into), expected);
}

#[test]
fn castling_may_pass_attacked_squares_that_touch_the_enemy_king() {
    // The rook on f8 attacks f1, but f1 touches the black king on g2.
    let p = pos("5r2/8/8/8/8/8/6k1/4K2R w K - 0 1");
    assert!(uci_moves(&p).contains("e1h1"));
    let (after, _) = play(&p, "e1h1");
    assert_eq!(after.fen(), "5r2/8/8/8/8/8/6k1/5RK1 b - - 1 1");
    assert!(after.kings_connected());
    // The start counts too: e1 is attacked from e8 but touches the king on d2.
    let connected = pos("4r3/8/8/8/8/8/3k4/4K2R w K - 0 1");
    assert!(!connected.is_check());
    assert!(uci_moves(&connected).contains("e1h1"));
}

#[test]
fn castling_tests_the_destination_with_the_rook_already_moved() {
    // Chess960 queen side: the king goes g1 to c1, the rook b1 to d1. The
    // rook on b1 shields c1 from a1 only until it moves, so O-O-O is illegal.
    let far = pos("k7/8/8/8/8/8/7P/rR4KR w KQ - 0 1");
    let expected = strings(&["b1a1", "b1c1", "b1d1", "b1e1", "b1f1", "g1f1", "g1f2", "g1g2", "g1h1", "h2h3", "h2h4"]);
    assert_eq!(uci_moves(&far), expected);
    // With the black king on c2, c1 touches it and counts as safe.
    let near = pos("8/8/8/8/8/8/2k5/rR4KR w KQ - 0 1");
    assert!(uci_moves(&near).contains("g1b1"));
    let (after, effects) = play(&near, "g1b1");
    assert_eq!(after.fen(), "8/8/8/8/8/8/2k5/r1KR3R b - - 1 1");
    assert_eq!(effects.to, sq("c1"));
    assert_eq!(effects.castle_rook, Some((sq("b1"), sq("d1"))));
}

#[test]
fn an_exploded_king_ends_the_game_before_anything_else() {
    // Black's king is gone; black has no moves and the fifty-move clock is
    // past 100, yet the result is a win for white.
    let p = pos("8/8/8/8/8/8/8/4K3 b - - 120 80");
    assert!(p.legal_moves().is_empty());
    assert_eq!(p.outcome(), Some(Outcome::Decisive { winner: Color::White, reason: WinReason::KingExploded }));
}

#[test]
fn checkmate_ends_the_game() {
    let p = pos("R6k/6pp/8/8/8/8/8/4K3 b - - 0 1");
    assert!(p.is_check());
    assert!(p.legal_moves().is_empty());
    assert_eq!(p.outcome(), Some(Outcome::Decisive { winner: Color::White, reason: WinReason::Checkmate }));
    // Mate also beats a fifty-move clock at 100.
    let late = pos("R6k/6pp/8/8/8/8/8/4K3 b - - 100 80");
    assert_eq!(late.outcome(), Some(Outcome::Decisive { winner: Color::White, reason: WinReason::Checkmate }));
}

#[test]
fn exploding_the_enemy_king_is_a_way_out_of_check() {
    // Same back-rank check, but Nxe2 explodes the white king on e1.
    let p = pos("R6k/6pp/8/8/8/2n5/4P3/4K3 b - - 0 1");
    assert!(p.is_check());
    assert_eq!(uci_moves(&p), strings(&["c3e2"]));
    assert_eq!(p.outcome(), None);
}

#[test]
fn stalemate_is_a_draw() {
    let p = pos("k7/8/1Q6/8/8/8/8/4K3 b - - 0 1");
    assert!(!p.is_check());
    assert!(p.legal_moves().is_empty());
    assert_eq!(p.outcome(), Some(Outcome::Draw { reason: DrawReason::Stalemate }));
    // Stalemate comes before the fifty-move rule.
    let late = pos("k7/8/1Q6/8/8/8/8/4K3 b - - 100 80");
    assert_eq!(late.outcome(), Some(Outcome::Draw { reason: DrawReason::Stalemate }));
}

/// `(white cannot win, black cannot win)` for `fen`.
fn cannot_win(fen: &str) -> (bool, bool) {
    let p = pos(fen);
    (p.has_insufficient_material(Color::White), p.has_insufficient_material(Color::Black))
}

#[test]
fn a_bare_king_cannot_win() {
    assert_eq!(cannot_win("8/8/8/4k3/8/8/8/4K2Q w - - 0 1"), (false, true));
    let p = pos("8/8/8/4k3/8/8/8/4K2Q w - - 0 1");
    assert!(!p.is_insufficient_material());
    assert_eq!(p.outcome(), None);
}

#[test]
fn bishops_that_never_meet_cannot_win() {
    // White's bishops on dark squares (c1, g1), black's on light (f5).
    assert_eq!(cannot_win("8/8/8/4kb2/8/8/8/2B1K1B1 w - - 0 1"), (true, true));
    assert_eq!(cannot_win("8/8/8/4kb2/8/8/8/2B1K3 w - - 0 1"), (true, true));
    let p = pos("8/8/8/4kb2/8/8/8/2B1K1B1 w - - 0 1");
    assert_eq!(p.outcome(), Some(Outcome::Draw { reason: DrawReason::InsufficientMaterial }));
    // White has a light bishop (f1) that can explode black's (d5).
    assert_eq!(cannot_win("8/8/8/3bk3/8/8/8/2B1KB2 w - - 0 1"), (false, false));
    // All bishops on dark squares can meet.
    assert_eq!(cannot_win("8/8/8/4k3/3b4/8/8/2B1K1B1 w - - 0 1"), (false, false));
}

#[test]
fn any_enemy_piece_lets_a_side_win() {
    // A lone knight each: either can explode a piece next to the other king.
    assert_eq!(cannot_win("8/8/8/4kn2/8/8/8/4KN2 w - - 0 1"), (false, false));
    assert_eq!(cannot_win("8/8/8/4kr2/8/8/8/4KN2 w - - 0 1"), (false, false));
}

#[test]
fn against_a_bare_king_a_queen_or_a_pawn_is_enough() {
    assert_eq!(cannot_win("8/8/8/4k3/8/8/8/4K2Q w - - 0 1"), (false, true));
    assert_eq!(cannot_win("8/8/8/4k3/8/8/4P3/4K3 w - - 0 1"), (false, true));
}

#[test]
fn against_a_bare_king_a_single_minor_piece_or_rook_is_not() {
    for fen in ["8/8/8/4k3/8/8/8/4KN2 w - - 0 1", "8/8/8/4k3/8/8/8/4KB2 w - - 0 1", "8/8/8/4k3/8/8/8/4KR2 w - - 0 1"] {
        assert_eq!(cannot_win(fen), (true, true), "{fen}");
        assert_eq!(pos(fen).outcome(), Some(Outcome::Draw { reason: DrawReason::InsufficientMaterial }), "{fen}");
    }
}

#[test]
fn against_a_bare_king_two_knights_are_not_enough_but_more_material_is() {
    assert_eq!(cannot_win("8/8/8/4k3/8/8/8/3NKN2 w - - 0 1"), (true, true));
    assert_eq!(cannot_win("8/8/8/4k3/8/8/8/2NNKN2 w - - 0 1"), (false, true));
    assert_eq!(cannot_win("8/8/8/4k3/8/8/8/3BKN2 w - - 0 1"), (false, true));
    assert_eq!(cannot_win("8/8/8/4k3/8/8/8/2B1KB2 w - - 0 1"), (false, true));
}

#[test]
fn material_never_matters_once_the_enemy_king_is_gone() {
    // White has a bare king, but black's king has exploded.
    let p = pos("8/8/8/8/8/8/8/4K3 b - - 0 1");
    assert!(!p.has_insufficient_material(Color::White));
    assert!(p.has_insufficient_material(Color::Black));
}

#[test]
fn threefold_repetition_draws_automatically() {
    let mut game = Game::new(Position::new(Variant::Atomic));
    let shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"];
    for (i, uci) in shuffle.iter().chain(&shuffle).enumerate() {
        assert_eq!(game.outcome(), None, "before ply {}", i + 1);
        game.play_uci(uci).unwrap();
    }
    // The start position has now stood on the board three times.
    assert_eq!(game.repetitions(), 3);
    let draw = Outcome::Draw { reason: DrawReason::ThreefoldRepetition };
    assert_eq!(game.outcome(), Some(draw));
    assert_eq!(game.play_uci("g1f3"), Err(GameError::Finished(draw)));
}

#[test]
fn an_en_passant_square_no_legal_move_can_use_does_not_make_the_position_differ() {
    // After d7d5, exd6 e.p. would empty d5 and e5 and expose the white king
    // to the rook on h5, so python-chess counts the position after d7d5 as
    // the one the king shuffles return to: threefold at the ninth ply.
    let mut game = Game::new(pos("8/3p4/8/K3P2r/8/8/8/7k b - - 0 1"));
    game.play_uci("d7d5").unwrap();
    assert_eq!(uci_moves(game.position()), strings(&["a5a4", "a5a6", "a5b4", "a5b5", "a5b6", "e5e6"]));
    for uci in ["a5a4", "h1g1", "a4a5", "g1h1", "a5a4", "h1g1", "a4a5", "g1h1"] {
        game.play_uci(uci).unwrap();
    }
    assert_eq!(game.repetitions(), 3);
    assert_eq!(game.outcome(), Some(Outcome::Draw { reason: DrawReason::ThreefoldRepetition }));
}

#[test]
fn the_fifty_move_rule_draws_automatically_at_halfmove_100() {
    let mut game = Game::new(pos("4k3/8/8/8/8/8/4P3/R3K3 w Q - 99 60"));
    assert_eq!(game.outcome(), None);
    game.play_uci("a1b1").unwrap();
    assert_eq!(game.position().halfmoves(), 100);
    let draw = Outcome::Draw { reason: DrawReason::FiftyMoves };
    assert_eq!(game.outcome(), Some(draw));
    assert_eq!(game.play_uci("e8d8"), Err(GameError::Finished(draw)));
    // A pawn move at 99 resets the clock instead.
    let mut game = Game::new(pos("4k3/8/8/8/8/8/4P3/R3K3 w Q - 99 60"));
    game.play_uci("e2e3").unwrap();
    assert_eq!(game.position().fen(), "4k3/8/8/8/8/4P3/8/R3K3 b Q - 0 60");
    assert_eq!(game.outcome(), None);
}

#[test]
fn on_a_flag_the_side_with_time_wins_unless_it_cannot_win() {
    let queen = pos("8/8/8/4k3/8/8/8/4K2Q w - - 0 1");
    let white_wins = Outcome::Decisive { winner: Color::White, reason: WinReason::Timeout };
    let draw = Outcome::Draw { reason: DrawReason::TimeoutVsInsufficientMaterial };
    assert_eq!(queen.outcome_on_timeout(Color::Black), white_wins);
    assert_eq!(queen.outcome_on_timeout(Color::White), draw);
    // A lone knight against a bare king cannot win on time either.
    let knight = pos("8/8/8/4k3/8/8/8/4KN2 w - - 0 1");
    assert_eq!(knight.outcome_on_timeout(Color::Black), draw);
    // Knight against knight: whoever keeps time wins.
    let knights = pos("8/8/8/4kn2/8/8/8/4KN2 w - - 0 1");
    assert_eq!(
        knights.outcome_on_timeout(Color::White),
        Outcome::Decisive { winner: Color::Black, reason: WinReason::Timeout }
    );
}
