//! Challenges between players, games against the computer, and seeks.
//!
//! A challenge is a game waiting for its second seat, made by the
//! challenger, and the challenge's id is that game's join code: the two
//! players hear it on their bus subjects, accepting joins the game by it,
//! and only the gateway that made the challenge holds it. That gateway
//! listens on `challenge.<id>` for a decline or a cancel, and aborts the
//! game when one comes or when the challenge goes unanswered. It also
//! listens on `challenges.to.<player>`, where the challenged player's event
//! stream asks, as it opens, for the challenges waiting for it: each is
//! announced to that player again.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use fogblast_proto::game::command::Action;
use fogblast_proto::game::{
    Abort, ClockSettings, ColorChoice, Command, CreateGameRequest, GameState, GetStateRequest, JoinGameRequest, Status,
};
use fogblast_proto::ids::{GameId, PlayerId};
use fogblast_proto::notices::{
    challenge_subject, pending_challenges_subject, player_notice::Notice, player_subject, Challenge, ChallengeAnswer,
    ChallengeGone, GameStarted, Opponent, PlayerNotice,
};
use fogblast_protocol::ServerFrame;
use futures::StreamExt;
use prost::Message;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tracing::debug;

use super::event_stream::base_url;
use super::{lichess, ok, ApiError, ApiResult, Bot, Lines, Params, KEEP_ALIVE};
use crate::conn::Conn;
use crate::Gateway;

/// How long a challenge waits for an answer before it is cancelled.
const CHALLENGE_TTL: Duration = Duration::from_secs(300);

fn clock(
    params: &Params,
    limit_key: &str,
    increment_key: &str,
    minutes: bool,
) -> Result<Option<ClockSettings>, ApiError> {
    let Some(limit) = params.number(limit_key)? else { return Ok(None) };
    let increment = params.number(increment_key)?.unwrap_or(0);
    let initial_ms = if minutes { limit.saturating_mul(60_000) } else { limit.saturating_mul(1000) };
    Ok(Some(ClockSettings { initial_ms, increment_ms: increment.saturating_mul(1000) }))
}

fn color(params: &Params) -> Result<ColorChoice, ApiError> {
    match params.get("color") {
        None | Some("random") => Ok(ColorChoice::ChooseRandom),
        Some("white") => Ok(ColorChoice::ChooseWhite),
        Some("black") => Ok(ColorChoice::ChooseBlack),
        Some(other) => Err(ApiError::bad(format!("color {other:?}: white, black or random"))),
    }
}

fn refuse_position(params: &Params) -> Result<(), ApiError> {
    if params.get("fen").is_some() {
        return Err(ApiError::bad("games from a position are not offered here"));
    }
    Ok(())
}

/// The game a challenge or a game against the computer asks for: its
/// variant, clock (`clock.limit`, `clock.increment` in seconds) and colour.
fn new_game(bot: &Bot, params: &Params) -> Result<CreateGameRequest, ApiError> {
    refuse_position(params)?;
    let (variant, chess960) = lichess::parse_variant(params.get("variant"))?;
    Ok(CreateGameRequest {
        player_id: bot.player.to_string(),
        player_name: bot.name(),
        variant: variant as i32,
        chess960,
        color: color(params)? as i32,
        clock: clock(params, "clock.limit", "clock.increment", false)?,
        ..Default::default()
    })
}

async fn notify(gateway: &Gateway, player: &str, notice: Notice) {
    let payload = PlayerNotice { notice: Some(notice) }.encode_to_vec();
    if let Err(error) = gateway.bus.publish(&player_subject(player), Vec::new(), payload.into()).await {
        debug!(player, error = error.message(), "a notice was not sent");
    }
}

