//! The production bus: durable traffic on two NATS JetStream streams (the
//! site's own for finished games, and the public game events beside it),
//! plain traffic on NATS core subjects. A subject prefix and stream name
//! make one NATS server host several isolated buses (tests, staging next to
//! prod). On a NATS cluster the URL lists several seed servers, comma
//! separated, and the streams are kept at `replicas` copies, so that a
//! server lost loses no stored message.

use std::time::Duration;

use async_nats::jetstream::{self, consumer::pull, message::PublishMessage, stream};
use async_nats::{HeaderMap, HeaderName, HeaderValue};
use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::{BoxStream, StreamExt};

use crate::subject::{Stream, MSG_ID_HEADER};
use crate::{BusError, ConsumerConfig, Delivery, EventBus, Headers, Message, PublishAck};

/// How many messages one pull request asks for. Small, because whatever a
/// consumer has pulled but not handled waits out `ack_wait` if it crashes,
/// and is unavailable to the other replicas sharing the durable meanwhile.
const PULL_BATCH: usize = 16;
/// Tries at setting up the stream when a service starts.
const STREAM_SETUP_ATTEMPTS: u32 = 5;
/// JetStream keeps a stream at five copies at most.
const MAX_REPLICAS: usize = 5;

/// Where and how the bus lives on the NATS server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NatsConfig {
    /// One server (`nats://host:4222`) or several seed servers of a cluster,
    /// comma separated; the client learns the rest of the cluster from them.
    pub url: String,
    /// Copies JetStream keeps of each stream (1 to 5). On a cluster of three
    /// servers, 3 survives the loss of any one of them; 1 is for a single
    /// server.
    pub replicas: usize,
    /// The JetStream stream holding the durable subjects.
    pub stream: String,
    /// Put in front of every subject on the wire, e.g. `staging.`; include
    /// the trailing `.`. Callers never see it.
    pub subject_prefix: String,
    /// How long the stream remembers message ids for deduplication.
    pub duplicate_window: Duration,
    /// The stream drops messages older than this; zero keeps them forever.
    /// The duplicate window is never longer.
    pub max_age: Duration,
    /// The stream drops its oldest messages past this size in bytes; zero
    /// sets no bound.
    pub max_bytes: u64,
    /// How long the public events' stream ([`public_stream`]) remembers
    /// message ids: long enough for a shard taking a game over to publish
    /// its last events again, short enough that the ids of every move do
    /// not fill the server's memory.
    pub public_duplicate_window: Duration,
    /// The public stream's age bound; `None`: the same as `max_age`.
    pub public_max_age: Option<Duration>,
    /// The public stream's size bound; `None`: the same as `max_bytes`.
    pub public_max_bytes: Option<u64>,
}

/// The name of the stream of the public game events beside the site's
/// stream `stream`.
pub fn public_stream(stream: &str) -> String {
    format!("{stream}_PUBLIC")
}

impl Default for NatsConfig {
    fn default() -> Self {
        Self {
            url: "nats://127.0.0.1:4222".into(),
            replicas: 1,
            stream: "FOGBLAST_GAMES".into(),
            subject_prefix: String::new(),
            // Not NATS's 2 minutes: when a game server dies, the game is
            // taken over and its end re-published by the new owner possibly
            // many minutes later, and that must still be recognised as the
            // same message. A day covers any takeover; the cost is the ids
            // of one day of finished games in the server's memory.
            duplicate_window: Duration::from_secs(24 * 60 * 60),
            // Consumers (archive and ratings) are expected to keep up within
            // days; a week of finished games covers any outage they can have
            // and bounds the server's disk.
            max_age: Duration::from_secs(7 * 24 * 60 * 60),
            max_bytes: 10 * 1024 * 1024 * 1024,
            // A shard takes a dead one's games over within seconds, and
            // publishes a game's last events again with the game's next
            // commit: ten minutes covers a long think. At 1,000 moves a
            // second that is 1.2 million ids (two a move), against 173
            // million for a day.
            public_duplicate_window: Duration::from_secs(10 * 60),
            public_max_age: None,
            public_max_bytes: None,
        }
    }
}

/// An [`EventBus`] on NATS. Clones share the connection.
#[derive(Clone, Debug)]
pub struct NatsBus {
    client: async_nats::Client,
    jetstream: jetstream::Context,
    stream: String,
    public_stream: String,
    prefix: String,
}

