//! Trace context across process boundaries, within one process: what the
//! client side puts on a gRPC request or a bus message, the server side
//! (the tower layer, `follow_headers`) continues as a child. Spans go to
//! the SDK's in-memory exporter. One test, because the subscriber and the
//! provider are process-wide.

use std::convert::Infallible;
use std::future::Ready;
use std::task::{Context, Poll};

use opentelemetry::trace::{SpanId, TraceContextExt, TraceId};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SpanData};
use tower_layer::Layer;
use tower_service::Service;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// A gRPC "server" that notes the span it runs in.
#[derive(Clone)]
struct Handler;

impl Service<http::Request<()>> for Handler {
    type Response = (TraceId, SpanId);
    type Error = Infallible;
    type Future = Ready<Result<(TraceId, SpanId), Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: http::Request<()>) -> Self::Future {
        let context = tracing::Span::current().context();
        let span = context.span();
        let ids = span.span_context();
        std::future::ready(Ok((ids.trace_id(), ids.span_id())))
    }
}

fn ids(span: &tracing::Span) -> (TraceId, SpanId) {
    let context = span.context();
    let ids = context.span().span_context().clone();
    (ids.trace_id(), ids.span_id())
}

fn finished(exporter: &InMemorySpanExporter, name: &str) -> SpanData {
    fogblast_telemetry::flush();
    let spans = exporter.get_finished_spans().unwrap();
    spans.iter().find(|s| s.name == name).cloned().unwrap_or_else(|| panic!("no span {name} in {spans:?}"))
}

#[tokio::test]
async fn context_crosses_grpc_metadata_and_message_headers() {
    // Before anything is installed, nothing is carried.
    assert!(!fogblast_telemetry::enabled());
    let outside = tracing::info_span!("outside");
    let request = outside.in_scope(|| fogblast_telemetry::traced(()));
    assert!(request.metadata().get("traceparent").is_none());

    let exporter = InMemorySpanExporter::default();
    assert!(fogblast_telemetry::init_with_exporter("fogblast-test", exporter.clone()));
    assert!(fogblast_telemetry::enabled());

    // gRPC: a client span's context rides in the request metadata ...
    let client = tracing::info_span!("client.call");
    let (trace, client_span) = ids(&client);
    let request = client.in_scope(|| fogblast_telemetry::traced(()));
    let traceparent = request.metadata().get("traceparent").expect("traceparent sent").to_str().unwrap().to_owned();
    assert_eq!(traceparent, format!("00-{trace}-{client_span}-01"));
    assert_eq!(fogblast_telemetry::trace_id(&client), Some(trace.to_string()));
    // The interceptor does the same for every call of a client.
    let carried = client.in_scope(|| {
        tonic::service::Interceptor::call(&mut fogblast_telemetry::InjectContext, tonic::Request::new(()))
            .expect("the interceptor never refuses")
    });
    assert_eq!(carried.metadata().get("traceparent").and_then(|v| v.to_str().ok()), Some(traceparent.as_str()));

    // ... and the server layer runs the handler in a child span of it.
    let mut server = fogblast_telemetry::GrpcTraceLayer.layer(Handler);
    let http_request = http::Request::builder()
        .uri("/fogblast.game.v1.Game/MakeMove")
        .header("traceparent", traceparent)
        .body(())
        .unwrap();
    let (handler_trace, handler_span) = server.call(http_request).await.unwrap();
    assert_eq!(handler_trace, trace, "the handler continues the caller's trace");
    assert_ne!(handler_span, client_span);
    drop(client);
    let exported = finished(&exporter, "fogblast.game.v1.Game/MakeMove");
    assert_eq!(exported.parent_span_id, client_span, "the server span is the client span's child");
    assert_eq!(exported.span_context.trace_id(), trace);
    let method = exported.attributes.iter().find(|kv| kv.key.as_str() == "rpc.method").map(|kv| kv.value.to_string());
    assert_eq!(method.as_deref(), Some("MakeMove"));

    // A call with no context starts a trace of its own.
    let bare = http::Request::builder().uri("/fogblast.engine.v1.Engine/BestMove").body(()).unwrap();
    let (bare_trace, _) = server.call(bare).await.unwrap();
    assert_ne!(bare_trace, trace);
    assert_ne!(bare_trace, TraceId::INVALID);

    // Bus messages: the publisher's context goes into the headers ...
    let publisher = tracing::info_span!("publisher");
    let (publish_trace, publish_span) = ids(&publisher);
    let mut headers = vec![("Other".to_owned(), "kept".to_owned())];
    publisher.in_scope(|| fogblast_telemetry::inject_headers(&mut headers));
    assert_eq!(headers[0], ("Other".to_owned(), "kept".to_owned()));
    let sent = headers.iter().find(|(k, _)| k == "traceparent").expect("traceparent header").1.clone();
    assert_eq!(sent, format!("00-{publish_trace}-{publish_span}-01"));
    // ... a header the caller set is left alone ...
    let mut own = vec![("TraceParent".to_owned(), sent.clone())];
    tracing::info_span!("other").in_scope(|| fogblast_telemetry::inject_headers(&mut own));
    assert_eq!(own, [("TraceParent".to_owned(), sent.clone())]);
    // ... and a consumer's span follows it, whatever the header's case.
    let consumer = tracing::info_span!("consumer");
    fogblast_telemetry::follow_headers(&consumer, &[("TRACEPARENT".to_owned(), sent)]);
    assert_eq!(ids(&consumer).0, publish_trace);
    drop((publisher, consumer));
    assert_eq!(finished(&exporter, "consumer").parent_span_id, publish_span);

    // A malformed header is ignored: the consumer starts a fresh trace.
    let stray = tracing::info_span!("stray");
    fogblast_telemetry::follow_headers(&stray, &[("traceparent".to_owned(), "00-nonsense".to_owned())]);
    let (stray_trace, _) = ids(&stray);
    assert_ne!(stray_trace, publish_trace);
    drop(stray);
    assert_eq!(finished(&exporter, "stray").parent_span_id, SpanId::INVALID);
}
