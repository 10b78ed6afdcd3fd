//! What tracing costs one hop of a request: the caller's span and the
//! context put on its gRPC request, then the server layer's span continuing
//! it, as `gateway.move` → `MakeMove` does. Measured twice, each in a
//! process of its own (a process has one subscriber): without an exporter,
//! as every service runs unless `OTEL_EXPORTER_OTLP_ENDPOINT` is set, and
//! with one (spans handed to an exporter that only counts them). Each phase
//! checks the work it did: no context carried without an exporter, and with
//! one a `traceparent` on every request and two spans exported per hop.
//!
//! `cargo bench -p fogblast-telemetry --bench overhead [-- HOPS]`

use std::convert::Infallible;
use std::future::Future;
use std::future::Ready;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use tower_layer::Layer;
use tower_service::Service;

const PHASE: &str = "FOGBLAST_OVERHEAD_PHASE";

/// Counts the spans it is handed, and drops them.
#[derive(Clone, Debug, Default)]
struct Counting(Arc<AtomicU64>);

impl SpanExporter for Counting {
    fn export(&self, batch: Vec<SpanData>) -> impl std::future::Future<Output = OTelSdkResult> + Send {
        self.0.fetch_add(batch.len() as u64, Ordering::Relaxed);
        std::future::ready(Ok(()))
    }
}

/// A server handler that does nothing but exist in its span.
#[derive(Clone)]
struct Handler;

impl Service<http::Request<()>> for Handler {
    type Response = ();
    type Error = Infallible;
    type Future = Ready<Result<(), Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _: http::Request<()>) -> Self::Future {
        std::future::ready(Ok(()))
    }
}

/// One hop; true if the request carried a `traceparent`.
fn hop(server: &mut fogblast_telemetry::GrpcTrace<Handler>, ply: u32) -> bool {
    let span = tracing::info_span!("gateway.move", game = "abcdefghijkl", ply);
    let request = span.in_scope(|| fogblast_telemetry::traced(ply));
    let mut http = http::Request::builder().uri("/fogblast.game.v1.Game/MakeMove");
    for (key, value) in request.metadata().clone().into_headers().iter() {
        http = http.header(key, value);
    }
    let carried = request.metadata().contains_key("traceparent");
    // The layer's future is ready at once: polling it once runs the handler.
    let future = server.call(http.body(()).expect("a request"));
    let mut future = std::pin::pin!(future);
    let waker = std::task::Waker::noop();
    assert!(future.as_mut().poll(&mut Context::from_waker(waker)).is_ready());
    carried
}

fn run_phase(exporting: bool, hops: u32) {
    let exported = Counting::default();
    if exporting {
        assert!(fogblast_telemetry::init_with_exporter("fogblast-bench", exported.clone()));
        assert!(fogblast_telemetry::enabled());
    } else {
        fogblast_telemetry::init("fogblast-bench");
        assert!(!fogblast_telemetry::enabled(), "{PHASE}=off runs without OTEL_* settings");
    }
    let mut server = fogblast_telemetry::GrpcTraceLayer.layer(Handler);
    // Warm up, then measure.
    for ply in 0..1_000 {
        hop(&mut server, ply);
    }
    let before = exported.0.load(Ordering::Relaxed);
    let start = Instant::now();
    let mut carried = 0u32;
    for ply in 0..hops {
        carried += u32::from(hop(&mut server, ply));
    }
    let elapsed = start.elapsed();
    fogblast_telemetry::flush();
    let spans = exported.0.load(Ordering::Relaxed) - before;
    if exporting {
        assert_eq!(carried, hops, "every request carries the caller's context");
        assert_eq!(spans, 2 * u64::from(hops), "two spans per hop exported");
    } else {
        assert_eq!((carried, spans), (0, 0), "nothing carried or exported");
    }
    let per_hop = elapsed.as_nanos() as f64 / f64::from(hops);
    let label = if exporting { "exporting" } else { "no exporter" };
    println!("{label:>12}: {hops} hops in {elapsed:.2?}: {per_hop:.0} ns per hop, {carried} carried context, {spans} spans exported");
}

fn main() {
    let hops: u32 = std::env::args().skip(1).find_map(|arg| arg.parse().ok()).unwrap_or(200_000);
    match std::env::var(PHASE).as_deref() {
        Ok("off") => run_phase(false, hops),
        Ok("on") => run_phase(true, hops),
        _ => {
            // Each phase in a fresh process: the subscriber is process-wide.
            for phase in ["off", "on"] {
                let status = std::process::Command::new(std::env::current_exe().expect("this binary"))
                    .arg(hops.to_string())
                    .env(PHASE, phase)
                    .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
                    .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
                    .status()
                    .expect("running a phase");
                assert!(status.success(), "phase {phase} failed");
            }
        }
    }
}
