//! The public stream (docs/events.md): after each commit the shard hands
//! the commit's public events to a queue per game, and one task per shard
//! publishes every game's queue in order, one event of a game at a time and
//! the games' events side by side, once per configured encoding (protobuf
//! and JSON subjects, both by default), with message ids that are the same
//! on every resend so the stream drops duplicates. While NATS is away the
//! publisher retries each game's oldest event and the game's newer ones
//! wait (up to `MAX_QUEUED` per game; past that they are dropped and
//! counted).
//!
//! A shard that takes a game over does not know which of the previous
//! owner's events reached the stream, so before the first event it
//! publishes for such a game (one it had no queue for, or had to read from
//! the store again: it may be getting the game back from a shard that
//! owned it meanwhile) it publishes again the last `CATCH_UP` events
//! before it from the store's history: those the previous owner
//! committed but never published reach the stream, the others are dropped
//! as duplicates. For the same reason a command answered from an earlier
//! commit (its first answer lost, so the commit's events may never have
//! been queued) publishes the game's last events again from the store.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::Bytes;
use fogblast_bus::Headers;
use fogblast_proto::events::game_event::Kind;
use fogblast_proto::events::GameEvent;
use fogblast_proto::game::WatchEvent;
use fogblast_proto::ids::GameId;
use fogblast_proto::public_events::{self, Encoding, CONTENT_TYPE_HEADER, SCHEMA};
use fogblast_proto::record::GameRecord;
use fogblast_store::EventsAfter;
use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use prost::Message;
use tokio::sync::mpsc;
use tracing::{debug, warn};

use super::Shard;
use crate::public_events::public_events;

/// Events held per game while they cannot be published.
const MAX_QUEUED: usize = 1024;
/// Events published again before the first one of a game taken over.
const CATCH_UP: u64 = 16;
/// The longest wait between tries at an event.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How long a catch-up waits for the replicas to confirm the history it
/// read before publishing it all the same.
const DURABLE_WAIT: Duration = Duration::from_secs(60);

enum Item {
    /// Publish again the events of versions `from..before` from the store.
    CatchUp {
        from: u64,
        before: u64,
        game: Box<GameRecord>,
    },
    Event(GameEvent),
}

/// What the public events of a game read from its record: its id,
/// variant and seats, without the moves and requests.
fn facts(record: &GameRecord) -> GameRecord {
    GameRecord { moves: Vec::new(), clock_ms: Vec::new(), requests: Vec::new(), ..record.clone() }
}

#[derive(Default)]
struct Queue {
    items: VecDeque<Item>,
    /// The publisher has this queue in hand.
    running: bool,
    /// The game's finished event is queued: the queue goes once drained.
    ended: bool,
    /// The game was read from the store since this shard last queued its
    /// events: another shard may have owned it meanwhile, so the next
    /// events queued are preceded by a catch-up, as for a game never seen.
    reread: bool,
}

/// The public events waiting to be published, per game.
#[derive(Default)]
pub(super) struct PublicStream {
    games: Mutex<HashMap<GameId, Queue>>,
    /// Hands the publisher each game whose queue it does not have in hand
    /// and now has events; the publisher starts with the first.
    publisher: Mutex<Option<mpsc::UnboundedSender<GameId>>>,
}

impl std::fmt::Debug for PublicStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let games = self.games.lock().map(|games| games.len()).unwrap_or_default();
        f.debug_struct("PublicStream").field("games", &games).finish()
    }
}

/// The shard's one publisher: publishes each game it is handed, an item
/// at a time, until the game's queue is empty, many games at once. Ends
/// with the shard.
async fn publish_all(shard: Weak<Shard>, mut ready: mpsc::UnboundedReceiver<GameId>) {
    let mut publishing = FuturesUnordered::new();
    loop {
        let game = tokio::select! {
            handed = ready.recv() => match handed {
                Some(game) => game,
                None => return,
            },
            Some(published) = publishing.next(), if !publishing.is_empty() => published,
        };
        let Some(shard) = shard.upgrade() else { return };
        if let Some(next) = shard.publish_next(game) {
            publishing.push(next);
        }
    }
}

