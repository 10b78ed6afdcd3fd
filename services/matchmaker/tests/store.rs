//! One behaviour suite for both matchmaker stores: `fogblast up` runs the
//! matchmaker on [`MemoryMatchStore`] and production on Redis, so both are
//! held to the same assertions, check-and-write by check-and-write.
//!
//! The Redis half needs Redis at `redis://127.0.0.1:6379` (or
//! `FOGBLAST_TEST_REDIS_URL`); each test uses a key prefix of its own and
//! removes its keys afterwards. The suite runs once more on a Redis Cluster
//! of six local `redis-server` processes started for it.

use std::future::Future;
use std::time::Duration;

use fogblast_matchmaker::store::{
    BoardRecord, Cleared, Fenced, Lock, PendingPairing, PlayerSeek, SeatPlan, SeekEntry, Stage,
};
use fogblast_matchmaker::{MatchStore, MemoryMatchStore};

fn redis_url() -> String {
    std::env::var("FOGBLAST_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned())
}

fn entry(player: &str, rating: u32) -> SeekEntry {
    SeekEntry { player: player.into(), name: format!("name of {player}"), rating, range: None, colors: String::new() }
}

fn seat(seek: &str, player: &str) -> SeatPlan {
    SeatPlan { seek: seek.into(), player: player.into(), name: player.into(), rating: 1500, waited_ms: 10 }
}

fn pairing(id: &str, white: (&str, &str), black: (&str, &str)) -> PendingPairing {
    PendingPairing {
        id: id.into(),
        white: seat(white.0, white.1),
        black: seat(black.0, black.1),
        paired_ms: 1,
        stage: Stage::New,
        game: String::new(),
        code: String::new(),
    }
}

fn board(game: &str, player: &str, expires_ms: u64) -> BoardRecord {
    BoardRecord {
        game: game.into(),
        code: format!("code-{game}"),
        variant: "atomic".into(),
        clock: Some((300_000, 2_000)),
        color: "random".into(),
        rated: true,
        player: player.into(),
        name: player.into(),
        rating: 1500,
        opened_ms: 1,
        expires_ms,
        address: String::new(),
    }
}

const TTL: Duration = Duration::from_secs(30);

async fn leases_fence_replicas(store: MatchStore) {
    let a = store.acquire_lease("atomic/5+3", "a", TTL).await.unwrap().expect("free lease");
    assert!(a.starts_with("a:"), "{a}");
    assert_eq!(store.acquire_lease("atomic/5+3", "a", TTL).await.unwrap(), Some(a.clone()), "own lease, same token");
    assert_eq!(store.acquire_lease("atomic/5+3", "b", TTL).await.unwrap(), None, "held by a");
    // A replica whose id starts like another's is not that replica.
    assert_eq!(store.acquire_lease("atomic/5+3", "", TTL).await.unwrap(), None);
    assert!(store.renew_lease("atomic/5+3", &a, TTL).await.unwrap());
    assert!(!store.renew_lease("atomic/5+3", "b:1", TTL).await.unwrap());
    store.release_lease("atomic/5+3", "b:1").await.unwrap();
    assert_eq!(store.acquire_lease("atomic/5+3", "b", TTL).await.unwrap(), None, "a wrong token releases nothing");
    store.release_lease("atomic/5+3", &a).await.unwrap();
    let b = store.acquire_lease("atomic/5+3", "b", TTL).await.unwrap().expect("released");
    assert!(b.starts_with("b:") && b != a, "{b} is a new fence after {a}");
    // The old holder is fenced out of everything that needs the lease.
    assert!(!store.renew_lease("atomic/5+3", &a, TTL).await.unwrap());
    assert!(store.begin_wave("atomic/5+3", &a).await.unwrap().is_none());
    let p = pairing("p1", ("s1", "x"), ("s2", "y"));
    assert_eq!(store.commit_pair("atomic/5+3", &a, &p).await.unwrap(), Fenced::Fenced);
    assert_eq!(store.update_pending("atomic/5+3", &a, "p1", None).await.unwrap(), Fenced::Fenced);

    // A lease runs out by itself, and the next one has a higher fence.
    let c = store.acquire_lease("fog/1+0", "c", Duration::from_millis(100)).await.unwrap().expect("free");
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(!store.renew_lease("fog/1+0", &c, TTL).await.unwrap(), "expired");
    let d = store.acquire_lease("fog/1+0", "d", TTL).await.unwrap().expect("free after expiry");
    let fence = |token: &str| token.rsplit(':').next().unwrap().parse::<u64>().unwrap();
    assert!(fence(&d) > fence(&c), "{d} after {c}");
}

async fn a_player_has_one_seek(store: MatchStore) {
    assert_eq!(
        store.player_seek("p", "s1", "atomic/5+3", "spec-a", false).await.unwrap(),
        PlayerSeek::New { old: None, colors: String::new() }
    );
    // The same spec again is the same seek ...
    assert_eq!(
        store.player_seek("p", "s2", "atomic/5+3", "spec-a", false).await.unwrap(),
        PlayerSeek::Same { seek: "s1".into(), pool: "atomic/5+3".into(), colors: String::new() }
    );
    // ... unless forced; another spec replaces it.
    assert_eq!(
        store.player_seek("p", "s2", "atomic/5+3", "spec-a", true).await.unwrap(),
        PlayerSeek::New { old: Some(("s1".into(), "atomic/5+3".into())), colors: String::new() }
    );
    store.push_color("p", true, 3).await.unwrap();
    assert_eq!(
        store.player_seek("p", "s3", "fog/1+0", "spec-b", false).await.unwrap(),
        PlayerSeek::New { old: Some(("s2".into(), "atomic/5+3".into())), colors: "w".into() }
    );
    // Clearing: only the named seek, or any.
    assert_eq!(store.clear_player_seek("p", Some("s2")).await.unwrap(), Cleared::Nothing);
    assert_eq!(
        store.clear_player_seek("p", Some("s3")).await.unwrap(),
        Cleared::Seek { seek: "s3".into(), pool: "fog/1+0".into() }
    );
    assert_eq!(store.clear_player_seek("p", None).await.unwrap(), Cleared::Nothing);
    assert_eq!(store.clear_player_seek("nobody", None).await.unwrap(), Cleared::Nothing);
    assert_eq!(store.colors("p").await.unwrap(), "w", "colours outlive the seek");
    store.player_seek("p", "s4", "fog/1+0", "spec-b", false).await.unwrap();
    assert_eq!(
        store.clear_player_seek("p", None).await.unwrap(),
        Cleared::Seek { seek: "s4".into(), pool: "fog/1+0".into() }
    );
}

async fn pairings_lock_players(store: MatchStore) {
    store.player_seek("p", "s1", "pool", "spec", false).await.unwrap();
    assert_eq!(store.lock_player("p", "s0", "pair-1", TTL).await.unwrap(), Lock::Stale, "not p's seek");
    assert_eq!(store.lock_player("q", "s1", "pair-1", TTL).await.unwrap(), Lock::Stale, "q has no seek");
    assert_eq!(store.lock_player("p", "s1", "pair-1", TTL).await.unwrap(), Lock::Ok);
    assert_eq!(store.lock_player("p", "s1", "pair-1", TTL).await.unwrap(), Lock::Ok, "the holder again");
    assert_eq!(store.lock_player("p", "s1", "pair-2", TTL).await.unwrap(), Lock::Busy);
    // While locked the player can neither seek nor cancel.
    assert_eq!(store.player_seek("p", "s9", "pool", "other", false).await.unwrap(), PlayerSeek::Busy);
    assert_eq!(store.clear_player_seek("p", None).await.unwrap(), Cleared::Busy);
    // Another pairing's unlock does nothing; the holder's consumes the seek.
    store.unlock_player("p", "pair-2", Some("s1")).await.unwrap();
    assert_eq!(store.lock_player("p", "s1", "pair-3", TTL).await.unwrap(), Lock::Busy);
    store.unlock_player("p", "pair-1", Some("s1")).await.unwrap();
    assert_eq!(store.lock_player("p", "s1", "pair-3", TTL).await.unwrap(), Lock::Stale, "the seek was consumed");
    assert_eq!(store.clear_player_seek("p", None).await.unwrap(), Cleared::Nothing);

    // An unlock without a consumed seek leaves the seek; a lock expires.
    store.player_seek("r", "t1", "pool", "spec", false).await.unwrap();
    assert_eq!(store.lock_player("r", "t1", "pair-4", TTL).await.unwrap(), Lock::Ok);
    store.unlock_player("r", "pair-4", None).await.unwrap();
    assert_eq!(store.lock_player("r", "t1", "pair-5", Duration::from_millis(100)).await.unwrap(), Lock::Ok);
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert_eq!(store.lock_player("r", "t1", "pair-6", TTL).await.unwrap(), Lock::Ok, "the old lock ran out");
}

async fn waves_see_the_pool_and_commit_once(store: MatchStore) {
    let pool = "standard/3+2";
    let token = store.acquire_lease(pool, "a", TTL).await.unwrap().unwrap();
    let before = store.now_ms().await.unwrap();
    let created = store.add_seek(pool, "s1", &entry("p1", 1500)).await.unwrap();
    assert!(created >= before, "the store's clock");
    assert!(store.has_seek(pool, "s1").await.unwrap());
    assert!(!store.has_seek(pool, "s2").await.unwrap());
    let status = store.pool_status(pool).await.unwrap();
    assert_eq!((status.seeks, status.pending, status.last_wave_ms), (1, 0, 0));

    let first = store.begin_wave(pool, &token).await.unwrap().expect("lease held");
    assert_eq!(first.wave, 1);
    assert_eq!(first.seeks.len(), 1);
    let seek = &first.seeks[0];
    assert_eq!((seek.id.as_str(), seek.joined_wave, seek.created_ms), ("s1", 0, created));
    assert_eq!(seek.entry, entry("p1", 1500));
    assert!(first.pending.is_empty() && first.unreadable.is_empty());

    store.add_seek(pool, "s2", &entry("p2", 1600)).await.unwrap();
    store.add_seek(pool, "s3", &entry("p3", 1700)).await.unwrap();
    let second = store.begin_wave(pool, &token).await.unwrap().unwrap();
    assert_eq!(second.wave, 2);
    let mut joined: Vec<(String, u64)> = second.seeks.iter().map(|s| (s.id.clone(), s.joined_wave)).collect();
    joined.sort();
    assert_eq!(joined, [("s1".into(), 0), ("s2".into(), 1), ("s3".into(), 1)]);
    let status = store.pool_status(pool).await.unwrap();
    assert_eq!(status.last_wave_ms, second.now_ms);
    assert!(status.now_ms >= second.now_ms);

    let pair = pairing("pair-1", ("s1", "p1"), ("s2", "p2"));
    assert_eq!(store.commit_pair(pool, &token, &pair).await.unwrap(), Fenced::Ok);
    assert_eq!(store.commit_pair(pool, &token, &pair).await.unwrap(), Fenced::Ok, "recorded already");
    assert!(!store.has_seek(pool, "s1").await.unwrap() && !store.has_seek(pool, "s2").await.unwrap());
    // A seek already taken cannot be paired again.
    let again = pairing("pair-2", ("s3", "p3"), ("s1", "p1"));
    assert_eq!(store.commit_pair(pool, &token, &again).await.unwrap(), Fenced::Gone);
    assert!(store.has_seek(pool, "s3").await.unwrap(), "a refused pairing takes nothing");
    assert_eq!(store.pending(pool, "pair-1").await.unwrap(), Some(pair.clone()));
    assert_eq!(store.pending(pool, "pair-2").await.unwrap(), None);

    let mut created_game = pair.clone();
    created_game.stage = Stage::Created;
    created_game.game = "g1".into();
    assert_eq!(store.update_pending(pool, &token, "pair-1", Some(&created_game)).await.unwrap(), Fenced::Ok);
    assert_eq!(store.pending(pool, "pair-1").await.unwrap(), Some(created_game.clone()));
    let third = store.begin_wave(pool, &token).await.unwrap().unwrap();
    assert_eq!(third.pending, [created_game]);
    assert_eq!(store.pool_status(pool).await.unwrap().pending, 1);
    assert_eq!(store.update_pending(pool, &token, "pair-1", None).await.unwrap(), Fenced::Ok);
    assert_eq!(store.update_pending(pool, &token, "pair-1", None).await.unwrap(), Fenced::Gone);
    assert_eq!(store.pending(pool, "pair-1").await.unwrap(), None);

    assert!(store.remove_seek(pool, "s3").await.unwrap());
    assert!(!store.remove_seek(pool, "s3").await.unwrap());
    let status = store.pool_status("never-seen").await.unwrap();
    assert_eq!((status.seeks, status.pending, status.last_wave_ms), (0, 0, 0));
}

async fn pools_and_replicas_come_and_go(store: MatchStore) {
    assert!(store.pools().await.unwrap().is_empty());
    store.pool_seen("b").await.unwrap();
    tokio::time::sleep(Duration::from_millis(5)).await;
    store.pool_seen("a").await.unwrap();
    assert_eq!(store.pools().await.unwrap(), ["b", "a"], "oldest first");
    assert!(!store.forget_pool("a", Duration::from_secs(60)).await.unwrap(), "seen just now");
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert!(store.forget_pool("a", Duration::from_millis(50)).await.unwrap());
    assert!(!store.forget_pool("a", Duration::from_millis(50)).await.unwrap(), "already forgotten");
    assert_eq!(store.pools().await.unwrap(), ["b"]);

    assert_eq!(store.heartbeat("r1", Duration::from_millis(200)).await.unwrap(), ["r1"]);
    assert_eq!(store.heartbeat("r2", TTL).await.unwrap(), ["r1", "r2"]);
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert_eq!(store.heartbeat("r2", TTL).await.unwrap(), ["r2"], "r1 stopped beating");
    store.heartbeat("r3", TTL).await.unwrap();
    store.leave("r2").await.unwrap();
    assert_eq!(store.heartbeat("r3", TTL).await.unwrap(), ["r3"]);
}

async fn colours_keep_the_newest(store: MatchStore) {
    assert_eq!(store.colors("p").await.unwrap(), "");
    for white in [true, true, false, true] {
        store.push_color("p", white, 3).await.unwrap();
    }
    assert_eq!(store.colors("p").await.unwrap(), "wbw", "newest first, three kept");
    store.push_color("p", false, 0).await.unwrap();
    assert_eq!(store.colors("p").await.unwrap(), "b", "at least one is kept");
}

async fn the_lobby_lists_and_closes_boards(store: MatchStore) {
    let (version, boards) = store.boards().await.unwrap();
    assert_eq!((version, boards.len()), (0, 0));
    store.open_board(&board("g1", "alice", 1_000)).await.unwrap();
    store.open_board(&board("g2", "alice", u64::MAX / 2)).await.unwrap();
    store.open_board(&board("g3", "bob", u64::MAX / 2)).await.unwrap();
    assert_eq!(store.bump_lobby_version().await.unwrap(), 1);
    assert_eq!(store.bump_lobby_version().await.unwrap(), 2);
    let (version, boards) = store.boards().await.unwrap();
    let mut games: Vec<&str> = boards.iter().map(|b| b.game.as_str()).collect();
    games.sort();
    assert_eq!((version, games), (2, vec!["g1", "g2", "g3"]));
    assert!(boards.contains(&board("g3", "bob", u64::MAX / 2)), "read back whole");

    // Only its owner closes a board by name; anyone without a name.
    assert_eq!(store.close_board("g3", Some("alice")).await.unwrap(), None);
    assert_eq!(store.close_board("g3", Some("bob")).await.unwrap(), Some(board("g3", "bob", u64::MAX / 2)));
    assert_eq!(store.close_board("g3", None).await.unwrap(), None, "gone");
    // The sweep takes what expired.
    assert_eq!(store.sweep_boards(5_000).await.unwrap(), 1);
    let (_, boards) = store.boards().await.unwrap();
    assert_eq!(boards, [board("g2", "alice", u64::MAX / 2)]);
    store.open_board(&board("g4", "alice", u64::MAX / 2)).await.unwrap();
    store.open_board(&board("g5", "bob", u64::MAX / 2)).await.unwrap();
    assert_eq!(store.close_player_boards("alice").await.unwrap(), 2);
    assert_eq!(store.close_player_boards("alice").await.unwrap(), 0);
    let (_, boards) = store.boards().await.unwrap();
    assert_eq!(boards, [board("g5", "bob", u64::MAX / 2)]);
}

/// A Redis store under a prefix of its own, whose keys go afterwards
/// whether the behaviour passed or not.
async fn on_redis<F, Fut>(behaviour: F)
where
    F: FnOnce(MatchStore) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let prefix = format!("test-mmstore-{:016x}:", rand::random::<u64>());
    let store = MatchStore::connect(&redis_url(), &prefix)
        .await
        .unwrap_or_else(|e| panic!("these tests need Redis at {}: {e}", redis_url()));
    let outcome = tokio::spawn(behaviour(store)).await;
    let client = redis::Client::open(redis_url()).unwrap();
    let mut connection = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg(format!("{prefix}*")).query_async(&mut connection).await.unwrap();
    if !keys.is_empty() {
        redis::cmd("DEL").arg(&keys).query_async::<i64>(&mut connection).await.unwrap();
    }
    if let Err(panicked) = outcome {
        std::panic::resume_unwind(panicked.into_panic());
    }
}

