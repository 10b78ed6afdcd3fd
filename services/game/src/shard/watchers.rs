//! The live event feed of each game for the Watch streams this shard
//! serves: a bounded broadcast channel per watched game, created on first
//! use and dropped once nobody listens.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use bytes::Bytes;
use fogblast_proto::ids::GameId;
use tokio::sync::broadcast;

/// Live events buffered per game for slow watchers before they re-read the store.
const WATCH_BUFFER: usize = 256;

/// A committed event as every watcher is sent it: the bytes of its
/// `WatchEvent`, encoded once and shared.
#[derive(Clone, Debug)]
pub struct Committed {
    pub version: u64,
    pub encoded: Bytes,
}

#[derive(Debug, Default)]
pub(super) struct Watchers {
    channels: Mutex<HashMap<GameId, broadcast::Sender<Committed>>>,
}

impl Watchers {
    /// A receiver of the game's live events.
    pub(super) fn subscribe(&self, game: &GameId) -> broadcast::Receiver<Committed> {
        let mut channels = self.channels.lock().expect("watchers lock");
        channels.entry(game.clone()).or_insert_with(|| broadcast::channel(WATCH_BUFFER).0).subscribe()
    }

    /// Hands `events` to whoever watches `game`, in order.
    pub(super) fn send(&self, game: &GameId, events: impl IntoIterator<Item = Committed>) {
        if let Some(sender) = self.channels.lock().expect("watchers lock").get(game) {
            for event in events {
                let _ = sender.send(event);
            }
        }
    }

    /// Whether anyone watches `game` now.
    pub(super) fn watched(&self, game: &GameId) -> bool {
        self.channels.lock().expect("watchers lock").contains_key(game)
    }

    /// Drops the channels nobody listens to; the games still watched.
    pub(super) fn prune(&self) -> HashSet<GameId> {
        let mut channels = self.channels.lock().expect("watchers lock");
        channels.retain(|_, sender| sender.receiver_count() > 0);
        channels.keys().cloned().collect()
    }
}