impl Shard {
    /// Queues the public events of a commit's `events` (the game `live`
    /// after it, at store time `now`) and starts the game's publishing
    /// task if none runs.
    pub(super) fn stream_public(self: &Arc<Self>, game: &GameId, record: &GameRecord, events: &[WatchEvent], now: u64) {
        if !self.publishes_public() || events.is_empty() {
            return;
        }
        let public = public_events(record, events, now);
        let first_version = events[0].version;
        self.queue_public(game, |queue, known| {
            if (!known || std::mem::take(&mut queue.reread)) && first_version > 1 {
                let from = first_version.saturating_sub(CATCH_UP).max(1);
                queue.items.push_back(Item::CatchUp { from, before: first_version, game: Box::new(facts(record)) });
            }
            for event in public {
                if queue.items.len() >= MAX_QUEUED {
                    self.metrics.public_events_dropped.inc();
                    continue;
                }
                queue.ended |= matches!(event.kind, Some(Kind::Finished(_)));
                queue.items.push_back(Item::Event(event));
            }
        });
    }

    /// Queues again, read back from the store, the public events of the
    /// last commits up to version `through` (at most [`CATCH_UP`] of them)
    /// of the game `record` describes: for a command answered from an
    /// earlier commit whose own answer was lost, and whose events were
    /// therefore never queued. The stream drops those it already has (the
    /// message ids are the same on every resend).
    pub(super) fn republish_public(self: &Arc<Self>, game: &GameId, record: &GameRecord, through: u64, ended: bool) {
        if !self.publishes_public() || through == 0 {
            return;
        }
        let from = (through + 1).saturating_sub(CATCH_UP).max(1);
        self.queue_public(game, |queue, _| {
            queue.ended |= ended;
            queue.items.push_back(Item::CatchUp { from, before: through + 1, game: Box::new(facts(record)) });
        });
    }

    /// Notes that `game` was read from the store rather than held: the
    /// shard may be getting it back from another owner, whose unpublished
    /// events the next catch-up must reach.
    pub(super) fn note_public_reread(&self, game: &GameId) {
        if let Some(queue) = self.public.games.lock().expect("public stream lock").get_mut(game) {
            queue.reread = true;
        }
    }

    /// Adds to the game's queue with `add` (told whether the queue was
    /// there before) and starts its publishing task if none runs.
    fn queue_public(self: &Arc<Self>, game: &GameId, add: impl FnOnce(&mut Queue, bool)) {
        let start = {
            let mut games = self.public.games.lock().expect("public stream lock");
            let known = games.contains_key(game);
            let queue = games.entry(game.clone()).or_default();
            add(queue, known);
            let start = !queue.running && !queue.items.is_empty();
            queue.running |= start;
            start
        };
        if start {
            let mut publisher = self.public.publisher.lock().expect("public stream lock");
            let sender = publisher.get_or_insert_with(|| {
                let (sender, ready) = mpsc::unbounded_channel();
                tokio::spawn(publish_all(Arc::downgrade(self), ready));
                sender
            });
            // The publisher ends only with the shard, which holds the sender.
            let _ = sender.send(game.clone());
        }
    }

