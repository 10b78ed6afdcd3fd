//! The in-process bus behind `fogblast up`, where every service runs in one
//! process and no NATS server is wanted. It keeps JetStream's semantics
//! rather than faking them (stored log, dedup by message id, per-durable
//! positions, ack-pending redelivery, shared work, wildcard routing), so code
//! that only works thanks to a shortcut here fails in development, not in
//! production.
//!
//! Unlike a NATS stream it never grows without bound: a message leaves the
//! log once every durable consumer that takes it has acknowledged it and
//! [`MemoryBus::with_settled_kept`] has passed (so a consumer made a moment
//! later still gets it, and a resend in that time is still a duplicate),
//! and the oldest messages leave past [`MemoryBus::with_max_bytes`], as on
//! a stream with limits. [`MemoryBus::open`] keeps the log in a file, so a
//! process killed outright loses no message it acknowledged.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::{self, BoxStream, StreamExt};
use tokio::sync::{mpsc, Notify};
use tokio::time::Instant;

use crate::journal::{Journal, Kept};
use crate::subject::{self, Stream, MSG_ID_HEADER};
use crate::{BusError, ConsumerConfig, Delivery, EventBus, Headers, Message, PublishAck};

/// Messages a plain subscriber may fall behind by before it loses some:
/// plain subjects are best-effort notifications, and a stalled reader must
/// never hold up the publishers (the game loop among them).
const SUBSCRIBER_BUFFER: usize = 1024;

/// What NATS uses when a consumer asks for no ack wait; mirrored so a zero
/// does not turn into a redelivery storm here only.
const DEFAULT_ACK_WAIT: Duration = Duration::from_secs(30);

/// How long a message every consumer acknowledged stays, unless
/// [`MemoryBus::with_settled_kept`] says otherwise: NATS's default
/// duplicate window.
const SETTLED_KEPT: Duration = Duration::from_secs(120);

/// The most the log holds (its payloads, headers and ids) unless
/// [`MemoryBus::with_max_bytes`] says otherwise.
const MAX_BYTES: usize = 64 << 20;

/// An in-process [`EventBus`]. Clones share the same log and subscribers.
#[derive(Clone, Debug, Default)]
pub struct MemoryBus {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    durable: Mutex<Durable>,
    /// Changes to the log, its consumers and their acknowledgements go one
    /// at a time, each written to the journal before memory shows it.
    writing: tokio::sync::Mutex<()>,
    journal: Option<Journal>,
    /// Wakes consumer streams parked for lack of work when the log grows.
    appended: Notify,
    subscribers: Mutex<Vec<Subscriber>>,
}

#[derive(Debug)]
struct Subscriber {
    pattern: String,
    sender: mpsc::Sender<Message>,
}

/// The stream and its consumers.
#[derive(Debug)]
struct Durable {
    /// By sequence.
    log: BTreeMap<u64, Stored>,
    last_sequence: u64,
    /// What the log holds, counted as [`Stored::size`].
    bytes: usize,
    max_bytes: usize,
    settled_kept: Duration,
    sequence_by_id: HashMap<String, u64>,
    consumers: HashMap<String, Consumer>,
    /// Messages every consumer that takes them acknowledged, with when, in
    /// that order: each leaves the log `settled_kept` later.
    settled: VecDeque<(Instant, u64)>,
}

impl Default for Durable {
    fn default() -> Self {
        Durable {
            log: BTreeMap::new(),
            last_sequence: 0,
            bytes: 0,
            max_bytes: MAX_BYTES,
            settled_kept: SETTLED_KEPT,
            sequence_by_id: HashMap::new(),
            consumers: HashMap::new(),
            settled: VecDeque::new(),
        }
    }
}

#[derive(Debug)]
struct Stored {
    id: String,
    message: Message,
}

