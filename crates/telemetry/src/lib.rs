//! Logs and traces for every Fogblast service.
//!
//! [`init`] installs the log output every command had before (plain `fmt`
//! lines at INFO and above, or as `FOGBLAST_LOG` says: `info,target=debug`
//! directives) and, when `OTEL_EXPORTER_OTLP_ENDPOINT` or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, an OpenTelemetry layer that
//! turns `tracing` spans into OTLP spans exported over gRPC. The standard
//! OpenTelemetry variables apply: `OTEL_SERVICE_NAME` overrides the service
//! name, `OTEL_BSP_SCHEDULE_DELAY` and friends tune the batching,
//! `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turn it off.
//!
//! Trace context crosses processes as a W3C `traceparent` (and
//! `tracestate`) header: [`traced`] and [`inject_grpc`] put the current
//! span's context on an outgoing gRPC request, [`GrpcTraceLayer`] continues
//! it on the server, [`inject_headers`] and [`follow_headers`] do the same
//! for event bus messages. Without an exporter none of this does any work
//! beyond one relaxed atomic load.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::task::{Context as TaskContext, Poll};

use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry::Context;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanExporter};
use opentelemetry_sdk::Resource;
use tonic::metadata::{MetadataKey, MetadataMap, MetadataValue};
use tracing::instrument::{Instrument, Instrumented};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

/// The W3C header carrying the trace id and the parent span id.
pub const TRACEPARENT: &str = "traceparent";
/// The W3C header carrying vendor trace state.
pub const TRACESTATE: &str = "tracestate";

/// Whether spans are exported, hence whether context is worth carrying.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// The provider installed by [`init`], flushed by [`shutdown`].
static INSTALLED: Mutex<Option<Installed>> = Mutex::new(None);

struct Installed {
    provider: SdkTracerProvider,
    /// Drives the gRPC exporter's connection; the exporter is called from
    /// the batch processor's own thread, outside any service's runtime.
    runtime: Option<tokio::runtime::Runtime>,
}

/// Whether an OpenTelemetry exporter is installed in this process.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

fn env_set(name: &str) -> bool {
    std::env::var(name).is_ok_and(|value| !value.trim().is_empty())
}

/// Whether the environment asks for OTLP export of traces.
pub fn otlp_configured() -> bool {
    let disabled = std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"))
        || std::env::var("OTEL_TRACES_EXPORTER").is_ok_and(|v| v.trim().eq_ignore_ascii_case("none"));
    !disabled && (env_set("OTEL_EXPORTER_OTLP_ENDPOINT") || env_set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
}

/// Why OTLP export could not be set up (logs still work).
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error("starting the exporter's runtime: {0}")]
    Runtime(std::io::Error),
    #[error("building the OTLP exporter: {0}")]
    Exporter(String),
}

/// Installs logs, and OTLP trace export if the environment configures it,
/// for the service `service` (e.g. `fogblast-game`). Safe to call twice:
/// the second call changes nothing. A bad OTLP setting is logged and
/// leaves the process running with logs only.
pub fn init(service: &str) {
    if !otlp_configured() {
        install(None);
        return;
    }
    match otlp_provider(service) {
        Ok(installed) => {
            let provider = installed.provider.clone();
            if install(Some(provider)) {
                *INSTALLED.lock().unwrap_or_else(PoisonError::into_inner) = Some(installed);
                tracing::info!(service, "exporting traces over OTLP");
            } else {
                shutdown_installed(installed);
            }
        }
        Err(error) => {
            install(None);
            tracing::warn!(%error, "traces will not be exported");
        }
    }
}

/// Installs logs and exports spans to `exporter` in batches, for tests and
/// embedders that bring their own exporter. Returns false if a subscriber
/// was already installed in this process.
pub fn init_with_exporter<E: SpanExporter + 'static>(service: &str, exporter: E) -> bool {
    let provider = SdkTracerProvider::builder().with_resource(resource(service)).with_simple_exporter(exporter).build();
    let installed = install(Some(provider.clone()));
    if installed {
        *INSTALLED.lock().unwrap_or_else(PoisonError::into_inner) = Some(Installed { provider, runtime: None });
    }
    installed
}

