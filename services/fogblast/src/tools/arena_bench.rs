//! `fogblast-tools arena-bench`: one arena of many players (10,000 by
//! default) driven by the real tournament driver on the Redis at
//! `REDIS_URL`, in real time: every game it pairs is made at once
//! (pretended, no game service), ends after a few seconds of "play" with a
//! random result reported to the tournament as the finished-games consumer
//! reports it, and its players are paired again by the next wave.
//!
//! It prints the time of the first pairing wave over every player, the time
//! from a game's end (its result reported) to each of its players' next
//! game being told (p50, p99), the tournament changes told per second, and
//! the time to read the standings a gateway shows. It checks that nobody
//! was paired while in a game, that every result was counted once (the
//! standings' games equal the results reported), and removes its keys.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use fogblast_bus::{EventBus, MemoryBus};
use fogblast_matchmaker::tournament::commands::{view, Limits, Tournaments};
use fogblast_matchmaker::tournament::driver::Memory;
use fogblast_matchmaker::tournament::{
    Entrant, RedisTournamentStore, ReportedResult, TournamentRecord, TournamentStore,
};
use fogblast_matchmaker::PretendGames;
use fogblast_proto::notices::{player_notice::Notice, PlayerNotice, PLAYER_SUBJECT_PREFIX};
use futures::StreamExt;
use prost::Message;
use rand::{Rng, SeedableRng};
use tokio::sync::watch;

#[derive(Debug, clap::Args)]
pub struct ArenaBenchArgs {
    /// Players in the arena.
    #[arg(long, default_value_t = 10_000)]
    pub players: usize,
    /// How long the arena is driven, in seconds.
    #[arg(long, default_value_t = 30)]
    pub seconds: u64,
    /// A game lasts from this many ms to twice as long.
    #[arg(long, default_value_t = 3_000)]
    pub game_ms: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, env = "REDIS_URL", default_value = "redis://127.0.0.1:6379")]
    pub redis_url: String,
}

/// What the run saw, per player and per game.
#[derive(Default)]
struct Seen {
    /// When each player's last game's result was reported.
    ended: HashMap<String, Instant>,
    /// The game each player is in, by the notices.
    in_game: HashMap<String, String>,
    /// From a game's end to the next pairing of each of its players.
    next_game: Vec<Duration>,
    paired_while_playing: usize,
    games: HashSet<String>,
    reported: usize,
    /// Set once the run is over: no more results are reported.
    stopped: bool,
}

pub fn run(args: &ArenaBenchArgs) -> anyhow::Result<()> {
    ensure!(args.players >= 2, "an arena needs at least two players");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(async {
        let prefix = format!("bench-arena-{:08x}:", rand::random::<u32>());
        let result = one_run(args, &prefix).await;
        crate::matchmaker_bench::clean_up(&args.redis_url, &prefix).await;
        result
    })
}