impl Stored {
    /// What the message costs the log: its payload, headers, subject and id.
    fn size(&self) -> usize {
        let headers: usize = self.message.headers.iter().map(|(name, value)| name.len() + value.len()).sum();
        self.id.len() + self.message.subject.len() + headers + self.message.payload.len()
    }
}

#[derive(Debug)]
struct Consumer {
    filter: String,
    ack_wait: Duration,
    /// The first sequence never handed out.
    next: u64,
    /// Delivered but unacknowledged, by sequence.
    pending: BTreeMap<u64, Pending>,
    /// Acknowledged messages still in the log.
    acked: BTreeSet<u64>,
}

#[derive(Debug)]
struct Pending {
    redeliver_at: Instant,
    deliveries: u64,
}

enum Claim {
    Deliver(MemoryDelivery),
    /// Nothing to hand out; the earliest moment a pending one may come back.
    Wait(Option<Instant>),
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // No critical section can panic half-way through an update, so the data
    // behind a poisoned lock is still consistent.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The caller's headers as they travel: without `Nats-Msg-Id`, and with the
/// publisher's trace context, as on NATS.
fn without_msg_id(headers: Headers) -> Headers {
    let mut headers: Headers = headers.into_iter().filter(|(name, _)| name != MSG_ID_HEADER).collect();
    fogblast_telemetry::inject_headers(&mut headers);
    headers
}

impl MemoryBus {
    pub fn new() -> Self {
        Self::default()
    }

    /// A bus whose log is kept in the file at `path` (created if missing),
    /// with every message and acknowledgement it held there.
    pub async fn open(path: &Path) -> Result<MemoryBus, BusError> {
        let (journal, kept) = Journal::open(path).await?;
        let mut durable = Durable::default();
        durable.take_in(kept, Instant::now());
        let inner = Inner { durable: Mutex::new(durable), journal: Some(journal), ..Inner::default() };
        let bus = MemoryBus { inner: Arc::new(inner) };
        bus.inner.trim().await;
        Ok(bus)
    }

    /// Keeps a message every consumer acknowledged this long (0: not at
    /// all): a consumer made within it still gets the message, and a
    /// resend within it is still a duplicate.
    pub fn with_settled_kept(self, kept: Duration) -> Self {
        lock(&self.inner.durable).settled_kept = kept;
        self
    }

    /// Bounds the log: past `max_bytes`, the oldest messages leave, acknowledged or not.
    pub fn with_max_bytes(self, max_bytes: usize) -> Self {
        lock(&self.inner.durable).max_bytes = max_bytes;
        self
    }

    /// The messages the log holds now, and their size: for metrics and tests.
    pub fn held(&self) -> (usize, usize) {
        let durable = lock(&self.inner.durable);
        (durable.log.len(), durable.bytes)
    }
}

impl Durable {
    fn take_in(&mut self, kept: Kept, now: Instant) {
        self.last_sequence = kept.last_sequence;
        for kept in kept.messages {
            self.add(kept.sequence, Stored { id: kept.id, message: kept.message });
        }
        let first = self.log.keys().next().copied().unwrap_or(self.last_sequence + 1);
        for kept in kept.consumers {
            let acked = kept.acked.into_iter().filter(|s| self.log.contains_key(s)).collect();
            let consumer =
                Consumer { filter: kept.filter, ack_wait: kept.ack_wait, next: first, pending: BTreeMap::new(), acked };
            self.consumers.insert(kept.name, consumer);
        }
        let settled: Vec<u64> = self.log.keys().copied().filter(|&s| self.is_settled(s)).collect();
        self.settled.extend(settled.into_iter().map(|s| (now, s)));
    }

    fn add(&mut self, sequence: u64, stored: Stored) {
        self.bytes += stored.size();
        self.sequence_by_id.insert(stored.id.clone(), sequence);
        self.log.insert(sequence, stored);
    }

