//! The gateway's HTTP routes: the WebSocket upgrade at `/ws`, health and
//! readiness (metrics are on the admin port), a spectator's view of a game at `/api/games/{id}`,
//! the games being played at `/api/tv/games` and `/api/tv/channels`,
//! computer analysis at `/api/games/{id}/analysis`,
//! recovery codes at `/api/recovery`, puzzles at `/api/puzzle` (lichess's puzzle API),
//! and the web client a browser opens (`/`, invite links `/g/{code}` and
//! its files under `/assets/`, see `web.rs`).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, Path, Request, State, WebSocketUpgrade};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::GetStateRequest;
use fogblast_proto::ids::GameId;
use fogblast_protocol::ServerFrame;

use crate::limits::HttpBudget;
use crate::{
    analysis_api, archive_api, bot_api, fog_review, frames, games_in_play, puzzle_api, recovery, session, Gateway,
};

// The web client lives beside this file; it is declared here so that the
// HTTP layer alone owns it.
#[path = "web.rs"]
pub mod web;

/// Bytes read from a client socket at a time, and the read buffer every
/// socket keeps between frames: a client's frames are a few dozen bytes
/// (a move is about 80), so an idle socket holds 512 bytes, not 2 KiB. A
/// larger frame, up to `max_frame_bytes`, still fits: the buffer grows for
/// it and is read into 512 bytes at a time.
const READ_BUFFER: usize = 512;

pub fn routes(gateway: Arc<Gateway>) -> Router {
    let api = Router::new()
        .route("/api/games/{id}", get(game))
        .route("/api/games/{id}/pgn", get(archive_api::pgn))
        .route("/api/games/{id}/review", get(fog_review::get))
        .route("/api/games/{id}/analysis", post(analysis_api::request).get(analysis_api::get))
        // lichess's export address, which lichess-bot reads at a game's end.
        .route("/game/export/{id}", get(archive_api::pgn))
        .route("/api/players/{id}", get(archive_api::profile))
        .route("/api/players/{id}/games", get(archive_api::player_games))
        .route("/api/leaderboard/{variant}", get(archive_api::leaderboard))
        .route("/api/tv/games", get(games_in_play::list))
        .route("/api/tv/channels", get(games_in_play::channels))
        .route("/api/recovery", post(recovery::issue).delete(recovery::revoke))
        .route("/api/recovery/redeem", post(recovery::redeem))
        .route("/api/puzzle/daily", get(puzzle_api::daily))
        .route("/api/puzzle/next", get(puzzle_api::next))
        .route("/api/puzzle/rating", get(puzzle_api::player_rating))
        .route("/api/puzzle/{id}", get(puzzle_api::get))
        .route("/api/puzzle/{id}/attempt", post(puzzle_api::attempt))
        .merge(bot_api::token_routes())
        .route_layer(middleware::from_fn_with_state((gateway.clone(), HttpBudget::Api), limited));
    Router::new()
        .route("/ws", get(upgrade))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(ready))
        .merge(api)
        .merge(bot_api::routes())
        // The page and its files have budgets of their own: a page load
        // fetches dozens of files.
        .merge(
            web::page_routes()
                .route_layer(middleware::from_fn_with_state((gateway.clone(), HttpBudget::Page), limited)),
        )
        .merge(
            web::file_routes()
                .route_layer(middleware::from_fn_with_state((gateway.clone(), HttpBudget::File), limited)),
        )
        .with_state(gateway)
}

/// Each address's requests come out of `budget`'s bucket; past it the
/// answer is 429 with `Retry-After` (whole seconds) and the usual error body.
async fn limited(
    State((gateway, budget)): State<(Arc<Gateway>, HttpBudget)>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    let ip = client_ip(&gateway, peer, request.headers());
    match gateway.limits.http_request(budget, ip) {
        Ok(()) => next.run(request).await,
        Err(wait) => {
            gateway.metrics.errors.with_label_values(&[ErrorCode::RateLimited.as_ws_code()]).inc();
            let error = ServiceError::new(ErrorCode::RateLimited, "too many requests from your address: slow down");
            let retry_after = wait.as_secs_f64().ceil().max(1.0) as u64;
            let mut response = error_response(&error);
            response.headers_mut().insert(header::RETRY_AFTER, retry_after.into());
            response
        }
    }
}