macro_rules! on_both_stores {
    ($($behaviour:ident),* $(,)?) => {
        mod memory {
            $(
                #[tokio::test]
                async fn $behaviour() {
                    let store = fogblast_matchmaker::MatchStore::new(std::sync::Arc::new(super::MemoryMatchStore::new()));
                    super::$behaviour(store).await;
                }
            )*
        }
        mod redis_store {
            $(
                #[tokio::test]
                async fn $behaviour() {
                    super::on_redis(super::$behaviour).await;
                }
            )*
        }
        // One cluster for the whole suite, each behaviour under its own prefix.
        mod redis_cluster {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn every_behaviour() {
                let cluster = fogblast_testkit::RedisCluster::start().await;
                $(
                    let prefix = format!("test-mm-cluster-{}:", stringify!($behaviour));
                    let store = fogblast_matchmaker::MatchStore::connect(&cluster.url(), &prefix).await.unwrap();
                    super::$behaviour(store).await;
                )*
            }
        }
    };
}

on_both_stores!(
    leases_fence_replicas,
    a_player_has_one_seek,
    pairings_lock_players,
    waves_see_the_pool_and_commit_once,
    pools_and_replicas_come_and_go,
    colours_keep_the_newest,
    the_lobby_lists_and_closes_boards,
);
