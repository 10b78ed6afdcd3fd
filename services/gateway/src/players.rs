//! The players connected to this gateway and their sockets (a player may
//! have several tabs), and the gateway's one subscription to `player.*`,
//! where the matchmaker and the rating service address players by
//! `player.<id>`. It is made once, when the gateway starts, and each notice
//! that arrives on it is routed by the id in its subject: written as a
//! protocol frame (`notices.rs`), it goes to every one of that player's
//! sockets here; a notice for a player with no socket here is dropped.
//!
//! One subscription for the whole gateway instead of one per player: an
//! idle socket then costs no bus subscription (its queue, its task and the
//! client's record of it), at the price of every gateway hearing every
//! player's notices, a handful per game (docs/performance.md).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use fogblast_bus::{EventBus, Message};
use fogblast_proto::ids::PlayerId;
use fogblast_proto::notices::PLAYER_SUBJECT_PREFIX;
use futures::stream::BoxStream;
use futures::StreamExt;
use tokio::task::JoinHandle;
use tracing::{debug, info, warn};

use crate::conn::Conn;
use crate::frames;
use crate::metrics::Metrics;
use crate::notices;

/// Each player's sockets here, by connection id.
type Map = HashMap<PlayerId, HashMap<u64, Arc<Conn>>>;

/// The first wait before subscribing again after the bus refused or ended
/// the subscription; it doubles up to [`RESUBSCRIBE_MAX`].
const RESUBSCRIBE_FIRST: Duration = Duration::from_millis(500);
const RESUBSCRIBE_MAX: Duration = Duration::from_secs(30);

pub struct Players {
    metrics: Arc<Metrics>,
    players: Arc<Mutex<Map>>,
    listener: JoinHandle<()>,
}

impl std::fmt::Debug for Players {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Players").finish_non_exhaustive()
    }
}

impl Drop for Players {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

/// The subject every player's notices match.
fn every_player() -> String {
    format!("{PLAYER_SUBJECT_PREFIX}*")
}

/// The player a notice's subject names: `player.<id>` with one valid id,
/// nothing before or after it. `None` for anything else.
fn addressee(subject: &str) -> Option<PlayerId> {
    let id = subject.strip_prefix(PLAYER_SUBJECT_PREFIX)?;
    // An id never holds a `.`, `*` or `>`, so this also refuses deeper
    // subjects and wildcards.
    PlayerId::parse(id).ok()
}

impl Players {
    /// Subscribes to every player's notices and routes them for as long as
    /// the gateway runs. Returns once the subscription is on the bus, so a
    /// player added after it hears every notice sent after it was added;
    /// if the bus refuses, it keeps trying in the background.
    pub async fn start(bus: Arc<dyn EventBus>, metrics: Arc<Metrics>) -> Players {
        let players: Arc<Mutex<Map>> = Arc::default();
        let first = subscribe(bus.as_ref()).await;
        let listener = tokio::spawn(listen(bus, Arc::downgrade(&players), first));
        Players { metrics, players, listener }
    }

    /// Adds a socket of `player`.
    pub fn add(&self, player: &PlayerId, conn: &Arc<Conn>) {
        let mut players = self.players.lock().expect("players lock");
        players.entry(player.clone()).or_default().insert(conn.id, conn.clone());
        self.metrics.players.set(players.len() as i64);
    }

    /// Whether `player` has a socket here.
    pub fn is_here(&self, player: &PlayerId) -> bool {
        self.players.lock().expect("players lock").contains_key(player)
    }

    /// Removes a socket. Returns whether it was the player's last socket here.
    pub fn remove(&self, player: &PlayerId, conn: &Conn) -> bool {
        let mut players = self.players.lock().expect("players lock");
        let mut last = false;
        if let Some(conns) = players.get_mut(player) {
            conns.remove(&conn.id);
            if conns.is_empty() {
                players.remove(player);
                last = true;
            }
        }
        self.metrics.players.set(players.len() as i64);
        last
    }
}

async fn subscribe(bus: &dyn EventBus) -> Option<BoxStream<'static, Message>> {
    match bus.subscribe(&every_player()).await {
        Ok(messages) => Some(messages),
        Err(error) => {
            warn!(%error, "not listening for players' notices; trying again");
            None
        }
    }
}

