//! What the engine pool is told about a fog-of-war game: the computer
//! side's own observations, cut from the game exactly as the audience code
//! cuts them for a seat (the side's fog view after each ply, and the
//! squares where it lost pieces it no longer sees). The opponent's moves,
//! the position and the hidden squares never leave the shard.

use fogblast_proto::engine::{FogObservation, FogPly, Side};
use fogblast_rules::{CastlingMode, Color, Game};

/// The observation `color` has of `game`, oldest ply first.
pub fn fog_observation(game: &Game, color: Color) -> FogObservation {
    let mut position = *game.initial();
    let mut plies = Vec::with_capacity(game.moves().len());
    for &m in game.moves() {
        let mover = position.turn();
        let Ok((after, effects)) = position.play(m) else {
            // A game holds only legal moves; stop rather than guess.
            break;
        };
        let view = after.fog_view(color);
        let ply = if mover == color {
            FogPly {
                own_move: m.to_uci(CastlingMode::Standard).to_string(),
                view: view.board_fen(),
                ..FogPly::default()
            }
        } else {
            FogPly {
                own_move: String::new(),
                view: view.board_fen(),
                en_passant: view.ep_square.map(|sq| sq.to_string()).unwrap_or_default(),
                lost: effects
                    .removed_pieces_of(color)
                    .filter(|&(sq, _)| !view.visible.contains(sq))
                    .map(|(sq, _)| sq.to_string())
                    .collect(),
            }
        };
        plies.push(ply);
        position = after;
    }
    let side = match color {
        Color::White => Side::White,
        Color::Black => Side::Black,
    };
    FogObservation { side: side as i32, plies }
}
