//! The commands one connection has in flight. The read loop never awaits a
//! command: each runs on a task of its own, so a slow dependency (a hung
//! matchmaker, a shard failing over) delays only the commands that need it
//! while the socket keeps reading, answering and moving in its other games.
//! Commands that must keep their order share a lane (one game's commands;
//! a player's seeks), where each waits for the one before it; a `ping` is a
//! barrier that waits for everything sent before it, so its `pong` still
//! means "all earlier commands are answered".
//!
//! The number of commands in flight is bounded: past the bound a command is
//! refused at once (the caller answers `rate_limited`) rather than queued or
//! waited for, since waiting would stop the read loop, which is the stall
//! this module exists to remove, and queuing would let a client grow the
//! gateway's memory without bound.

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinSet;

/// Commands that must be carried out in the order they arrived.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Lane {
    /// One game's commands, by its id.
    Game(String),
    /// `seek` and `cancel_seek`: a cancel must not overtake its seek.
    Seeks,
}

/// Where a command runs.
#[derive(Debug)]
pub enum Order {
    /// After the earlier commands of its lane.
    In(Lane),
    /// Whenever it can: nothing depends on its order.
    Free,
    /// After every command sent before it.
    Barrier,
}

/// Closed when its command finishes: the sender side lives in the task.
type Done = watch::Receiver<()>;

fn finished(done: &Done) -> bool {
    done.has_changed().is_err()
}

/// The commands in flight on one connection.
pub struct Lanes {
    limit: usize,
    tasks: JoinSet<()>,
    /// Every command in flight, for barriers.
    running: Vec<Done>,
    /// The last command of each lane, which the next one waits for.
    tails: HashMap<Lane, Done>,
}

impl Lanes {
    pub fn new(limit: usize) -> Lanes {
        Lanes { limit: limit.max(1), tasks: JoinSet::new(), running: Vec::new(), tails: HashMap::new() }
    }

    /// Starts `command` in `order`; `false`, and nothing started, when the
    /// connection already has its limit of commands in flight.
    pub fn start(&mut self, order: Order, command: impl Future<Output = ()> + Send + 'static) -> bool {
        self.running.retain(|done| !finished(done));
        self.tails.retain(|_, done| !finished(done));
        if self.running.len() >= self.limit {
            return false;
        }
        let (finish, done) = watch::channel(());
        let after: Vec<Done> = match order {
            Order::In(lane) => self.tails.insert(lane, done.clone()).into_iter().collect(),
            Order::Free => Vec::new(),
            Order::Barrier => self.running.clone(),
        };
        self.running.push(done);
        self.tasks.spawn(async move {
            for mut earlier in after {
                // Only ever closed, never sent to: this waits for the end.
                let _ = earlier.changed().await;
            }
            command.await;
            drop(finish);
        });
        true
    }

    /// Waits for some command to finish; pending while none is in flight.
    pub async fn reap(&mut self) {
        if self.tasks.join_next().await.is_none() {
            std::future::pending::<()>().await;
        }
    }

    /// Lets the commands in flight finish for up to `grace` (each has a
    /// deadline of its own), then cancels the rest.
    pub async fn finish(mut self, grace: Duration) {
        let _ = tokio::time::timeout(grace, async { while self.tasks.join_next().await.is_some() {} }).await;
        self.tasks.shutdown().await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tokio::sync::oneshot;

    use super::*;

    #[tokio::test]
    async fn a_lane_keeps_its_order_while_other_lanes_and_free_commands_pass() {
        let mut lanes = Lanes::new(8);
        let log = Arc::new(Mutex::new(Vec::new()));
        let (release, held) = oneshot::channel::<()>();
        let write = |what: &'static str| {
            let log = log.clone();
            async move { log.lock().unwrap().push(what) }
        };
        let hung = {
            let log = log.clone();
            async move {
                let _ = held.await;
                log.lock().unwrap().push("a1");
            }
        };
        assert!(lanes.start(Order::In(Lane::Game("a".into())), hung));
        assert!(lanes.start(Order::In(Lane::Game("a".into())), write("a2")));
        assert!(lanes.start(Order::In(Lane::Game("b".into())), write("b1")));
        assert!(lanes.start(Order::Free, write("free")));
        lanes.reap().await;
        lanes.reap().await;
        assert_eq!(log.lock().unwrap().len(), 2, "b1 and free ran while game a waited: {:?}", log.lock().unwrap());
        assert!(lanes.start(Order::Barrier, write("barrier")));
        release.send(()).unwrap();
        lanes.finish(Duration::from_secs(5)).await;
        let log = log.lock().unwrap();
        assert_eq!(&log[2..], ["a1", "a2", "barrier"], "{log:?}");
    }

    #[tokio::test]
    async fn past_the_limit_a_command_is_refused_not_queued() {
        let mut lanes = Lanes::new(2);
        assert!(lanes.start(Order::Free, std::future::pending()));
        assert!(lanes.start(Order::In(Lane::Seeks), std::future::pending()));
        assert!(!lanes.start(Order::Free, async {}));
        assert!(!lanes.start(Order::Barrier, async {}));
        lanes.finish(Duration::from_millis(10)).await;
    }

    #[tokio::test]
    async fn a_finished_command_frees_its_place() {
        let mut lanes = Lanes::new(1);
        assert!(lanes.start(Order::In(Lane::Seeks), async {}));
        lanes.reap().await;
        assert!(lanes.start(Order::In(Lane::Seeks), async {}));
        lanes.finish(Duration::from_secs(1)).await;
    }
}
