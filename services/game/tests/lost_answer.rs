//! The store failing the ways real ones do, under one shard.
//!
//! A commit whose answer is lost (the store applied it, but answered after
//! the client's timeout) is reported `UNAVAILABLE`, and the resent command
//! finds the move already played and commits nothing. The move's event
//! must reach the game's watchers all the same, at once, not with the
//! game's next commit: under load this showed as moves relayed tens of
//! seconds late, and games whose end frame never came.
//!
//! A slow read (a big game replayed, a busy store) serves a spectator
//! late, but never holds up the players' moves behind it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use fogblast_bus::MemoryBus;
use fogblast_game_service::GameConfig;
use fogblast_proto::game::game_client::GameClient;
use fogblast_proto::game::{
    ColorChoice, CreateGameRequest, CreateGameResponse, JoinGameRequest, MakeMoveRequest, Variant, WatchRequest,
};
use fogblast_proto::ids::{GameId, ShardId};
use fogblast_store::{
    Commit, CommitError, EventsAfter, GameStore, Member, Membership, MemoryStore, StoreError, StoredGame,
};
use tokio::net::TcpListener;
use tonic::transport::Channel;

/// The in-process store, except that it can lose the answer of a commit
/// and be slow to read a game.
#[derive(Debug, Default)]
struct LosingStore {
    inner: MemoryStore,
    lose_next_answer: AtomicBool,
    /// Every `load` takes this long.
    slow_loads_ms: std::sync::atomic::AtomicU64,
}

#[tonic::async_trait]
impl Membership for LosingStore {
    async fn register(&self, shard: &ShardId, addr: &str, ttl: Duration) -> Result<u64, StoreError> {
        self.inner.register(shard, addr, ttl).await
    }
    async fn renew(&self, shard: &ShardId, epoch: u64, ttl: Duration) -> Result<bool, StoreError> {
        self.inner.renew(shard, epoch, ttl).await
    }
    async fn deregister(&self, shard: &ShardId, epoch: u64) -> Result<(), StoreError> {
        self.inner.deregister(shard, epoch).await
    }
    async fn members(&self) -> Result<Vec<Member>, StoreError> {
        self.inner.members().await
    }
}

#[tonic::async_trait]
impl GameStore for LosingStore {
    async fn now_ms(&self) -> Result<u64, StoreError> {
        self.inner.now_ms().await
    }
    async fn load(&self, game: &GameId) -> Result<Option<StoredGame>, StoreError> {
        let slow = self.slow_loads_ms.load(Ordering::SeqCst);
        if slow > 0 {
            tokio::time::sleep(Duration::from_millis(slow)).await;
        }
        self.inner.load(game).await
    }
    async fn commit(&self, commit: Commit) -> Result<u64, CommitError> {
        let version = self.inner.commit(commit).await?;
        if self.lose_next_answer.swap(false, Ordering::SeqCst) {
            return Err(CommitError::Store(StoreError::new("redis: timed out")));
        }
        Ok(version)
    }
    async fn events_after(&self, game: &GameId, after_version: u64) -> Result<EventsAfter, StoreError> {
        self.inner.events_after(game, after_version).await
    }
    async fn due_games(&self, now_ms: u64, offset: usize, limit: usize) -> Result<Vec<(GameId, u64)>, StoreError> {
        self.inner.due_games(now_ms, offset, limit).await
    }
    async fn postpone(&self, game: &GameId, due_ms: u64, to_ms: u64) -> Result<bool, StoreError> {
        self.inner.postpone(game, due_ms, to_ms).await
    }
    async fn unpublished(&self, offset: usize, limit: usize) -> Result<Vec<GameId>, StoreError> {
        self.inner.unpublished(offset, limit).await
    }
    async fn mark_published(&self, game: &GameId) -> Result<(), StoreError> {
        self.inner.mark_published(game).await
    }
    async fn claim_code(&self, code: &str, game: &GameId, ttl: Duration) -> Result<bool, StoreError> {
        self.inner.claim_code(code, game, ttl).await
    }
    async fn resolve_code(&self, code: &str) -> Result<Option<GameId>, StoreError> {
        self.inner.resolve_code(code).await
    }
    async fn release_code(&self, code: &str) -> Result<(), StoreError> {
        self.inner.release_code(code).await
    }
}

