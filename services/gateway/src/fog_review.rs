//! Fog hindsight review: a finished fog-of-war game stepped through with,
//! at every ply, the true board and what each player saw of it, the
//! moments a player's king stood where the opponent could take it with a
//! piece the player could not see, the king captures a player let pass,
//! and the free pieces (worth a minor piece or more, undefended, in sight)
//! a player could have taken and did not, with a count of each per player.
//!
//! It is computed from the archived game, which holds only finished games:
//! while a game is played there is no review of it for anyone.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::ids::GameId;
use fogblast_rules::{Bitboard, CastlingMode, Color, Move, Position, Role, Square, Variant};
use serde::Serialize;

use crate::Gateway;

/// What one player saw of a position.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct SideView {
    /// The board as FEN with `*` on the squares the player could not see.
    pub board: String,
    /// The squares the player saw, by name, in board order.
    pub visible: Vec<String>,
}

/// The position after a ply (ply 0: the start), with both views.
#[derive(Debug, Serialize)]
pub struct ReviewedPly {
    pub ply: usize,
    /// The move that led here; `None` at the start.
    pub uci: Option<String>,
    /// The true position.
    pub fen: String,
    pub white: SideView,
    pub black: SideView,
}

/// A moment worth showing, at a position.
#[derive(Debug, Serialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Moment {
    /// `color`'s king could be taken by the pieces on `by`, none of which
    /// `color` could see.
    KingExposedUnseen {
        ply: usize,
        #[serde(serialize_with = "color_name")]
        color: Color,
        king: String,
        by: Vec<String>,
    },
    /// `color` could take the enemy king with `uci` and played something else.
    MissedKingCapture {
        ply: usize,
        #[serde(serialize_with = "color_name")]
        color: Color,
        uci: String,
    },
    /// `color` could take the undefended piece on `square`, in sight, and
    /// took nothing of as much worth.
    MissedCapture {
        ply: usize,
        #[serde(serialize_with = "color_name")]
        color: Color,
        uci: String,
        square: String,
        #[serde(serialize_with = "role_name")]
        role: Role,
    },
}

fn color_name<S: serde::Serializer>(color: &Color, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(if *color == Color::White { "white" } else { "black" })
}

fn role_name<S: serde::Serializer>(role: &Role, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&format!("{role:?}").to_lowercase())
}

/// One player's counts.
#[derive(Debug, Default, Serialize, PartialEq, Eq)]
pub struct SideSummary {
    pub moves: usize,
    pub captures: usize,
    pub king_exposed_unseen: usize,
    pub missed_king_captures: usize,
    pub missed_captures: usize,
}

#[derive(Debug, Serialize)]
pub struct Review {
    pub plies: Vec<ReviewedPly>,
    pub moments: Vec<Moment>,
    pub white: SideSummary,
    pub black: SideSummary,
}

/// Why a game cannot be reviewed.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReviewError {
    #[error("the initial position {0:?} cannot be read")]
    InitialPosition(String),
    #[error("move {ply} ({uci}) is not legal in the game's position")]
    IllegalMove { ply: usize, uci: String },
}

/// The review of the fog game from `initial` through `moves` (UCI).
pub fn review(initial: Position, moves: &[String]) -> Result<Review, ReviewError> {
    let mut plies = vec![reviewed(0, None, &initial)];
    let mut moments = Vec::new();
    let mut summary = [SideSummary::default(), SideSummary::default()];
    let mut pos = initial;
    for (index, text) in moves.iter().enumerate() {
        let illegal = || ReviewError::IllegalMove { ply: index, uci: text.clone() };
        let uci = text.parse().map_err(|_| illegal())?;
        let played = pos.parse_uci(&uci).ok_or_else(illegal)?;
        let mover = pos.turn();
        moments.extend(missed_chances(&pos, index, played));
        let side = &mut summary[mover as usize];
        side.moves += 1;
        side.captures += usize::from(played.is_capture());
        pos.play_unchecked(played);
        moments.extend(king_exposed_unseen(&pos, index + 1));
        plies.push(reviewed(index + 1, Some(text.clone()), &pos));
    }
    for moment in &moments {
        let (color, count): (Color, fn(&mut SideSummary) -> &mut usize) = match moment {
            Moment::KingExposedUnseen { color, .. } => (*color, |s| &mut s.king_exposed_unseen),
            Moment::MissedKingCapture { color, .. } => (*color, |s| &mut s.missed_king_captures),
            Moment::MissedCapture { color, .. } => (*color, |s| &mut s.missed_captures),
        };
        *count(&mut summary[color as usize]) += 1;
    }
    let [white, black] = summary;
    Ok(Review { plies, moments, white, black })
}