    fn remove(&mut self, sequence: u64) {
        let Some(stored) = self.log.remove(&sequence) else { return };
        self.bytes -= stored.size();
        self.sequence_by_id.remove(&stored.id);
        for consumer in self.consumers.values_mut() {
            consumer.acked.remove(&sequence);
            consumer.pending.remove(&sequence);
        }
    }

    /// Every durable consumer that takes the message has acknowledged it
    /// (and one does). A message nobody takes waits for a consumer, within
    /// the log's bound.
    fn is_settled(&self, sequence: u64) -> bool {
        let Some(stored) = self.log.get(&sequence) else { return false };
        let mut takers =
            self.consumers.values().filter(|c| subject::matches(&c.filter, &stored.message.subject)).peekable();
        takers.peek().is_some() && takers.all(|c| c.acked.contains(&sequence))
    }

    /// The messages that leave the log now: settled ones kept long enough,
    /// and the oldest past the bound.
    fn due_to_leave(&mut self, now: Instant) -> Vec<u64> {
        let mut leaving = Vec::new();
        while let Some(&(at, sequence)) = self.settled.front() {
            if at + self.settled_kept > now {
                break;
            }
            self.settled.pop_front();
            // A consumer made since may not have it yet; its ack settles it again.
            if self.is_settled(sequence) {
                if self.log.get(&sequence).is_some_and(|s| kept_on_disk(&s.message.subject)) {
                    leaving.push(sequence);
                }
                self.remove(sequence);
            }
        }
        while self.bytes > self.max_bytes {
            let Some((&oldest, stored)) = self.log.first_key_value() else { break };
            tracing::warn!(sequence = oldest, "the bus log is full: its oldest message leaves unacknowledged");
            if kept_on_disk(&stored.message.subject) {
                leaving.push(oldest);
            }
            self.remove(oldest);
        }
        leaving
    }
}

/// Whether a message on `subject` goes into the bus file: the site's stream
/// (finished games, which the archive must get every one of). The public
/// events are a live feed for readers of NATS, a message or two a move;
/// writing each to disk would double the writes of every move for nobody.
fn kept_on_disk(subject: &str) -> bool {
    Stream::covering(subject) == Some(Stream::Site)
}

impl Inner {
    /// Hands the next piece of work of consumer `name` to the caller: an
    /// expired delivery first (oldest first, as NATS does), else the next
    /// matching message of the log.
    fn claim(self: &Arc<Self>, name: &str, now: Instant) -> Claim {
        let mut durable = lock(&self.durable);
        let Durable { log, consumers, .. } = &mut *durable;
        let Some(consumer) = consumers.get_mut(name) else {
            return Claim::Wait(None);
        };
        let ack_wait = consumer.ack_wait;
        let deliver = |sequence: u64, stored: &Stored, deliveries: u64| {
            Claim::Deliver(MemoryDelivery {
                bus: Arc::clone(self),
                consumer: name.to_owned(),
                sequence,
                id: stored.id.clone(),
                redeliveries: deliveries - 1,
                message: stored.message.clone(),
            })
        };
        let expired = consumer.pending.iter_mut().find(|(_, p)| p.redeliver_at <= now);
        if let Some((&sequence, pending)) = expired {
            pending.deliveries += 1;
            pending.redeliver_at = now + ack_wait;
            let deliveries = pending.deliveries;
            if let Some(stored) = log.get(&sequence) {
                return deliver(sequence, stored, deliveries);
            }
        }
        for (&sequence, stored) in log.range(consumer.next..) {
            consumer.next = sequence + 1;
            if !consumer.acked.contains(&sequence) && subject::matches(&consumer.filter, &stored.message.subject) {
                let pending = Pending { redeliver_at: now + ack_wait, deliveries: 1 };
                consumer.pending.insert(sequence, pending);
                return deliver(sequence, stored, 1);
            }
        }
        Claim::Wait(consumer.pending.values().map(|p| p.redeliver_at).min())
    }