/// One shard serving on `store`, and a game alice (white) created on it,
/// not yet joined.
async fn shard_with_a_game(store: Arc<LosingStore>) -> (GameClient<Channel>, CreateGameResponse) {
    let grpc = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let http = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", grpc.local_addr().unwrap());
    tokio::spawn(fogblast_game_service::run(
        GameConfig::default(),
        store.clone(),
        Arc::new(MemoryBus::new()),
        grpc,
        http,
        std::future::pending(),
    ));
    while store.members().await.unwrap().is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut client = GameClient::connect(addr).await.unwrap();
    let created = client
        .create_game(CreateGameRequest {
            player_id: "alice".into(),
            variant: Variant::Standard as i32,
            color: ColorChoice::ChooseWhite as i32,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    (client, created)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_whose_commit_answer_was_lost_still_reaches_the_watchers() {
    let store = Arc::new(LosingStore::default());
    let (mut client, created) = shard_with_a_game(store.clone()).await;
    let joined = client
        .join_game(JoinGameRequest { player_id: "bob".into(), code: created.code, ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    let game = created.game_id;
    let after_version = joined.state.unwrap().version;
    let mut events = client.watch(WatchRequest { game_id: game.clone(), after_version }).await.unwrap().into_inner();
    let play = |player: &str, uci: &str, ply: u32| {
        let mut client = client.clone();
        let request = MakeMoveRequest {
            game_id: game.clone(),
            player_id: player.into(),
            uci: uci.into(),
            ply,
            lag_ms: 0,
            waited_ms: 0,
        };
        async move { client.make_move(request).await }
    };
    let first = play("alice", "e2e4", 0).await.unwrap().into_inner().version;
    let seen = tokio::time::timeout(Duration::from_secs(5), events.message()).await.unwrap().unwrap().unwrap();
    assert_eq!(seen.version, first);

    store.lose_next_answer.store(true, Ordering::SeqCst);
    let lost = play("bob", "e7e5", 1).await.expect_err("the answer was lost");
    assert_eq!(lost.code(), tonic::Code::Unavailable, "{lost:?}");
    // The client sends it again: already played, nothing committed.
    let second = play("bob", "e7e5", 1).await.unwrap().into_inner().version;
    assert_eq!(second, first + 1);
    let seen = tokio::time::timeout(Duration::from_secs(5), events.message())
        .await
        .expect("the move's event reaches the watcher without another commit")
        .unwrap()
        .unwrap();
    assert_eq!(seen.version, second);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_spectator_read_does_not_hold_up_a_move() {
    let store = Arc::new(LosingStore::default());
    let (mut client, created) = shard_with_a_game(store.clone()).await;
    client
        .join_game(JoinGameRequest { player_id: "bob".into(), code: created.code, ..Default::default() })
        .await
        .unwrap();
    let game = created.game_id;

    // Reads of the game now take 800 ms; the shard holds the game itself.
    store.slow_loads_ms.store(800, Ordering::SeqCst);
    let mut spectator = client.clone();
    let request = fogblast_proto::game::GetStateRequest { game_id: game.clone(), player_id: String::new() };
    let read = tokio::spawn(async move { spectator.get_state(request).await });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let started = std::time::Instant::now();
    let request = MakeMoveRequest {
        game_id: game.clone(),
        player_id: "alice".into(),
        uci: "e2e4".into(),
        ply: 0,
        lag_ms: 0,
        waited_ms: 0,
    };
    client.make_move(request).await.expect("the move is played");
    let took = started.elapsed();
    assert!(took < Duration::from_millis(400), "the move did not wait for the spectator's read: {took:?}");
    let state = read.await.unwrap().expect("the spectator is served").into_inner();
    assert!(state.version > 0);
}
