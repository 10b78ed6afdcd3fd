//! Analysis of archived games, end to end on real Postgres and NATS with a
//! real engine pool: a game not archived is refused, repeated requests make
//! one analysis, one requester waits for a bounded number, and the result
//! comes back judged (classes, accuracies) and in the PGN as `[%eval]`.
//! The same repository runs on SQLite.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use fogblast_bus::{EventBus, NatsBus, NatsConfig};
use fogblast_engine_service::EngineConfig;
use fogblast_proto::engine::{AnalysisFinished, PositionEval};
use fogblast_proto::events::{FinishedPlayer, GameFinished};
use fogblast_proto::game::{EndReason, Variant};
use fogblast_proto::rating::rating_client::RatingClient;
use fogblast_proto::rating::{AnalysisRequest, AnalysisState, GameAnalysis, GameRequest, MoveClass};
use fogblast_rating::analyses::Requested;
use fogblast_rating::{Archive, RatingConfig, RatingSettings};
use fogblast_testkit::{nats_url, Scratch, ScratchDatabase};
use prost::Message;
use tokio::net::TcpListener;
use tonic::transport::Channel;
use tonic::Code;

fn nats_config(scratch: &Scratch) -> NatsConfig {
    NatsConfig {
        url: nats_url(),
        stream: scratch.stream.clone(),
        subject_prefix: scratch.subject_prefix.clone(),
        max_bytes: fogblast_testkit::TEST_STREAM_MAX_BYTES,
        public_max_bytes: Some(fogblast_testkit::TEST_STREAM_MAX_BYTES),
        ..NatsConfig::default()
    }
}

/// An atomic game white wins by blowing up black's king on move three.
fn blast(id: &str) -> GameFinished {
    let player = |id: &str| FinishedPlayer { id: id.to_owned(), name: id.to_owned(), ..Default::default() };
    GameFinished {
        game_id: id.to_owned(),
        variant: Variant::Atomic as i32,
        initial_fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".to_owned(),
        white: Some(player("alice")),
        black: Some(player("bob")),
        result: "1-0".to_owned(),
        reason: EndReason::Explosion as i32,
        moves: ["g1f3", "a7a6", "f3g5", "a6a5", "g5f7"].map(String::from).to_vec(),
        created_at_ms: 1_700_000_000_000,
        started_at_ms: 1_700_000_000_000,
        ended_at_ms: 1_700_000_060_000,
        ..Default::default()
    }
}

