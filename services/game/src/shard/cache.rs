//! The owned games a shard holds in memory, each behind its own lock so
//! commands on one game queue while other games go on.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use fogblast_proto::game::Status;
use fogblast_proto::ids::GameId;

use crate::record::LiveGame;

/// A game as this shard holds it.
#[derive(Debug, Default)]
pub(super) struct Slot {
    pub(super) cached: Option<Cached>,
}

/// The game is shared, not copied, with the caller of a command and with
/// whatever keeps it after the commit: a command copies it once, to change it.
#[derive(Debug, Clone)]
pub(super) struct Cached {
    pub(super) live: Arc<LiveGame>,
    pub(super) version: u64,
}

#[derive(Debug, Default)]
pub(super) struct GameCache {
    slots: Mutex<HashMap<GameId, Arc<tokio::sync::Mutex<Slot>>>>,
}

impl GameCache {
    /// The game's slot, created empty on first use; and how many are held.
    pub(super) fn slot(&self, game: &GameId) -> (Arc<tokio::sync::Mutex<Slot>>, usize) {
        let mut slots = self.slots.lock().expect("slots lock");
        let slot = slots.entry(game.clone()).or_default().clone();
        (slot, slots.len())
    }

    /// Drops the games `keep` says no, and finished games nobody watches;
    /// a slot in use stays. Returns how many are left.
    pub(super) fn evict(&self, owned: impl Fn(&GameId) -> bool, watched: &HashSet<GameId>) -> usize {
        let mut slots = self.slots.lock().expect("slots lock");
        slots.retain(|game, slot| {
            if !owned(game) {
                return false;
            }
            match slot.try_lock() {
                Ok(slot) => match &slot.cached {
                    Some(cached) => cached.live.status() != Status::Ended || watched.contains(game),
                    None => false,
                },
                Err(_) => true,
            }
        });
        slots.len()
    }
}
