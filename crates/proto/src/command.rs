//! Building the game service's one command message.

use crate::game::command::Action;
use crate::game::{Command, OfferAction, Presence};

impl Command {
    /// `player`'s `action` in `game`, with no request id yet (the router
    /// gives it one, kept across its retries).
    pub fn new(game: impl Into<String>, player: impl Into<String>, action: Action) -> Command {
        Command { game_id: game.into(), player_id: player.into(), request_id: String::new(), action: Some(action) }
    }
}

impl Action {
    /// A draw offer, or the answer to the opponent's.
    pub fn draw(action: OfferAction) -> Action {
        Action::Draw(crate::game::Offer { action: action as i32 })
    }

    /// A takeback request, or the answer to the opponent's.
    pub fn takeback(action: OfferAction) -> Action {
        Action::Takeback(crate::game::Offer { action: action as i32 })
    }

    /// A presence report: `connected`, for `lease_ms` (0: until reported gone).
    pub fn presence(connected: bool, lease_ms: u64) -> Action {
        Action::Presence(Presence { connected, lease_ms })
    }
}