/// `POST /api/challenge/{user}`: the user is the other player's id.
pub async fn create(
    State(gateway): State<Arc<Gateway>>,
    bot: Bot,
    Path(dest): Path<String>,
    headers: HeaderMap,
    params: Params,
) -> ApiResult {
    let dest =
        PlayerId::parse(&dest).map_err(|_| ApiError::new(StatusCode::NOT_FOUND, format!("no player {dest:?}")))?;
    if dest == bot.player {
        return Err(ApiError::bad("you cannot challenge yourself"));
    }
    let request = CreateGameRequest { rated: params.flag("rated")?, ..new_game(&bot, &params)? };
    gateway.may_create_game(bot.ip)?;
    let created = gateway.router.create_game(request.clone()).await?;
    let challenge = Challenge {
        id: created.code.clone(),
        game_id: created.game_id.clone(),
        challenger: Some(Opponent { player_id: bot.player.to_string(), name: bot.name(), rating: 1500 }),
        dest_id: dest.to_string(),
        variant: request.variant,
        chess960: request.chess960,
        clock: request.clock,
        color: request.color,
        rated: request.rated,
        challenger_color: created.color,
    };
    let unavailable =
        |e: fogblast_bus::BusError| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.message().to_owned());
    let answers = gateway.bus.subscribe(&challenge_subject(&challenge.id)).await.map_err(unavailable)?;
    let asked = gateway.bus.subscribe(&pending_challenges_subject(&challenge.dest_id)).await.map_err(unavailable)?;
    let inbox = futures::stream::select(answers.map(Inbox::Answer), asked.map(|_| Inbox::Asked)).boxed();
    let body = lichess::challenge(&challenge, bot.player.as_str(), &base_url(&headers));
    for player in [challenge.dest_id.clone(), bot.player.to_string()] {
        notify(&gateway, &player, Notice::Challenge(challenge.clone())).await;
    }
    let tasks = gateway.tasks.clone();
    let state = created.state.unwrap_or_default();
    tasks.spawn(async move {
        let (conn, frames, _closed) = Conn::from_ip(bot.ip);
        hold(&gateway, &challenge, inbox, &conn, frames, state).await;
        gateway.feeds.unsubscribe_all(&conn);
    });
    Ok(bot.answer(Json(body)))
}

/// What the gateway holding a challenge hears about it.
enum Inbox {
    /// An answer on `challenge.<id>`.
    Answer(fogblast_bus::Message),
    /// The challenged player's event stream opened and asks for it.
    Asked,
}

/// The challenge's life on the gateway that made it: until its game
/// starts (the game's feed seats the other player), or a decline, a
/// cancel, its time or the gateway's drain ends it.
async fn hold(
    gateway: &Gateway,
    challenge: &Challenge,
    mut inbox: futures::stream::BoxStream<'static, Inbox>,
    conn: &Arc<Conn>,
    mut frames: crate::conn::Outbox,
    state: GameState,
) {
    let challenger = challenge.challenger.as_ref().map(|c| PlayerId::parse(&c.player_id));
    let Some(Ok(challenger)) = challenger else { return };
    let Ok(game) = GameId::parse(&challenge.game_id) else { return };
    let Some(followed) = super::follow(gateway, &game, conn, &challenger, state).await else { return };
    if followed.status() != Status::Waiting {
        return;
    }
    let deadline = tokio::time::sleep(CHALLENGE_TTL);
    tokio::pin!(deadline);
    let mut draining = gateway.draining.clone();
    let (declined, reason) = loop {
        tokio::select! {
            heard = inbox.next() => {
                let message = match heard {
                    None => return,
                    Some(Inbox::Answer(message)) => message,
                    Some(Inbox::Asked) => {
                        notify(gateway, &challenge.dest_id, Notice::Challenge(challenge.clone())).await;
                        continue;
                    }
                };
                let Ok(answer) = ChallengeAnswer::decode(message.payload.as_ref()) else { continue };
                let by = if answer.declined { challenge.dest_id.as_str() } else { challenger.as_str() };
                if answer.player_id == by {
                    break (answer.declined, answer.reason);
                }
            }
            frame = frames.recv() => {
                let Some(frame) = frame else { return };
                // Seated: accepted; End: the game is gone some other way.
                let frame = serde_json::from_str::<ServerFrame>(frame.as_str());
                if let Ok(ServerFrame::Seated { .. } | ServerFrame::End(_)) = frame {
                    return;
                }
            }
            () = &mut deadline => break (false, "timeout".to_owned()),
            _ = draining.changed() => break (false, "shutdown".to_owned()),
        }
    };
    // Accepted in the meantime: the game is on, and the challenge is no
    // more (an abort would end a game whose players have yet to move).
    let request = GetStateRequest { game_id: game.to_string(), player_id: challenger.to_string() };
    if gateway.router.get_state(request).await.map_or(true, |state| state.status() != Status::Waiting) {
        return;
    }
    let abort = Command::new(game.to_string(), challenger.to_string(), Action::Abort(Abort {}));
    if gateway.router.command(abort).await.is_err() {
        return;
    }
    let gone = ChallengeGone { challenge: Some(challenge.clone()), declined, reason };
    for player in [challenge.dest_id.as_str(), challenger.as_str()] {
        notify(gateway, player, Notice::ChallengeGone(gone.clone())).await;
    }
}

