//! The rating service against real Postgres and NATS JetStream (and the
//! same archive on SQLite): every finished game archived, every rated game
//! applied exactly once whatever the stream delivers twice, a service
//! killed in the middle of a batch losing and doubling nothing, and the
//! archive's queries and PGN export over gRPC.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use fogblast_bus::{EventBus, NatsBus, NatsConfig};
use fogblast_proto::events::{FinishedPlayer, GameFinished};
use fogblast_proto::game::{ClockSettings, EndReason, Variant};
use fogblast_proto::rating::rating_client::RatingClient;
use fogblast_proto::rating::{GameRequest, LeaderboardRequest, PlayerGamesRequest, ProfileRequest};
use fogblast_rating::{Applied, Archive, RatingConfig, RatingSettings};
use fogblast_testkit::{nats_url, Scratch, ScratchDatabase};
use prost::Message;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sqlx::Connection;
use tokio::net::TcpListener;

/// The bus settings of a test's own stream and subjects.
fn nats_config(scratch: &Scratch) -> NatsConfig {
    NatsConfig {
        url: nats_url(),
        stream: scratch.stream.clone(),
        subject_prefix: scratch.subject_prefix.clone(),
        max_bytes: fogblast_testkit::TEST_STREAM_MAX_BYTES,
        ..NatsConfig::default()
    }
}

fn player(id: &str) -> FinishedPlayer {
    // Players whose id starts with `b` went berserk, so the archive's
    // round trip carries the flag both ways.
    FinishedPlayer {
        id: id.to_owned(),
        name: format!("name-{id}"),
        computer: false,
        level: 0,
        berserk: id.starts_with('b'),
    }
}

fn finished(id: &str, white: &str, black: &str, result: &str, ended_ms: u64) -> GameFinished {
    GameFinished {
        game_id: id.to_owned(),
        variant: Variant::Atomic as i32,
        chess960: false,
        initial_fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".to_owned(),
        white: Some(player(white)),
        black: Some(player(black)),
        rated: true,
        result: result.to_owned(),
        reason: EndReason::Resign as i32,
        moves: vec!["e2e4".into(), "e7e5".into(), "g1f3".into()],
        clock_ms: vec![300_000, 299_000, 297_500],
        clock: Some(ClockSettings { initial_ms: 300_000, increment_ms: 2_000 }),
        final_fen: "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2".to_owned(),
        created_at_ms: ended_ms - 60_000,
        started_at_ms: ended_ms - 50_000,
        ended_at_ms: ended_ms,
        tournament_id: "arena-1".to_owned(),
    }
}

/// A rating service on its own runtime, so a test can kill it outright.
struct RatingProcess {
    runtime: Option<tokio::runtime::Runtime>,
    addr: String,
}

impl RatingProcess {
    async fn start(database_url: &str, nats: NatsConfig) -> RatingProcess {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let (addr_tx, addr_rx) = tokio::sync::oneshot::channel();
        let settings =
            RatingSettings { database_url: database_url.to_owned(), consumer: "rating".to_owned(), ack_wait_ms: 1_000 };
        let config = RatingConfig { settings, ..RatingConfig::default() };
        runtime.spawn(async move {
            let bus: Arc<dyn EventBus> = Arc::new(NatsBus::connect(nats).await.unwrap());
            let grpc = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let http = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let _ = addr_tx.send(format!("http://{}", grpc.local_addr().unwrap()));
            fogblast_rating::run(config, bus, grpc, http, std::future::pending()).await.unwrap();
        });
        let addr = addr_rx.await.unwrap();
        // Serving starts once the schema is migrated.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut client) = RatingClient::connect(addr.clone()).await {
                let request = LeaderboardRequest { variant: Variant::Standard as i32, limit: 1 };
                if client.get_leaderboard(request).await.is_ok() {
                    break;
                }
            }
            assert!(tokio::time::Instant::now() < deadline, "the rating service did not start");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        RatingProcess { runtime: Some(runtime), addr }
    }

    fn kill(mut self) {
        self.runtime.take().unwrap().shutdown_background();
    }
}