fn error(context: &str, err: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> BusError {
    BusError::caused_by(context, err)
}

/// Caller headers on the wire, minus any `Nats-Msg-Id`, which only the bus sets.
fn to_header_map(headers: &Headers) -> Result<HeaderMap, BusError> {
    let mut map = HeaderMap::new();
    for (name, value) in headers.iter().filter(|(name, _)| name != MSG_ID_HEADER) {
        let name: HeaderName = name.parse().map_err(|e| error(&format!("header {name:?}"), e))?;
        let value: HeaderValue = value.parse().map_err(|e| error(&format!("header {name}"), e))?;
        map.append(name, value);
    }
    Ok(map)
}

/// Headers off the wire, and the message id split out of them. NATS keeps
/// the order of values per name but not across names.
fn from_header_map(map: Option<&HeaderMap>) -> (Headers, Option<String>) {
    let mut headers = Headers::new();
    let mut id = None;
    for (name, values) in map.into_iter().flat_map(HeaderMap::iter) {
        let name: &str = name.as_ref();
        for value in values {
            if name == MSG_ID_HEADER {
                id = Some(value.to_string());
            } else {
                headers.push((name.to_owned(), value.to_string()));
            }
        }
    }
    (headers, id)
}

/// The servers named by a NATS URL: one, or several seed servers of a
/// cluster separated by commas (`nats://a:4222,nats://b:4222`).
pub fn nats_servers(url: &str) -> Result<Vec<async_nats::ServerAddr>, BusError> {
    let servers = url
        .split(',')
        .map(str::trim)
        .map(|server| match server {
            "" => Err(BusError::new(format!("NATS URL {url:?}: an empty server in the list"))),
            server => server.parse().map_err(|e| error(&format!("NATS URL {url:?}: server {server:?}"), e)),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(servers)
}

impl NatsBus {
    /// Connects and creates the two streams, or updates them to `config`.
    pub async fn connect(config: NatsConfig) -> Result<NatsBus, BusError> {
        if !(1..=MAX_REPLICAS).contains(&config.replicas) {
            return Err(BusError::new(format!(
                "stream replicas {}: JetStream keeps 1 to {MAX_REPLICAS} copies",
                config.replicas
            )));
        }
        let servers = nats_servers(&config.url)?;
        let client =
            async_nats::connect(servers).await.map_err(|e| error(&format!("connecting to {}", config.url), e))?;
        let jetstream = jetstream::new(client.clone());
        let prefix = config.subject_prefix.clone();
        let public_stream = public_stream(&config.stream);
        // The site's stream first: one set up when it held every durable
        // subject gives the public ones up before the public stream takes them.
        set_up_stream(
            &jetstream,
            stream_config(
                &config.stream,
                &prefix,
                config.replicas,
                Stream::Site,
                config.duplicate_window,
                config.max_age,
                config.max_bytes,
            ),
        )
        .await?;
        set_up_stream(
            &jetstream,
            stream_config(
                &public_stream,
                &prefix,
                config.replicas,
                Stream::Public,
                config.public_duplicate_window,
                config.public_max_age.unwrap_or(config.max_age),
                config.public_max_bytes.unwrap_or(config.max_bytes),
            ),
        )
        .await?;
        Ok(NatsBus { client, jetstream, stream: config.stream, public_stream, prefix })
    }

    fn wire_subject(&self, subject: &str) -> String {
        format!("{}{subject}", self.prefix)
    }

    fn local_subject(&self, subject: &str) -> String {
        subject.strip_prefix(self.prefix.as_str()).unwrap_or(subject).to_owned()
    }

    fn message(&self, message: &async_nats::Message) -> (Message, Option<String>) {
        let (headers, id) = from_header_map(message.headers.as_ref());
        let message =
            Message { subject: self.local_subject(&message.subject), headers, payload: message.payload.clone() };
        (message, id)
    }
}

/// A stream's settings: file storage at `replicas` copies, the given
/// bounds, and a duplicate window no longer than its age (JetStream refuses
/// a longer one).
fn stream_config(
    name: &str,
    prefix: &str,
    replicas: usize,
    stream: Stream,
    duplicate_window: Duration,
    max_age: Duration,
    max_bytes: u64,
) -> stream::Config {
    stream::Config {
        name: name.to_owned(),
        subjects: stream.subjects().iter().map(|subjects| format!("{prefix}{subjects}")).collect(),
        storage: stream::StorageType::File,
        num_replicas: replicas,
        duplicate_window: if max_age.is_zero() { duplicate_window } else { duplicate_window.min(max_age) },
        max_age,
        max_bytes: if max_bytes == 0 { -1 } else { i64::try_from(max_bytes).unwrap_or(i64::MAX) },
        ..Default::default()
    }
}

/// Creates the stream, or updates it to `config`.
async fn set_up_stream(jetstream: &jetstream::Context, config: stream::Config) -> Result<(), BusError> {
    // A server busy creating other streams' stores can refuse one for a
    // moment ("error creating store for stream"): a service starting
    // then tries again rather than exit.
    let mut attempt = 1;
    loop {
        match jetstream.create_or_update_stream(config.clone()).await {
            Ok(_) => return Ok(()),
            Err(e) if attempt < STREAM_SETUP_ATTEMPTS => {
                tracing::warn!(stream = %config.name, attempt, error = %e, "stream not set up; trying again");
                tokio::time::sleep(Duration::from_millis(200) * attempt).await;
                attempt += 1;
            }
            Err(e) => return Err(error(&format!("setting up stream {}", config.name), e)),
        }
    }
}

/// How many times a publish the stream calls a duplicate of a message it
/// no longer holds is made again under a new id.
const DUPLICATE_CHECKS: usize = 3;

impl NatsBus {
    /// Whether `stream` holds, at `sequence`, the message published under
    /// `id`: a definite "no" only when it answers that the sequence is
    /// empty or holds another message; any other failure is an error, and
    /// the caller publishes again later.
    async fn holds(&self, stream: &str, sequence: u64, id: &str) -> Result<bool, BusError> {
        let context = format!("reading message {sequence} of stream {stream}");
        let found = self.jetstream.get_stream_no_info(stream).await.map_err(|e| error(&context, e))?;
        match found.get_raw_message(sequence).await {
            Ok(message) => Ok(message.headers.get(MSG_ID_HEADER).is_some_and(|held| held.as_str() == id)),
            Err(e) if e.kind() == jetstream::stream::LastRawMessageErrorKind::NoMessageFound => Ok(false),
            Err(e) => Err(error(&context, e)),
        }
    }
}

#[async_trait]
impl EventBus for NatsBus {
    async fn publish_durable(
        &self,
        subject: &str,
        message_id: &str,
        headers: Headers,
        payload: Bytes,
    ) -> Result<PublishAck, BusError> {
        // An empty id would silently disable deduplication.
        if message_id.is_empty() {
            return Err(BusError::new("a durable message needs a message id"));
        }
        let mut headers = headers;
        fogblast_telemetry::inject_headers(&mut headers);
        // Built once; made again only for the rare publish under a new id.
        let mut header_map = Some(to_header_map(&headers)?);
        // Written out only for an error.
        let context = || format!("publishing {subject}");
        let mut id = message_id.to_owned();
        for _ in 0..DUPLICATE_CHECKS {
            let map = match header_map.take() {
                Some(map) => map,
                None => to_header_map(&headers)?,
            };
            let publish = PublishMessage::build().payload(payload.clone()).headers(map).message_id(&id);
            let ack = self
                .jetstream
                .send_publish(self.wire_subject(subject), publish)
                .await
                .map_err(|e| error(&context(), e))?
                .await
                .map_err(|e| error(&context(), e))?;
            if !ack.duplicate || self.holds(&ack.stream, ack.sequence, &id).await? {
                return Ok(PublishAck { duplicate: ack.duplicate, sequence: ack.sequence });
            }
            // The stream remembers the id but no longer holds its message
            // (NATS 2.9 lost acknowledged messages across leader changes
            // while keeping their ids): published again under an id of its
            // own, the same on every retry. Consumers take a message by
            // its content (a game, an event), not by this id.
            tracing::warn!(
                subject,
                id,
                sequence = ack.sequence,
                "the stream called a message a duplicate it does not hold; publishing it again"
            );
            id = format!("{message_id}/again-after-{}", ack.sequence);
        }
        Err(BusError::new(format!(
            "{}: the stream keeps calling {message_id:?} a duplicate it does not hold",
            context()
        )))
    }

    async fn consume_durable(
        &self,
        config: ConsumerConfig,
    ) -> Result<BoxStream<'static, Result<Box<dyn Delivery>, BusError>>, BusError> {
        let context = format!("consumer {}", config.name);
        let stream = match Stream::for_consumer(&config.filter)? {
            Stream::Site => &self.stream,
            Stream::Public => &self.public_stream,
        };
        // Create-or-update: a restarted service picks up the durable's
        // position, and a changed ack_wait takes effect.
        let consumer = self
            .jetstream
            .create_consumer_on_stream(
                pull::Config {
                    durable_name: Some(config.name.clone()),
                    filter_subject: self.wire_subject(&config.filter),
                    ack_policy: jetstream::consumer::AckPolicy::Explicit,
                    ack_wait: config.ack_wait,
                    ..Default::default()
                },
                stream,
            )
            .await
            .map_err(|e| error(&context, e))?;
        let messages =
            consumer.stream().max_messages_per_batch(PULL_BATCH).messages().await.map_err(|e| error(&context, e))?;
        let bus = self.clone();
        let deliveries = messages.map(move |item| {
            let jetstream_message = item.map_err(|e| error(&context, e))?;
            let info = jetstream_message.info().map_err(|e| error(&context, e))?;
            let redeliveries = u64::try_from(info.delivered - 1).unwrap_or(0);
            let (message, id) = bus.message(&jetstream_message.message);
            let (_, acker) = jetstream_message.split();
            let delivery: Box<dyn Delivery> = Box::new(NatsDelivery { message, id, redeliveries, acker });
            Ok(delivery)
        });
        Ok(deliveries.boxed())
    }

    async fn publish(&self, subject: &str, mut headers: Headers, payload: Bytes) -> Result<(), BusError> {
        fogblast_telemetry::inject_headers(&mut headers);
        self.client
            .publish_with_headers(self.wire_subject(subject), to_header_map(&headers)?, payload)
            .await
            .map_err(|e| error(&format!("publishing {subject}"), e))
    }

    async fn subscribe(&self, subject: &str) -> Result<BoxStream<'static, Message>, BusError> {
        let context = format!("subscribing to {subject}");
        let subscriber = self.client.subscribe(self.wire_subject(subject)).await.map_err(|e| error(&context, e))?;
        // "From now on" must hold for publishers on other connections too, so
        // the subscription has to be on the wire, not just queued, on return.
        self.client.flush().await.map_err(|e| error(&context, e))?;
        let bus = self.clone();
        Ok(subscriber.map(move |message| bus.message(&message).0).boxed())
    }
}

/// A JetStream delivery, reduced to what the handler needs plus the acker.
struct NatsDelivery {
    message: Message,
    id: Option<String>,
    redeliveries: u64,
    acker: jetstream::message::Acker,
}

impl std::fmt::Debug for NatsDelivery {
    // The acker holds the JetStream context, which says nothing useful.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsDelivery")
            .field("message", &self.message)
            .field("id", &self.id)
            .field("redeliveries", &self.redeliveries)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Delivery for NatsDelivery {
    fn message(&self) -> &Message {
        &self.message
    }

    fn message_id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    fn redeliveries(&self) -> u64 {
        self.redeliveries
    }

    async fn ack(&self) -> Result<(), BusError> {
        // A plain ack is fire-and-forget; the double ack waits for the server
        // to confirm, so "acked" really means the message will not return.
        self.acker.double_ack().await.map_err(|e| error("acknowledging", e))
    }

    async fn in_progress(&self) -> Result<(), BusError> {
        self.acker.ack_with(jetstream::AckKind::Progress).await.map_err(|e| error("reporting progress", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_names_one_server_or_a_cluster_s_seeds() {
        assert_eq!(nats_servers("nats://127.0.0.1:4222").expect("one server").len(), 1);
        let seeds = nats_servers("nats://10.0.0.1:4222, nats://10.0.0.2:4222,nats://10.0.0.3:4222").expect("three");
        let hosts: Vec<String> = seeds.iter().map(|s| format!("{}:{}", s.host(), s.port())).collect();
        assert_eq!(hosts, ["10.0.0.1:4222", "10.0.0.2:4222", "10.0.0.3:4222"]);
    }

    #[test]
    fn an_empty_or_malformed_server_is_refused_with_the_url() {
        let error = nats_servers("nats://a:4222,,nats://b:4222").expect_err("an empty entry");
        assert!(error.message().contains("an empty server"), "{error}");
        let error = nats_servers("nats://a:4222,http://b:4222").expect_err("not a NATS url");
        assert!(error.message().contains("\"http://b:4222\""), "{error}");
    }

    #[tokio::test]
    async fn replicas_outside_what_jetstream_keeps_are_refused_before_connecting() {
        for replicas in [0, 6] {
            let config = NatsConfig { url: "nats://127.0.0.1:1".into(), replicas, ..NatsConfig::default() };
            let error = NatsBus::connect(config).await.expect_err("refused");
            assert!(error.message().contains("1 to 5 copies"), "{error}");
        }
    }
}
