//! The archive over HTTP: players' profiles and games, leaderboards and PGN
//! export, answered by the rating service over gRPC and rendered as JSON
//! (or PGN) for browsers and other clients.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Json;
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::events::FinishedPlayer;
use fogblast_proto::game::{EndReason, Level};
use fogblast_proto::rating::{
    ArchivedGame, GameRequest, LeaderboardRequest, PlayerGamesRequest, ProfileRequest, RatingChange,
};
use fogblast_protocol::convert::level;
use fogblast_protocol::{Player, TimeControl, Variant};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::deadline::within;
use crate::http::error_response;
use crate::Gateway;

const RATING: &str = "rating service";

fn variant_from_path(name: &str) -> Result<Variant, ServiceError> {
    name.parse().map_err(|_| ServiceError::new(ErrorCode::NotFound, "variants are standard, atomic and fog"))
}

/// A seat as `state.players` writes it.
fn player(player: Option<&FinishedPlayer>) -> Option<Player> {
    player.map(|p| {
        if p.computer {
            Player::Computer { name: p.name.clone(), level: level(Level::try_from(p.level).unwrap_or_default()) }
        } else {
            Player::Person { id: p.id.clone(), name: p.name.clone() }
        }
    })
}

fn change_value(change: Option<&RatingChange>) -> Value {
    change.map_or(Value::Null, |c| {
        json!({
            "before": c.before.round() as i64,
            "after": c.after.round() as i64,
            "diff": (c.after.round() - c.before.round()) as i64,
            "deviation": c.deviation.round() as i64,
            "provisional": c.provisional,
        })
    })
}

/// An archived game as JSON.
pub fn archived_value(archived: &ArchivedGame) -> Value {
    let Some(game) = &archived.game else { return Value::Null };
    json!({
        "game": game.game_id,
        "variant": Variant::from(game.variant()),
        "chess960": game.chess960,
        "initial_fen": game.initial_fen,
        "players": { "white": player(game.white.as_ref()), "black": player(game.black.as_ref()) },
        "rated": game.rated,
        "result": game.result,
        "reason": fogblast_protocol::EndReason::from(EndReason::try_from(game.reason).unwrap_or_default()),
        "moves": game.moves,
        "clocks_ms": game.clock_ms,
        "time_control": game.clock.map(TimeControl::from),
        "fen": game.final_fen,
        "started_ms": game.started_at_ms,
        "ended_ms": game.ended_at_ms,
        "rating": { "white": change_value(archived.white_rating.as_ref()), "black": change_value(archived.black_rating.as_ref()) },
        "tournament": Some(game.tournament_id.as_str()).filter(|id| !id.is_empty()),
        "berserk": {
            "white": game.white.as_ref().is_some_and(|p| p.berserk),
            "black": game.black.as_ref().is_some_and(|p| p.berserk),
        },
    })
}

pub async fn profile(State(gateway): State<Arc<Gateway>>, Path(id): Path<String>) -> Response {
    let result = async {
        let profile = within(
            gateway.config.settings.rating_timeout(),
            RATING,
            gateway.rating_for("the game archive needs")?.get_profile(ProfileRequest { player_id: id }),
        )
        .await?;
        let ratings: Vec<Value> = profile
            .ratings
            .iter()
            .map(|r| {
                json!({
                    "variant": Variant::from(r.variant()),
                    "rating": r.rating.round() as i64,
                    "deviation": r.deviation.round() as i64,
                    "provisional": r.provisional,
                    "games": r.rated_games, "wins": r.wins, "losses": r.losses, "draws": r.draws,
                })
            })
            .collect();
        Ok::<_, ServiceError>(
            json!({ "player": profile.player_id, "name": profile.name, "ratings": ratings, "games": profile.games }),
        )
    }
    .await;
    result.map_or_else(|e| error_response(&e), |v| Json(v).into_response())
}

#[derive(Debug, Deserialize)]
pub struct Page {
    page_token: Option<String>,
    page_size: Option<u32>,
}

pub async fn player_games(
    State(gateway): State<Arc<Gateway>>,
    Path(id): Path<String>,
    Query(page): Query<Page>,
) -> Response {
    let result = async {
        let request = PlayerGamesRequest {
            player_id: id,
            page_size: page.page_size.unwrap_or(0),
            page_token: page.page_token.unwrap_or_default(),
        };
        let games = within(
            gateway.config.settings.rating_timeout(),
            RATING,
            gateway.rating_for("the game archive needs")?.list_player_games(request),
        )
        .await?;
        let next = Some(games.next_page_token).filter(|t| !t.is_empty());
        Ok::<_, ServiceError>(
            json!({ "games": games.games.iter().map(archived_value).collect::<Vec<_>>(), "next_page_token": next }),
        )
    }
    .await;
    result.map_or_else(|e| error_response(&e), |v| Json(v).into_response())
}

#[derive(Debug, Deserialize)]
pub struct Limit {
    limit: Option<u32>,
}

pub async fn leaderboard(
    State(gateway): State<Arc<Gateway>>,
    Path(variant): Path<String>,
    Query(limit): Query<Limit>,
) -> Response {
    let result = async {
        let variant = variant_from_path(&variant)?;
        let request = LeaderboardRequest {
            variant: fogblast_proto::game::Variant::from(variant) as i32,
            limit: limit.limit.unwrap_or(0),
        };
        let board = within(gateway.config.settings.rating_timeout(), RATING, gateway.rating_for("the game archive needs")?.get_leaderboard(request)).await?;
        let entries: Vec<Value> = board
            .entries
            .iter()
            .map(|e| {
                json!({ "rank": e.rank, "player": e.player_id, "name": e.name,
                        "rating": e.rating.round() as i64, "deviation": e.deviation.round() as i64, "games": e.rated_games })
            })
            .collect();
        Ok::<_, ServiceError>(json!({ "variant": variant, "entries": entries }))
    }
    .await;
    result.map_or_else(|e| error_response(&e), |v| Json(v).into_response())
}

/// A finished game from the archive, for when the game service no longer holds it.
pub async fn archived_game(gateway: &Gateway, id: &str) -> Result<Value, ServiceError> {
    Ok(archived_value(&archived_record(gateway, id).await?))
}

/// A finished game as the archive keeps it.
pub async fn archived_record(gateway: &Gateway, id: &str) -> Result<ArchivedGame, ServiceError> {
    let timeout = gateway.config.settings.rating_timeout();
    within(
        timeout,
        RATING,
        gateway.rating_for("the game archive needs")?.get_game(GameRequest { game_id: id.to_owned() }),
    )
    .await
}

/// An archived game's PGN.
pub async fn pgn_text(gateway: &Gateway, id: &str) -> Result<String, ServiceError> {
    let timeout = gateway.config.settings.rating_timeout();
    let pgn = within(
        timeout,
        RATING,
        gateway.rating_for("the game archive needs")?.export_pgn(GameRequest { game_id: id.to_owned() }),
    )
    .await?;
    Ok(pgn.pgn)
}

pub async fn pgn(State(gateway): State<Arc<Gateway>>, Path(id): Path<String>) -> Response {
    match pgn_text(&gateway, &id).await {
        Ok(pgn) => (
            [
                (header::CONTENT_TYPE, "application/x-chess-pgn; charset=utf-8".to_owned()),
                (header::CONTENT_DISPOSITION, format!("attachment; filename=\"fogblast-{id}.pgn\"")),
            ],
            pgn,
        )
            .into_response(),
        Err(error) => error_response(&error),
    }
}
