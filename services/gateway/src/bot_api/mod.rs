//! The Bot and Board API: the part of lichess's HTTP API that bots use
//! (docs/bots.md), so that a lichess bot or a client built on berserk
//! plays here with its base URL changed. A bot is an anonymous player like
//! any other: its token is the one the WebSocket `welcome` hands out, or
//! one from `POST /api/token`, sent as `Authorization: Bearer <token>`.
//!
//! Streams (`/api/stream/event`, a game's stream, a seek) are ndjson
//! answers that stay open, with an empty line every few seconds to keep
//! them alive. Every refusal is a lichess status code with `{"error": ...}`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::{GameState, GetStateRequest};
use fogblast_proto::ids::{GameId, PlayerId};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use crate::Gateway;

mod account;
mod challenges;
pub use challenges::SeekStreams;
mod commands;
mod event_stream;
mod game_stream;
mod lichess;
mod swiss;
mod tournaments;

/// How often an open stream sends an empty line.
const KEEP_ALIVE: Duration = Duration::from_secs(5);

/// The largest request body read.
const MAX_BODY: usize = 4 * 1024;

/// The header a renewed token comes back in: a bot that keeps it never
/// sees its token expire.
pub const RENEWED_TOKEN_HEADER: &str = "fogblast-token";

/// `POST /api/token`, in the address's API budget like the rest of `/api`.
pub fn token_routes() -> Router<Arc<Gateway>> {
    Router::new()
        .route("/api/token", post(token))
        .route("/api/token/test", post(account::test_tokens))
        .route("/api/tournament", get(tournaments::list))
        .route("/api/tournament/{id}", get(tournaments::get))
        .route("/api/tournament/{id}/results", get(tournaments::results))
        .route("/api/swiss", get(swiss::list))
        .route("/api/swiss/{id}", get(swiss::get))
        .route("/api/swiss/{id}/results", get(swiss::results))
        .route("/api/swiss/{id}/games", get(swiss::games))
        .route("/swiss/{file}", get(swiss::trf))
}

/// The routes a token opens, each request in the player's Bot API budget
/// (and its address's); a request with a bad token is counted in the
/// address's API budget.
pub fn routes() -> Router<Arc<Gateway>> {
    Router::new()
        .route("/api/account", get(account::account))
        .route("/api/account/playing", get(account::playing))
        .route("/api/user/{id}", get(account::public_data))
        .route("/api/users/status", get(account::status))
        .route("/api/bot/online", get(account::online_bots))
        .route("/api/stream/event", get(event_stream::open))
        .route("/api/bot/game/stream/{id}", get(game_stream::open))
        .route("/api/board/game/stream/{id}", get(game_stream::open))
        .route("/api/bot/game/{id}/move/{uci}", post(commands::make_move))
        .route("/api/board/game/{id}/move/{uci}", post(commands::make_move))
        .route("/api/bot/game/{id}/resign", post(commands::resign))
        .route("/api/board/game/{id}/resign", post(commands::resign))
        .route("/api/bot/game/{id}/abort", post(commands::abort))
        .route("/api/board/game/{id}/abort", post(commands::abort))
        .route("/api/bot/game/{id}/draw/{answer}", post(commands::draw))
        .route("/api/board/game/{id}/draw/{answer}", post(commands::draw))
        .route("/api/bot/game/{id}/chat", post(commands::chat))
        .route("/api/bot/game/{id}/berserk", post(commands::berserk))
        .route("/api/board/game/{id}/berserk", post(commands::berserk))
        .route("/api/board/game/{id}/chat", post(commands::chat))
        .route("/api/bot/game/{id}/takeback/{answer}", post(commands::takeback))
        .route("/api/board/game/{id}/takeback/{answer}", post(commands::takeback))
        .route("/api/board/game/{id}/claim-victory", post(commands::claim_victory))
        .route("/api/board/game/{id}/claim-victory/", post(commands::claim_victory))
        .route("/api/challenge/ai", post(challenges::computer))
        .route("/api/challenge/{id}", post(challenges::create))
        .route("/api/challenge/{id}/accept", post(challenges::accept))
        .route("/api/challenge/{id}/decline", post(challenges::decline))
        .route("/api/challenge/{id}/cancel", post(challenges::cancel))
        .route("/api/board/seek", post(challenges::seek))
        .route("/api/tournament", post(tournaments::create))
        .route("/api/tournament/{id}/join", post(tournaments::join))
        .route("/api/tournament/{id}/withdraw", post(tournaments::withdraw))
        .route("/api/swiss/new/{team}", post(swiss::create))
        .route("/api/swiss/{id}/join", post(swiss::join))
        .route("/api/swiss/{id}/withdraw", post(swiss::withdraw))
}