    /// Takes out of the log (and the journal) what is due to leave.
    async fn trim(&self) {
        let _one_at_a_time = self.writing.lock().await;
        let leaving = lock(&self.durable).due_to_leave(Instant::now());
        if let Some(journal) = &self.journal {
            if let Err(error) = journal.remove(&leaving).await {
                // Taken in again at the next start, and trimmed then.
                tracing::warn!(%error, "messages that left the bus log are still in its file");
            }
        }
    }

    /// Sends to the matching subscribers, forgetting the ones that are gone.
    fn fan_out(&self, message: &Message) {
        lock(&self.subscribers).retain(|subscriber| {
            if !subject::matches(&subscriber.pattern, &message.subject) {
                return !subscriber.sender.is_closed();
            }
            match subscriber.sender.try_send(message.clone()) {
                Ok(()) => true,
                Err(mpsc::error::TrySendError::Full(_)) => {
                    tracing::warn!(
                        subject = %message.subject,
                        pattern = %subscriber.pattern,
                        "slow subscriber: message dropped"
                    );
                    true
                }
                Err(mpsc::error::TrySendError::Closed(_)) => false,
            }
        });
    }
}

#[async_trait]
impl EventBus for MemoryBus {
    async fn publish_durable(
        &self,
        subject: &str,
        message_id: &str,
        headers: Headers,
        payload: Bytes,
    ) -> Result<PublishAck, BusError> {
        subject::validate(subject, false)?;
        Stream::for_message(subject)?;
        if message_id.is_empty() {
            return Err(BusError::new("a durable message needs a message id"));
        }
        let message = Message { subject: subject.to_owned(), headers: without_msg_id(headers), payload };
        let ack = {
            let _one_at_a_time = self.inner.writing.lock().await;
            let (duplicate, sequence) = {
                let durable = lock(&self.inner.durable);
                match durable.sequence_by_id.get(message_id) {
                    Some(&sequence) => (true, sequence),
                    None => (false, durable.last_sequence + 1),
                }
            };
            if !duplicate {
                // On disk before anyone hears of it.
                if let (true, Some(journal)) = (kept_on_disk(subject), &self.inner.journal) {
                    journal.append(sequence, message_id, &message).await?;
                }
                let mut durable = lock(&self.inner.durable);
                durable.last_sequence = sequence;
                durable.add(sequence, Stored { id: message_id.to_owned(), message: message.clone() });
            }
            PublishAck { duplicate, sequence }
        };
        if !ack.duplicate {
            self.inner.appended.notify_waiters();
            self.inner.trim().await;
        }
        // On NATS a JetStream publish is also a plain message on its subject,
        // duplicate or not: plain subscribers see it either way.
        self.inner.fan_out(&message);
        Ok(ack)
    }

    async fn consume_durable(
        &self,
        config: ConsumerConfig,
    ) -> Result<BoxStream<'static, Result<Box<dyn Delivery>, BusError>>, BusError> {
        subject::validate(&config.filter, true)?;
        Stream::for_consumer(&config.filter)?;
        let name_ok =
            !config.name.is_empty() && !config.name.contains(|c: char| c.is_whitespace() || ".*>".contains(c));
        if !name_ok {
            return Err(BusError::new(format!("invalid durable name {:?}", config.name)));
        }
        let ack_wait = if config.ack_wait.is_zero() { DEFAULT_ACK_WAIT } else { config.ack_wait };
        {
            let _one_at_a_time = self.inner.writing.lock().await;
            if let Some(journal) = &self.inner.journal {
                journal.keep_consumer(&config.name, &config.filter, ack_wait).await?;
            }
            let mut durable = lock(&self.inner.durable);
            // Like a NATS create-or-update: an existing durable keeps its
            // position and pending set, only its settings change. A new
            // one gets every message the log holds.
            let first = durable.log.keys().next().copied().unwrap_or(durable.last_sequence + 1);
            let consumer = durable.consumers.entry(config.name.clone()).or_insert_with(|| Consumer {
                filter: String::new(),
                ack_wait,
                next: first,
                pending: BTreeMap::new(),
                acked: BTreeSet::new(),
            });
            consumer.filter = config.filter;
            consumer.ack_wait = ack_wait;
        }
        let bus = Arc::clone(&self.inner);
        let name = config.name;
        // Work is claimed only when the stream is polled, so several streams
        // of one durable split the messages by who is ready, and a stream
        // dropped unpolled strands nothing.
        let deliveries = stream::unfold((bus, name), |(bus, name)| async move {
            loop {
                // Registered before looking, so an append in between still wakes us.
                let appended = bus.appended.notified();
                match bus.claim(&name, Instant::now()) {
                    Claim::Deliver(delivery) => {
                        drop(appended);
                        let delivery: Box<dyn Delivery> = Box::new(delivery);
                        return Some((Ok(delivery), (bus, name)));
                    }
                    Claim::Wait(Some(redeliver_at)) => {
                        let _ = tokio::time::timeout_at(redeliver_at, appended).await;
                    }
                    Claim::Wait(None) => appended.await,
                }
            }
        });
        Ok(deliveries.boxed())
    }