async fn one_run(args: &ArenaBenchArgs, prefix: &str) -> anyhow::Result<()> {
    let store: Arc<dyn TournamentStore> = Arc::new(
        RedisTournamentStore::connect(&args.redis_url, prefix)
            .await
            .with_context(|| format!("connecting to {}", args.redis_url))?,
    );
    let bus: Arc<dyn EventBus> = Arc::new(MemoryBus::new());
    let tournaments = Arc::new(Tournaments::new(
        store.clone(),
        bus.clone(),
        Arc::new(PretendGames::default()),
        "bench",
        Limits::default(),
    ));
    let now = store.now_ms().await?;
    let record = TournamentRecord {
        id: "bench-arena".into(),
        name: "Bench Arena".into(),
        description: String::new(),
        variant: "atomic".into(),
        chess960: false,
        clock: (180_000, 0),
        rated: true,
        starts_ms: now,
        minutes: 120,
        system: Default::default(),
        rounds: 0,
        round_interval_s: 0,
        created_by: String::new(),
        created_ms: now,
    };
    ensure!(store.create(&record).await?, "the arena was made");
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.seed);
    let entrants: Vec<(String, Entrant)> = (0..args.players)
        .map(|i| {
            (
                format!("p{i}"),
                Entrant { name: format!("player {i}"), rating: rng.random_range(800..2800), joined_ms: now },
            )
        })
        .collect();
    futures::stream::iter(&entrants)
        .map(|(id, entrant)| store.join("bench-arena", id, entrant))
        .buffer_unordered(64)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;

    // The first wave alone, timed: every player free.
    let memory = Arc::new(Memory::default());
    let token = store.acquire("bench-arena", "bench", Duration::from_secs(30)).await?.context("the lease")?;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let listening = listen(bus.clone(), seen.clone(), store.clone(), args.game_ms).await?;
    let first = Instant::now();
    tournaments.drive_one("bench-arena", &token, &memory).await?;
    let first_wave = first.elapsed();
    store.release("bench-arena", &token).await?;

    // Then the arena in real time, under the driver's own loop.
    let changes = count_changes(bus.clone()).await?;
    let (stop_tx, stop) = watch::channel(false);
    let driver = tokio::spawn(tournaments.clone().drive(memory, stop));
    tokio::time::sleep(Duration::from_secs(args.seconds)).await;
    let _ = stop_tx.send(true);
    let _ = driver.await;
    listening.abort();
    let told = changes.load(std::sync::atomic::Ordering::Relaxed);
    // Results on their way to the store land before the standings are read.
    seen.lock().unwrap().stopped = true;
    tokio::time::sleep(Duration::from_millis(500)).await;

    let read = Instant::now();
    let snapshot = store.snapshot("bench-arena").await?.context("the arena")?;
    let shown = view(&snapshot, 1, 200, None);
    let read_time = read.elapsed();

    let seen = seen.lock().unwrap();
    let counted: usize = snapshot.standing.values().map(|s| s.sheet.entries.len()).sum();
    let results_counted = counted / 2;
    let mut next = seen.next_game.clone();
    next.sort();
    let at = |q: f64| next.get(((next.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or_default();
    println!("arena of {} players on Redis, {} s:", args.players, args.seconds);
    println!(
        "  first pairing wave over every player: {:.0} ms ({} games)",
        first_wave.as_secs_f64() * 1e3,
        args.players / 2
    );
    println!(
        "  game end to next game told: p50 {:.0} ms, p99 {:.0} ms over {} players re-paired",
        at(0.5).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        next.len()
    );
    println!("  games paired {}, results reported {}, counted {}", seen.games.len(), seen.reported, results_counted);
    println!("  tournament changes told: {:.1}/s", told as f64 / args.seconds as f64);
    println!(
        "  standings read (whole arena, top 200 shown): {:.0} ms, {} players",
        read_time.as_secs_f64() * 1e3,
        shown.players
    );
    ensure!(seen.paired_while_playing == 0, "{} players were paired while in a game", seen.paired_while_playing);
    ensure!(!next.is_empty(), "nobody was paired a second time");
    ensure!(
        results_counted <= seen.reported && results_counted + snapshot.results.len() >= seen.reported,
        "results: {} reported, {} counted, {} waiting",
        seen.reported,
        results_counted,
        snapshot.results.len()
    );
    Ok(())
}

/// Plays every game the driver tells of: after a while, a random result
/// is reported as the finished-games consumer would.
async fn listen(
    bus: Arc<dyn EventBus>,
    seen: Arc<Mutex<Seen>>,
    store: Arc<dyn TournamentStore>,
    game_ms: u64,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let mut notices = bus.subscribe(&format!("{PLAYER_SUBJECT_PREFIX}*")).await?;
    Ok(tokio::spawn(async move {
        while let Some(message) = notices.next().await {
            let player = message.subject.trim_start_matches(PLAYER_SUBJECT_PREFIX).to_owned();
            let Ok(PlayerNotice { notice: Some(Notice::Paired(paired)) }) =
                PlayerNotice::decode(message.payload.as_ref())
            else {
                continue;
            };
            let now = Instant::now();
            let new_game = {
                let mut seen = seen.lock().unwrap();
                if seen.in_game.get(&player).is_some_and(|g| g != &paired.game_id) {
                    seen.paired_while_playing += 1;
                }
                seen.in_game.insert(player.clone(), paired.game_id.clone());
                if let Some(ended) = seen.ended.remove(&player) {
                    seen.next_game.push(now - ended);
                }
                seen.games.insert(paired.game_id.clone())
            };
            if !new_game {
                continue;
            }
            let (seen, store) = (seen.clone(), store.clone());
            let white = player.clone();
            let black = paired.opponent.map(|o| o.player_id).unwrap_or_default();
            tokio::spawn(async move {
                let length = game_ms + rand::random::<u64>() % game_ms.max(1);
                tokio::time::sleep(Duration::from_millis(length)).await;
                let result = ["1-0", "0-1", "1/2-1/2"][rand::random::<u32>() as usize % 3];
                let plies = 20 + rand::random::<u32>() % 60;
                let reported = ReportedResult {
                    game: paired.game_id.clone(),
                    result: result.into(),
                    plies,
                    white_berserk: false,
                    black_berserk: false,
                };
                {
                    let mut seen = seen.lock().unwrap();
                    if seen.stopped {
                        return;
                    }
                    for player in [&white, &black] {
                        seen.in_game.remove(player);
                        seen.ended.insert(player.clone(), Instant::now());
                    }
                    seen.reported += 1;
                }
                let _ = store.report("bench-arena", &reported).await;
            });
        }
    }))
}

async fn count_changes(bus: Arc<dyn EventBus>) -> anyhow::Result<Arc<std::sync::atomic::AtomicUsize>> {
    let mut changes = bus.subscribe("tournament.bench-arena").await?;
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = count.clone();
    tokio::spawn(async move {
        while changes.next().await.is_some() {
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    });
    Ok(count)
}