fn reviewed(ply: usize, uci: Option<String>, pos: &Position) -> ReviewedPly {
    let view = |color| {
        let view = pos.fog_view(color);
        SideView { board: view.board_fen(), visible: names(view.visible) }
    };
    ReviewedPly { ply, uci, fen: pos.fen(), white: view(Color::White), black: view(Color::Black) }
}

fn names(squares: Bitboard) -> Vec<String> {
    squares.into_iter().map(|sq: Square| sq.to_string()).collect()
}

/// After a move, the mover's king where the side to move can take it with
/// pieces the mover does not see.
fn king_exposed_unseen(pos: &Position, ply: usize) -> Option<Moment> {
    let exposed = !pos.turn();
    let king = pos.board().king_of(exposed)?;
    let takers: Bitboard = pos
        .legal_moves()
        .into_iter()
        .filter(|m| m.capture() == Some(Role::King))
        .map(|m| Bitboard::from(m.from()))
        .fold(Bitboard::EMPTY, |all, from| all | from);
    let unseen = takers - pos.visible_squares(exposed);
    (takers.any() && unseen == takers).then(|| Moment::KingExposedUnseen {
        ply,
        color: exposed,
        king: king.to_string(),
        by: names(takers),
    })
}

/// What the side to move at `pos` could have taken and did not, given it
/// played `played` (at `ply`, counted from 0).
fn missed_chances(pos: &Position, ply: usize, played: Move) -> Option<Moment> {
    let color = pos.turn();
    let captures: Vec<Move> = pos.legal_moves().into_iter().filter(|m| m.is_capture()).collect();
    if played.capture() == Some(Role::King) {
        return None;
    }
    if let Some(king_capture) = captures.iter().find(|m| m.capture() == Some(Role::King)) {
        return Some(Moment::MissedKingCapture { ply, color, uci: uci(*king_capture) });
    }
    let seen = pos.visible_squares(color);
    let board = pos.board();
    let worth = |role: Option<Role>| role.map_or(0, value);
    let free = captures
        .iter()
        .filter(|m| worth(m.capture()) >= value(Role::Knight) && worth(m.capture()) > worth(played.capture()))
        .filter(|m| seen.contains(m.to()))
        .filter(|m| !board.attackers(m.to(), !color, board.occupied()).any())
        .max_by_key(|m| worth(m.capture()))?;
    Some(Moment::MissedCapture {
        ply,
        color,
        uci: uci(*free),
        square: free.to().to_string(),
        role: free.capture().unwrap_or(Role::Pawn),
    })
}

/// A piece's worth in pawns, for choosing which missed capture to show.
fn value(role: Role) -> u32 {
    match role {
        Role::Pawn => 1,
        Role::Knight | Role::Bishop => 3,
        Role::Rook => 5,
        Role::Queen => 9,
        Role::King => 100,
    }
}

fn uci(m: Move) -> String {
    m.to_uci(CastlingMode::Standard).to_string()
}

/// `GET /api/games/{id}/review`: the hindsight review of a finished fog
/// game; 202 with `state: "pending"` for a game that has ended and is not
/// archived yet (ask again), 404 for a game in play or none.
pub async fn get(State(gateway): State<Arc<Gateway>>, Path(id): Path<String>) -> Response {
    match review_of(&gateway, &id).await {
        Ok(review) => Json(review).into_response(),
        Err(error) if error.code == ErrorCode::NotFound => match just_ended(&gateway, &id).await {
            Ok(true) => {
                (StatusCode::ACCEPTED, Json(serde_json::json!({ "game": id, "state": "pending" }))).into_response()
            }
            Ok(false) => crate::http::error_response(&error),
            Err(error) => crate::http::error_response(&error),
        },
        Err(error) => crate::http::error_response(&error),
    }
}

