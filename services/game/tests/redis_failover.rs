//! Acknowledged moves survive the loss of the Redis primary when the store
//! waits for a replica (`Durability::Replicated`): a real primary and
//! replica on loopback, the replica reaching its primary through a proxy.
//! A burst of moves while the replica keeps up, more moves while its link
//! silently stops delivering (the proxy swallows the replication stream),
//! then the primary is killed (SIGKILL) and the replica promoted. Every
//! move the shard acknowledged is on the promoted replica; while the link
//! was dead nothing was acknowledged.

use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fogblast_bus::MemoryBus;
use fogblast_game_service::GameConfig;
use fogblast_proto::game::command::Action;
use fogblast_proto::game::game_client::GameClient;
use fogblast_proto::game::{ColorChoice, CreateGameRequest, GetStateRequest, JoinGameRequest, Move, Variant};
use fogblast_proto::ids::GameId;
use fogblast_store::{Durability, GameStore, Membership, RedisStore};
use fogblast_testkit::proxy::AnswerDropper;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::net::TcpListener;
use tonic::transport::Channel;

/// A `redis-server` of this test's own, killed when dropped.
struct RedisServer {
    child: Child,
    port: u16,
}

impl RedisServer {
    fn start(replica_of: Option<u16>) -> RedisServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut command = Command::new("redis-server");
        command.args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]);
        if let Some(primary) = replica_of {
            command.args(["--replicaof", "127.0.0.1", &primary.to_string()]);
        }
        let child = command.stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("redis-server is installed");
        RedisServer { child, port }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    async fn connection(&self) -> redis::aio::MultiplexedConnection {
        let client = redis::Client::open(self.url()).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut connection) = client.get_multiplexed_async_connection().await {
                if redis::cmd("PING").query_async::<String>(&mut connection).await.is_ok() {
                    return connection;
                }
            }
            assert!(Instant::now() < deadline, "redis on port {} did not start", self.port);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill").args([signal, &self.child.id().to_string()]).status().unwrap();
        assert!(status.success(), "kill {signal}");
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until the replica's link to its primary is up.
async fn linked(replica: &RedisServer) {
    let mut connection = replica.connection().await;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let info: String = redis::cmd("INFO").arg("replication").query_async(&mut connection).await.unwrap();
        if info.contains("master_link_status:up") {
            return;
        }
        assert!(Instant::now() < deadline, "the replica did not link: {info}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A primary, and its replica linked to it through a proxy that can stop
/// delivering the replication stream.
async fn primary_and_replica() -> (RedisServer, AnswerDropper, RedisServer) {
    let primary = RedisServer::start(None);
    primary.connection().await;
    let link = AnswerDropper::start(&format!("127.0.0.1:{}", primary.port)).await;
    let replica = RedisServer::start(Some(link.addr().port()));
    linked(&replica).await;
    (primary, link, replica)
}

/// Games of two players each, made on the shard.
async fn games(client: &mut GameClient<Channel>, n: usize) -> Vec<String> {
    let mut games = Vec::new();
    for i in 0..n {
        let created = client
            .create_game(CreateGameRequest {
                player_id: format!("w{i}"),
                variant: Variant::Atomic as i32,
                color: ColorChoice::ChooseWhite as i32,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        let join = JoinGameRequest { player_id: format!("b{i}"), code: created.code, ..Default::default() };
        client.join_game(join).await.unwrap();
        games.push(created.game_id);
    }
    games
}

/// One random legal move in game `i`; the version it was acknowledged at,
/// or `None` when it was refused.
async fn one_move(client: &mut GameClient<Channel>, game: &str, i: usize, rng: &mut StdRng) -> Option<u64> {
    let white = client
        .get_state(GetStateRequest { game_id: game.to_owned(), player_id: format!("w{i}") })
        .await
        .ok()?
        .into_inner();
    let (player, state) = if white.legal.is_empty() {
        let black = GetStateRequest { game_id: game.to_owned(), player_id: format!("b{i}") };
        (format!("b{i}"), client.get_state(black).await.ok()?.into_inner())
    } else {
        (format!("w{i}"), white)
    };
    if state.legal.is_empty() {
        return None;
    }
    let uci = state.legal[rng.random_range(0..state.legal.len())].clone();
    let action = Action::Move(Move { uci, ply: state.moves.len() as u32, ..Default::default() });
    client
        .execute(fogblast_proto::game::Command::new(game, player, action))
        .await
        .ok()
        .map(|answer| answer.into_inner().version)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_acknowledged_move_survives_a_failover_to_the_replica() {
    let (primary, link, replica) = primary_and_replica().await;

    let prefix = "failover:";
    let durability = Durability::Replicated { replicas: 1, timeout: Duration::from_millis(200) };
    let store = Arc::new(RedisStore::connect(&primary.url(), prefix).await.unwrap().with_durability(durability));
    let grpc = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let http = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", grpc.local_addr().unwrap());
    let shard_store: Arc<dyn GameStore> = store.clone();
    tokio::spawn(fogblast_game_service::run(
        GameConfig::default(),
        shard_store,
        Arc::new(MemoryBus::new()),
        grpc,
        http,
        std::future::pending(),
    ));
    while store.members().await.unwrap().is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut client = GameClient::connect(addr).await.unwrap();
    let games = games(&mut client, 6).await;
    let mut rng = StdRng::seed_from_u64(5);
    let mut acknowledged: HashMap<String, u64> = HashMap::new();

    // The replica keeps up: every move is acknowledged.
    let mut burst = 0;
    for round in 0..10 {
        for (i, game) in games.iter().enumerate() {
            if let Some(version) = one_move(&mut client, game, i, &mut rng).await {
                acknowledged.insert(game.clone(), version);
                burst += 1;
            }
        }
        assert!(burst > round * games.len() / 2, "moves are acknowledged while the replica keeps up");
    }

    // The replication link stops delivering: moves still reach the
    // primary, but none may be acknowledged, for the replica would not
    // have it.
    link.blackhole(true);
    let frozen = Instant::now();
    let mut while_frozen = 0;
    while frozen.elapsed() < Duration::from_millis(1_500) {
        for (i, game) in games.iter().enumerate() {
            if let Some(version) = one_move(&mut client, game, i, &mut rng).await {
                acknowledged.insert(game.clone(), version);
                while_frozen += 1;
            }
        }
    }

    // The primary dies; the replica is promoted with what it has.
    primary.signal("-KILL");
    let mut promote = replica.connection().await;
    redis::cmd("REPLICAOF").arg("NO").arg("ONE").query_async::<String>(&mut promote).await.unwrap();
    let promoted = RedisStore::connect(&replica.url(), prefix).await.unwrap();
    for (game, version) in &acknowledged {
        let stored = promoted.load(&GameId::parse(game).unwrap()).await.unwrap().expect("the game is on the replica");
        assert!(
            stored.version >= *version,
            "game {game}: acknowledged at {version}, the replica has {}",
            stored.version
        );
    }
    assert_eq!(while_frozen, 0, "a move was acknowledged that no replica confirmed");
    assert!(burst >= 30, "the burst was played: {burst} moves");
}

/// A shard's epoch fences out every older owner of its games, so no two
/// registrations may get the same one. The counter lives on the primary: a
/// registration its replica had not got could be handed out again after a
/// failover. With `Durability::Replicated`, a registration the replica
/// does not confirm is refused, and every epoch handed out before and
/// after the failover is new.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_epoch_is_handed_out_twice_across_a_failover() {
    let (primary, link, replica) = primary_and_replica().await;

    let prefix = "failover-epochs:";
    let durability = Durability::Replicated { replicas: 1, timeout: Duration::from_millis(200) };
    let store = RedisStore::connect(&primary.url(), prefix).await.unwrap().with_durability(durability);
    let shard = |i: usize| fogblast_proto::ids::ShardId::parse(&format!("shard-{i}")).unwrap();
    let ttl = Duration::from_secs(30);
    let mut handed_out = Vec::new();
    for i in 0..3 {
        handed_out.push(store.register(&shard(i), "http://127.0.0.1:1", ttl).await.expect("the replica keeps up"));
    }

    // The replication link stops delivering: a registration reaches the
    // primary but is not acknowledged.
    link.blackhole(true);
    for i in 3..5 {
        if let Ok(epoch) = store.register(&shard(i), "http://127.0.0.1:1", ttl).await {
            handed_out.push(epoch);
        }
    }

    primary.signal("-KILL");
    let mut promote = replica.connection().await;
    redis::cmd("REPLICAOF").arg("NO").arg("ONE").query_async::<String>(&mut promote).await.unwrap();
    let promoted = RedisStore::connect(&replica.url(), prefix).await.unwrap();
    for i in 5..8 {
        handed_out.push(promoted.register(&shard(i), "http://127.0.0.1:1", ttl).await.unwrap());
    }
    let mut unique = handed_out.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), handed_out.len(), "an epoch was handed out twice: {handed_out:?}");
    assert!(handed_out.windows(2).all(|w| w[0] < w[1]), "epochs went back: {handed_out:?}");
}

/// A shard that starts before its Redis replica has linked cannot have
/// its registration confirmed yet: it keeps trying, and serves once the
/// replica is there, instead of exiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shard_started_before_its_replica_registers_once_the_replica_links() {
    let primary = RedisServer::start(None);
    primary.connection().await;
    let durability = Durability::Replicated { replicas: 1, timeout: Duration::from_millis(200) };
    let store =
        Arc::new(RedisStore::connect(&primary.url(), "early-shard:").await.unwrap().with_durability(durability));
    let grpc = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let http = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let shard_store: Arc<dyn GameStore> = store.clone();
    let serving = tokio::spawn(fogblast_game_service::run(
        GameConfig::default(),
        shard_store,
        Arc::new(MemoryBus::new()),
        grpc,
        http,
        std::future::pending(),
    ));
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert!(!serving.is_finished(), "the shard gave up while the replica was not there yet");
    let replica = RedisServer::start(Some(primary.port));
    linked(&replica).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while store.members().await.unwrap().is_empty() {
        assert!(!serving.is_finished(), "the shard exited: {:?}", serving.await);
        assert!(Instant::now() < deadline, "the shard never registered once the replica linked");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
