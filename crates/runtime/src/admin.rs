//! The admin HTTP server each service runs on its metrics port: Prometheus
//! `/metrics` from the service's registry, `/healthz` (the process answers)
//! and `/readyz` (the service's own readiness, with the reason when not).

use std::future::Future;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use prometheus::{Registry, TextEncoder};
use tokio::net::TcpListener;

/// What `/readyz` answers: `Ok` when the service takes work, or why not.
pub type Readiness = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

#[derive(Clone)]
struct Admin {
    registry: Registry,
    readiness: Readiness,
}

/// Serves `/metrics`, `/healthz` and `/readyz` on `listener` until
/// `shutdown` completes.
pub async fn serve_admin(
    listener: TcpListener,
    registry: Registry,
    readiness: Readiness,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = Router::new()
        .route("/metrics", get(metrics))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(ready))
        .with_state(Admin { registry, readiness });
    axum::serve(listener, app).with_graceful_shutdown(shutdown).await
}

async fn metrics(State(admin): State<Admin>) -> Response {
    match TextEncoder::new().encode_to_string(&admin.registry.gather()) {
        Ok(text) => ([(header::CONTENT_TYPE, prometheus::TEXT_FORMAT)], text).into_response(),
        Err(error) => {
            tracing::error!(%error, "rendering metrics failed");
            (StatusCode::INTERNAL_SERVER_ERROR, "metrics could not be rendered").into_response()
        }
    }
}

async fn ready(State(admin): State<Admin>) -> Response {
    match (admin.readiness)() {
        Ok(()) => (StatusCode::OK, "ready").into_response(),
        Err(reason) => (StatusCode::SERVICE_UNAVAILABLE, reason).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    async fn get(addr: std::net::SocketAddr, path: &str) -> String {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut reply = String::new();
        stream.read_to_string(&mut reply).await.unwrap();
        reply
    }

    #[tokio::test]
    async fn serves_metrics_health_and_the_services_readiness() {
        let registry = Registry::new();
        let counter = prometheus::IntCounter::new("fogblast_sample_total", "a sample").unwrap();
        registry.register(Box::new(counter.clone())).unwrap();
        counter.inc_by(3);
        let serving = Arc::new(AtomicBool::new(false));
        let flag = serving.clone();
        let readiness: Readiness =
            Arc::new(move || if flag.load(Ordering::Relaxed) { Ok(()) } else { Err("holds no lease".to_owned()) });
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve_admin(listener, registry, readiness, async {
            let _ = stopped.await;
        }));

        assert!(get(addr, "/metrics").await.contains("fogblast_sample_total 3"));
        assert!(get(addr, "/healthz").await.starts_with("HTTP/1.1 200"));
        let not_ready = get(addr, "/readyz").await;
        assert!(not_ready.starts_with("HTTP/1.1 503") && not_ready.ends_with("holds no lease"), "{not_ready}");
        serving.store(true, Ordering::Relaxed);
        assert!(get(addr, "/readyz").await.starts_with("HTTP/1.1 200"));

        stop.send(()).unwrap();
        server.await.unwrap().unwrap();
    }
}
