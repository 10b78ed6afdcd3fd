//! Each game's one timer: after a commit the shard sleeps until the game's
//! next deadline (a flag, an abort, the computer's turn) and then ticks the
//! game. Arming a timer again supersedes the one before, which finds itself
//! replaced when it wakes and does nothing; the sweep catches deadlines
//! whose timers died with another shard. A computer's turn that no engine
//! has answered by its deadline has the deadline moved on.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fogblast_proto::error::ErrorCode;
use fogblast_proto::game::Status;
use fogblast_proto::ids::GameId;
use tracing::warn;

use super::Shard;
use crate::commands::{self, Command};

/// The generation of each game's pending timer.
#[derive(Debug, Default)]
pub(super) struct Timers {
    generations: Mutex<HashMap<GameId, u64>>,
}

impl Timers {
    /// Starts a new generation for `game`, superseding the pending one.
    fn arm(&self, game: &GameId) -> u64 {
        let mut generations = self.generations.lock().expect("timers lock");
        let generation = generations.get(game).map_or(0, |g| g + 1);
        generations.insert(game.clone(), generation);
        generation
    }

    /// Whether `generation` is still the game's timer; it is spent if so.
    fn fire(&self, game: &GameId, generation: u64) -> bool {
        let mut generations = self.generations.lock().expect("timers lock");
        let current = generations.get(game) == Some(&generation);
        if current {
            generations.remove(game);
        }
        current
    }
}

impl Shard {
    /// Sets the game's one timer to go off in `delay_ms`.
    pub(super) fn arm_timer(self: &Arc<Self>, game: GameId, delay_ms: u64) {
        let generation = self.timers.arm(&game);
        let shard = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(delay_ms)).await;
            let Some(shard) = shard.upgrade() else { return };
            if shard.timers.fire(&game, generation) {
                shard.on_due(&game).await;
            }
        });
    }

    /// Whatever fell due for a game: a flag, an abort, the computer's turn.
    pub async fn on_due(self: &Arc<Self>, game: &GameId) {
        if !self.ownership.owns(game) {
            return;
        }
        match self.execute(game, Command::Tick, "").await {
            Ok(done) => {
                let live = done.live;
                if live.status() == Status::Playing && live.is_computer(live.game.position().turn()) {
                    self.spawn_think(game.clone());
                    self.postpone_rescue(game, &live).await;
                }
            }
            Err(error) if error.code == ErrorCode::NotOwner || error.code == ErrorCode::NotFound => {}
            Err(error) => warn!(game = %game, %error, "deadline not handled; the sweep will try again"),
        }
    }
}

impl Shard {
    /// The computer's turn is overdue and no engine has answered yet (the
    /// engine is asked again meanwhile): the rescue deadline moves on by
    /// its own length, so the game comes up again then rather than in
    /// every sweep ahead of deadlines that can be acted on.
    async fn postpone_rescue(&self, game: &GameId, live: &crate::record::LiveGame) {
        let Some(due) = commands::next_due(live, &self.config.settings.timeouts) else { return };
        let Ok(now) = self.store.now_ms().await else { return };
        if due <= now {
            if let Err(error) = self.store.postpone(game, due, now + commands::COMPUTER_RESCUE_MS).await {
                warn!(game = %game, %error, "the computer's rescue deadline stays where it was");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timer_armed_again_supersedes_the_one_before() {
        let timers = Timers::default();
        let game = GameId::parse("abcdefghij").unwrap();
        let first = timers.arm(&game);
        let second = timers.arm(&game);
        assert!(!timers.fire(&game, first), "the superseded timer does nothing");
        assert!(timers.fire(&game, second));
        assert!(!timers.fire(&game, second), "a timer goes off once");
    }
}