fn resource(service: &str) -> Resource {
    let builder = Resource::builder();
    // OTEL_SERVICE_NAME, read by the builder, wins over the command's name.
    if env_set("OTEL_SERVICE_NAME") {
        builder.build()
    } else {
        builder.with_service_name(service.to_owned()).build()
    }
}

fn otlp_provider(service: &str) -> Result<Installed, InitError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("otlp-export")
        .enable_all()
        .build()
        .map_err(InitError::Runtime)?;
    // The tonic channel must be made inside a runtime, which then keeps
    // its connection going.
    let exporter = {
        let _entered = runtime.enter();
        opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .build()
            .map_err(|e| InitError::Exporter(e.to_string()))?
    };
    let provider = SdkTracerProvider::builder().with_resource(resource(service)).with_batch_exporter(exporter).build();
    Ok(Installed { provider, runtime: Some(runtime) })
}

/// Sets the global subscriber: fmt logs at INFO, plus the OpenTelemetry
/// layer when a provider is given. False if one was already set.
fn install(provider: Option<SdkTracerProvider>) -> bool {
    use std::io::IsTerminal;
    let fmt = tracing_subscriber::fmt::layer().with_target(false).with_ansi(std::io::stdout().is_terminal());
    let otel = provider.as_ref().map(|provider| {
        let tracer = provider.tracer("fogblast");
        tracing_opentelemetry::layer().with_tracer(tracer).with_tracked_inactivity(false)
    });
    let enabled = otel.is_some();
    let installed = tracing_subscriber::registry().with(fmt.and_then(otel).with_filter(log_filter())).try_init();
    if installed.is_ok() && enabled {
        ENABLED.store(true, Ordering::Relaxed);
    }
    installed.is_ok()
}

/// INFO and above, or the directives of `FOGBLAST_LOG` (`info`,
/// `info,fogblast::commits=debug`); directives that do not read are
/// reported and INFO kept.
fn log_filter() -> Targets {
    let default = Targets::new().with_default(LevelFilter::INFO);
    match std::env::var("FOGBLAST_LOG") {
        Ok(directives) => directives.parse().unwrap_or_else(|error| {
            eprintln!("FOGBLAST_LOG={directives:?} does not read ({error}); logging at INFO");
            default
        }),
        Err(_) => default,
    }
}

fn shutdown_installed(installed: Installed) {
    if let Err(error) = installed.provider.shutdown() {
        eprintln!("flushing traces: {error}");
    }
    if let Some(runtime) = installed.runtime {
        runtime.shutdown_background();
    }
}

/// Exports the spans still buffered and stops the exporter. Call it once,
/// outside any async context, when the process is about to exit.
pub fn shutdown() {
    ENABLED.store(false, Ordering::Relaxed);
    let installed = INSTALLED.lock().unwrap_or_else(PoisonError::into_inner).take();
    if let Some(installed) = installed {
        shutdown_installed(installed);
    }
}

/// Exports the spans buffered so far without stopping the exporter.
pub fn flush() {
    if let Some(installed) = INSTALLED.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
        let _ = installed.provider.force_flush();
    }
}

fn propagator() -> TraceContextPropagator {
    TraceContextPropagator::new()
}

// ---- gRPC ----------------------------------------------------------------

struct MetadataInjector<'a>(&'a mut MetadataMap);

impl Injector for MetadataInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(key), Ok(value)) = (MetadataKey::from_bytes(key.as_bytes()), MetadataValue::try_from(value)) {
            self.0.insert(key, value);
        }
    }
}

struct HeaderExtractor<'a>(&'a http::HeaderMap);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}

/// Puts the current span's trace context on an outgoing gRPC request.
pub fn inject_grpc(metadata: &mut MetadataMap) {
    if !enabled() {
        return;
    }
    propagator().inject_context(&Span::current().context(), &mut MetadataInjector(metadata));
}

/// `message` as a request carrying the current span's trace context.
pub fn traced<T>(message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    inject_grpc(request.metadata_mut());
    request
}

/// A client interceptor putting the caller's trace context on every call:
/// `FooClient::with_interceptor(channel, InjectContext)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct InjectContext;

impl tonic::service::Interceptor for InjectContext {
    fn call(&mut self, mut request: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        inject_grpc(request.metadata_mut());
        Ok(request)
    }
}

