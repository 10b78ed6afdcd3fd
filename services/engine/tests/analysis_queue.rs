//! The durable analysis queue on a real NATS server, with two engine pools
//! sharing it: a request made twice is analysed once, and when the replica
//! analysing it is killed outright, the other takes the request over after
//! the ack wait and publishes the one result.

mod support;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use fogblast_bus::{ConsumerConfig, EventBus, NatsBus, NatsConfig};
use fogblast_engine_service::analysis_queue::{request_message_id, FINISHED_SUBJECT, REQUESTED_SUBJECT};
use fogblast_engine_service::EngineConfig;
use fogblast_proto::engine::{AnalyseRequest, AnalysisFinished, AnalysisRequested, Variant};
use fogblast_rules::{CastlingMode, Game, Position};
use fogblast_testkit::{nats_url, Scratch, TEST_STREAM_MAX_BYTES};
use futures::StreamExt;
use prost::Message as _;
use support::{http_get, sample, small_config};
use tokio::net::TcpListener;

/// An engine pool on its own runtime, so the test can kill it outright: no
/// shutdown, no acknowledgement, no more progress reports.
struct EnginePool {
    runtime: Option<tokio::runtime::Runtime>,
    metrics_addr: std::net::SocketAddr,
}

impl EnginePool {
    async fn start(nats: NatsConfig) -> EnginePool {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let mut config: EngineConfig = small_config();
        config.settings.workers = 1;
        config.analysis.analysis_depth = 5;
        config.analysis.analysis_ack_wait_ms = 1_500;
        let grpc = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let metrics = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let metrics_addr = metrics.local_addr().unwrap();
        let bus: Arc<dyn EventBus> = Arc::new(NatsBus::connect(nats).await.unwrap());
        runtime.spawn(async move {
            grpc.set_nonblocking(true).unwrap();
            metrics.set_nonblocking(true).unwrap();
            let (grpc, metrics) = (TcpListener::from_std(grpc).unwrap(), TcpListener::from_std(metrics).unwrap());
            let served =
                fogblast_engine_service::run_with_analysis_queue(config, bus, grpc, metrics, std::future::pending());
            served.await.unwrap();
        });
        EnginePool { runtime: Some(runtime), metrics_addr }
    }

    async fn sample(&self, name: &str) -> f64 {
        let (status, page) = http_get(self.metrics_addr, "/metrics").await;
        assert_eq!(status, 200, "{page}");
        sample(&page, name).unwrap_or_else(|| panic!("no sample {name} in\n{page}"))
    }

    fn kill(mut self) {
        self.runtime.take().unwrap().shutdown_background();
    }
}

impl Drop for EnginePool {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A standard game of `plies` moves chosen by a fixed rule.
fn fixed_game(plies: usize) -> Vec<String> {
    let mut game = Game::new(Position::new(fogblast_rules::Variant::Standard));
    let mut seed = 0x2545_f491_u64;
    while game.ply() < plies && game.outcome().is_none() {
        let moves = game.position().legal_moves();
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        game.play(moves[(seed >> 33) as usize % moves.len()]).unwrap();
    }
    game.moves().iter().map(|m| m.to_uci(CastlingMode::Standard).to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_replica_loses_no_analysis_and_the_result_is_published_once() {
    let scratch = Scratch::new("analysis-queue");
    let nats = NatsConfig {
        url: nats_url(),
        stream: scratch.stream.clone(),
        subject_prefix: scratch.subject_prefix.clone(),
        max_bytes: TEST_STREAM_MAX_BYTES,
        public_max_bytes: Some(TEST_STREAM_MAX_BYTES),
        ..NatsConfig::default()
    };
    let bus = NatsBus::connect(nats.clone()).await.unwrap();
    let pools = [EnginePool::start(nats.clone()).await, EnginePool::start(nats.clone()).await];

    let game_id = "aq7pfz3k";
    let moves = fixed_game(40);
    let request = AnalysisRequested {
        game_id: game_id.to_owned(),
        game: Some(AnalyseRequest { variant: Variant::Standard.into(), moves: moves.clone(), ..Default::default() }),
        requested_at_ms: 1,
    };
    let subject = format!("{REQUESTED_SUBJECT}.{game_id}");
    let payload = Bytes::from(request.encode_to_vec());
    let id = request_message_id(game_id);
    let first = bus.publish_durable(&subject, &id, Vec::new(), payload.clone()).await.unwrap();
    let again = bus.publish_durable(&subject, &id, Vec::new(), payload).await.unwrap();
    assert!(!first.duplicate && again.duplicate, "a repeated request is one request");

    // Kill whichever replica took it, in the middle of its analysis.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let analysing = loop {
        let mut found = None;
        for (index, pool) in pools.iter().enumerate() {
            if pool.sample("fogblast_engine_analysis_positions_total").await >= 2.0 {
                found = Some(index);
            }
        }
        if let Some(index) = found {
            break index;
        }
        assert!(tokio::time::Instant::now() < deadline, "no replica started the analysis");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let [a, b] = pools;
    let (killed, survivor) = if analysing == 0 { (a, b) } else { (b, a) };
    killed.kill();

    let results = ConsumerConfig {
        name: "test-results".to_owned(),
        filter: format!("{FINISHED_SUBJECT}.>"),
        ack_wait: Duration::from_secs(30),
    };
    let mut deliveries = bus.consume_durable(results).await.unwrap();
    let Ok(Some(Ok(delivery))) = tokio::time::timeout(Duration::from_secs(180), deliveries.next()).await else {
        let positions = survivor.sample("fogblast_engine_analysis_positions_total").await;
        let ok = survivor.sample("fogblast_engine_analyses_total{outcome=\"ok\"}").await;
        let jetstream = async_nats::jetstream::new(async_nats::connect(nats_url()).await.unwrap());
        let mut stream = jetstream.get_stream(&scratch.stream).await.unwrap();
        let state = stream.info().await.unwrap().state.clone();
        panic!("the survivor did not finish the analysis: {positions} positions analysed, {ok} ok, {state:?}");
    };
    let finished = AnalysisFinished::decode(delivery.message().payload.clone()).unwrap();
    delivery.ack().await.unwrap();
    assert_eq!(finished.game_id, game_id);
    assert_eq!(finished.error, "");
    assert_eq!(finished.positions.len(), moves.len() + 1);
    assert_eq!(finished.depth, 5);
    assert!(finished.positions.iter().all(|p| p.cp.is_some() || p.mate.is_some() || !p.result.is_empty()));
    assert_eq!(survivor.sample("fogblast_engine_analyses_total{outcome=\"ok\"}").await, 1.0);

    // Exactly one result on the stream, and the request acknowledged.
    let jetstream = async_nats::jetstream::new(async_nats::connect(nats_url()).await.unwrap());
    let mut stream = jetstream.get_stream(&scratch.stream).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let info = stream.consumer_info("analysis").await.unwrap();
        if info.num_pending == 0 && info.num_ack_pending == 0 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the request is still pending: {info:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let results = stream.consumer_info("test-results").await.unwrap();
    assert_eq!((results.num_pending, results.delivered.stream_sequence > 0), (0, true), "{results:?}");
    let state = stream.info().await.unwrap().state.clone();
    // The request once and the result once.
    assert_eq!(state.messages, 2, "{state:?}");
    drop(survivor);
    scratch.remove();
}