/// `POST /api/challenge/{id}/accept`: the challenged player joins the game.
pub async fn accept(State(gateway): State<Arc<Gateway>>, bot: Bot, Path(id): Path<String>) -> ApiResult {
    let code = challenge_id(&id)?;
    let request =
        JoinGameRequest { player_id: bot.player.to_string(), player_name: bot.name(), code, ..Default::default() };
    let joined = gateway.router.join_game(request).await.map_err(|error| match error.code {
        fogblast_proto::error::ErrorCode::NotFound => ApiError::new(StatusCode::NOT_FOUND, "no such challenge"),
        _ => ApiError::from(error),
    })?;
    let players = joined.state.as_ref().map(seated).unwrap_or_default();
    for player in players {
        notify(&gateway, &player, Notice::GameStarted(GameStarted { game_id: joined.game_id.clone() })).await;
    }
    ok().map(|r| bot.answer(r))
}

fn seated(state: &GameState) -> Vec<String> {
    [&state.white, &state.black]
        .iter()
        .filter_map(|p| p.as_ref())
        .filter(|p| !p.computer)
        .map(|p| p.id.clone())
        .collect()
}

fn challenge_id(id: &str) -> Result<String, ApiError> {
    let code = id.trim().to_ascii_uppercase();
    if code.is_empty() || code.len() > 16 || !code.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(ApiError::new(StatusCode::NOT_FOUND, "no such challenge"));
    }
    Ok(code)
}

async fn answer(gateway: &Gateway, bot: &Bot, id: &str, declined: bool, reason: String) -> ApiResult {
    let id = challenge_id(id)?;
    let answer = ChallengeAnswer { id: id.clone(), player_id: bot.player.to_string(), declined, reason };
    gateway
        .bus
        .publish(&challenge_subject(&id), Vec::new(), answer.encode_to_vec().into())
        .await
        .map_err(|e| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.message().to_owned()))?;
    ok().map(|r| bot.answer(r))
}

/// `POST /api/challenge/{id}/decline`, with an optional `reason` key.
pub async fn decline(
    State(gateway): State<Arc<Gateway>>,
    bot: Bot,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult {
    let reason = params.get("reason").unwrap_or("generic");
    if reason.len() > 32 {
        return Err(ApiError::bad("reason: a lichess decline key such as generic or later"));
    }
    answer(&gateway, &bot, &id, true, reason.to_owned()).await
}

/// `POST /api/challenge/{id}/cancel`, by the challenger.
pub async fn cancel(State(gateway): State<Arc<Gateway>>, bot: Bot, Path(id): Path<String>) -> ApiResult {
    answer(&gateway, &bot, &id, false, "cancel".to_owned()).await
}

/// `POST /api/challenge/ai`: a game against the computer, started at once.
pub async fn computer(State(gateway): State<Arc<Gateway>>, bot: Bot, params: Params) -> ApiResult {
    let level = lichess::level_of(params.number("level")?.unwrap_or(1))?;
    let request = CreateGameRequest { computer: true, level: level as i32, ..new_game(&bot, &params)? };
    gateway.computer_games_allowed(bot.ip, None).await?;
    gateway.may_create_game(bot.ip)?;
    let created = gateway.router.create_game(request.clone()).await?;
    if let Ok(game) = GameId::parse(&created.game_id) {
        gateway.computer_games.started(bot.ip, game);
    }
    notify(&gateway, bot.player.as_str(), Notice::GameStarted(GameStarted { game_id: created.game_id.clone() })).await;
    let state = created.state.unwrap_or_default();
    let body = json!({
        "id": created.game_id,
        "fullId": created.game_id,
        "variant": lichess::variant(request.variant(), request.chess960),
        "speed": lichess::speed(request.clock.as_ref()),
        "rated": false,
        "fen": state.fen,
        "turns": state.moves.len(),
        "source": "ai",
        "status": { "id": lichess::status(&state).1, "name": lichess::status(&state).0 },
        "player": lichess::seat(&state),
    });
    Ok(bot.answer((StatusCode::CREATED, Json(body))))
}

/// `POST /api/board/seek`: a seek for a game with a clock (`time` in
/// minutes, `increment` in seconds), open as long as the answer is. It
/// ends when the seek is paired (the game comes as `gameStart` on the
/// event stream) or expires; a client that goes away withdraws it.
pub async fn seek(State(gateway): State<Arc<Gateway>>, bot: Bot, params: Params) -> ApiResult {
    let (variant, chess960) = lichess::parse_variant(params.get("variant"))?;
    if chess960 {
        return Err(ApiError::bad("seeks are for standard, atomic or fogOfWar"));
    }
    let clock = clock(&params, "time", "increment", true)?;
    let rated = params.flag("rated")?;
    let range = match params.get("ratingRange") {
        None => None,
        Some(range) => {
            let parsed = range.split_once('-').and_then(|(min, max)| Some((min.parse().ok()?, max.parse().ok()?)));
            Some(parsed.ok_or_else(|| ApiError::bad("ratingRange: min-max, such as 1500-1800"))?)
        }
    };
    // A seek is a game to be: it comes out of the address's budget of new
    // games, so bots of one address seeking one pool are not paired with
    // each other past it. Its open answer counts as a connection.
    if !gateway.limits.connect(bot.ip) {
        return Err(ApiError::new(StatusCode::TOO_MANY_REQUESTS, "too many connections from your address"));
    }
    let opened = async {
        gateway.may_create_game(bot.ip)?;
        let notices = gateway
            .bus
            .subscribe(&player_subject(bot.player.as_str()))
            .await
            .map_err(|e| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.message().to_owned()))?;
        gateway.matchmaker.seek(bot.player.as_str(), &bot.name(), variant, clock, rated, range).await?;
        Ok::<_, ApiError>(notices)
    };
    let mut notices = match opened.await {
        Ok(notices) => notices,
        Err(error) => {
            gateway.limits.disconnect(bot.ip);
            return Err(error);
        }
    };
    // The matchmaker holds one seek per player, so this one replaced any
    // earlier one: that one's answer ends now.
    let (generation, superseded) = gateway.seek_streams.open(&bot.player);
    let (response, lines) = Lines::open(&bot, gateway.config.settings.write_timeout());
    let tasks = gateway.tasks.clone();
    tasks.spawn(async move {
        let mut keep_alive = tokio::time::interval(KEEP_ALIVE);
        let mut draining = gateway.draining.clone();
        let withdraw = loop {
            tokio::select! {
                notice = notices.next() => {
                    let Some(message) = notice else { break true };
                    match PlayerNotice::decode(message.payload.as_ref()).ok().and_then(|n| n.notice) {
                        Some(Notice::Paired(_)) | Some(Notice::SeekCancelled(_)) | Some(Notice::PairingFailed(_)) => break false,
                        _ => {}
                    }
                }
                _ = keep_alive.tick() => {
                    if !lines.keep_alive().await { break true }
                }
                () = lines.closed() => break true,
                _ = draining.changed() => break true,
                // The player's newer seek stands: withdrawing would take it.
                () = superseded.cancelled() => break false,
            }
        };
        // Only the player's current seek stream withdraws the seek.
        if gateway.seek_streams.close(&bot.player, generation) && withdraw {
            let _ = gateway.matchmaker.cancel_seek(bot.player.as_str()).await;
        }
        gateway.limits.disconnect(bot.ip);
    });
    Ok(response)
}

