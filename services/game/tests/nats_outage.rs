//! A NATS outage longer than a finished game's time to live loses no
//! finished game: the games that end while the stream is down wait in the
//! store's outbox, their keys kept past the time to live, and reach the
//! stream once it is back. The test runs a NATS server of its own on a
//! loopback port, kills it, and starts it again on the same store.

mod support;

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fogblast_bus::{ConsumerConfig, EventBus, NatsBus};
use fogblast_proto::events::GameFinished;
use fogblast_proto::game::command::Action;
use fogblast_proto::game::{Resign, Variant};
use fogblast_proto::ids::GameId;
use futures::StreamExt;
use prost::Message;
use support::{eventually, test_config, Backend, Router, ShardProcess};

/// A NATS server with JetStream on `port`, keeping its streams in `dir`.
fn nats_server(port: u16, dir: &std::path::Path) -> Child {
    nats_server_with(port, &["-js", "-sd", &dir.display().to_string()])
}

/// A NATS server on `port` started with `args`.
fn nats_server_with(port: u16, args: &[&str]) -> Child {
    let bin = ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .unwrap_or("nats-server");
    let mut child = Command::new(bin)
        .args(["-a", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("nats-server starts");
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return child;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("nats-server did not listen on {port}");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Stops the test's NATS server and removes its store, however the test ends.
struct OwnNats {
    child: Option<Child>,
    dir: std::path::PathBuf,
}

impl OwnNats {
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for OwnNats {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Tests make their streams side by side on one server, which reserves
/// each stream's bound out of its storage: eight of them fit a server
/// with 1 GiB (as on a machine with little free disk).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_streams_of_eight_tests_fit_a_server_with_one_gibibyte_of_storage() {
    let port = free_port();
    let dir = std::env::temp_dir().join(format!("fogblast-nats-small-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("nats.conf");
    let store = dir.join("store");
    std::fs::write(
        &config,
        format!("jetstream {{\n  store_dir: {:?}\n  max_file_store: 1GB\n}}\n", store.display().to_string()),
    )
    .unwrap();
    let _nats = OwnNats { child: Some(nats_server_with(port, &["-c", &config.display().to_string()])), dir };
    let url = format!("nats://127.0.0.1:{port}");
    let backends: Vec<Backend> = (0..8).map(|i| Backend::distributed_on(&format!("small-store-{i}"), &url)).collect();
    for backend in &backends {
        if let Err(refused) = NatsBus::connect(backend.nats_config()).await {
            panic!("a test stream is refused on a 1 GiB server: {refused:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_that_end_while_nats_is_down_past_their_time_to_live_are_all_published() {
    const TTL_MS: u64 = 1_000;
    let port = free_port();
    let dir = std::env::temp_dir().join(format!("fogblast-nats-outage-{}-{port}", std::process::id()));
    let mut nats = OwnNats { child: Some(nats_server(port, &dir)), dir: dir.clone() };
    let url = format!("nats://127.0.0.1:{port}");
    let backend = Backend::distributed_on("nats-outage", &url);
    let mut config = test_config();
    config.settings.finished_ttl_ms = TTL_MS;
    let shard = ShardProcess::start(&backend, "a", config).await;
    let router = Router::new(&backend).await;

    nats.kill();
    let mut ended = Vec::new();
    for i in 0..3 {
        let (game, _) = router.start_game(Variant::Atomic, &format!("w{i}"), &format!("b{i}"), None).await;
        let command = fogblast_proto::game::Command::new(game.clone(), format!("b{i}"), Action::Resign(Resign {}));
        router.execute(command).await.expect("black resigns");
        ended.push(game);
    }
    // Down for more than three times the time to live: the games are kept.
    tokio::time::sleep(Duration::from_millis(3 * TTL_MS + 500)).await;
    for game in &ended {
        assert!(router.store.load(&GameId::parse(game).unwrap()).await.unwrap().is_some(), "{game} kept");
    }
    assert_eq!(router.store.unpublished(0, 10).await.unwrap().len(), ended.len());

    nats.child = Some(nats_server(port, &dir));
    // Every one reaches the stream, once, and then leaves the outbox.
    eventually(Duration::from_secs(20), || async { router.store.unpublished(0, 10).await.unwrap().is_empty() }).await;
    let bus = NatsBus::connect(backend.nats_config()).await.expect("nats is back");
    let config = ConsumerConfig {
        name: "outage-check".into(),
        filter: "games.finished.>".into(),
        ack_wait: Duration::from_secs(30),
    };
    let mut deliveries = bus.consume_durable(config).await.expect("a consumer");
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    while let Ok(Some(delivery)) = tokio::time::timeout(Duration::from_secs(2), deliveries.next()).await {
        let delivery = delivery.expect("a delivery");
        let finished = GameFinished::decode(delivery.message().payload.as_ref()).expect("a GameFinished");
        *seen.entry(finished.game_id).or_default() += 1;
        delivery.ack().await.expect("ack");
    }
    let mut expected: Vec<String> = ended.clone();
    expected.sort();
    assert_eq!(seen.keys().cloned().collect::<Vec<_>>(), expected, "every game published");
    assert!(seen.values().all(|&n| n == 1), "each once: {seen:?}");
    // Published: now their time to live runs.
    tokio::time::sleep(Duration::from_millis(TTL_MS + 500)).await;
    assert!(router.store.load(&GameId::parse(&ended[0]).unwrap()).await.unwrap().is_none(), "expired once published");
    shard.stop().await;
}
