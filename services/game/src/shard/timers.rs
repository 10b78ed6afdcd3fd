//! Each game's one timer: after a commit the shard sleeps until the game's
//! next deadline (a flag, an abort, the computer's turn) and then ticks the
//! game. Arming a timer again cancels the one before, so a game has at most
//! one sleeping task however often it commits; the sweep catches deadlines
//! whose timers died with another shard. A computer's turn that no engine
//! has answered by its deadline has the deadline moved on.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fogblast_proto::error::ErrorCode;
use fogblast_proto::game::Status;
use fogblast_proto::ids::GameId;
use tokio::task::AbortHandle;
use tracing::warn;

use super::Shard;
use crate::commands::Command;
use crate::deadlines;

/// A game's sleeping timer task.
#[derive(Debug)]
struct Pending {
    generation: u64,
    task: AbortHandle,
}

/// Each game's pending timer.
#[derive(Debug, Default)]
pub(super) struct Timers {
    pending: Mutex<HashMap<GameId, Pending>>,
    generations: std::sync::atomic::AtomicU64,
}

impl Timers {
    /// Runs `due(generation)` after `delay`, cancelling the game's pending
    /// timer. The task must call [`fire`](Self::fire) with its generation
    /// before acting, so one that lost a race with a newer arming does
    /// nothing.
    fn arm<F>(&self, game: GameId, delay: Duration, due: impl FnOnce(u64) -> F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let generation = self.generations.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let fired = due(generation);
        // Held while spawning: the new task cannot fire before it is recorded.
        let mut pending = self.pending.lock().expect("timers lock");
        let task = tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            fired.await;
        })
        .abort_handle();
        if let Some(superseded) = pending.insert(game, Pending { generation, task }) {
            superseded.task.abort();
        }
    }

    /// Whether `generation` is still the game's timer; it is spent if so.
    fn fire(&self, game: &GameId, generation: u64) -> bool {
        let mut pending = self.pending.lock().expect("timers lock");
        let current = pending.get(game).is_some_and(|p| p.generation == generation);
        if current {
            pending.remove(game);
        }
        current
    }
}

impl Shard {
    /// Sets the game's one timer to go off in `delay_ms`.
    pub(super) fn arm_timer(self: &Arc<Self>, game: GameId, delay_ms: u64) {
        let shard = Arc::downgrade(self);
        let key = game.clone();
        self.timers.arm(key, Duration::from_millis(delay_ms), move |generation| async move {
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
        let Some(due) = deadlines::next_due(live, &self.config.settings.timeouts) else { return };
        let Ok(now) = self.store.now_ms().await else { return };
        if due <= now {
            if let Err(error) = self.store.postpone(game, due, now + deadlines::COMPUTER_RESCUE_MS).await {
                warn!(game = %game, %error, "the computer's rescue deadline stays where it was");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game() -> GameId {
        GameId::parse("abcdefghij").unwrap()
    }

    #[tokio::test]
    async fn a_timer_armed_again_supersedes_the_one_before() {
        let timers = Arc::new(Timers::default());
        let (fired_tx, mut fired) = tokio::sync::mpsc::unbounded_channel();
        for _ in 0..2 {
            let (timers_in_task, fired_tx) = (timers.clone(), fired_tx.clone());
            timers.arm(game(), Duration::from_millis(20), move |generation| async move {
                if timers_in_task.fire(&game(), generation) {
                    fired_tx.send(generation).unwrap();
                }
            });
        }
        drop(fired_tx);
        assert_eq!(fired.recv().await, Some(1), "the newer timer goes off");
        assert_eq!(fired.recv().await, None, "the superseded one never does");
        assert!(!timers.fire(&game(), 1), "a timer goes off once");
    }

    /// A game that commits again and again (draw offers to the computer,
    /// moves) keeps one sleeping task, not one per commit.
    #[tokio::test(flavor = "current_thread")]
    async fn arming_a_timer_again_and_again_leaves_one_task_asleep() {
        let timers = Timers::default();
        for _ in 0..1_000 {
            timers.arm(game(), Duration::from_secs(3_600), |_| async {});
        }
        // Cancelled tasks are dropped once the runtime gets to them; the
        // superseded ones would sleep for the hour.
        let mut alive = usize::MAX;
        for _ in 0..1_000 {
            tokio::task::yield_now().await;
            alive = tokio::runtime::Handle::current().metrics().num_alive_tasks();
            if alive == 1 {
                break;
            }
        }
        assert_eq!(alive, 1, "{alive} timer tasks asleep for one game");
    }
}