/// The Bot API's open seek answers, one per player. The matchmaker holds
/// one seek per player, so a repeated seek replaces the earlier one there;
/// here it ends the earlier answer, which otherwise stays open (with its
/// task and bus subscription) for a seek that no longer exists.
#[derive(Debug, Default)]
pub struct SeekStreams {
    open: Mutex<HashMap<PlayerId, (u64, CancellationToken)>>,
    next: AtomicU64,
}

impl SeekStreams {
    /// Registers a new seek answer of `player`, ending its earlier one: the
    /// new answer's generation, and the token cancelled when a later seek
    /// replaces it.
    pub fn open(&self, player: &PlayerId) -> (u64, CancellationToken) {
        let generation = self.next.fetch_add(1, Ordering::Relaxed);
        let token = CancellationToken::new();
        let earlier = self.open.lock().expect("seek streams lock").insert(player.clone(), (generation, token.clone()));
        if let Some((_, earlier)) = earlier {
            earlier.cancel();
        }
        (generation, token)
    }

    /// Forgets the answer `generation` of `player`; true if it was the
    /// player's current one.
    pub fn close(&self, player: &PlayerId, generation: u64) -> bool {
        let mut open = self.open.lock().expect("seek streams lock");
        match open.get(player) {
            Some((current, _)) if *current == generation => {
                open.remove(player);
                true
            }
            _ => false,
        }
    }

    /// Open seek answers.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.open.lock().expect("seek streams lock").len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_seek_ends_the_earlier_answer_and_only_the_current_one_withdraws() {
        let streams = SeekStreams::default();
        let player = PlayerId::parse("p-seeker").unwrap();
        let (first, first_token) = streams.open(&player);
        let (second, second_token) = streams.open(&player);
        assert!(first_token.is_cancelled(), "the earlier answer is told to end");
        assert!(!second_token.is_cancelled());
        assert!(!streams.close(&player, first), "the earlier answer does not withdraw the newer seek");
        assert_eq!(streams.len(), 1);
        assert!(streams.close(&player, second));
        assert_eq!(streams.len(), 0);
    }
}