/// The game service holds `id` as ended: it is on its way to the archive.
async fn just_ended(gateway: &Gateway, id: &str) -> Result<bool, ServiceError> {
    let Ok(game) = GameId::parse(id) else { return Ok(false) };
    let status = crate::analysis_api::game_service_status(gateway, &game).await?;
    Ok(status == Some(fogblast_proto::game::Status::Ended))
}

async fn review_of(gateway: &Gateway, id: &str) -> Result<Review, ServiceError> {
    let archived = crate::archive_api::archived_record(gateway, id).await?;
    let game = archived.game.ok_or_else(|| ServiceError::new(ErrorCode::NotFound, format!("no finished game {id}")))?;
    if Variant::try_from(game.variant()) != Ok(Variant::Fog) {
        return Err(ServiceError::new(ErrorCode::BadRequest, "only fog of war games have a hindsight review"));
    }
    let initial = match game.initial_fen.as_str() {
        "" | "start" => Ok(Position::new(Variant::Fog)),
        fen => Position::from_fen(fen, Variant::Fog).map_err(|_| ReviewError::InitialPosition(fen.to_owned())),
    };
    initial
        .and_then(|initial| review(initial, &game.moves))
        .map_err(|error| ServiceError::new(ErrorCode::Internal, format!("game {id}: {error}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moves(list: &[&str]) -> Vec<String> {
        list.iter().map(|m| m.to_string()).collect()
    }

    #[test]
    fn a_king_opened_to_a_bishop_in_the_fog_and_the_capture_let_pass_are_found() {
        // White's d-pawn shields the king from a bishop on a5 white cannot see.
        let initial = Position::from_fen("4k3/8/8/b7/8/8/3P4/4K3 w - - 0 1", Variant::Fog).unwrap();
        let review = review(initial, &moves(&["d2d3", "e8d8"])).unwrap();
        assert_eq!(
            review.moments,
            [
                Moment::KingExposedUnseen { ply: 1, color: Color::White, king: "e1".into(), by: vec!["a5".into()] },
                Moment::MissedKingCapture { ply: 1, color: Color::Black, uci: "a5e1".into() },
            ]
        );
        assert_eq!(review.white, SideSummary { moves: 1, king_exposed_unseen: 1, ..SideSummary::default() });
        assert_eq!(review.black, SideSummary { moves: 1, missed_king_captures: 1, ..SideSummary::default() });
        assert_eq!(review.plies.len(), 3);
        assert!(!review.plies[1].white.visible.contains(&"a5".to_owned()), "white did not see the bishop");
        assert!(review.plies[1].black.visible.contains(&"e1".to_owned()), "black saw the king");
        assert!(review.plies[1].white.board.contains('*'), "the fog on white's board");
    }

    #[test]
    fn a_seen_threat_and_a_taken_king_are_no_moments() {
        // The rook on b1 sees the bishop on b4 (defended by the a5 pawn):
        // opening the king to it is a risk taken knowingly.
        let initial = Position::from_fen("4k3/8/8/p7/1b6/8/3P4/1R2K3 w - - 0 1", Variant::Fog).unwrap();
        let review = review(initial, &moves(&["d2d3", "b4e1"])).unwrap();
        assert_eq!(review.moments, []);
        assert_eq!(review.black.captures, 1);
    }

    #[test]
    fn a_free_piece_in_sight_left_alone_is_a_missed_capture() {
        // White's rook may take the undefended knight on a5.
        let initial = Position::from_fen("7k/8/8/n7/8/8/8/R3K3 w - - 0 1", Variant::Fog).unwrap();
        let review = review(initial, &moves(&["e1f1"])).unwrap();
        assert_eq!(
            review.moments,
            [Moment::MissedCapture {
                ply: 0,
                color: Color::White,
                uci: "a1a5".into(),
                square: "a5".into(),
                role: Role::Knight
            }]
        );
    }

    #[test]
    fn an_illegal_move_in_the_record_is_an_error_not_a_panic() {
        let error = review(Position::new(Variant::Fog), &moves(&["e2e4", "e2e4"])).unwrap_err();
        assert_eq!(error, ReviewError::IllegalMove { ply: 1, uci: "e2e4".into() });
    }
}
