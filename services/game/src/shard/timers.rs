//! Each game's one timer: after a commit the shard notes the game's next
//! deadline (a flag, an abort, the computer's turn), and when it comes the
//! game is ticked. One task per shard sleeps until the earliest deadline
//! of all its games; arming a game's timer again replaces its deadline, so
//! a commit costs an entry in a sorted set, not a task, and the task is
//! woken only when the new deadline is the earliest. The sweep catches
//! deadlines whose timers died with another shard. A computer's turn that
//! no engine has answered by its deadline has the deadline moved on.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use fogblast_proto::error::ErrorCode;
use fogblast_proto::game::Status;
use fogblast_proto::ids::GameId;
use tokio::sync::Notify;
use tokio::time::Instant;
use tracing::warn;

use super::Shard;
use crate::commands::Command;
use crate::deadlines;

/// The games' deadlines, earliest first.
#[derive(Debug, Default)]
struct Deadlines {
    /// Each game's deadline, as it is in `queue`.
    of: HashMap<GameId, Instant>,
    queue: BTreeSet<(Instant, GameId)>,
    /// The task that sleeps until the earliest deadline is running.
    started: bool,
    /// The timers were dropped: the task ends.
    closed: bool,
}

#[derive(Debug, Default)]
struct Shared {
    deadlines: Mutex<Deadlines>,
    /// Told when a deadline earlier than every other is armed, or the
    /// timers are dropped.
    earlier: Notify,
}

/// Every game's pending timer, and the one task that fires them.
#[derive(Debug, Default)]
pub(super) struct Timers {
    shared: Arc<Shared>,
}

impl Drop for Timers {
    fn drop(&mut self) {
        self.shared.deadlines.lock().expect("timers lock").closed = true;
        self.shared.earlier.notify_one();
    }
}

impl Timers {
    /// Sets `game`'s timer to go off after `delay`, replacing the one it
    /// had. `true` the first time: the caller starts [`fire_when_due`].
    #[must_use]
    fn arm(&self, game: GameId, delay: Duration) -> bool {
        let at = Instant::now() + delay;
        let mut deadlines = self.shared.deadlines.lock().expect("timers lock");
        if let Some(before) = deadlines.of.insert(game.clone(), at) {
            deadlines.queue.remove(&(before, game.clone()));
        }
        let earliest = deadlines.queue.first().is_none_or(|(first, _)| at < *first);
        deadlines.queue.insert((at, game));
        let start = !std::mem::replace(&mut deadlines.started, true);
        if earliest && !start {
            self.shared.earlier.notify_one();
        }
        start
    }

    /// The task that hands each game whose timer goes off to `due`.
    fn fire_when_due(&self, due: impl Fn(GameId)) -> impl std::future::Future<Output = ()> {
        fire_when_due(self.shared.clone(), due)
    }

    /// How many games have a timer pending.
    #[cfg(test)]
    fn pending(&self) -> usize {
        self.shared.deadlines.lock().expect("timers lock").of.len()
    }
}

/// Sleeps until the earliest deadline, hands every game due by then to
/// `due`, and sleeps again; ends once the timers are dropped.
async fn fire_when_due(shared: Arc<Shared>, due: impl Fn(GameId)) {
    loop {
        let (fired, next) = {
            let mut deadlines = shared.deadlines.lock().expect("timers lock");
            if deadlines.closed {
                return;
            }
            let now = Instant::now();
            let mut fired = Vec::new();
            while let Some((at, game)) = deadlines.queue.first().cloned() {
                if at > now {
                    break;
                }
                deadlines.queue.pop_first();
                deadlines.of.remove(&game);
                fired.push(game);
            }
            (fired, deadlines.queue.first().map(|(at, _)| *at))
        };
        for game in fired {
            due(game);
        }
        match next {
            Some(at) => {
                tokio::select! {
                    () = tokio::time::sleep_until(at) => {}
                    () = shared.earlier.notified() => {}
                }
            }
            None => shared.earlier.notified().await,
        }
    }
}