/// A refusal as lichess writes it.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
    retry_after: Option<Duration>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError { status, message: message.into(), retry_after: None }
    }

    /// 429 with `Retry-After`: the budget is spent for `wait`.
    pub fn slow_down(wait: Duration) -> ApiError {
        ApiError {
            retry_after: Some(wait),
            ..ApiError::new(StatusCode::TOO_MANY_REQUESTS, "too many requests: slow down")
        }
    }

    pub fn bad(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }
}

impl From<ServiceError> for ApiError {
    /// Lichess answers 400 to every refused game command (not your turn,
    /// an illegal move, a game over); the rest keep their own status.
    fn from(error: ServiceError) -> ApiError {
        let status = match error.code {
            ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
            ErrorCode::NotFound => StatusCode::NOT_FOUND,
            ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::NotOwner | ErrorCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Unspecified | ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::BAD_REQUEST,
        };
        ApiError::new(status, error.message)
    }
}

impl IntoResponse for ApiError {
    /// A 429 also says, as lichess does, which budget ran out and for how
    /// long (`ratelimit`), besides `Retry-After`.
    fn into_response(self) -> Response {
        let seconds = self.retry_after.map(|wait| wait.as_secs_f64().ceil().max(1.0) as u64);
        let mut body = json!({ "error": self.message });
        if let Some(seconds) = seconds {
            body["ratelimit"] = json!({ "key": "api.request", "seconds": seconds });
        }
        let mut response = (self.status, Json(body)).into_response();
        if let Some(seconds) = seconds {
            response.headers_mut().insert(header::RETRY_AFTER, seconds.into());
        }
        response
    }
}

pub type ApiResult = Result<Response, ApiError>;

/// `{"ok": true}`, lichess's answer to a command carried out.
pub fn ok() -> ApiResult {
    Ok(Json(json!({ "ok": true })).into_response())
}

/// The player a request's bearer token proves, and the address it came from.
#[derive(Clone, Debug)]
pub struct Bot {
    pub player: PlayerId,
    pub ip: IpAddr,
    renewed: Option<String>,
}

impl Bot {
    /// `body` with the renewed token's header, when there is one.
    pub fn answer(&self, body: impl IntoResponse) -> Response {
        let mut response = body.into_response();
        if let Some(token) = self.renewed.as_deref().and_then(|t| HeaderValue::from_str(t).ok()) {
            response.headers_mut().insert(RENEWED_TOKEN_HEADER, token);
        }
        response
    }

    /// The name the bot plays under: its id, which is also its username.
    pub fn name(&self) -> String {
        self.player.to_string()
    }
}

fn client_ip(gateway: &Gateway, parts: &Parts) -> IpAddr {
    let peer = parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(SocketAddr::from(([127, 0, 0, 1], 0)), |ConnectInfo(peer)| *peer);
    crate::http::client_ip(gateway, peer, &parts.headers)
}

impl FromRequestParts<Arc<Gateway>> for Bot {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, gateway: &Arc<Gateway>) -> Result<Bot, ApiError> {
        let ip = client_ip(gateway, parts);
        let verified = bearer(&parts.headers).and_then(|token| gateway.signer.verify(token));
        let Some(verified) = verified else {
            if let Err(wait) = gateway.limits.http_request(crate::limits::HttpBudget::Api, ip) {
                return Err(ApiError::slow_down(wait));
            }
            return Err(ApiError::new(StatusCode::UNAUTHORIZED, "No such token: not valid here, or expired"));
        };
        gateway.limits.bot_request(ip, &verified.player).map_err(ApiError::slow_down)?;
        Ok(Bot { player: verified.player, ip, renewed: verified.renewed })
    }
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

/// A request's parameters: its body, as a form or as a JSON object (berserk
/// sends JSON with nulls for what is unset), and its query string.
#[derive(Debug, Default)]
pub struct Params(HashMap<String, String>);

impl Params {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str).filter(|v| !v.is_empty())
    }

    pub fn flag(&self, key: &str) -> Result<bool, ApiError> {
        match self.get(key) {
            None | Some("false" | "no" | "0") => Ok(false),
            Some("true" | "yes" | "1") => Ok(true),
            Some(other) => Err(ApiError::bad(format!("{key}: {other:?} is not true or false"))),
        }
    }

    pub fn number(&self, key: &str) -> Result<Option<u32>, ApiError> {
        self.get(key)
            .map(|v| v.parse::<f64>().ok().filter(|n| n.is_finite() && *n >= 0.0 && *n <= f64::from(u32::MAX)))
            .map(|n| n.map(|n| n as u32).ok_or_else(|| ApiError::bad(format!("{key} must be a number"))))
            .transpose()
    }

    fn parse(query: Option<&str>, content_type: &str, body: &[u8]) -> Result<Params, ApiError> {
        let mut params = HashMap::new();
        if let Some(query) = query {
            params.extend(form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())));
        }
        if content_type.starts_with("application/json") {
            let value: Value = serde_json::from_slice(body).map_err(|e| ApiError::bad(format!("bad JSON: {e}")))?;
            let Value::Object(fields) = value else { return Err(ApiError::bad("the body must be a JSON object")) };
            for (key, value) in fields {
                let text = match value {
                    Value::Null => continue,
                    Value::String(text) => text,
                    Value::Bool(_) | Value::Number(_) => value.to_string(),
                    _ => return Err(ApiError::bad(format!("{key} must be a string, number or boolean"))),
                };
                params.insert(key, text);
            }
        } else {
            params.extend(form_urlencoded::parse(body).map(|(k, v)| (k.into_owned(), v.into_owned())));
        }
        Ok(Params(params))
    }
}

