//! Trace context rides on bus messages: with traces exported, both adapters
//! add the publisher's `traceparent` to what they send, durable or plain,
//! so a consumer continues the publisher's trace. Its own test binary,
//! because installing the exporter is process-wide.
//!
//! The NATS half needs a server with JetStream at `nats://127.0.0.1:4222`
//! (or `FOGBLAST_TEST_NATS_URL`); it uses a stream of its own, deleted after.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use fogblast_bus::{ConsumerConfig, EventBus, Headers, MemoryBus, NatsBus, NatsConfig};
use futures::StreamExt;
use opentelemetry_sdk::trace::InMemorySpanExporter;
use tokio::time::timeout;

const ARRIVE: Duration = Duration::from_secs(5);

fn traceparent(headers: &Headers) -> Option<&str> {
    headers.iter().find(|(name, _)| name.eq_ignore_ascii_case("traceparent")).map(|(_, v)| v.as_str())
}

/// Publishes inside a span on both kinds of traffic and checks each
/// message carries that span's trace, next to the caller's own headers.
async fn publisher_context_travels(bus: &dyn EventBus) {
    let mut plain = bus.subscribe("player.7").await.expect("subscribe");
    let span = tracing::info_span!("publisher");
    let trace = fogblast_telemetry::trace_id(&span).expect("the span is exported");
    let own = vec![("x-origin".to_owned(), "game-7".to_owned())];
    tracing::Instrument::instrument(
        async {
            bus.publish_durable("games.finished.fog", "traced-1", own.clone(), Bytes::from_static(b"record"))
                .await
                .expect("publish_durable");
            bus.publish("player.7", own.clone(), Bytes::from_static(b"hello")).await.expect("publish");
        },
        span,
    )
    .await;

    let consumer =
        ConsumerConfig { name: "tracer".into(), filter: "games.finished.>".into(), ack_wait: Duration::from_secs(5) };
    let mut deliveries = bus.consume_durable(consumer).await.expect("consume");
    let delivery = timeout(ARRIVE, deliveries.next()).await.expect("a delivery").expect("stream").expect("delivery");
    let headers = &delivery.message().headers;
    let sent = traceparent(headers).unwrap_or_else(|| panic!("no traceparent in {headers:?}"));
    assert!(sent.starts_with(&format!("00-{trace}-")), "{sent} carries trace {trace}");
    assert!(headers.contains(&own[0]), "{headers:?}");
    // A consumer's span continues that trace.
    let consumer_span = tracing::info_span!("consumer");
    fogblast_telemetry::follow_headers(&consumer_span, headers);
    assert_eq!(fogblast_telemetry::trace_id(&consumer_span).as_deref(), Some(trace.as_str()));
    delivery.ack().await.expect("ack");

    let message = timeout(ARRIVE, plain.next()).await.expect("a plain message").expect("subscription");
    // The durable publish is also seen on its plain subject; the
    // subscription here is on player.7 only.
    assert_eq!(message.subject, "player.7");
    let sent = traceparent(&message.headers).unwrap_or_else(|| panic!("no traceparent in {:?}", message.headers));
    assert!(sent.starts_with(&format!("00-{trace}-")), "{sent} carries trace {trace}");

    // Outside any span nothing is added.
    bus.publish("player.7", Vec::new(), Bytes::new()).await.expect("publish");
    let message = timeout(ARRIVE, plain.next()).await.expect("a plain message").expect("subscription");
    assert_eq!(message.headers, Headers::new());
}

#[tokio::test]
async fn both_adapters_carry_the_publishers_trace() {
    assert!(fogblast_telemetry::init_with_exporter("fogblast-bus-test", InMemorySpanExporter::default()));

    publisher_context_travels(&MemoryBus::new()).await;

    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_nanos();
    let tag = format!("{}_{nanos}_trace", std::process::id());
    let url = std::env::var("FOGBLAST_TEST_NATS_URL").unwrap_or_else(|_| "nats://127.0.0.1:4222".into());
    let config = NatsConfig {
        url: url.clone(),
        stream: format!("FOGBLAST_TEST_{tag}"),
        subject_prefix: format!("test_{tag}."),
        duplicate_window: Duration::from_secs(60),
        max_bytes: 64 << 20,
        ..NatsConfig::default()
    };
    let stream = config.stream.clone();
    let bus = timeout(ARRIVE, NatsBus::connect(config))
        .await
        .expect("connecting to NATS timed out")
        .unwrap_or_else(|e| panic!("this test needs NATS with JetStream at {url}: {e}"));
    let outcome = tokio::spawn(async move { publisher_context_travels(&bus).await }).await;
    let client = async_nats::connect(&url).await.expect("connect for cleanup");
    let jetstream = async_nats::jetstream::new(client);
    jetstream.delete_stream(&stream).await.expect("delete test stream");
    jetstream.delete_stream(fogblast_bus::public_stream(&stream)).await.expect("delete test public stream");
    if let Err(panicked) = outcome {
        std::panic::resume_unwind(panicked.into_panic());
    }
}