async fn start_rating(database_url: &str, bus: Arc<dyn EventBus>) -> RatingClient<Channel> {
    let settings =
        RatingSettings { database_url: database_url.to_owned(), consumer: "rating".to_owned(), ack_wait_ms: 2_000 };
    let config = RatingConfig { settings, ..RatingConfig::default() };
    let grpc = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let http = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", grpc.local_addr().unwrap());
    tokio::spawn(fogblast_rating::run(config, bus, grpc, http, std::future::pending()));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(client) = RatingClient::connect(addr.clone()).await {
            return client;
        }
        assert!(tokio::time::Instant::now() < deadline, "the rating service did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn archive_games(bus: &NatsBus, client: &mut RatingClient<Channel>, games: &[GameFinished]) {
    for game in games {
        let subject = "games.finished.atomic";
        bus.publish_durable(subject, &game.game_id, Vec::new(), Bytes::from(game.encode_to_vec())).await.unwrap();
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    for game in games {
        while client.get_game(GameRequest { game_id: game.game_id.clone() }).await.is_err() {
            assert!(tokio::time::Instant::now() < deadline, "game {} was not archived", game.game_id);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn ask(game: &str, requester: &str) -> AnalysisRequest {
    AnalysisRequest { game_id: game.to_owned(), requester: requester.to_owned() }
}

async fn wait_done(client: &mut RatingClient<Channel>, game: &str) -> GameAnalysis {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let analysis = client.get_analysis(GameRequest { game_id: game.to_owned() }).await.unwrap().into_inner();
        if analysis.state() != AnalysisState::Queued {
            return analysis;
        }
        assert!(tokio::time::Instant::now() < deadline, "game {game} was not analysed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_archived_game_is_analysed_once_judged_and_exported_with_evals() {
    let database = ScratchDatabase::create("analysis").await;
    let scratch = Scratch::new("analysis");
    let bus = NatsBus::connect(nats_config(&scratch)).await.unwrap();
    let mut client = start_rating(&database.url, Arc::new(bus.clone())).await;
    let games: Vec<GameFinished> = ["blast1", "blast2", "blast3", "blast4"].map(blast).to_vec();
    archive_games(&bus, &mut client, &games).await;

    // Refused: a game the archive does not hold, and a malformed id.
    let unknown = client.request_analysis(ask("nosuchgame", "10.0.0.1")).await.unwrap_err();
    assert_eq!(unknown.code(), Code::NotFound, "{unknown:?}");
    assert!(unknown.message().contains("still being played"), "{unknown:?}");
    let malformed = client.request_analysis(ask("../x", "10.0.0.1")).await.unwrap_err();
    assert_eq!(malformed.code(), Code::InvalidArgument, "{malformed:?}");
    let never = client.get_analysis(GameRequest { game_id: "blast1".into() }).await.unwrap_err();
    assert_eq!(never.code(), Code::NotFound, "{never:?}");

    // No engine yet, so requests wait: one address may wait for three.
    for game in ["blast1", "blast2", "blast3"] {
        let queued = client.request_analysis(ask(game, "10.0.0.9")).await.unwrap().into_inner();
        assert_eq!(queued.state(), AnalysisState::Queued);
    }
    let flood = client.request_analysis(ask("blast4", "10.0.0.9")).await.unwrap_err();
    assert_eq!(flood.code(), Code::ResourceExhausted, "{flood:?}");
    // Asking again for a game already requested is no new analysis.
    let again = client.request_analysis(ask("blast1", "10.0.0.9")).await.unwrap().into_inner();
    assert_eq!(again.state(), AnalysisState::Queued);

    let engine = EnginePool::start(nats_config(&scratch)).await;
    let analysis = wait_done(&mut client, "blast1").await;
    assert_eq!(analysis.state(), AnalysisState::Done, "{analysis:?}");
    assert_eq!(analysis.positions.len(), 6);
    assert_eq!(analysis.moves.len(), 5);
    let blast = &analysis.moves[4];
    assert_eq!((blast.uci.as_str(), blast.class(), blast.win_after), ("g5f7", MoveClass::Sound, 100.0));
    assert!(analysis.white_accuracy.is_some() && analysis.black_accuracy.is_some(), "{analysis:?}");
    assert_eq!(analysis.positions[4].mate, Some(1));

    let pgn = client.export_pgn(GameRequest { game_id: "blast1".into() }).await.unwrap().into_inner().pgn;
    let pgn = pgn.replace('\n', " ");
    assert!(pgn.contains("2... a5 { [%eval #1] } 3. Nxf7# 1-0"), "{pgn}");
    assert!(pgn.contains("1. Nf3 { [%eval "), "{pgn}");

    for game in ["blast2", "blast3"] {
        assert_eq!(wait_done(&mut client, game).await.state(), AnalysisState::Done);
    }
    // The requests done, the address may ask again.
    client.request_analysis(ask("blast4", "10.0.0.9")).await.unwrap();
    assert_eq!(wait_done(&mut client, "blast4").await.state(), AnalysisState::Done);
    let analysed: i64 = engine.analyses().await;
    assert_eq!(analysed, 4, "one analysis per game, however often asked");
    drop(engine);
    scratch.remove();
}

#[tokio::test]
async fn the_sqlite_archive_keeps_one_analysis_per_game_and_its_first_result() {
    let archive = Archive::connect("sqlite::memory:").await.unwrap();
    let first = archive.request_analysis("g1", "10.0.0.1", 1, 2).await.unwrap();
    assert!(matches!(first, Requested::New(ref stored) if stored.state == AnalysisState::Queued), "{first:?}");
    assert!(matches!(archive.request_analysis("g1", "10.0.0.2", 2, 2).await.unwrap(), Requested::Existing(_)));
    archive.request_analysis("g2", "10.0.0.1", 3, 2).await.unwrap();
    assert_eq!(archive.request_analysis("g3", "10.0.0.1", 4, 2).await.unwrap(), Requested::TooMany { max: 2 });

    let eval = |cp| PositionEval { cp: Some(cp), best: "e2e4".into(), ..Default::default() };
    let result =
        AnalysisFinished { game_id: "g1".into(), positions: vec![eval(20), eval(30)], depth: 8, ..Default::default() };
    assert!(archive.finish_analysis(&result, 10).await.unwrap());
    let second = AnalysisFinished { positions: vec![eval(-900)], ..result.clone() };
    assert!(!archive.finish_analysis(&second, 11).await.unwrap(), "a second result changes nothing");
    let stored = archive.analysis("g1").await.unwrap().unwrap();
    assert_eq!((stored.state, stored.depth, stored.positions), (AnalysisState::Done, 8, result.positions));
    let failed = AnalysisFinished { game_id: "g2".into(), error: "moves[3] is not legal".into(), ..Default::default() };
    assert!(archive.finish_analysis(&failed, 12).await.unwrap());
    assert_eq!(archive.analysis("g2").await.unwrap().unwrap().state, AnalysisState::Failed);
    // g1 and g2 no longer wait: the address may ask again.
    assert!(matches!(archive.request_analysis("g3", "10.0.0.1", 13, 2).await.unwrap(), Requested::New(_)));
}

/// An engine pool taking analyses from the queue, on its own runtime.
struct EnginePool {
    runtime: Option<tokio::runtime::Runtime>,
    metrics_addr: std::net::SocketAddr,
}

impl EnginePool {
    async fn start(nats: NatsConfig) -> EnginePool {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let mut config = EngineConfig::default();
        config.settings.workers = 1;
        config.settings.hash_mb = 1;
        config.analysis.analysis_depth = 4;
        let grpc = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let metrics = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let metrics_addr = metrics.local_addr().unwrap();
        let bus: Arc<dyn EventBus> = Arc::new(NatsBus::connect(nats).await.unwrap());
        runtime.spawn(async move {
            grpc.set_nonblocking(true).unwrap();
            metrics.set_nonblocking(true).unwrap();
            let (grpc, metrics) = (TcpListener::from_std(grpc).unwrap(), TcpListener::from_std(metrics).unwrap());
            let serve =
                fogblast_engine_service::run_with_analysis_queue(config, bus, grpc, metrics, std::future::pending());
            serve.await.unwrap();
        });
        EnginePool { runtime: Some(runtime), metrics_addr }
    }

    /// Analyses the pool finished, from its metrics.
    async fn analyses(&self) -> i64 {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(self.metrics_addr).await.unwrap();
        let request = format!("GET /metrics HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", self.metrics_addr);
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut page = String::new();
        stream.read_to_string(&mut page).await.unwrap();
        let line = page.lines().find(|l| l.starts_with("fogblast_engine_analyses_total{outcome=\"ok\"}")).unwrap();
        line.rsplit(' ').next().unwrap().parse().unwrap()
    }
}

impl Drop for EnginePool {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