/// The client's address as the per-address limits count it.
pub(crate) fn client_ip(gateway: &Gateway, peer: SocketAddr, headers: &HeaderMap) -> IpAddr {
    let addresses = &gateway.addresses;
    addresses.limit_key(addresses.client(peer.ip(), headers))
}

async fn upgrade(
    State(gateway): State<Arc<Gateway>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    if *gateway.draining.borrow() {
        return (StatusCode::SERVICE_UNAVAILABLE, "draining: connect to another gateway").into_response();
    }
    let ip = client_ip(&gateway, peer, &headers);
    if !gateway.limits.connect(ip) {
        gateway.metrics.closed.with_label_values(&["too many connections from one address"]).inc();
        return (StatusCode::TOO_MANY_REQUESTS, "too many connections from your address").into_response();
    }
    let max = gateway.config.settings.max_frame_bytes;
    upgrade
        .max_frame_size(max)
        .max_message_size(max)
        // The library zeroes its whole read buffer (128 KiB by default) on
        // every read: most of a busy gateway's CPU time, and 128 KiB of
        // memory per connection. Client frames are small (`READ_BUFFER`);
        // a larger one still fits, the buffer grows for it.
        .read_buffer_size(READ_BUFFER)
        .on_failed_upgrade({
            let gateway = gateway.clone();
            move |_| gateway.limits.disconnect(ip)
        })
        .on_upgrade({
            // Counted from the accepted request, not from the upgrade: a
            // drain that starts in between still waits for this session.
            let session = gateway.tasks.token();
            move |socket| async move {
                session::serve(socket, gateway, ip).await;
                drop(session);
            }
        })
}

/// Whether the gateway takes new connections, or why not.
pub fn readiness(gateway: &Gateway) -> Result<(), String> {
    if *gateway.draining.borrow() {
        Err("draining".to_owned())
    } else if gateway.router.live_shards() == 0 {
        Err("no game shard is live".to_owned())
    } else {
        Ok(())
    }
}

async fn ready(State(gateway): State<Arc<Gateway>>) -> Response {
    match readiness(&gateway) {
        Ok(()) => (StatusCode::OK, "ready").into_response(),
        Err(why) => (StatusCode::SERVICE_UNAVAILABLE, why).into_response(),
    }
}

pub(crate) fn error_response(error: &ServiceError) -> Response {
    let status = StatusCode::from_u16(error.code.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(ServerFrame::error(error.code, error.message.clone(), None))).into_response()
}

/// A JSON body, or the error as its status and an error frame.
pub(crate) fn json_or_error(result: Result<serde_json::Value, ServiceError>) -> Response {
    match result {
        Ok(body) => Json(body).into_response(),
        Err(error) => error_response(&error),
    }
}

/// A spectator's view: in fog of war, no pieces and no moves until the end.
async fn game(State(gateway): State<Arc<Gateway>>, Path(id): Path<String>) -> Response {
    let game = match GameId::parse(&id) {
        Ok(game) => game,
        Err(e) => return error_response(&ServiceError::new(ErrorCode::BadRequest, e.to_string())),
    };
    let request = GetStateRequest { game_id: game.to_string(), player_id: String::new() };
    let state = gateway.router.get_state(request).await;
    match state {
        Ok(state) => Json(ServerFrame::State(Box::new(frames::state(&state)))).into_response(),
        // Finished games leave the game service after a while; the archive keeps them.
        Err(error) if error.code == ErrorCode::NotFound && gateway.rating.is_some() => {
            match archive_api::archived_game(&gateway, game.as_str()).await {
                Ok(archived) => Json(archived).into_response(),
                Err(_) => error_response(&error),
            }
        }
        Err(error) => error_response(&error),
    }
}