/// Routes what arrives on `messages`, subscribing again whenever there is
/// no subscription, until the players are gone.
async fn listen(bus: Arc<dyn EventBus>, players: Weak<Mutex<Map>>, mut messages: Option<BoxStream<'static, Message>>) {
    let mut wait = RESUBSCRIBE_FIRST;
    loop {
        if let Some(mut subscription) = messages.take() {
            wait = RESUBSCRIBE_FIRST;
            while let Some(message) = subscription.next().await {
                let Some(players) = players.upgrade() else { return };
                route(&players, &message);
            }
            warn!("the subscription to players' notices ended; subscribing again");
        }
        if players.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(RESUBSCRIBE_MAX);
        messages = subscribe(bus.as_ref()).await;
        if messages.is_some() {
            info!("listening for players' notices again");
        }
    }
}

/// Hands one notice to the sockets of the player its subject names, if
/// that player has any here.
fn route(players: &Mutex<Map>, message: &Message) {
    let Some(player) = addressee(&message.subject) else {
        debug!(subject = %message.subject, "a notice on a subject that names no player");
        return;
    };
    let conns: Vec<Arc<Conn>> = {
        let players = players.lock().expect("players lock");
        match players.get(&player) {
            Some(conns) => conns.values().cloned().collect(),
            // Another gateway's player.
            None => return,
        }
    };
    let Some(frame) = notices::player_frame(&message.payload) else {
        debug!(player = %player, "a notice that is not one of ours");
        return;
    };
    let frame = frames::text(&frame);
    for conn in conns {
        conn.send(frame.clone());
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use fogblast_bus::{BusError, ConsumerConfig, Delivery, Headers, NatsBus, NatsConfig, PublishAck};
    use fogblast_proto::notices::{player_notice, player_subject, PlayerNotice, SeekCancelled};
    use fogblast_testkit::{self as testkit, Scratch};
    use prost::Message as _;

    use super::*;

    #[test]
    fn a_notice_subject_names_exactly_one_valid_player() {
        assert_eq!(addressee("player.7xzp6rfsvr99yl6w"), Some(PlayerId::parse("7xzp6rfsvr99yl6w").unwrap()));
        assert_eq!(addressee("player.a-b_C9"), Some(PlayerId::parse("a-b_C9").unwrap()));
        let longest = format!("player.{}", "x".repeat(fogblast_proto::ids::MAX_ID_LEN));
        assert!(addressee(&longest).is_some());
        let malformed = [
            "",
            "player",
            "player.",
            "player..",
            "player.*",
            "player.>",
            "player.a.b",
            "player.a.",
            ".player.a",
            "players.a",
            "playerx.a",
            "lobby",
            "challenge.a",
            "player.a b",
            "player.\u{e9}t\u{e9}",
            "player.a\u{0}",
            "PLAYER.a",
        ];
        for subject in malformed {
            assert_eq!(addressee(subject), None, "{subject:?}");
        }
        let too_long = format!("player.{}", "x".repeat(fogblast_proto::ids::MAX_ID_LEN + 1));
        assert_eq!(addressee(&too_long), None);
    }

    /// The NATS bus, counting what is subscribed to.
    #[derive(Debug)]
    struct Counting {
        inner: NatsBus,
        subscribed: Mutex<Vec<String>>,
    }

    #[tonic::async_trait]
    impl EventBus for Counting {
        async fn publish_durable(
            &self,
            subject: &str,
            message_id: &str,
            headers: Headers,
            payload: Bytes,
        ) -> Result<PublishAck, BusError> {
            self.inner.publish_durable(subject, message_id, headers, payload).await
        }

        async fn consume_durable(
            &self,
            config: ConsumerConfig,
        ) -> Result<BoxStream<'static, Result<Box<dyn Delivery>, BusError>>, BusError> {
            self.inner.consume_durable(config).await
        }

        async fn publish(&self, subject: &str, headers: Headers, payload: Bytes) -> Result<(), BusError> {
            self.inner.publish(subject, headers, payload).await
        }

        async fn subscribe(&self, subject: &str) -> Result<BoxStream<'static, Message>, BusError> {
            self.subscribed.lock().unwrap().push(subject.to_owned());
            self.inner.subscribe(subject).await
        }
    }

    fn seek_cancelled(reason: &str) -> Bytes {
        let notice = player_notice::Notice::SeekCancelled(SeekCancelled { reason: reason.to_owned() });
        PlayerNotice { notice: Some(notice) }.encode_to_vec().into()
    }

    /// The reason of the next frame a socket gets, waiting for it a while.
    async fn next_reason(frames: &mut crate::conn::Outbox) -> String {
        let frame = tokio::time::timeout(Duration::from_secs(10), frames.recv())
            .await
            .expect("a frame in time")
            .expect("the socket's queue is open");
        let frame: serde_json::Value = serde_json::from_str(frame.as_str()).unwrap();
        assert_eq!(frame["t"], "seek_cancelled", "{frame}");
        frame["reason"].as_str().unwrap().to_owned()
    }

    fn nothing_more(frames: &mut crate::conn::Outbox) -> bool {
        frames.try_recv().is_err()
    }

    /// Two players on one gateway, three sockets: the notices published on
    /// NATS to each player reach every socket of that player and no other,
    /// a notice for a player not connected here, on a malformed subject or
    /// that does not decode goes nowhere, and the gateway subscribed once,
    /// to `player.*`, whoever connected.
    #[tokio::test]
    async fn one_subscription_carries_every_players_notices_to_their_own_sockets() {
        let scratch = Scratch::new("gateway-players");
        let config = NatsConfig {
            url: testkit::nats_url(),
            stream: scratch.stream.clone(),
            subject_prefix: scratch.subject_prefix.clone(),
            max_bytes: testkit::TEST_STREAM_MAX_BYTES,
            ..NatsConfig::default()
        };
        let nats = NatsBus::connect(config).await.unwrap_or_else(|e| {
            panic!("this test needs NATS at {} (FOGBLAST_TEST_NATS_URL): {e}", testkit::nats_url())
        });
        let bus = Arc::new(Counting { inner: nats.clone(), subscribed: Mutex::default() });
        let players = Players::start(bus.clone(), Arc::new(Metrics::new().unwrap())).await;

        let alice = PlayerId::parse("alice").unwrap();
        let bob = PlayerId::parse("bob").unwrap();
        let carol = PlayerId::parse("carol").unwrap();
        let (alice_tab, mut alice_tab_frames, _c1) = Conn::new();
        let (alice_phone, mut alice_phone_frames, _c2) = Conn::new();
        let (bob_tab, mut bob_frames, _c3) = Conn::new();
        players.add(&alice, &alice_tab);
        players.add(&alice, &alice_phone);
        players.add(&bob, &bob_tab);

        let publish = |subject: String, payload: Bytes| {
            let nats = nats.clone();
            async move { nats.publish(&subject, Vec::new(), payload).await.expect("published") }
        };
        publish(player_subject(alice.as_str()), seek_cancelled("for alice")).await;
        publish(player_subject(carol.as_str()), seek_cancelled("for carol")).await;
        publish(player_subject(bob.as_str()), seek_cancelled("for bob")).await;
        publish(format!("{PLAYER_SUBJECT_PREFIX}{}%", bob.as_str()), seek_cancelled("malformed")).await;
        publish(player_subject(bob.as_str()), Bytes::from_static(b"not a notice")).await;
        // Published last: once these have arrived, whatever came before has
        // (one subscription delivers in the order published).
        publish(player_subject(alice.as_str()), seek_cancelled("alice again")).await;
        publish(player_subject(bob.as_str()), seek_cancelled("bob again")).await;

        for frames in [&mut alice_tab_frames, &mut alice_phone_frames] {
            assert_eq!(next_reason(frames).await, "for alice");
            assert_eq!(next_reason(frames).await, "alice again");
        }
        assert_eq!(next_reason(&mut bob_frames).await, "for bob");
        assert_eq!(next_reason(&mut bob_frames).await, "bob again");
        for frames in [&mut alice_tab_frames, &mut alice_phone_frames, &mut bob_frames] {
            assert!(nothing_more(frames), "carol's, the malformed and the undecodable notices went nowhere");
        }

        // A closed tab hears nothing more; a player gone from here neither.
        assert!(!players.remove(&alice, &alice_phone), "alice still has a tab");
        assert!(players.remove(&bob, &bob_tab), "bob's last socket");
        publish(player_subject(bob.as_str()), seek_cancelled("bob gone")).await;
        publish(player_subject(alice.as_str()), seek_cancelled("alice on one tab")).await;
        assert_eq!(next_reason(&mut alice_tab_frames).await, "alice on one tab");
        assert!(nothing_more(&mut alice_phone_frames));
        assert!(nothing_more(&mut bob_frames));

        assert_eq!(*bus.subscribed.lock().unwrap(), ["player.*"], "one subscription for every player");
        drop(players);
    }
}
