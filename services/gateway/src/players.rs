//! The players connected to this gateway and their sockets (a player may
//! have several tabs). While a player has a socket here, the gateway
//! listens on the bus subject `player.<id>`, where the matchmaker and the
//! rating service address them; each notice there is written as a protocol
//! frame (`notices.rs`) and goes to every one of the player's sockets.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use fogblast_bus::EventBus;
use fogblast_proto::ids::PlayerId;
use fogblast_proto::notices::player_subject;
use futures::StreamExt;
use tokio::task::JoinHandle;
use tracing::{debug, warn};

use crate::conn::Conn;
use crate::frames;
use crate::metrics::Metrics;
use crate::notices;

struct Entry {
    conns: HashMap<u64, Arc<Conn>>,
    listener: Option<JoinHandle<()>>,
}

pub struct Players {
    bus: Arc<dyn EventBus>,
    metrics: Arc<Metrics>,
    players: Arc<Mutex<HashMap<PlayerId, Entry>>>,
}

impl std::fmt::Debug for Players {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Players").finish_non_exhaustive()
    }
}

impl Players {
    pub fn new(bus: Arc<dyn EventBus>, metrics: Arc<Metrics>) -> Players {
        Players { bus, metrics, players: Arc::default() }
    }

    /// Adds a socket of `player`, listening for the player if it is the first.
    pub async fn add(&self, player: &PlayerId, conn: &Arc<Conn>) {
        let first = {
            let mut players = self.players.lock().expect("players lock");
            let entry =
                players.entry(player.clone()).or_insert_with(|| Entry { conns: HashMap::new(), listener: None });
            entry.conns.insert(conn.id, conn.clone());
            let first = entry.listener.is_none() && entry.conns.len() == 1;
            self.metrics.players.set(players.len() as i64);
            first
        };
        if !first {
            return;
        }
        let subscription = match self.bus.subscribe(&player_subject(player.as_str())).await {
            Ok(subscription) => subscription,
            Err(error) => {
                warn!(player = %player, %error, "not listening for the player's notifications");
                return;
            }
        };
        let players = self.players.clone();
        let id = player.clone();
        let listener = tokio::spawn(async move {
            let mut subscription = subscription;
            while let Some(message) = subscription.next().await {
                let Some(frame) = notices::player_frame(&message.payload) else {
                    debug!(player = %id, "a notice that is not one of ours");
                    continue;
                };
                let frame = frames::text(&frame);
                let conns: Vec<Arc<Conn>> = {
                    let players = players.lock().expect("players lock");
                    players.get(&id).map(|e| e.conns.values().cloned().collect()).unwrap_or_default()
                };
                for conn in conns {
                    conn.send(frame.clone());
                }
            }
        });
        let mut players = self.players.lock().expect("players lock");
        match players.get_mut(player) {
            Some(entry) if entry.listener.is_none() => entry.listener = Some(listener),
            _ => listener.abort(),
        }
    }

    /// Removes a socket; the last one of a player stops listening for it.
    /// Returns whether it was the player's last socket here.
    pub fn remove(&self, player: &PlayerId, conn: &Conn) -> bool {
        let mut players = self.players.lock().expect("players lock");
        let mut last = false;
        if let Some(entry) = players.get_mut(player) {
            entry.conns.remove(&conn.id);
            if entry.conns.is_empty() {
                if let Some(listener) = entry.listener.take() {
                    listener.abort();
                }
                players.remove(player);
                last = true;
            }
        }
        self.metrics.players.set(players.len() as i64);
        last
    }
}
