//! `GET /api/stream/event`: a bot's incoming events. It listens on the
//! player's bus subject, where the matchmaker announces pairings and
//! gateways announce challenges and games started, and follows each game
//! it announced to say when it finishes. As it opens it tells what lichess
//! tells then: a `gameStart` for each of the bot's games in progress, and
//! each challenge waiting for it (the gateways holding them announce them
//! again when asked on `challenges.to.<player>`).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use fogblast_proto::game::{GameState, GetStateRequest, Status};
use fogblast_proto::ids::GameId;
use fogblast_proto::notices::{pending_challenges_subject, player_notice::Notice, player_subject, PlayerNotice};
use fogblast_protocol::ServerFrame;
use futures::StreamExt;
use prost::Message;
use serde_json::{json, Value};

use super::{lichess, ApiError, ApiResult, Bot, Lines, KEEP_ALIVE};
use crate::conn::Conn;
use crate::Gateway;
use tracing::debug;

/// The site's address as the request named it, for links in events.
pub fn base_url(headers: &HeaderMap) -> String {
    let host = headers.get(axum::http::header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("localhost");
    format!("http://{host}")
}

pub async fn open(State(gateway): State<Arc<Gateway>>, bot: Bot, headers: HeaderMap) -> ApiResult {
    let notices =
        gateway.bus.subscribe(&player_subject(bot.player.as_str())).await.map_err(|e| {
            ApiError::new(axum::http::StatusCode::SERVICE_UNAVAILABLE, format!("events: {}", e.message()))
        })?;
    if !gateway.limits.connect(bot.ip) {
        return Err(ApiError::new(axum::http::StatusCode::TOO_MANY_REQUESTS, "too many connections from your address"));
    }
    let (response, lines) = Lines::open(&bot, gateway.config.settings.write_timeout());
    let base = base_url(&headers);
    let task = gateway.tasks.clone();
    task.spawn(async move {
        let (conn, frames, _closed) = Conn::from_ip(bot.ip);
        let _online = gateway.online.stream_opened(&bot.player);
        let mut stream = EventStream {
            gateway: &gateway,
            bot: &bot,
            lines: &lines,
            conn: &conn,
            base,
            games: HashMap::new(),
            challenges: HashSet::new(),
        };
        stream.run(notices, frames).await;
        gateway.feeds.unsubscribe_all(&conn);
        gateway.limits.disconnect(bot.ip);
    });
    Ok(response)
}

struct EventStream<'a> {
    gateway: &'a Gateway,
    bot: &'a Bot,
    lines: &'a Lines,
    conn: &'a Arc<Conn>,
    base: String,
    /// The games announced and not yet finished, with how each started.
    games: HashMap<String, &'static str>,
    /// The challenges told on this stream: one asked for again as the
    /// stream opened is not told twice.
    challenges: HashSet<String>,
}

/// The most challenge ids a stream remembers having told.
const CHALLENGES_REMEMBERED: usize = 1_024;