    async fn publish(&self, subject: &str, headers: Headers, payload: Bytes) -> Result<(), BusError> {
        subject::validate(subject, false)?;
        let message = Message { subject: subject.to_owned(), headers: without_msg_id(headers), payload };
        self.inner.fan_out(&message);
        Ok(())
    }

    async fn subscribe(&self, subject: &str) -> Result<BoxStream<'static, Message>, BusError> {
        subject::validate(subject, true)?;
        let (sender, receiver) = mpsc::channel(SUBSCRIBER_BUFFER);
        let subscriber = Subscriber { pattern: subject.to_owned(), sender };
        lock(&self.inner.subscribers).push(subscriber);
        let messages =
            stream::unfold(
                receiver,
                |mut receiver| async move { receiver.recv().await.map(|message| (message, receiver)) },
            );
        Ok(messages.boxed())
    }
}

/// A message handed to one stream of a durable consumer.
struct MemoryDelivery {
    bus: Arc<Inner>,
    consumer: String,
    sequence: u64,
    id: String,
    redeliveries: u64,
    message: Message,
}

impl std::fmt::Debug for MemoryDelivery {
    // The bus handle would print the whole log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryDelivery")
            .field("consumer", &self.consumer)
            .field("sequence", &self.sequence)
            .field("id", &self.id)
            .field("redeliveries", &self.redeliveries)
            .field("message", &self.message)
            .finish()
    }
}

#[async_trait]
impl Delivery for MemoryDelivery {
    fn message(&self) -> &Message {
        &self.message
    }

    fn message_id(&self) -> Option<&str> {
        Some(&self.id)
    }

    fn redeliveries(&self) -> u64 {
        self.redeliveries
    }

    async fn ack(&self) -> Result<(), BusError> {
        // Acking after ack_wait still counts, even if the message went to
        // another stream meanwhile: NATS accepts a late ack the same way.
        {
            let _one_at_a_time = self.bus.writing.lock().await;
            let (held, on_disk) = match lock(&self.bus.durable).log.get(&self.sequence) {
                Some(stored) => (true, kept_on_disk(&stored.message.subject)),
                None => (false, false),
            };
            if let (true, Some(journal)) = (on_disk, &self.bus.journal) {
                journal.ack(&self.consumer, self.sequence).await?;
            }
            let mut durable = lock(&self.bus.durable);
            let Some(consumer) = durable.consumers.get_mut(&self.consumer) else { return Ok(()) };
            consumer.pending.remove(&self.sequence);
            if held && consumer.acked.insert(self.sequence) && durable.is_settled(self.sequence) {
                durable.settled.push_back((Instant::now(), self.sequence));
            }
        }
        self.bus.trim().await;
        Ok(())
    }
}