    /// Publishing the next item of the game's queue, which the publisher
    /// has in hand; `None`, and the queue let go, once it is empty.
    fn publish_next(self: &Arc<Self>, game: GameId) -> Option<BoxFuture<'static, GameId>> {
        let item = {
            let mut games = self.public.games.lock().expect("public stream lock");
            let queue = games.get_mut(&game)?;
            match queue.items.pop_front() {
                Some(item) => item,
                None => {
                    queue.running = false;
                    if queue.ended {
                        games.remove(&game);
                    }
                    return None;
                }
            }
        };
        let shard = self.clone();
        Some(Box::pin(async move {
            match item {
                Item::Event(event) => shard.publish_until_done(&event).await,
                Item::CatchUp { from, before, game: record } => {
                    for event in shard.caught_up(&game, &record, from, before).await {
                        shard.publish_until_done(&event).await;
                    }
                }
            }
            game
        }))
    }

    /// The public events of versions `from..before` from the store's
    /// history; none if the store cannot say.
    async fn caught_up(&self, game: &GameId, record: &GameRecord, from: u64, before: u64) -> Vec<GameEvent> {
        let now = self.store.now_ms().await.unwrap_or_default();
        let found = self.store.events_after(game, from - 1).await;
        // Only what is as durable as a commit is published (see
        // `Shard::current`): the stream waits for the replicas, and after
        // a minute without them publishes what the primary holds rather
        // than leave a gap.
        let mut wait = Duration::from_millis(100);
        let mut waited = Duration::ZERO;
        while let Err(error) = self.store.confirm_durable(game).await {
            if waited >= DURABLE_WAIT {
                warn!(game = %game, %error, "publishing history the replicas have not confirmed");
                break;
            }
            tokio::time::sleep(wait).await;
            waited += wait;
            wait = (wait * 2).min(MAX_BACKOFF);
        }
        match found {
            Ok(EventsAfter::Events { events, .. }) => {
                let decoded: Vec<WatchEvent> = events
                    .iter()
                    .filter(|(version, _)| *version < before)
                    .filter_map(|(_, bytes)| WatchEvent::decode(bytes.as_slice()).ok())
                    .collect();
                public_events(record, &decoded, now)
            }
            Ok(_) => Vec::new(),
            Err(error) => {
                debug!(game = %game, %error, "no history to catch the public stream up from");
                Vec::new()
            }
        }
    }

    /// Publishes one event in each encoding the shard publishes, trying
    /// again until the stream takes them all.
    async fn publish_until_done(&self, event: &GameEvent) {
        let encoded: Vec<(Encoding, Bytes)> = self
            .public_encodings()
            .map(|encoding| {
                let payload = match encoding {
                    Encoding::Protobuf => event.encode_to_vec(),
                    Encoding::Json => public_events::to_json_bytes(event),
                };
                (encoding, Bytes::from(payload))
            })
            .collect();
        let mut wait = Duration::from_millis(100);
        loop {
            let sent = futures::future::join_all(
                encoded.iter().map(|(encoding, payload)| self.publish_encoded(event, *encoding, payload.clone())),
            )
            .await;
            match sent.into_iter().collect::<Result<(), _>>() {
                Ok(()) => {
                    self.metrics.public_events_published.inc();
                    return;
                }
                Err(error) => {
                    warn!(event = %event.event_id, %error, "public event not published yet; trying again");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(MAX_BACKOFF);
                }
            }
        }
    }

    /// Whether the shard publishes the public stream at all.
    fn publishes_public(&self) -> bool {
        let settings = &self.config.settings;
        settings.public_events && !settings.public_event_encodings.is_empty()
    }

    /// The configured encodings, each once, in a fixed order.
    fn public_encodings(&self) -> impl Iterator<Item = Encoding> + '_ {
        Encoding::ALL.into_iter().filter(|e| self.config.settings.public_event_encodings.contains(e))
    }

    async fn publish_encoded(
        &self,
        event: &GameEvent,
        encoding: Encoding,
        payload: Bytes,
    ) -> Result<(), fogblast_bus::BusError> {
        let headers: Headers = vec![
            (CONTENT_TYPE_HEADER.to_owned(), encoding.content_type().to_owned()),
            ("Fogblast-Schema".to_owned(), SCHEMA.to_owned()),
        ];
        let subject = public_events::subject(event, encoding);
        let id = public_events::message_id(event, encoding);
        self.bus.publish_durable(&subject, &id, headers, payload).await.map(|_| ())
    }
}
