//! `GET /api/{bot|board}/game/stream/{id}`: `gameFull`, then a `gameState`
//! after every change, `chatLine` for each line in the chat rooms the bot
//! reads, `opponentGone` while the opponent is away, and the end. The stream follows the game through the gateway's feed as the
//! bot's seat, so it carries exactly what the bot's WebSocket would: in fog
//! of war, only what the bot sees.

use std::sync::Arc;

use axum::extract::{Path, State};
use fogblast_proto::game::{GameState, GetStateRequest, Status};
use fogblast_proto::ids::GameId;
use fogblast_protocol::ServerFrame;
use serde_json::json;

use super::{game_id, lichess, ApiError, ApiResult, Bot, Lines, KEEP_ALIVE};
use crate::conn::Conn;
use crate::Gateway;

pub async fn open(State(gateway): State<Arc<Gateway>>, bot: Bot, Path(id): Path<String>) -> ApiResult {
    let game = game_id(&id)?;
    let state = state(&gateway, &game, &bot).await?;
    if !gateway.limits.connect(bot.ip) {
        return Err(ApiError::new(axum::http::StatusCode::TOO_MANY_REQUESTS, "too many connections from your address"));
    }
    let (response, lines) = Lines::open(&bot, gateway.config.settings.write_timeout());
    let task = gateway.tasks.clone();
    task.spawn(follow(gateway, bot, game, state, lines));
    Ok(response)
}

async fn state(gateway: &Gateway, game: &GameId, bot: &Bot) -> Result<GameState, ApiError> {
    let request = GetStateRequest { game_id: game.to_string(), player_id: bot.player.to_string() };
    Ok(gateway.router.get_state(request).await?)
}

async fn follow(gateway: Arc<Gateway>, bot: Bot, game: GameId, mut state: GameState, lines: Lines) {
    let (conn, mut frames, _closed) = Conn::from_ip(bot.ip);
    followed(&gateway, &bot, &game, &mut state, &lines, &conn, &mut frames).await;
    gateway.feeds.unsubscribe_all(&conn);
    gateway.limits.disconnect(bot.ip);
}

async fn followed(
    gateway: &Gateway,
    bot: &Bot,
    game: &GameId,
    state: &mut GameState,
    lines: &Lines,
    conn: &Arc<Conn>,
    frames: &mut crate::conn::Outbox,
) {
    if !lines.send(&lichess::game_full(state)).await || state.status() == Status::Ended {
        return;
    }
    let Some(followed) = super::follow(gateway, game, conn, &bot.player, state.clone()).await else { return };
    if followed.version != state.version {
        *state = followed;
        if !lines.send(&lichess::game_state(state)).await {
            return;
        }
    }
    let mut keep_alive = tokio::time::interval(KEEP_ALIVE);
    keep_alive.tick().await;
    let mut draining = gateway.draining.clone();
    loop {
        tokio::select! {
            frame = frames.recv() => {
                let Some(frame) = frame else { return };
                let Ok(frame) = serde_json::from_str::<ServerFrame>(frame.as_str()) else { continue };
                let alive = match frame {
                    ServerFrame::OpponentGone { claim_in_ms, .. } => {
                        let gone = json!({ "type": "opponentGone", "gone": true, "claimWinInSeconds": claim_in_ms / 1000 });
                        lines.send(&gone).await
                    }
                    ServerFrame::OpponentBack { .. } => lines.send(&json!({ "type": "opponentGone", "gone": false })).await,
                    ServerFrame::Chat { line, .. } => lines.send(&lichess::chat_line(&line)).await,
                    ServerFrame::Move(_) | ServerFrame::End(_) | ServerFrame::Draw { .. }
                    | ServerFrame::Takeback { .. } | ServerFrame::Seated { .. } | ServerFrame::State(_)
                    | ServerFrame::TimeGiven { .. } => {
                        let Ok(fresh) = self::state(gateway, game, bot).await else { return };
                        if fresh.version <= state.version && fresh.status() == state.status() {
                            continue;
                        }
                        *state = fresh;
                        lines.send(&lichess::game_state(state)).await && state.status() != Status::Ended
                    }
                    ServerFrame::Reconnect { .. } => false,
                    _ => true,
                };
                if !alive {
                    return;
                }
            }
            _ = keep_alive.tick() => {
                if !lines.keep_alive().await { return }
            }
            () = lines.closed() => return,
            _ = draining.changed() => return,
        }
    }
}
