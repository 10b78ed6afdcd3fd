//! One behaviour suite, run against both adapters: `fogblast up` relies on
//! [`MemoryBus`] behaving like production's [`NatsBus`], and the only way to
//! keep that true is to hold both to the same assertions.
//!
//! The NATS half needs a server with JetStream at `nats://127.0.0.1:4222`
//! (or `FOGBLAST_TEST_NATS_URL`). Each test gets its own stream and subject
//! prefix, so tests run in parallel and leave nothing behind.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use fogblast_bus::{BusError, ConsumerConfig, Delivery, EventBus, Headers, Message, NatsBus, NatsConfig};
use futures::stream::{self, BoxStream, StreamExt};
use tokio::time::timeout;

/// Short so redelivery tests take a fraction of a second.
const ACK_WAIT: Duration = Duration::from_millis(300);
/// The most anything expected may take; only reached when a test fails.
const ARRIVE: Duration = Duration::from_secs(5);
/// How long to watch for what must not come: beyond two ack waits, so an
/// unwanted redelivery would show up.
const QUIET: Duration = Duration::from_millis(800);

type Deliveries = BoxStream<'static, Result<Box<dyn Delivery>, BusError>>;
type Messages = BoxStream<'static, Message>;

fn consumer(name: &str, filter: &str) -> ConsumerConfig {
    ConsumerConfig { name: name.into(), filter: filter.into(), ack_wait: ACK_WAIT }
}

fn text(payload: &Bytes) -> String {
    String::from_utf8(payload.to_vec()).expect("test payloads are UTF-8")
}

fn sorted(mut headers: Headers) -> Headers {
    // NATS keeps no order across header names.
    headers.sort();
    headers
}

async fn publish(bus: &dyn EventBus, subject: &str, id: &str, payload: &str) {
    let ack = bus.publish_durable(subject, id, Vec::new(), Bytes::from(payload.to_owned())).await;
    assert!(!ack.expect("publish_durable").duplicate, "{id} was new");
}

async fn next_delivery(deliveries: &mut Deliveries) -> Box<dyn Delivery> {
    timeout(ARRIVE, deliveries.next())
        .await
        .expect("timed out waiting for a delivery")
        .expect("delivery stream ended")
        .expect("delivery failed")
}

async fn assert_no_delivery(deliveries: &mut Deliveries) {
    if let Ok(item) = timeout(QUIET, deliveries.next()).await {
        panic!("unexpected delivery: {item:?}");
    }
}

async fn next_message(messages: &mut Messages) -> Message {
    timeout(ARRIVE, messages.next()).await.expect("timed out waiting for a message").expect("subscription ended")
}

async fn assert_no_message(messages: &mut Messages) {
    if let Ok(item) = timeout(QUIET, messages.next()).await {
        panic!("unexpected message: {item:?}");
    }
}

