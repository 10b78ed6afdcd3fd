//! The in-process bus behind `fogblast up`, where every service runs in one
//! process and no NATS server is wanted. It keeps JetStream's semantics
//! rather than faking them (stored log, dedup by message id, per-durable
//! positions, ack-pending redelivery, shared work, wildcard routing), so code
//! that only works thanks to a shortcut here fails in development, not in
//! production.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::{self, BoxStream, StreamExt};
use tokio::sync::{mpsc, Notify};
use tokio::time::Instant;

use crate::subject::{self, Stream, MSG_ID_HEADER};
use crate::{BusError, ConsumerConfig, Delivery, EventBus, Headers, Message, PublishAck};

/// Messages a plain subscriber may fall behind by before it loses some:
/// plain subjects are best-effort notifications, and a stalled reader must
/// never hold up the publishers (the game loop among them).
const SUBSCRIBER_BUFFER: usize = 1024;

/// What NATS uses when a consumer asks for no ack wait; mirrored so a zero
/// does not turn into a redelivery storm here only.
const DEFAULT_ACK_WAIT: Duration = Duration::from_secs(30);

/// An in-process [`EventBus`]. Clones share the same log and subscribers.
#[derive(Clone, Debug, Default)]
pub struct MemoryBus {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    durable: Mutex<Durable>,
    /// Wakes consumer streams parked for lack of work when the log grows.
    appended: Notify,
    subscribers: Mutex<Vec<Subscriber>>,
}

#[derive(Debug)]
struct Subscriber {
    pattern: String,
    sender: mpsc::Sender<Message>,
}

/// The stream and its consumers. Like a NATS stream without limits, the log
/// is never trimmed: it lives as long as the process.
#[derive(Debug, Default)]
struct Durable {
    /// Sequence `n` is `log[n - 1]`.
    log: Vec<Stored>,
    sequence_by_id: HashMap<String, u64>,
    consumers: HashMap<String, Consumer>,
}

#[derive(Debug)]
struct Stored {
    id: String,
    message: Message,
}

#[derive(Debug)]
struct Consumer {
    filter: String,
    ack_wait: Duration,
    /// Index into the log of the first message never handed out.
    next: usize,
    /// Delivered but unacknowledged, by sequence.
    pending: BTreeMap<u64, Pending>,
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
        let deliver = |sequence: u64, deliveries: u64| {
            let stored: &Stored = &log[(sequence - 1) as usize];
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
            return deliver(sequence, pending.deliveries);
        }
        while let Some(stored) = log.get(consumer.next) {
            consumer.next += 1;
            if subject::matches(&consumer.filter, &stored.message.subject) {
                let sequence = consumer.next as u64;
                let pending = Pending { redeliver_at: now + ack_wait, deliveries: 1 };
                consumer.pending.insert(sequence, pending);
                return deliver(sequence, 1);
            }
        }
        Claim::Wait(consumer.pending.values().map(|p| p.redeliver_at).min())
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
            let mut durable = lock(&self.inner.durable);
            match durable.sequence_by_id.get(message_id) {
                Some(&sequence) => PublishAck { duplicate: true, sequence },
                None => {
                    let stored = Stored { id: message_id.to_owned(), message: message.clone() };
                    durable.log.push(stored);
                    let sequence = durable.log.len() as u64;
                    durable.sequence_by_id.insert(message_id.to_owned(), sequence);
                    PublishAck { duplicate: false, sequence }
                }
            }
        };
        if !ack.duplicate {
            self.inner.appended.notify_waiters();
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
            let mut durable = lock(&self.inner.durable);
            // Like a NATS create-or-update: an existing durable keeps its
            // position and pending set, only its settings change.
            let consumer = durable.consumers.entry(config.name.clone()).or_insert_with(|| Consumer {
                filter: String::new(),
                ack_wait,
                next: 0,
                pending: BTreeMap::new(),
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
        let mut durable = lock(&self.bus.durable);
        if let Some(consumer) = durable.consumers.get_mut(&self.consumer) {
            consumer.pending.remove(&self.sequence);
        }
        Ok(())
    }
}
