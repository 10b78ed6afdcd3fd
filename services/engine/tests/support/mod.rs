//! Starts a real engine pool on loopback port 0 and talks to it as a
//! caller would: a tonic client for `BestMove`, plain HTTP for `/metrics`.

#![allow(dead_code)] // each test binary uses its own part of the kit

use std::net::SocketAddr;
use std::time::Duration;

use fogblast_engine_service::{run, EngineConfig, EngineSettings, ServeError};
use fogblast_proto::engine::engine_client::EngineClient;
use fogblast_proto::engine::{BestMoveRequest, Level, Variant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::transport::Channel;

pub const ATOMIC_KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq -";

/// A pool small enough for a two-core test machine.
pub fn small_config() -> EngineConfig {
    EngineConfig {
        settings: EngineSettings { workers: 2, queue: 8, hash_mb: 1 },
        drain_ms: 5_000,
        ..EngineConfig::default()
    }
}

#[derive(Debug)]
pub struct TestServer {
    pub grpc_addr: SocketAddr,
    pub metrics_addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), ServeError>>>,
}

impl TestServer {
    pub async fn start(config: EngineConfig) -> TestServer {
        let grpc = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let metrics = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let (grpc_addr, metrics_addr) = (grpc.local_addr().unwrap(), metrics.local_addr().unwrap());
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(run(config, grpc, metrics, async {
            let _ = stopped.await;
        }));
        TestServer { grpc_addr, metrics_addr, stop: Some(stop), task: Some(task) }
    }

    pub async fn client(&self) -> EngineClient<Channel> {
        EngineClient::connect(format!("http://{}", self.grpc_addr)).await.unwrap()
    }

    /// Asks the server to shut down and waits for `run` to return.
    pub async fn shutdown(&mut self) -> Result<(), ServeError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let task = self.task.take().expect("shut down once");
        tokio::time::timeout(Duration::from_secs(20), task).await.expect("run returns").expect("run does not panic")
    }

    /// The `/metrics` page.
    pub async fn metrics(&self) -> String {
        let (status, body) = http_get(self.metrics_addr, "/metrics").await;
        assert_eq!(status, 200, "{body}");
        body
    }

    /// The value of one sample, `name` written as in the page
    /// (`fogblast_engine_requests_total{outcome="ok"}`).
    pub async fn sample(&self, name: &str) -> f64 {
        let page = self.metrics().await;
        sample(&page, name).unwrap_or_else(|| panic!("no sample {name} in\n{page}"))
    }

    /// Polls a sample until it reaches `value` or five seconds pass.
    pub async fn wait_for_sample(&self, name: &str, value: f64) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            let now = self.sample(name).await;
            if now == value {
                return;
            }
            assert!(tokio::time::Instant::now() < deadline, "{name} stayed at {now}, expected {value}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

pub fn sample(page: &str, name: &str) -> Option<f64> {
    page.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

/// A minimal HTTP/1.1 GET: the status code and the body.
pub async fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
    let status = head.split(' ').nth(1).and_then(|code| code.parse().ok()).expect("a status line");
    (status, body.to_owned())
}

pub fn request(variant: Variant, level: Level) -> BestMoveRequest {
    BestMoveRequest { variant: variant.into(), level: level.into(), ..Default::default() }
}
