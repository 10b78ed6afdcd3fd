//! The observation the shard sends the engine for a fog-of-war computer
//! seat holds nothing the computer's side cannot see: for random games,
//! every square a view shows is one the side sees, with what really stands
//! there; every fogged square is one it does not see; the opponent's moves
//! are never named; and the lost squares are exactly the side's pieces
//! taken out of its sight.

use fogblast_game_service::engine_view::fog_observation;
use fogblast_proto::engine::Side;
use fogblast_rules::{Bitboard, CastlingMode, Color, Game, Piece, Position, Square, Variant};
use proptest::prelude::*;

/// A game of `choices.len()` plies at most, each move picked by a choice.
fn random_game(choices: &[u32]) -> Game {
    let mut game = Game::new(Position::new(Variant::Fog));
    for &choice in choices {
        if game.outcome().is_some() {
            break;
        }
        let moves = game.position().legal_moves();
        // Captures half the time, so pieces are lost in and out of sight.
        let captures: Vec<_> = moves.iter().copied().filter(|m| m.is_capture()).collect();
        let pool = if choice % 2 == 0 && !captures.is_empty() { &captures[..] } else { &moves[..] };
        game.play(pool[(choice / 2) as usize % pool.len()]).unwrap();
    }
    game
}

/// The squares and pieces a view's text shows; `*` squares are left out.
fn shown(view: &str) -> Vec<(Square, Option<Piece>)> {
    let mut out = Vec::new();
    for (row, rank) in view.split('/').enumerate() {
        let mut file = 0u8;
        for c in rank.chars() {
            let sq = |file: u8| Square::new((7 - row as u8) * 8 + file).unwrap();
            if let Some(n) = c.to_digit(10) {
                for _ in 0..n {
                    out.push((sq(file), None));
                    file += 1;
                }
            } else {
                if c != '*' {
                    out.push((sq(file), Some(Piece::from_char(c).unwrap())));
                }
                file += 1;
            }
        }
        assert_eq!(file, 8, "rank {row} of {view}");
    }
    out
}

fn check(game: &Game, color: Color) {
    let obs = fog_observation(game, color);
    assert_eq!(obs.side, if color == Color::White { Side::White } else { Side::Black } as i32);
    assert_eq!(obs.plies.len(), game.moves().len());
    let mut position = *game.initial();
    for (ply, (&m, observed)) in game.moves().iter().zip(&obs.plies).enumerate() {
        let mover = position.turn();
        let (after, _) = position.play(m).unwrap();
        let seen = after.visible_squares(color);
        let shown = shown(&observed.view);
        let shown_squares: Bitboard = shown.iter().map(|&(sq, _)| sq).collect();
        assert_eq!(shown_squares, seen, "ply {ply}: the view shows exactly the squares {color} sees");
        for (sq, piece) in shown {
            assert_eq!(piece, after.board().piece_at(sq), "ply {ply}: {sq} as it is");
        }
        if mover == color {
            assert_eq!(observed.own_move, m.to_uci(CastlingMode::Standard).to_string());
            assert!(observed.lost.is_empty() && observed.en_passant.is_empty());
        } else {
            assert!(observed.own_move.is_empty(), "ply {ply}: the opponent's move is never named");
            let ours_before = position.board().by_color(color);
            let taken = ours_before - after.board().by_color(color);
            let lost: Bitboard = observed.lost.iter().map(|s| s.parse::<Square>().unwrap()).collect();
            assert_eq!(lost, taken - seen, "ply {ply}: lost squares are our pieces taken out of sight");
            if !observed.en_passant.is_empty() {
                let ep: Square = observed.en_passant.parse().unwrap();
                assert!(seen.contains(ep), "ply {ply}: the en passant square is seen");
            }
        }
        position = after;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn the_engine_is_never_told_a_hidden_square(choices in prop::collection::vec(any::<u32>(), 0..120)) {
        let game = random_game(&choices);
        for color in Color::ALL {
            check(&game, color);
        }
    }
}

#[test]
fn a_capture_out_of_sight_is_flagged_and_nothing_else_leaks() {
    // Black's queen takes the h4 pawn in white's sight, then the h1 rook,
    // out of it.
    let mut game = Game::new(Position::new(Variant::Fog));
    for uci in ["h2h4", "e7e5", "g2g3", "d8h4", "a2a3", "h4h1"] {
        game.play_uci(uci).unwrap();
    }
    let obs = fog_observation(&game, Color::White);
    assert!(obs.plies[3].lost.is_empty(), "the h4 pawn was taken in sight: {:?}", obs.plies[3]);
    assert_eq!(obs.plies[5].lost, vec!["h1".to_owned()]);
    let text = format!("{obs:?}");
    for hidden in ["e7e5", "d8h4", "h4h1"] {
        assert!(!text.contains(hidden), "{hidden} leaked into {text}");
    }
    check(&game, Color::White);
    check(&game, Color::Black);
}