impl<S: Send + Sync> FromRequest<S> for Params {
    type Rejection = ApiError;

    async fn from_request(request: Request, _: &S) -> Result<Params, ApiError> {
        let query = request.uri().query().map(str::to_owned);
        let content_type = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        let body = axum::body::to_bytes(request.into_body(), MAX_BODY)
            .await
            .map_err(|_| ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, format!("a body is at most {MAX_BODY} bytes")))?;
        Params::parse(query.as_deref(), &content_type, &body)
    }
}

/// Follows `game` on `conn` from `state`, as the seat `player` has there.
/// When the feed has moved on past `state`, it follows from a fresh
/// state instead; the state followed from is returned, `None` if neither
/// could be followed.
pub async fn follow(
    gateway: &Gateway,
    game: &GameId,
    conn: &Arc<crate::conn::Conn>,
    player: &PlayerId,
    state: GameState,
) -> Option<GameState> {
    let seat = crate::feeds::Seat::of(state.audience());
    gateway.feeds.note(game, &state);
    if gateway.feeds.subscribe(game, conn, seat, Some(player.clone()), state.version) {
        return Some(state);
    }
    let request = GetStateRequest { game_id: game.to_string(), player_id: player.to_string() };
    let fresh = gateway.router.get_state(request).await.ok()?;
    gateway.feeds.note(game, &fresh);
    gateway.feeds.subscribe(game, conn, seat, Some(player.clone()), fresh.version).then_some(fresh)
}

pub fn game_id(text: &str) -> Result<GameId, ApiError> {
    GameId::parse(text).map_err(|_| ApiError::new(StatusCode::NOT_FOUND, format!("no game {text:?}")))
}

/// An open ndjson answer: lines go out as the producer writes them, and the
/// producer learns when the client has gone.
pub struct Lines {
    tx: mpsc::Sender<Bytes>,
    /// A line the client has not made room for in this long ends the
    /// answer: a reader that stopped must not park its producer for good.
    write_timeout: Duration,
}

impl Lines {
    /// The answer to return, and the handle its producer writes with.
    pub fn open(bot: &Bot, write_timeout: Duration) -> (Response, Lines) {
        let (tx, rx) = mpsc::channel::<Bytes>(64);
        let body =
            futures::stream::unfold(
                rx,
                |mut rx| async move { rx.recv().await.map(|line| (Ok::<_, Infallible>(line), rx)) },
            );
        let response = bot.answer(([(header::CONTENT_TYPE, "application/x-ndjson")], Body::from_stream(body)));
        (response, Lines { tx, write_timeout })
    }

    /// Writes one JSON line; false once the client has gone or has read
    /// nothing for the write timeout.
    pub async fn send(&self, value: &Value) -> bool {
        let mut line = serde_json::to_vec(value).expect("JSON values serialize");
        line.push(b'\n');
        self.write(Bytes::from(line)).await
    }

    /// The empty line that keeps the answer alive.
    pub async fn keep_alive(&self) -> bool {
        self.write(Bytes::from_static(b"\n")).await
    }

    async fn write(&self, line: Bytes) -> bool {
        matches!(tokio::time::timeout(self.write_timeout, self.tx.send(line)).await, Ok(Ok(())))
    }

    /// Completes when the client has gone.
    pub async fn closed(&self) {
        self.tx.closed().await;
    }
}

/// `POST /api/token`: a new player and its token; with a valid token in
/// `Authorization`, that player's token again (renewed when due).
async fn token(gateway: axum::extract::State<Arc<Gateway>>, headers: HeaderMap) -> ApiResult {
    let (player, token) = match bearer(&headers) {
        Some(token) => {
            let verified = gateway
                .signer
                .verify(token)
                .ok_or_else(|| ApiError::new(StatusCode::UNAUTHORIZED, "No such token: not valid here, or expired"))?;
            (verified.player, verified.renewed.unwrap_or_else(|| token.to_owned()))
        }
        None => gateway.signer.new_player(),
    };
    Ok(Json(json!({ "token_type": "Bearer", "access_token": token, "id": player.as_str() })).into_response())
}