impl Shard {
    /// Sets the game's one timer to go off in `delay_ms`.
    pub(super) fn arm_timer(self: &Arc<Self>, game: GameId, delay_ms: u64) {
        if self.timers.arm(game, Duration::from_millis(delay_ms)) {
            let shard = Arc::downgrade(self);
            tokio::spawn(self.timers.fire_when_due(move |game| tick(&shard, game)));
        }
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

/// Ticks `game`, whose timer went off, on a task of its own.
fn tick(shard: &Weak<Shard>, game: GameId) {
    let Some(shard) = shard.upgrade() else { return };
    tokio::spawn(async move { shard.on_due(&game).await });
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
    use tokio::sync::mpsc;

    use super::*;

    fn game(name: &str) -> GameId {
        GameId::parse(name).unwrap()
    }

    /// The timers with their task running, and what goes off.
    fn started(timers: &Timers, first: GameId, delay: Duration) -> mpsc::UnboundedReceiver<GameId> {
        let (fired, went_off) = mpsc::unbounded_channel();
        assert!(timers.arm(first, delay), "the first timer starts the task");
        tokio::spawn(timers.fire_when_due(move |game| {
            let _ = fired.send(game);
        }));
        went_off
    }

    #[tokio::test(start_paused = true)]
    async fn a_timer_armed_again_replaces_the_one_before() {
        let timers = Timers::default();
        let mut went_off = started(&timers, game("aaaaaaaaaa"), Duration::from_secs(10));
        assert!(!timers.arm(game("aaaaaaaaaa"), Duration::from_secs(30)), "the task runs already");
        tokio::time::sleep(Duration::from_secs(20)).await;
        assert!(went_off.try_recv().is_err(), "the replaced deadline never goes off");
        assert_eq!(went_off.recv().await, Some(game("aaaaaaaaaa")));
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert!(went_off.try_recv().is_err(), "a timer goes off once");
        assert_eq!(timers.pending(), 0);
    }

    /// The task sleeps until the earliest deadline: one armed earlier than
    /// all the others wakes it, and games go off in the order of their
    /// deadlines, not of their arming.
    #[tokio::test(start_paused = true)]
    async fn timers_go_off_in_the_order_of_their_deadlines() {
        let timers = Timers::default();
        let mut went_off = started(&timers, game("cccccccccc"), Duration::from_secs(30));
        tokio::task::yield_now().await;
        assert!(!timers.arm(game("bbbbbbbbbb"), Duration::from_secs(20)));
        assert!(!timers.arm(game("aaaaaaaaaa"), Duration::from_secs(5)));
        let start = Instant::now();
        let mut order = Vec::new();
        for _ in 0..3 {
            let fired = went_off.recv().await.expect("a timer goes off");
            order.push((fired.as_str().to_owned(), start.elapsed().as_secs()));
        }
        let expected = [("aaaaaaaaaa", 5), ("bbbbbbbbbb", 20), ("cccccccccc", 30)];
        assert_eq!(order, expected.map(|(g, s)| (g.to_owned(), s)));
    }

    /// A game that commits again and again keeps one deadline, and the
    /// shard one task for all of its games' timers.
    #[tokio::test(flavor = "current_thread")]
    async fn arming_timers_again_and_again_keeps_one_deadline_a_game_and_one_task() {
        let timers = Timers::default();
        let _went_off = started(&timers, game("aaaaaaaaaa"), Duration::from_secs(3_600));
        for round in 0..1_000u64 {
            for name in ["aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc"] {
                assert!(!timers.arm(game(name), Duration::from_secs(3_600 - round)));
            }
        }
        tokio::task::yield_now().await;
        assert_eq!(timers.pending(), 3);
        assert_eq!(timers.shared.deadlines.lock().unwrap().queue.len(), 3);
        assert_eq!(tokio::runtime::Handle::current().metrics().num_alive_tasks(), 1);
    }

    #[tokio::test]
    async fn the_task_ends_when_the_timers_are_dropped() {
        let timers = Timers::default();
        assert!(timers.arm(game("aaaaaaaaaa"), Duration::from_secs(3_600)));
        let task = tokio::spawn(timers.fire_when_due(|_| {}));
        drop(timers);
        tokio::time::timeout(Duration::from_secs(60), task)
            .await
            .expect("the task ends")
            .expect("the task did not panic");
    }
}