/// A layer for `tonic::transport::Server::builder().layer(..)`: every call
/// runs in a `grpc.server` span named after its method, continuing the
/// caller's trace when the request carries a `traceparent`.
#[derive(Clone, Copy, Debug, Default)]
pub struct GrpcTraceLayer;

impl<S> tower_layer::Layer<S> for GrpcTraceLayer {
    type Service = GrpcTrace<S>;

    fn layer(&self, inner: S) -> GrpcTrace<S> {
        GrpcTrace { inner }
    }
}

/// The service [`GrpcTraceLayer`] wraps around a server's routes.
#[derive(Clone, Debug)]
pub struct GrpcTrace<S> {
    inner: S,
}

impl<S, B> tower_service::Service<http::Request<B>> for GrpcTrace<S>
where
    S: tower_service::Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Instrumented<S::Future>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        if !enabled() {
            return self.inner.call(request).instrument(Span::none());
        }
        let span = server_span(request.uri().path(), request.headers());
        let future = span.in_scope(|| self.inner.call(request));
        future.instrument(span)
    }
}

/// The span of one incoming call of `path` (`/package.Service/Method`).
fn server_span(path: &str, headers: &http::HeaderMap) -> Span {
    let name = path.trim_start_matches('/');
    let (service, method) = name.rsplit_once('/').unwrap_or(("", name));
    let span = tracing::info_span!(
        "grpc.server",
        otel.name = %name,
        otel.kind = "server",
        rpc.system = "grpc",
        rpc.service = %service,
        rpc.method = %method,
    );
    let parent = propagator().extract(&HeaderExtractor(headers));
    span.set_parent(parent);
    span
}

// ---- calls on a long-lived stream -------------------------------------------

/// The current span's trace context, for one call among many on a stream
/// (whose own headers were sent once, when it opened). Empty when tracing
/// is off.
pub fn call_context() -> std::collections::HashMap<String, String> {
    let mut context = std::collections::HashMap::new();
    if enabled() {
        propagator().inject_context(&Span::current().context(), &mut context);
    }
    context
}

/// Makes `span` continue the trace of a call whose context
/// [`call_context`] wrote.
pub fn follow_call(span: &Span, context: &std::collections::HashMap<String, String>) {
    if enabled() && context.contains_key(TRACEPARENT) {
        span.set_parent(propagator().extract(context));
    }
}

// ---- event bus headers ----------------------------------------------------

struct HeadersInjector<'a>(&'a mut Vec<(String, String)>);

impl Injector for HeadersInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.retain(|(name, _)| !name.eq_ignore_ascii_case(key));
        self.0.push((key.to_owned(), value));
    }
}

struct HeadersExtractor<'a>(&'a [(String, String)]);

impl Extractor for HeadersExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(name, _)| name.eq_ignore_ascii_case(key)).map(|(_, value)| value.as_str())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.iter().map(|(name, _)| name.as_str()).collect()
    }
}

/// Adds the current span's trace context to message headers, unless the
/// caller already put a `traceparent` there.
pub fn inject_headers(headers: &mut Vec<(String, String)>) {
    if !enabled() || headers.iter().any(|(name, _)| name.eq_ignore_ascii_case(TRACEPARENT)) {
        return;
    }
    propagator().inject_context(&Span::current().context(), &mut HeadersInjector(headers));
}

/// The trace context carried by message headers (empty if none).
pub fn extract_headers(headers: &[(String, String)]) -> Context {
    propagator().extract(&HeadersExtractor(headers))
}

/// Makes `span` continue the trace whose context `headers` carry: the
/// consumer's work becomes a child of the publisher's span.
pub fn follow_headers(span: &Span, headers: &[(String, String)]) {
    if !enabled() || !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case(TRACEPARENT)) {
        return;
    }
    span.set_parent(extract_headers(headers));
}

/// The trace id of `span` as 32 hex digits, if it is being exported.
pub fn trace_id(span: &Span) -> Option<String> {
    use opentelemetry::trace::TraceContextExt;
    let context = span.context();
    let span_context = context.span().span_context().clone();
    span_context.is_valid().then(|| span_context.trace_id().to_string())
}