async fn durable_message_arrives_with_headers(bus: &dyn EventBus) {
    let headers = vec![
        ("traceparent".to_owned(), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".to_owned()),
        ("x-origin".to_owned(), "game-7".to_owned()),
    ];
    let ack = bus
        .publish_durable("games.finished.atomic", "game-1", headers.clone(), Bytes::from_static(b"record"))
        .await
        .expect("publish_durable");
    assert!(!ack.duplicate);

    let mut deliveries = bus.consume_durable(consumer("archiver", "games.finished.>")).await.expect("consume");
    let delivery = next_delivery(&mut deliveries).await;
    assert_eq!(delivery.message().subject, "games.finished.atomic");
    assert_eq!(delivery.message().payload, Bytes::from_static(b"record"));
    assert_eq!(sorted(delivery.message().headers.clone()), sorted(headers));
    assert_eq!(delivery.message_id(), Some("game-1"));
    assert_eq!(delivery.redeliveries(), 0);
    delivery.ack().await.expect("ack");
    assert_no_delivery(&mut deliveries).await;
}

async fn same_id_is_stored_and_delivered_once(bus: &dyn EventBus) {
    let mut acks = Vec::new();
    for attempt in 0..5 {
        let payload = Bytes::from(format!("attempt-{attempt}"));
        acks.push(bus.publish_durable("games.finished.atomic", "game-2", Vec::new(), payload).await.expect("publish"));
    }
    let duplicates: Vec<bool> = acks.iter().map(|ack| ack.duplicate).collect();
    assert_eq!(duplicates, [false, true, true, true, true]);
    assert!(acks.iter().all(|ack| ack.sequence == acks[0].sequence), "{acks:?}");
    let other =
        bus.publish_durable("games.finished.atomic", "game-3", Vec::new(), Bytes::new()).await.expect("publish");
    assert!(!other.duplicate && other.sequence > acks[0].sequence);

    let mut deliveries = bus.consume_durable(consumer("archiver", "games.finished.>")).await.expect("consume");
    let first = next_delivery(&mut deliveries).await;
    assert_eq!((first.message_id(), text(&first.message().payload).as_str()), (Some("game-2"), "attempt-0"));
    first.ack().await.expect("ack");
    let second = next_delivery(&mut deliveries).await;
    assert_eq!(second.message_id(), Some("game-3"));
    second.ack().await.expect("ack");
    assert_no_delivery(&mut deliveries).await;
}

async fn unacked_delivery_comes_back_acked_does_not(bus: &dyn EventBus) {
    publish(bus, "games.finished.atomic", "acked", "a").await;
    publish(bus, "games.finished.atomic", "forgotten", "b").await;
    let mut deliveries = bus.consume_durable(consumer("ratings", "games.finished.>")).await.expect("consume");
    let acked = next_delivery(&mut deliveries).await;
    let forgotten = next_delivery(&mut deliveries).await;
    assert_eq!((acked.message_id(), forgotten.message_id()), (Some("acked"), Some("forgotten")));
    acked.ack().await.expect("ack");
    drop(forgotten);

    let again = next_delivery(&mut deliveries).await;
    assert_eq!(again.message_id(), Some("forgotten"));
    assert!(again.redeliveries() >= 1, "redeliveries = {}", again.redeliveries());
    again.ack().await.expect("ack");
    assert_no_delivery(&mut deliveries).await;
}

async fn restarted_consumer_resumes_after_acked_messages(bus: &dyn EventBus) {
    for n in 1..=3 {
        publish(bus, "games.finished.atomic", &format!("m{n}"), "").await;
    }
    let mut crashed = bus.consume_durable(consumer("worker", "games.finished.>")).await.expect("consume");
    for expected in ["m1", "m2"] {
        let delivery = next_delivery(&mut crashed).await;
        assert_eq!(delivery.message_id(), Some(expected));
        delivery.ack().await.expect("ack");
    }
    drop(crashed);
    publish(bus, "games.finished.atomic", "m4", "").await;

    // Whatever the crashed instance had pulled but not acked comes back
    // after ack_wait, so order is not guaranteed; the set is.
    let mut restarted = bus.consume_durable(consumer("worker", "games.finished.>")).await.expect("consume");
    let mut seen = Vec::new();
    while seen.len() < 2 {
        let delivery = next_delivery(&mut restarted).await;
        seen.push(delivery.message_id().expect("id").to_owned());
        delivery.ack().await.expect("ack");
    }
    seen.sort();
    assert_eq!(seen, ["m3", "m4"]);
    assert_no_delivery(&mut restarted).await;
}

async fn same_name_streams_share_the_work(bus: &dyn EventBus) {
    let first = bus.consume_durable(consumer("shared", "games.finished.>")).await.expect("consume");
    let second = bus.consume_durable(consumer("shared", "games.finished.>")).await.expect("consume");
    for n in 0..20 {
        publish(bus, "games.finished.atomic", &format!("g{n:02}"), "").await;
    }
    let mut both: Deliveries = stream::select(first, second).boxed();
    let mut seen = Vec::new();
    while seen.len() < 20 {
        let delivery = next_delivery(&mut both).await;
        assert_eq!(delivery.redeliveries(), 0, "{delivery:?}");
        seen.push(delivery.message_id().expect("id").to_owned());
        delivery.ack().await.expect("ack");
    }
    seen.sort();
    let expected: Vec<String> = (0..20).map(|n| format!("g{n:02}")).collect();
    assert_eq!(seen, expected, "every message exactly once across both streams");
    assert_no_delivery(&mut both).await;
}

async fn each_durable_name_gets_every_message(bus: &dyn EventBus) {
    publish(bus, "games.finished.fog", "game-4", "").await;
    for name in ["archiver", "ratings"] {
        let mut deliveries = bus.consume_durable(consumer(name, "games.finished.>")).await.expect("consume");
        let delivery = next_delivery(&mut deliveries).await;
        assert_eq!(delivery.message_id(), Some("game-4"), "consumer {name}");
        delivery.ack().await.expect("ack");
    }
}

async fn filter_selects_subjects(bus: &dyn EventBus) {
    publish(bus, "games.public.json.atomic.move", "p1", "").await;
    publish(bus, "games.finished.atomic", "f1", "").await;
    publish(bus, "games.public.pb.fog.move", "p2", "").await;
    publish(bus, "games.finished.fog.blitz", "f2", "").await;

    let mut deliveries = bus.consume_durable(consumer("finished", "games.finished.>")).await.expect("consume");
    let mut seen = Vec::new();
    for _ in 0..2 {
        let delivery = next_delivery(&mut deliveries).await;
        seen.push(delivery.message().subject.clone());
        delivery.ack().await.expect("ack");
    }
    assert_eq!(seen, ["games.finished.atomic", "games.finished.fog.blitz"]);
    assert_no_delivery(&mut deliveries).await;

    let mut public = bus.consume_durable(consumer("public", "games.public.*.fog.*")).await.expect("consume");
    let delivery = next_delivery(&mut public).await;
    assert_eq!(delivery.message().subject, "games.public.pb.fog.move");
    delivery.ack().await.expect("ack");
    assert_no_delivery(&mut public).await;
}

async fn plain_publish_reaches_matching_subscribers(bus: &dyn EventBus) {
    let patterns = ["player.1", "player.*", "player.>", "player.*.moves"];
    let mut subscriptions = Vec::new();
    for pattern in patterns {
        subscriptions.push(bus.subscribe(pattern).await.expect("subscribe"));
    }
    let headers = vec![("traceparent".to_owned(), "00-abc-def-01".to_owned())];
    for (subject, payload) in [("player.1", "a"), ("player.1.moves", "b"), ("player.2.chat", "c"), ("lobby.1", "d")] {
        bus.publish(subject, headers.clone(), Bytes::from(payload)).await.expect("publish");
    }

    let expected: [&[&str]; 4] = [&["a"], &["a"], &["a", "b", "c"], &["b"]];
    for ((pattern, messages), expected) in patterns.iter().zip(&mut subscriptions).zip(expected) {
        let mut got = Vec::new();
        for _ in expected {
            let message = next_message(messages).await;
            assert_eq!(message.headers, headers, "headers on {}", message.subject);
            got.push(text(&message.payload));
        }
        assert_eq!(got, expected, "subscription {pattern}");
    }
    futures::future::join_all(subscriptions.iter_mut().map(assert_no_message)).await;
}

async fn subscribe_sees_only_later_messages(bus: &dyn EventBus) {
    bus.publish("player.9", Vec::new(), Bytes::from_static(b"before")).await.expect("publish");
    let mut messages = bus.subscribe("player.9").await.expect("subscribe");
    bus.publish("player.9", Vec::new(), Bytes::from_static(b"after")).await.expect("publish");
    let message = next_message(&mut messages).await;
    assert_eq!((message.subject.as_str(), text(&message.payload).as_str()), ("player.9", "after"));
    assert_no_message(&mut messages).await;
}

async fn durable_publish_is_seen_by_plain_subscribers(bus: &dyn EventBus) {
    let mut messages = bus.subscribe("games.finished.*").await.expect("subscribe");
    let headers = vec![("x-origin".to_owned(), "game-7".to_owned())];
    bus.publish_durable("games.finished.atomic", "game-5", headers.clone(), Bytes::from_static(b"end"))
        .await
        .expect("publish_durable");
    let message = next_message(&mut messages).await;
    assert_eq!(message.subject, "games.finished.atomic");
    // The dedup id is the bus's business, not part of the caller's headers.
    assert_eq!(message.headers, headers);
}

async fn durable_publish_outside_the_streams_fails(bus: &dyn EventBus) {
    for subject in ["player.1", "games.started.atomic", "games.finished", "games.finishedx.atomic", "games.public"] {
        let result = timeout(ARRIVE, bus.publish_durable(subject, "x", Vec::new(), Bytes::new())).await;
        assert!(result.expect("an error, not a hang").is_err(), "{subject} is in no stream");
    }
}

async fn a_consumer_reads_one_stream(bus: &dyn EventBus) {
    for filter in ["games.>", "games.*.atomic", ">"] {
        let result = timeout(ARRIVE, bus.consume_durable(consumer("across", filter))).await;
        assert!(result.expect("an error, not a hang").is_err(), "{filter} spans both streams");
    }
}

/// A scratch bus's settings: a stream and subject prefix of the test's
/// own (`what` names the test in them), on the test NATS server.
fn scratch(what: &str) -> NatsConfig {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_nanos();
    let tag = format!("{}_{nanos}_{}_{what}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
    NatsConfig {
        url: std::env::var("FOGBLAST_TEST_NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".into()),
        stream: format!("FOGBLAST_TEST_{tag}"),
        subject_prefix: format!("test_{tag}."),
        ..NatsConfig::default()
    }
}

/// The JetStream API of the test NATS server.
async fn jetstream(url: &str) -> async_nats::jetstream::Context {
    async_nats::jetstream::new(async_nats::connect(url).await.expect("connect to the test NATS"))
}

/// Deletes a scratch bus's two streams, where they were made (what is
/// left over, `test-leftovers` finds).
async fn delete_streams(config: &NatsConfig) {
    let jetstream = jetstream(&config.url).await;
    for stream in [config.stream.clone(), fogblast_bus::public_stream(&config.stream)] {
        let _ = jetstream.delete_stream(&stream).await;
    }
}

/// A bus on its own stream and prefix, deleted afterwards whether the
/// behaviour passed or not.
async fn on_nats<F, Fut>(behaviour: F)
where
    F: FnOnce(NatsBus) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let config = NatsConfig { duplicate_window: Duration::from_secs(60), max_bytes: 64 << 20, ..scratch("suite") };
    let (url, cleanup) = (config.url.clone(), config.clone());
    let bus = timeout(ARRIVE, NatsBus::connect(config))
        .await
        .expect("connecting to NATS timed out")
        .unwrap_or_else(|e| panic!("these tests need NATS with JetStream at {url}: {e}"));

    let outcome = tokio::spawn(behaviour(bus)).await;

    delete_streams(&cleanup).await;
    if let Err(panicked) = outcome {
        std::panic::resume_unwind(panicked.into_panic());
    }
}

macro_rules! on_both_adapters {
    ($($behaviour:ident),* $(,)?) => {
        mod memory {
            $(
                #[tokio::test]
                async fn $behaviour() {
                    super::$behaviour(&fogblast_bus::MemoryBus::new()).await;
                }
            )*
        }
        mod nats {
            $(
                #[tokio::test]
                async fn $behaviour() {
                    super::on_nats(|bus| async move { super::$behaviour(&bus).await }).await;
                }
            )*
        }
    };
}

on_both_adapters!(
    durable_message_arrives_with_headers,
    same_id_is_stored_and_delivered_once,
    unacked_delivery_comes_back_acked_does_not,
    restarted_consumer_resumes_after_acked_messages,
    same_name_streams_share_the_work,
    each_durable_name_gets_every_message,
    filter_selects_subjects,
    plain_publish_reaches_matching_subscribers,
    subscribe_sees_only_later_messages,
    durable_publish_is_seen_by_plain_subscribers,
    durable_publish_outside_the_streams_fails,
    a_consumer_reads_one_stream,
);

/// The stream is set up with the retention asked for, so finished games
/// cannot fill the NATS server's disk; the defaults bound it too.
#[tokio::test]
async fn the_stream_keeps_what_its_retention_allows() {
    let defaults = NatsConfig::default();
    assert!(defaults.max_age > Duration::ZERO && defaults.max_bytes > 0, "bounded by default");
    let config = NatsConfig { max_age: Duration::from_secs(90), max_bytes: 1 << 20, ..scratch("retention") };
    let (stream, public, prefix) =
        (config.stream.clone(), fogblast_bus::public_stream(&config.stream), config.subject_prefix.clone());
    let _bus = timeout(ARRIVE, NatsBus::connect(config.clone())).await.expect("in time").expect("connected");
    let jetstream = jetstream(&config.url).await;
    let info = jetstream.get_stream(&stream).await.expect("the stream").cached_info().clone();
    let public_info = jetstream.get_stream(&public).await.expect("the public stream").cached_info().clone();
    delete_streams(&config).await;
    assert_eq!((info.config.max_age, info.config.max_bytes), (Duration::from_secs(90), 1 << 20));
    assert_eq!(info.config.duplicate_window, Duration::from_secs(90), "no longer than the age");
    assert_eq!(info.config.subjects, [format!("{prefix}games.finished.>"), format!("{prefix}analysis.>")]);
    // The public stream has the site's bounds unless told otherwise, and a
    // duplicate window of its own, no longer than its age.
    assert_eq!((public_info.config.max_age, public_info.config.max_bytes), (Duration::from_secs(90), 1 << 20));
    assert_eq!(public_info.config.duplicate_window, Duration::from_secs(90));
    assert_eq!(
        public_info.config.subjects,
        [format!("{prefix}games.public.>"), format!("{prefix}tournaments.public.>")]
    );
    assert!(defaults.public_duplicate_window < Duration::from_secs(3600), "{:?}", defaults.public_duplicate_window);
}

/// The public events live in a stream of their own. A site's stream
/// shared with them filled with a move event or two for every move: at
/// its bound the oldest messages left, finished games not yet rated among
/// them, so a rating service away for a while lost games for good. Here
/// two megabytes of move events come while nothing reads, each stream
/// bounded at one, and the finished game is still there.
#[tokio::test]
async fn public_events_never_push_a_finished_game_out() {
    let config = NatsConfig {
        max_bytes: 1 << 20,
        public_duplicate_window: Duration::from_secs(30),
        public_max_bytes: Some(1 << 20),
        ..scratch("apart")
    };
    let (cleanup, public) = (config.clone(), fogblast_bus::public_stream(&config.stream));
    let bus = timeout(ARRIVE, NatsBus::connect(config)).await.expect("in time").expect("connected");
    let checks = tokio::spawn(async move {
        publish(&bus, "games.finished.atomic", "game-1", "the record").await;
        let event = "x".repeat(1024);
        for batch in 0..20 {
            let ids: Vec<String> = (0..100).map(|n| format!("game-2/{}/move/json", batch * 100 + n)).collect();
            let sends = ids.iter().map(|id| {
                bus.publish_durable("games.public.json.atomic.move", id, Vec::new(), Bytes::from(event.clone()))
            });
            for ack in futures::future::join_all(sends).await {
                ack.expect("a public event stored");
            }
        }
        let mut deliveries = bus.consume_durable(consumer("ratings", "games.finished.>")).await.expect("consume");
        let delivery = timeout(ARRIVE, deliveries.next()).await.ok().flatten().map(|d| d.expect("a delivery"));
        let delivery = delivery.expect("the finished game is still in the site's stream");
        assert_eq!((delivery.message_id(), text(&delivery.message().payload).as_str()), (Some("game-1"), "the record"));
    });
    let outcome = checks.await;
    let mut public_stream = jetstream(&cleanup.url).await.get_stream(&public).await.expect("the public stream");
    let state = public_stream.info().await.expect("its state").state.clone();
    delete_streams(&cleanup).await;
    if let Err(panicked) = outcome {
        std::panic::resume_unwind(panicked.into_panic());
    }
    assert!(state.bytes <= 1 << 20 && state.messages < 2_000, "the public stream kept its own bound: {state:?}");
}

/// A site whose stream still holds every durable subject (`games.>`, as
/// before the public events had a stream of their own) starts: the site's
/// stream gives the public subjects up, keeps what it held, and the public
/// stream is made beside it.
#[tokio::test]
async fn a_stream_that_held_every_subject_is_narrowed_on_start() {
    let config = NatsConfig { max_bytes: 1 << 20, ..scratch("upgrade") };
    let (stream, prefix) = (config.stream.clone(), config.subject_prefix.clone());
    let public = fogblast_bus::public_stream(&stream);
    let jetstream = jetstream(&config.url).await;
    jetstream
        .create_stream(async_nats::jetstream::stream::Config {
            name: stream.clone(),
            subjects: vec![format!("{prefix}games.>")],
            max_bytes: 1 << 20,
            ..Default::default()
        })
        .await
        .expect("the old stream");
    let old = jetstream.publish(format!("{prefix}games.finished.atomic"), "kept".into()).await.expect("published");
    old.await.expect("stored");
    let connected = timeout(ARRIVE, NatsBus::connect(config.clone())).await.expect("in time");
    let site = jetstream.get_stream(&stream).await.map(|s| s.cached_info().clone());
    let made = jetstream.get_stream(&public).await.map(|s| s.cached_info().clone());
    delete_streams(&config).await;
    connected.expect("the bus starts on the old stream");
    let site = site.expect("the site's stream");
    assert_eq!(site.config.subjects, [format!("{prefix}games.finished.>"), format!("{prefix}analysis.>")]);
    assert_eq!(site.state.messages, 1, "what it held is kept");
    let public_subjects = [format!("{prefix}games.public.>"), format!("{prefix}tournaments.public.>")];
    assert_eq!(made.expect("the public stream").config.subjects, public_subjects);
}

/// The in-process bus forgets what every consumer acknowledged, and holds
/// no more than its bound of what nobody did: `fogblast up` finishing game
/// after game for months keeps a log the size of its backlog.
#[tokio::test]
async fn the_memory_log_holds_only_what_is_unacknowledged_within_its_bound() {
    let bus = fogblast_bus::MemoryBus::new().with_settled_kept(Duration::ZERO);
    let mut deliveries = bus.consume_durable(consumer("ratings", "games.finished.>")).await.expect("consume");
    for n in 0..2_000 {
        publish(&bus, "games.finished.atomic", &format!("game-{n}"), &"x".repeat(500)).await;
        next_delivery(&mut deliveries).await.ack().await.expect("ack");
        assert!(bus.held().0 <= 1, "after {n} games the log holds {:?}", bus.held());
    }
    assert_eq!(bus.held(), (0, 0));

    // Nobody takes these: the oldest leave past the bound.
    let bus = fogblast_bus::MemoryBus::new().with_max_bytes(64 << 10);
    for n in 0..2_000 {
        publish(&bus, "games.public.pb.atomic.move", &format!("event-{n}"), &"x".repeat(500)).await;
        assert!(bus.held().1 <= 64 << 10, "after {n} events the log holds {:?}", bus.held());
    }
    assert!(bus.held().0 > 100, "the bound keeps what fits: {:?}", bus.held());
}

/// A message every consumer acknowledged stays a while: a consumer made
/// just after still gets it, and a resend is still a duplicate.
#[tokio::test]
async fn an_acknowledged_message_stays_for_the_settled_time() {
    let bus = fogblast_bus::MemoryBus::new().with_settled_kept(Duration::from_secs(3600));
    publish(&bus, "games.finished.fog", "game-1", "").await;
    let mut first = bus.consume_durable(consumer("archiver", "games.finished.>")).await.expect("consume");
    next_delivery(&mut first).await.ack().await.expect("ack");
    let again = bus.publish_durable("games.finished.fog", "game-1", Vec::new(), Bytes::new()).await.unwrap();
    assert!(again.duplicate);
    let mut second = bus.consume_durable(consumer("ratings", "games.finished.>")).await.expect("consume");
    assert_eq!(next_delivery(&mut second).await.message_id(), Some("game-1"));
}

/// The bus opened on a file, dropped without a word (as a process killed
/// outright is), and opened again: every message not yet acknowledged comes
/// again, acknowledged ones do not, and ids and sequences go on.
#[tokio::test]
async fn a_bus_file_keeps_every_unacknowledged_message_across_a_crash() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let path = dir.path().join("bus.db");
    let first_sequence = {
        let bus = fogblast_bus::MemoryBus::open(&path).await.expect("a bus file");
        let mut deliveries = bus.consume_durable(consumer("ratings", "games.finished.>")).await.expect("consume");
        let headers = vec![("traceparent".to_owned(), "00-1-2-01".to_owned())];
        let ack = bus.publish_durable("games.finished.atomic", "archived", headers, Bytes::from("a")).await.unwrap();
        publish(&bus, "games.finished.fog", "published-not-archived", "b").await;
        let archived = next_delivery(&mut deliveries).await;
        assert_eq!(archived.message_id(), Some("archived"));
        archived.ack().await.expect("ack");
        let in_flight = next_delivery(&mut deliveries).await;
        assert_eq!(in_flight.message_id(), Some("published-not-archived"));
        ack.sequence
    };

    let bus = fogblast_bus::MemoryBus::open(&path).await.expect("the bus file again");
    let resent = bus.publish_durable("games.finished.fog", "published-not-archived", Vec::new(), Bytes::new());
    assert!(resent.await.unwrap().duplicate, "the id is remembered");
    let later = bus.publish_durable("games.finished.fog", "later", Vec::new(), Bytes::new()).await.unwrap();
    assert_eq!(later.sequence, first_sequence + 2);
    let mut deliveries = bus.consume_durable(consumer("ratings", "games.finished.>")).await.expect("consume");
    let again = next_delivery(&mut deliveries).await;
    assert_eq!((again.message_id(), text(&again.message().payload).as_str()), (Some("published-not-archived"), "b"));
    again.ack().await.expect("ack");
    let later = next_delivery(&mut deliveries).await;
    assert_eq!(later.message_id(), Some("later"));
    later.ack().await.expect("ack");
    assert_no_delivery(&mut deliveries).await;

    // The public events are a live feed: not written to the file.
    bus.publish_durable("games.public.json.fog.move", "public-1", Vec::new(), Bytes::from("m")).await.unwrap();
    drop(bus);
    let bus = fogblast_bus::MemoryBus::open(&path).await.expect("the bus file once more");
    let public = bus.publish_durable("games.public.json.fog.move", "public-1", Vec::new(), Bytes::new());
    assert!(!public.await.unwrap().duplicate, "a public event was kept in the file");

    // A consumer made now still gets what the file kept of the archived game.
    let mut other = bus.consume_durable(consumer("archiver", "games.finished.>")).await.expect("consume");
    let kept = next_delivery(&mut other).await;
    assert_eq!(kept.message_id(), Some("archived"));
    assert!(kept.message().headers.iter().any(|(name, value)| name == "traceparent" && value == "00-1-2-01"));
}

