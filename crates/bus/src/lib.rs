//! The event bus between services. Two kinds of traffic cross it:
//!
//! - **Durable streams** (`games.finished.<variant>` in the site's stream,
//!   `games.public.>` in the public events' stream beside it): a message is
//!   stored before `publish_durable` returns, a message id makes a resend a
//!   no-op, and each durable consumer (of one stream) gets every message
//!   until it acknowledges it, redelivered after `ack_wait` if it never does.
//! - **Plain subjects** (`player.<id>`): fire-and-forget notifications to
//!   whoever is subscribed now.
//!
//! [`NatsBus`] runs on NATS JetStream; [`MemoryBus`] does the same in one
//! process for `fogblast up`, its log bounded and, opened on a file, kept
//! across a crash. Headers carry trace context across services:
//! both adapters add the publisher's `traceparent` when traces are exported
//! (see `fogblast_telemetry`), and consumers continue the trace with
//! `fogblast_telemetry::follow_headers`.

use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::BoxStream;

mod consume;
mod journal;
mod memory;
mod nats;
mod subject;

pub use consume::consume_until_stopped;
pub use memory::MemoryBus;
pub use nats::{nats_servers, public_stream, NatsBus, NatsConfig};

/// A failure of the bus: unreachable, timed out, or refusing. The NATS
/// client's error, when there is one, is kept as the source, so a log or a
/// caller can follow the chain to it (and downcast it); its text is in the
/// message too, so a log line that shows only the top still says why.
#[derive(Debug, thiserror::Error)]
#[error("event bus: {message}")]
pub struct BusError {
    message: String,
    #[source]
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl BusError {
    /// A refusal of the bus itself, with no cause beneath it.
    pub fn new(message: impl Into<String>) -> BusError {
        BusError { message: message.into(), source: None }
    }

    /// `context` failed because of `source`.
    pub fn caused_by(context: &str, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> BusError {
        let source = source.into();
        BusError { message: format!("{context}: {source}"), source: Some(source) }
    }

    /// What failed, without the `event bus:` prefix.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Message headers (`Nats-Msg-Id` is set by the bus itself).
pub type Headers = Vec<(String, String)>;

/// What the stream said when it stored a durable message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PublishAck {
    /// The stream already held a message with this id; nothing was added.
    pub duplicate: bool,
    /// The message's sequence number in the stream.
    pub sequence: u64,
}

/// A message on a plain subject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub subject: String,
    pub headers: Headers,
    pub payload: Bytes,
}

/// A durable message handed to a consumer; it comes again after the
/// consumer's `ack_wait` unless acknowledged.
#[async_trait]
pub trait Delivery: Send + Sync + std::fmt::Debug {
    fn message(&self) -> &Message;
    /// The stream's id for the message (`Nats-Msg-Id`).
    fn message_id(&self) -> Option<&str>;
    /// How many times it was delivered before this one.
    fn redeliveries(&self) -> u64;
    /// Confirms the message is handled, waiting for the stream to record it.
    async fn ack(&self) -> Result<(), BusError>;
    /// Says the message is still being worked on, so its `ack_wait` starts
    /// again: long work (an analysis) stays with a live consumer and goes
    /// to another only when this one stops saying so. The in-process bus
    /// has nobody else to give it to and does nothing.
    async fn in_progress(&self) -> Result<(), BusError> {
        Ok(())
    }
}

/// Settings of a durable consumer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumerConfig {
    /// The consumer's durable name: consumers with the same name share the
    /// work and resume where the last one left off.
    pub name: String,
    /// Subjects it receives, e.g. `games.finished.>`.
    pub filter: String,
    /// How long an unacknowledged delivery waits before it is sent again.
    pub ack_wait: Duration,
}

#[async_trait]
pub trait EventBus: Send + Sync + std::fmt::Debug {
    /// Stores `payload` on the durable stream under `subject`, deduplicated
    /// by `message_id`, and returns once the stream acknowledged it.
    async fn publish_durable(
        &self,
        subject: &str,
        message_id: &str,
        headers: Headers,
        payload: Bytes,
    ) -> Result<PublishAck, BusError>;

    /// The deliveries of a durable consumer, created if new.
    async fn consume_durable(
        &self,
        config: ConsumerConfig,
    ) -> Result<BoxStream<'static, Result<Box<dyn Delivery>, BusError>>, BusError>;

    /// Sends to whoever subscribes to `subject` now.
    async fn publish(&self, subject: &str, headers: Headers, payload: Bytes) -> Result<(), BusError>;

    /// Messages on `subject` (NATS wildcards `*` and `>` allowed) from now on.
    async fn subscribe(&self, subject: &str) -> Result<BoxStream<'static, Message>, BusError>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn a_bus_error_keeps_its_cause() {
        let cause = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let error = BusError::caused_by("connecting to nats://x", cause);
        assert_eq!(error.to_string(), "event bus: connecting to nats://x: refused");
        let source = error.source().expect("a source");
        assert_eq!(
            source.downcast_ref::<std::io::Error>().map(|e| e.kind()),
            Some(std::io::ErrorKind::ConnectionRefused)
        );
        assert!(BusError::new("no stream").source().is_none());
    }
}
