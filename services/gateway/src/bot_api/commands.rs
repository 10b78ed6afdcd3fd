//! A bot's commands in its game: move, resign, abort, draw and takeback
//! offers and answers, claiming victory over a player who left. Each is the
//! game service's one command message, as a socket's are.

use std::sync::Arc;

use axum::extract::{Path, State};
use fogblast_proto::game::command::Action;
use fogblast_proto::game::{Abort, ClaimVictory, Command, GetStateRequest, OfferAction, Resign};
use fogblast_proto::ids::{GameId, PlayerId};
use tokio::time::Instant;

use super::{game_id, ok, ApiError, ApiResult, Bot, Params};
use crate::Gateway;

/// `POST /api/{bot|board}/game/{id}/move/{uci}`. The move is for the ply
/// the game is at when it arrives. With `offeringDraw=true` a draw offer
/// (or the acceptance of a standing one) follows the move, as on lichess;
/// an offer the game refuses does not undo the move.
pub async fn make_move(
    State(gateway): State<Arc<Gateway>>,
    bot: Bot,
    Path((id, uci)): Path<(String, String)>,
    params: Params,
) -> ApiResult {
    let offering_draw = params.flag("offeringDraw")?;
    let received = Instant::now();
    let game = game_id(&id)?;
    if uci.len() > 5 || uci.len() < 4 {
        return Err(ApiError::bad(format!("{:?} is not a UCI move", uci.chars().take(16).collect::<String>())));
    }
    let state = gateway
        .router
        .get_state(GetStateRequest { game_id: game.to_string(), player_id: bot.player.to_string() })
        .await?;
    let request = move_request(&game, &bot.player, uci, state.moves.len() as u32, received);
    gateway.router.command(request).await?;
    heard_from(&gateway, &game, &bot.player);
    if offering_draw {
        let offer = Command::new(game.as_str(), bot.player.as_str(), Action::draw(OfferAction::Offer));
        if let Err(error) = gateway.router.command(offer).await {
            tracing::debug!(game = %game, error = %error.message, "a draw offered with a move was refused");
        }
    }
    ok().map(|r| bot.answer(r))
}

/// The move as sent to the game's shard. The time since the request
/// arrived (reading the game's ply first, which waits out a failover) is
/// the gateway's, not the mover's: the shard gives it back on the clock.
fn move_request(game: &GameId, player: &PlayerId, uci: String, ply: u32, received: Instant) -> Command {
    let waited_ms = u32::try_from(received.elapsed().as_millis()).unwrap_or(u32::MAX);
    let action = Action::Move(fogblast_proto::game::Move { uci, ply, lag_ms: 0, waited_ms });
    Command::new(game.as_str(), player.as_str(), action)
}

/// Sends the bot's `action` in the game `id`.
async fn send(gateway: &Gateway, bot: &Bot, id: &str, action: Action) -> Result<GameId, ApiError> {
    let game = game_id(id)?;
    gateway.router.command(Command::new(game.as_str(), bot.player.as_str(), action)).await?;
    Ok(game)
}

pub async fn resign(State(gateway): State<Arc<Gateway>>, bot: Bot, Path(id): Path<String>) -> ApiResult {
    let game = send(&gateway, &bot, &id, Action::Resign(Resign {})).await?;
    gateway.computer_games.ended(bot.ip, &game);
    ok().map(|r| bot.answer(r))
}

pub async fn abort(State(gateway): State<Arc<Gateway>>, bot: Bot, Path(id): Path<String>) -> ApiResult {
    let game = send(&gateway, &bot, &id, Action::Abort(Abort {})).await?;
    gateway.computer_games.ended(bot.ip, &game);
    ok().map(|r| bot.answer(r))
}

/// `POST /api/{bot|board}/game/{id}/berserk`: in a tournament game, before
/// the bot's first move.
pub async fn berserk(State(gateway): State<Arc<Gateway>>, bot: Bot, Path(id): Path<String>) -> ApiResult {
    send(&gateway, &bot, &id, Action::Berserk(fogblast_proto::game::Berserk {})).await?;
    ok().map(|r| bot.answer(r))
}

pub async fn claim_victory(State(gateway): State<Arc<Gateway>>, bot: Bot, Path(id): Path<String>) -> ApiResult {
    let game = send(&gateway, &bot, &id, Action::ClaimVictory(ClaimVictory {})).await?;
    gateway.computer_games.ended(bot.ip, &game);
    ok().map(|r| bot.answer(r))
}

/// `yes` offers, or accepts a standing offer; `no` declines one.
fn answer(answer: &str) -> Result<OfferAction, ApiError> {
    match answer {
        "yes" | "true" | "1" => Ok(OfferAction::Offer),
        "no" | "false" | "0" => Ok(OfferAction::Decline),
        other => Err(ApiError::bad(format!("{other:?}: answer yes or no"))),
    }
}

pub async fn draw(
    State(gateway): State<Arc<Gateway>>,
    bot: Bot,
    Path((id, action)): Path<(String, String)>,
) -> ApiResult {
    let game = send(&gateway, &bot, &id, Action::draw(answer(&action)?)).await?;
    heard_from(&gateway, &game, &bot.player);
    ok().map(|r| bot.answer(r))
}

pub async fn takeback(
    State(gateway): State<Arc<Gateway>>,
    bot: Bot,
    Path((id, action)): Path<(String, String)>,
) -> ApiResult {
    let game = send(&gateway, &bot, &id, Action::takeback(answer(&action)?)).await?;
    heard_from(&gateway, &game, &bot.player);
    ok().map(|r| bot.answer(r))
}

/// `POST /api/{bot|board}/game/{id}/chat`: `room` (`player` or
/// `spectator`) and `text`, in the chat budget the WebSocket shares.
pub async fn chat(State(gateway): State<Arc<Gateway>>, bot: Bot, Path(id): Path<String>, params: Params) -> ApiResult {
    let room = super::lichess::parse_room(params.get("room"))?;
    let text = params.get("text").ok_or_else(|| ApiError::bad("text: the line to write"))?.to_owned();
    gateway.may_chat(&bot.player)?;
    send(&gateway, &bot, &id, Action::Chat(fogblast_protocol::chat_line(room, text))).await?;
    ok().map(|r| bot.answer(r))
}

/// A bot's command in its game is presence, as an open game stream is.
fn heard_from(gateway: &Gateway, game: &GameId, player: &PlayerId) {
    let lease = gateway.config.settings.presence_lease();
    crate::presence::heard_from(&gateway.feeds, &gateway.router, game, player, lease);
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_bot_move_tells_the_shard_how_long_it_waited_in_the_gateway() {
        let received = Instant::now();
        // Reading the game's ply through a failover.
        tokio::time::advance(Duration::from_millis(1_700)).await;
        let game = GameId::parse("g-waited").unwrap();
        let player = PlayerId::parse("p-bot").unwrap();
        let request = move_request(&game, &player, "e2e4".into(), 0, received);
        let Some(Action::Move(m)) = request.action else { panic!("a move: {request:?}") };
        assert_eq!(m.waited_ms, 1_700);
        assert_eq!((m.uci.as_str(), m.ply), ("e2e4", 0));
    }
}