/// A stream that remembers a message's id but no longer holds the message
/// (NATS 2.9 lost acknowledged messages across leader changes and kept
/// their ids, so a publish sent again was answered "duplicate" and the
/// finished game never reached the archive): the bus finds the message
/// missing and publishes it again, and a consumer gets it. A duplicate
/// whose message is there stays a duplicate.
#[tokio::test]
async fn a_duplicate_of_a_message_the_stream_lost_is_published_again() {
    let config = NatsConfig { duplicate_window: Duration::from_secs(60), ..scratch("lost-dup") };
    let (cleanup, stream) = (config.clone(), config.stream.clone());
    let bus = timeout(ARRIVE, NatsBus::connect(config.clone())).await.expect("in time").expect("connected");
    let checks = tokio::spawn(async move {
        let first = bus.publish_durable("games.finished.atomic", "game-7", Vec::new(), Bytes::from("the record"));
        let first = first.await.expect("published");
        let kept = bus.publish_durable("games.finished.atomic", "game-8", Vec::new(), Bytes::from("another"));
        kept.await.expect("published");
        // The message goes; its id stays in the duplicate window.
        let jetstream = jetstream(&config.url).await;
        let found = jetstream.get_stream(&stream).await.expect("the stream");
        assert!(found.delete_message(first.sequence).await.expect("deleted"), "the message was there");

        let again = bus.publish_durable("games.finished.atomic", "game-7", Vec::new(), Bytes::from("the record"));
        let again = again.await.expect("published again");
        assert!(!again.duplicate && again.sequence > first.sequence, "stored anew: {again:?}");
        let still = bus.publish_durable("games.finished.atomic", "game-8", Vec::new(), Bytes::from("another"));
        assert!(still.await.expect("answered").duplicate, "a duplicate the stream holds stays one");

        let mut deliveries = bus.consume_durable(consumer("archive", "games.finished.>")).await.expect("consume");
        let mut payloads = Vec::new();
        for _ in 0..2 {
            let delivery = next_delivery(&mut deliveries).await;
            payloads.push(text(&delivery.message().payload));
            delivery.ack().await.expect("acked");
        }
        payloads.sort();
        assert_eq!(payloads, ["another", "the record"]);
        assert_no_delivery(&mut deliveries).await;
    });
    let outcome = checks.await;
    delete_streams(&cleanup).await;
    if let Err(panicked) = outcome {
        std::panic::resume_unwind(panicked.into_panic());
    }
}