impl EventStream<'_> {
    async fn run(
        &mut self,
        mut notices: futures::stream::BoxStream<'static, fogblast_bus::Message>,
        mut frames: crate::conn::Outbox,
    ) {
        if !self.replay().await {
            return;
        }
        let mut keep_alive = tokio::time::interval(KEEP_ALIVE);
        let mut draining = self.gateway.draining.clone();
        loop {
            let alive = tokio::select! {
                notice = notices.next() => match notice {
                    Some(message) => self.notice(&message.payload).await,
                    None => false,
                },
                frame = frames.recv() => match frame {
                    Some(frame) => self.frame(frame.as_str()).await,
                    None => false,
                },
                _ = keep_alive.tick() => self.lines.keep_alive().await,
                () = self.lines.closed() => false,
                _ = draining.changed() => false,
            };
            if !alive {
                return;
            }
        }
    }

    async fn notice(&mut self, payload: &[u8]) -> bool {
        let Some(notice) = PlayerNotice::decode(payload).ok().and_then(|n| n.notice) else { return true };
        let me = self.bot.player.as_str();
        match notice {
            Notice::Paired(paired) => {
                let source = if paired.tournament_id.is_empty() { "lobby" } else { "arena" };
                self.started(&paired.game_id, source).await
            }
            Notice::GameStarted(started) => self.started(&started.game_id, "friend").await,
            Notice::Challenge(challenge) => {
                if self.challenges.len() >= CHALLENGES_REMEMBERED {
                    self.challenges.clear();
                }
                if !self.challenges.insert(challenge.id.clone()) {
                    return true;
                }
                let event = json!({ "type": "challenge", "challenge": lichess::challenge(&challenge, me, &self.base) });
                self.lines.send(&event).await
            }
            Notice::ChallengeGone(gone) => {
                let Some(challenge) = gone.challenge else { return true };
                let mut body = lichess::challenge(&challenge, me, &self.base);
                let kind = if gone.declined {
                    body["status"] = json!("declined");
                    body["declineReasonKey"] = json!(gone.reason);
                    body["declineReason"] = json!(decline_text(&gone.reason));
                    "challengeDeclined"
                } else {
                    body["status"] = json!("canceled");
                    "challengeCanceled"
                };
                self.lines.send(&json!({ "type": kind, "challenge": body })).await
            }
            Notice::SeekCancelled(_) | Notice::PairingFailed(_) | Notice::RatingChanged(_) => true,
        }
    }

    /// What the bot would have heard had the stream been open: its games
    /// in progress, oldest first, and (asked for here, told as they come
    /// in on the player's subject) the challenges waiting for it.
    async fn replay(&mut self) -> bool {
        let me = self.bot.player.as_str();
        if let Err(error) =
            self.gateway.bus.publish(&pending_challenges_subject(me), Vec::new(), Vec::new().into()).await
        {
            debug!(player = me, error = error.message(), "could not ask for the challenges waiting");
        }
        let games = match self.gateway.router.seats_of(&self.bot.player).await {
            Ok(games) => games,
            Err(error) => {
                debug!(player = me, error = %error.message, "could not list the games in progress");
                Vec::new()
            }
        };
        for game in games.iter().rev() {
            // A game still waiting for its second seat is a challenge or a
            // seek, not a game in progress.
            if self.state(game.as_str()).await.is_none_or(|state| state.status() == Status::Waiting) {
                continue;
            }
            if !self.started(game.as_str(), "friend").await {
                return false;
            }
        }
        true
    }

    async fn state(&self, game: &str) -> Option<GameState> {
        let request = GetStateRequest { game_id: game.to_owned(), player_id: self.bot.player.to_string() };
        self.gateway.router.get_state(request).await.ok()
    }

    /// `gameStart`, and the game followed until its end.
    async fn started(&mut self, game: &str, source: &'static str) -> bool {
        if self.games.contains_key(game) {
            return true;
        }
        let Ok(id) = GameId::parse(game) else { return true };
        let Some(state) = self.state(game).await else { return true };
        let against_computer = [&state.white, &state.black].iter().any(|p| p.as_ref().is_some_and(|p| p.computer));
        let source = if against_computer { "ai" } else { source };
        if !self.lines.send(&event("gameStart", &state, source)).await {
            return false;
        }
        if state.status() == Status::Ended {
            return self.lines.send(&event("gameFinish", &state, source)).await;
        }
        self.games.insert(game.to_owned(), source);
        super::follow(self.gateway, &id, self.conn, &self.bot.player, state).await;
        true
    }

    async fn frame(&mut self, frame: &str) -> bool {
        let Ok(ServerFrame::End(end)) = serde_json::from_str::<ServerFrame>(frame) else { return true };
        let Some(source) = self.games.remove(&end.game) else { return true };
        let Some(state) = self.state(&end.game).await else { return true };
        self.lines.send(&event("gameFinish", &state, source)).await
    }
}

fn event(kind: &str, state: &GameState, source: &str) -> Value {
    json!({ "type": kind, "game": lichess::event_game(state, source) })
}

/// Lichess's words for a decline reason key.
pub fn decline_text(key: &str) -> &'static str {
    match key {
        "later" => "I'm not accepting challenges at the moment, please try again later.",
        "tooFast" => "This time control is too fast for me, please challenge again with a slower game.",
        "tooSlow" => "This time control is too slow for me, please challenge again with a faster game.",
        "timeControl" => "I'm not accepting challenges with this time control.",
        "rated" => "Please send me a rated challenge instead.",
        "casual" => "Please send me a casual challenge instead.",
        "standard" => "I'm not accepting variant challenges right now.",
        "variant" => "I'm not willing to play this variant right now.",
        "noBot" => "I'm not accepting challenges from bots.",
        "onlyBot" => "I'm only accepting challenges from bots.",
        _ => "I'm not accepting challenges at the moment.",
    }
}