impl Drop for RatingProcess {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

async fn count(url: &str, sql: &str) -> i64 {
    let mut connection = sqlx::PgConnection::connect(url).await.unwrap();
    let (n,): (i64,) = sqlx::query_as(sql).fetch_one(&mut connection).await.unwrap();
    n
}

async fn wait_for_count(url: &str, sql: &str, expected: i64, limit: Duration) {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let n = count(url, sql).await;
        if n == expected {
            return;
        }
        assert!(n < expected, "{sql}: {n} is past {expected}");
        assert!(tokio::time::Instant::now() < deadline, "{sql}: {n}, not {expected}, within {limit:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn publish(bus: &dyn EventBus, game: &GameFinished, message_id: &str) {
    bus.publish_durable("games.finished.atomic", message_id, Vec::new(), Bytes::from(game.encode_to_vec()))
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_game_delivered_five_times_rates_once() {
    let database = ScratchDatabase::create("five").await;
    let scratch = Scratch::new("five");
    let nats = nats_config(&scratch);
    let bus = NatsBus::connect(nats.clone()).await.unwrap();
    let _service = RatingProcess::start(&database.url, nats).await;
    let game = finished("g5times", "alice", "bob", "1-0", 1_700_000_000_000);
    // The stream drops resends with the same id; these have new ids, as a
    // republish after the stream's window would.
    for attempt in 0..5 {
        publish(&bus, &game, &format!("g5times-{attempt}")).await;
    }
    publish(&bus, &finished("other", "carol", "dave", "0-1", 1_700_000_100_000), "other").await;
    wait_for_count(&database.url, "SELECT COUNT(*) FROM games", 2, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(count(&database.url, "SELECT COUNT(*) FROM rated_games").await, 2);
    assert_eq!(count(&database.url, "SELECT SUM(rated_games)::BIGINT FROM ratings").await, 4);
    assert_eq!(count(&database.url, "SELECT COUNT(*) FROM ratings WHERE player_id = 'alice' AND wins = 1").await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_killed_mid_batch_loses_and_doubles_nothing() {
    let database = ScratchDatabase::create("kill").await;
    let scratch = Scratch::new("kill");
    let nats = nats_config(&scratch);
    let bus = NatsBus::connect(nats.clone()).await.unwrap();
    let players = ["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"];
    let mut rng = StdRng::seed_from_u64(3);
    let mut games = Vec::new();
    for i in 0..300 {
        let white = players[rng.random_range(0..players.len())];
        let black = loop {
            let black = players[rng.random_range(0..players.len())];
            if black != white {
                break black;
            }
        };
        let result = ["1-0", "0-1", "1/2-1/2"][rng.random_range(0..3)];
        let mut game = finished(&format!("batch{i}"), white, black, result, 1_700_000_000_000 + i);
        // Every fifth game is casual: archived, not rated.
        game.rated = i % 5 != 0;
        games.push(game);
    }
    for game in &games {
        publish(&bus, game, &game.game_id).await;
    }
    let first = RatingProcess::start(&database.url, nats.clone()).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while count(&database.url, "SELECT COUNT(*) FROM games").await < 60 {
        assert!(tokio::time::Instant::now() < deadline, "the first service applied too little");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    first.kill();
    let applied_before_restart = count(&database.url, "SELECT COUNT(*) FROM games").await;
    assert!(applied_before_restart < 300, "killed after the whole batch; the test proves nothing");
    let _second = RatingProcess::start(&database.url, nats).await;
    wait_for_count(&database.url, "SELECT COUNT(*) FROM games", 300, Duration::from_secs(30)).await;
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let rated = games.iter().filter(|g| g.rated).count() as i64;
    assert_eq!(count(&database.url, "SELECT COUNT(*) FROM games").await, 300);
    assert_eq!(count(&database.url, "SELECT COUNT(*) FROM rated_games").await, rated);
    for name in players {
        let expected = games
            .iter()
            .filter(|g| g.rated)
            .filter(|g| g.white.as_ref().unwrap().id == name || g.black.as_ref().unwrap().id == name);
        let sql = format!("SELECT COALESCE(SUM(rated_games), 0)::BIGINT FROM ratings WHERE player_id = '{name}'");
        assert_eq!(count(&database.url, &sql).await, expected.count() as i64, "{name}'s rated games");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profiles_leaderboards_games_and_pgn_over_grpc() {
    let database = ScratchDatabase::create("grpc").await;
    let scratch = Scratch::new("grpc");
    let nats = nats_config(&scratch);
    let bus = NatsBus::connect(nats.clone()).await.unwrap();
    let service = RatingProcess::start(&database.url, nats).await;
    // Alice beats bob two games in three: after forty both settle, alice on
    // top. Glicko-2 depends on the order of a player's games, and the
    // service applies several games at once, so each game is published once
    // the one before it is in (as a player's games arrive in life).
    for i in 0..40 {
        let result = if i % 3 == 2 { "0-1" } else { "1-0" };
        let game = finished(&format!("lb{i:02}"), "alice", "bob", result, 1_700_000_000_000 + i * 1000);
        publish(&bus, &game, &game.game_id).await;
        wait_for_count(&database.url, "SELECT COUNT(*) FROM rated_games", i as i64 + 1, Duration::from_secs(10)).await;
    }
    let mut casual = finished("casual", "alice", "newbie", "0-1", 1_700_000_100_000);
    casual.rated = false;
    publish(&bus, &casual, "casual").await;
    wait_for_count(&database.url, "SELECT COUNT(*) FROM games", 41, Duration::from_secs(10)).await;
    let mut client = RatingClient::connect(service.addr.clone()).await.unwrap();

    let profile = client.get_profile(ProfileRequest { player_id: "alice".into() }).await.unwrap().into_inner();
    assert_eq!((profile.name.as_str(), profile.games), ("name-alice", 41));
    let atomic = &profile.ratings[0];
    assert_eq!((atomic.variant(), atomic.rated_games, atomic.wins, atomic.losses), (Variant::Atomic, 40, 27, 13));
    assert!(atomic.rating > 1500.0 && !atomic.provisional);

    let board = client
        .get_leaderboard(LeaderboardRequest { variant: Variant::Atomic as i32, limit: 10 })
        .await
        .unwrap()
        .into_inner();
    let names: Vec<&str> = board.entries.iter().map(|e| e.player_id.as_str()).collect();
    assert_eq!(names, ["alice", "bob"], "newbie is not rated at all");
    let empty = client.get_leaderboard(LeaderboardRequest { variant: Variant::Fog as i32, limit: 0 }).await.unwrap();
    assert!(empty.into_inner().entries.is_empty());

    let game = client.get_game(GameRequest { game_id: "lb06".into() }).await.unwrap().into_inner();
    assert_eq!(game.game.as_ref().unwrap().moves, ["e2e4", "e7e5", "g1f3"]);
    let change = game.white_rating.unwrap();
    assert!(change.after > change.before);
    assert!(client
        .get_game(GameRequest { game_id: "casual".into() })
        .await
        .unwrap()
        .into_inner()
        .white_rating
        .is_none());

    let mut seen = Vec::new();
    let mut token = String::new();
    loop {
        let page = client
            .list_player_games(PlayerGamesRequest { player_id: "alice".into(), page_size: 7, page_token: token })
            .await
            .unwrap()
            .into_inner();
        seen.extend(page.games.iter().map(|g| g.game.as_ref().unwrap().game_id.clone()));
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    assert_eq!(seen.len(), 41);
    assert_eq!(seen[0], "casual", "newest first");
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 41, "no game on two pages");

    let pgn = client.export_pgn(GameRequest { game_id: "lb03".into() }).await.unwrap().into_inner().pgn;
    assert!(pgn.contains("[Variant \"Atomic\"]"), "{pgn}");
    assert!(pgn.contains("[White \"name-alice\"]") && pgn.contains("[Result \"1-0\"]"), "{pgn}");
    assert!(pgn.contains("1. e4 { [%clk 0:05:00] } 1... e5 { [%clk 0:04:59] } 2. Nf3"), "{pgn}");

    for (status, code) in [
        (client.get_profile(ProfileRequest { player_id: "nobody".into() }).await.unwrap_err(), tonic::Code::NotFound),
        (client.get_game(GameRequest { game_id: "a b".into() }).await.unwrap_err(), tonic::Code::InvalidArgument),
        (
            client.get_leaderboard(LeaderboardRequest { variant: 0, limit: 5 }).await.unwrap_err(),
            tonic::Code::InvalidArgument,
        ),
        (
            client
                .list_player_games(PlayerGamesRequest {
                    player_id: "alice".into(),
                    page_size: 5,
                    page_token: "junk".into(),
                })
                .await
                .unwrap_err(),
            tonic::Code::InvalidArgument,
        ),
    ] {
        assert_eq!(status.code(), code, "{status:?}");
    }
}

#[tokio::test]
async fn the_sqlite_archive_applies_each_game_once() {
    let archive = Archive::connect("sqlite::memory:").await.unwrap();
    let game = finished("sq1", "alice", "bob", "1/2-1/2", 1_700_000_000_000);
    let Applied::Archived { changes: Some(changes) } = archive.apply(&game, 1_700_000_000_500).await.unwrap() else {
        panic!("a rated game moves ratings");
    };
    assert!(changes[0].after.deviation < changes[0].before.deviation);
    assert_eq!(archive.apply(&game, 1_700_000_000_600).await.unwrap(), Applied::Duplicate);
    let (name, ratings, games) = archive.profile("alice").await.unwrap().unwrap();
    assert_eq!((name.as_str(), games, ratings[0].rated_games, ratings[0].draws), ("name-alice", 1, 1, 1));
    let mut computer = finished("sq2", "alice", "", "1-0", 1_700_000_001_000);
    computer.black = Some(FinishedPlayer { computer: true, ..Default::default() });
    assert_eq!(archive.apply(&computer, 1_700_000_001_500).await.unwrap(), Applied::Archived { changes: None });
    let mut aborted = finished("sq3", "alice", "bob", "*", 1_700_000_002_000);
    aborted.reason = EndReason::Aborted as i32;
    assert_eq!(archive.apply(&aborted, 1_700_000_002_500).await.unwrap(), Applied::Archived { changes: None });
    let archived = archive.game("sq1").await.unwrap().unwrap();
    assert_eq!(archived.game.unwrap(), game);
    assert_eq!(archive.profile("alice").await.unwrap().unwrap().2, 3);
}

/// Deviation grows for the time between a player's games, not for the time
/// the service took to process them: a game processed a month late after an
/// outage moves ratings exactly as it would have live.
#[tokio::test]
async fn a_late_game_is_rated_as_when_it_was_played() {
    const DAY_MS: u64 = 24 * 60 * 60 * 1000;
    let t0 = 1_700_000_000_000;
    let first = finished("d1", "alice", "bob", "1-0", t0);
    let second = finished("d2", "alice", "bob", "0-1", t0 + 10 * DAY_MS);
    let changes = |applied: Applied| match applied {
        Applied::Archived { changes: Some(changes) } => changes,
        other => panic!("a rated game moves ratings: {other:?}"),
    };
    let live = Archive::connect("sqlite::memory:").await.unwrap();
    live.apply(&first, t0 as i64 + 500).await.unwrap();
    let on_time = changes(live.apply(&second, (t0 + 10 * DAY_MS) as i64 + 500).await.unwrap());
    let backlog = Archive::connect("sqlite::memory:").await.unwrap();
    backlog.apply(&first, (t0 + 40 * DAY_MS) as i64).await.unwrap();
    let late = changes(backlog.apply(&second, (t0 + 40 * DAY_MS) as i64 + 10).await.unwrap());
    for (a, b) in on_time.iter().zip(&late) {
        assert_eq!((a.before.rating, a.before.deviation), (b.before.rating, b.before.deviation), "{a:?} vs {b:?}");
        assert_eq!((a.after.rating, a.after.deviation), (b.after.rating, b.after.deviation));
    }
    assert!(on_time[0].before.deviation > 0.0);
}

/// A day of rated games among a few players, in the order they finished.
fn a_day_of_games(seed: u64) -> Vec<GameFinished> {
    const PLAYERS: [&str; 7] = ["ann", "ben", "cat", "dan", "eve", "fay", "gus"];
    let mut rng = StdRng::seed_from_u64(seed);
    let mut ended = 1_700_000_000_000u64;
    (0..90)
        .map(|i| {
            let white = rng.random_range(0..PLAYERS.len());
            let black = (white + rng.random_range(1..PLAYERS.len())) % PLAYERS.len();
            let result = ["1-0", "0-1", "1/2-1/2"][rng.random_range(0..3)];
            // Up to a quarter of an hour apart, so inactivity counts too.
            ended += rng.random_range(1_000..900_000);
            finished(&format!("day{i}"), PLAYERS[white], PLAYERS[black], result, ended)
        })
        .collect()
}

/// Every player's rating, deviation, volatility and record, exactly.
async fn ratings(archive: &Archive) -> Vec<(String, [u64; 3], [u32; 4])> {
    let mut all = Vec::new();
    for player in ["ann", "ben", "cat", "dan", "eve", "fay", "gus"] {
        let (_, variants, _) = archive.profile(player).await.unwrap().expect("the player has played");
        for v in variants {
            let exact = [v.rating.to_bits(), v.deviation.to_bits(), v.volatility.to_bits()];
            all.push((player.to_owned(), exact, [v.rated_games, v.wins, v.losses, v.draws]));
        }
    }
    all
}

/// Games arriving in any order, each twice, rate as they would have in
/// the order they finished: a game that comes after later games of its
/// players were rated is put in its place and the later ones rated again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ratings_follow_the_order_games_finished_in_not_the_order_they_arrive() {
    use rand::seq::SliceRandom;
    let day = a_day_of_games(11);
    let in_order = Archive::connect("sqlite::memory:").await.unwrap();
    for game in &day {
        in_order.apply(game, game.ended_at_ms as i64 + 100).await.unwrap();
    }
    let expected = ratings(&in_order).await;

    let database = ScratchDatabase::create("shuffled").await;
    let shuffled_sqlite = Archive::connect("sqlite::memory:").await.unwrap();
    let shuffled_postgres = Archive::connect(&database.url).await.unwrap();
    for (archive, seed) in [(&shuffled_sqlite, 1), (&shuffled_postgres, 2)] {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut arrivals: Vec<&GameFinished> = day.iter().chain(&day).collect();
        arrivals.shuffle(&mut rng);
        let late = day.last().unwrap().ended_at_ms as i64 + 3_600_000;
        let mut rated = 0;
        for game in arrivals {
            if matches!(archive.apply(game, late).await.unwrap(), Applied::Archived { .. }) {
                rated += 1;
            }
        }
        assert_eq!(rated, day.len(), "each game is applied once");
        assert_eq!(ratings(archive).await, expected, "shuffled (seed {seed}) rates as the finishing order");
    }
}
