//! `fogblast-tools arena-loadtest`: a whole arena played by bot players
//! through real processes. It starts a cluster of the `fogblast` binary
//! (a rating service on a fresh Postgres database, game shards, matchmakers
//! and gateways on Redis and NATS, each under names of the run's own),
//! creates an arena through lichess's tournament API, connects the players
//! over WebSockets spread over the gateways, each joining with its own
//! token, and lets them play every game the arena pairs them in until it
//! ends and their last games are over.
//!
//! Then it checks its work (see `verify`): every game the players saw end
//! is archived exactly as they saw it, no game of the arena went untold,
//! nobody sat in two games at once, and every player's score in the
//! arena's results equals the score recomputed from the archived games.
//! It prints the games, moves, the wait from a game's end to the next
//! pairing (p50, p99) and what went wrong by kind, and fails unless the
//! check passed. Everything the run made is removed at the end.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, ensure, Context};
use fogblast_client::{Http, Method};
use fogblast_topology::{Profile, Topology};
use sqlx::Connection as _;
use tokio::sync::{watch, Semaphore};
use tokio::time::Instant;

use crate::chaos::procs::{Backends, Cluster, Layout};

mod player;
mod verify;

use player::{PlayerReport, PlayerSpec, Settings, Shared};
use verify::ResultLine;

#[derive(Debug, clap::Args)]
pub struct ArenaLoadtestArgs {
    /// Bot players in the arena.
    #[arg(long, default_value_t = 2_000)]
    players: u32,
    /// The arena's length in minutes (the matchmaker is started allowing it).
    #[arg(long, default_value_t = 3)]
    minutes: u32,
    /// The arena's clock: initial minutes (lichess's `clockTime`, e.g. 0.5, 1, 3).
    #[arg(long, default_value = "1")]
    clock_minutes: String,
    /// The clock's increment in seconds.
    #[arg(long, default_value_t = 0)]
    increment_s: u32,
    /// The arena's variant, as lichess names it: atomic, fogOfWar, standard, atomic960.
    #[arg(long, default_value = "atomic")]
    variant: String,
    /// Think time before each move in ms: MIN-MAX (uniform), or one number.
    #[arg(long, default_value = "300-900")]
    think_ms: String,
    /// The side to move resigns at this many plies.
    #[arg(long, default_value_t = 120)]
    max_plies: usize,
    /// The share of players who go berserk in every game.
    #[arg(long, default_value_t = 0.1)]
    berserk_share: f64,
    /// Seconds from the arena's creation to its start, for every player to connect and join.
    #[arg(long, default_value_t = 45)]
    join_window_s: u64,
    #[arg(long, default_value_t = 2)]
    shards: usize,
    #[arg(long, default_value_t = 2)]
    gateways: usize,
    #[arg(long, default_value_t = 2)]
    matchmakers: usize,
    /// Connections and joins in flight at once.
    #[arg(long, default_value_t = 64)]
    handshakes: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The `fogblast` server binary [default: the one beside this executable].
    #[arg(long)]
    server_bin: Option<std::path::PathBuf>,
    #[arg(long, env = "REDIS_URL", default_value = "redis://127.0.0.1:6379")]
    redis_url: String,
    #[arg(long, env = "NATS_URL", default_value = "nats://127.0.0.1:4222")]
    nats_url: String,
    /// The Postgres server the run makes its archive database on.
    #[arg(long, env = "FOGBLAST_ARENA_LOADTEST_POSTGRES", default_value = "postgres://postgres@127.0.0.1:5432")]
    postgres: String,
}

pub fn run(args: &ArenaLoadtestArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(main(args))
}

async fn main(args: &ArenaLoadtestArgs) -> anyhow::Result<()> {
    ensure!(args.players >= 2, "an arena needs at least two players");
    ensure!(
        args.shards > 0 && args.gateways > 0 && args.matchmakers > 0,
        "a shard, a gateway and a matchmaker at least"
    );
    let settings = Settings {
        think_ms: crate::loadtest::parse_think(&args.think_ms)?,
        max_plies: args.max_plies.max(2),
        berserk_share: args.berserk_share,
    };
    check_file_limit(u64::from(args.players))?;
    let server_bin = crate::server_bin::locate(args.server_bin.as_deref())?;
    let run = format!("{:08x}", rand::random::<u32>());
    let database = format!("fogblast_arena_{run}");
    let mut admin = sqlx::PgConnection::connect(&format!("{}/postgres", args.postgres))
        .await
        .with_context(|| format!("connecting to {}", args.postgres))?;
    sqlx::query(&format!("CREATE DATABASE {database}")).execute(&mut admin).await?;
    let backends = Backends {
        redis_url: args.redis_url.clone(),
        redis_prefix: format!("fogblast-arena-{run}:"),
        nats_url: args.nats_url.clone(),
        stream: format!("FOGBLAST_ARENA_{}", run.to_uppercase()),
        subject_prefix: format!("arena_{run}."),
    };
    let layout = layout(args, format!("{}/{database}", args.postgres));
    let log_dir = std::env::temp_dir().join(format!("fogblast-arena-loadtest-{run}"));
    let outcome = match Cluster::plan(server_bin, backends.clone(), &layout, log_dir.clone()) {
        Ok(mut cluster) => {
            let interrupted = crate::signals::shutdown_signal().context("installing signal handlers")?;
            let outcome = tokio::select! {
                outcome = started(args, settings, &mut cluster) => outcome,
                _ = interrupted => Err(anyhow::anyhow!("interrupted: stopping the cluster and removing the run's data")),
            };
            cluster.stop_all().await;
            let troubles = cluster.troubles();
            outcome.and_then(|()| match troubles.is_empty() {
                true => Ok(()),
                false => Err(anyhow::anyhow!("the cluster's processes ended badly:\n{}", troubles.join("\n"))),
            })
        }
        Err(error) => Err(error),
    };
    if let Err(error) = crate::chaos::clean_up(&backends).await {
        eprintln!("warning: the run's Redis keys or streams were not all deleted: {error:#}");
    }
    let dropped = sqlx::query(&format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)")).execute(&mut admin).await;
    if let Err(error) = dropped {
        eprintln!("warning: database {database} was not dropped: {error}");
    }
    if outcome.is_err() {
        eprintln!("logs: {}", log_dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&log_dir);
    }
    outcome
}

/// The cluster: on the chaos run's profile (its gateways allow the run's
/// load from one address), its matchmakers allowing an arena of `--minutes`.
fn layout(args: &ArenaLoadtestArgs, database_url: String) -> Layout {
    let (shards, matchmakers, gateways) = (args.shards, args.matchmakers, args.gateways);
    let topology = Topology { engines: 0, shards, matchmakers, gateways, rating: true, profile: Profile::chaos() };
    let matchmaker_flags = vec![format!("--tournament-min-minutes={}", args.minutes.max(1))];
    Layout { topology, database_url, matchmaker_flags }
}

/// Starts the cluster, plays the arena and checks it.
async fn started(args: &ArenaLoadtestArgs, settings: Settings, cluster: &mut Cluster) -> anyhow::Result<()> {
    println!(
        "starting the cluster: {} shards, {} matchmakers, {} gateways",
        args.shards, args.matchmakers, args.gateways
    );
    cluster.start_all().await?;
    let ws_urls = cluster.gateway_urls.clone();
    let apis: Vec<Http> = ws_urls
        .iter()
        .map(|url| {
            Http::new(url.replace("ws://", "http://").trim_end_matches("/ws")).with_timeout(Duration::from_secs(30))
        })
        .collect();
    let http = apis[0].clone();
    let tournament = create_arena(args, &http).await?;
    println!("arena {tournament} made; {} players joining", args.players);
    let shared = Arc::new(Shared {
        settings,
        tournament: tournament.clone(),
        handshakes: Semaphore::new(args.handshakes.max(1)),
        troubles: Mutex::new(Default::default()),
    });
    let (finished_tx, finished_rx) = watch::channel(false);
    let players: Vec<_> = (0..args.players as usize)
        .map(|i| {
            let spec = PlayerSpec {
                ws_url: ws_urls[i % ws_urls.len()].clone(),
                http: apis[i % apis.len()].clone(),
                seed: args.seed.wrapping_mul(1_000_003).wrapping_add(i as u64),
            };
            tokio::spawn(player::run_player(spec, shared.clone(), finished_rx.clone()))
        })
        .collect();
    let began = Instant::now();
    let limit = Duration::from_secs(args.join_window_s + u64::from(args.minutes) * 60 + 600);
    wait_until_finished(&http, &tournament, limit).await?;
    let arena_time = began.elapsed();
    finished_tx.send_replace(true);
    let mut reports = Vec::new();
    for handle in players {
        reports.push(handle.await.context("a player's task failed")?);
    }
    report(&reports, &shared, arena_time);
    check(&http, &tournament, &reports, args.players).await
}

/// Makes the arena, starting once the join window has passed.
async fn create_arena(args: &ArenaLoadtestArgs, http: &Http) -> anyhow::Result<String> {
    let (status, welcome): (u16, serde_json::Value) = send_json(http, Method::POST, "/api/token", None).await?;
    ensure!(status == 200, "POST /api/token: status {status}: {welcome}");
    let token = welcome["access_token"].as_str().context("a token")?.to_owned();
    let starts_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_millis() as u64
        + args.join_window_s * 1000;
    let path = format!(
        "/api/tournament?name=Load%20arena&clockTime={}&clockIncrement={}&minutes={}&variant={}&rated=true&startDate={starts_ms}",
        args.clock_minutes, args.increment_s, args.minutes, args.variant
    );
    let (status, created) = send_json(http, Method::POST, &path, Some(&token)).await?;
    ensure!(status == 200, "POST /api/tournament: status {status}: {created}");
    Ok(created["id"].as_str().context("the arena's id")?.to_owned())
}

async fn send_json(
    http: &Http,
    method: Method,
    path: &str,
    token: Option<&str>,
) -> anyhow::Result<(u16, serde_json::Value)> {
    let answer = http.send(method, path, token, None).await.with_context(|| path.to_owned())?;
    Ok((answer.status, answer.json().unwrap_or(serde_json::Value::Null)))
}

/// Waits until the arena says it is finished, printing its progress.
async fn wait_until_finished(http: &Http, tournament: &str, limit: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + limit;
    let mut last_print = Instant::now();
    loop {
        let (status, arena): (u16, serde_json::Value) =
            http.get_json(&format!("/api/tournament/{tournament}")).await.unwrap_or((0, serde_json::Value::Null));
        if status == 200 && arena["isFinished"] == true {
            return Ok(());
        }
        if last_print.elapsed() >= Duration::from_secs(15) {
            println!(
                "arena: {} players, started {}, {} seconds to go",
                arena["nbPlayers"], arena["isStarted"], arena["secondsToFinish"]
            );
            last_print = Instant::now();
        }
        if Instant::now() > deadline {
            bail!("the arena did not finish within {limit:?}");
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// What the players did, printed.
fn report(reports: &[PlayerReport], shared: &Shared, arena_time: Duration) {
    let entered = reports.iter().filter(|r| r.id.is_some()).count();
    let games: usize = reports.iter().map(|r| r.games.len()).sum::<usize>() / 2;
    let moves: u64 = reports.iter().map(|r| r.moves).sum();
    let waits: Vec<Duration> = reports.iter().flat_map(|r| r.waits.iter().copied()).collect();
    let (p50, p99, max) = crate::chaos::percentiles(waits.clone());
    println!("players: {entered} of {} entered", reports.len());
    println!(
        "played: {games} games, {moves} moves in {:.0} s ({:.0} moves/s)",
        arena_time.as_secs_f64(),
        moves as f64 / arena_time.as_secs_f64().max(1.0)
    );
    println!(
        "game end to next pairing: p50 {} ms, p99 {} ms, max {} ms over {} waits",
        p50.as_millis(),
        p99.as_millis(),
        max.as_millis(),
        waits.len()
    );
    let troubles = shared.troubles.lock().unwrap_or_else(|e| e.into_inner());
    let listed: Vec<String> = troubles.iter().map(|(what, n)| format!("{what} ×{n}")).collect();
    println!("troubles: {}", if listed.is_empty() { "none".to_owned() } else { listed.join("; ") });
}

/// Reads the results and the archive and judges them.
async fn check(http: &Http, tournament: &str, reports: &[PlayerReport], players: u32) -> anyhow::Result<()> {
    let entered = reports.iter().filter(|r| r.id.is_some()).count();
    ensure!(
        entered == players as usize,
        "{} of {players} players never got into the arena",
        players as usize - entered
    );
    let archived = verify::read_archive(http, tournament, reports).await?;
    let answer = http.get(&format!("/api/tournament/{tournament}/results")).await?;
    ensure!(answer.status == 200, "results: status {}", answer.status);
    let results: Vec<ResultLine> = answer
        .text()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .context("reading the results")?;
    let verdict = verify::judge(reports, &archived, &results);
    verdict.print();
    ensure!(verdict.games > 0, "no game was played");
    ensure!(verdict.passed(), "the arena's games or scores do not match the archive");
    println!("the arena checks out");
    Ok(())
}

fn check_file_limit(sockets: u64) -> anyhow::Result<()> {
    let Some((soft, hard)) = crate::loadtest::open_file_limit() else { return Ok(()) };
    let needed = 2 * sockets + 200;
    ensure!(
        soft >= needed,
        "{sockets} players need about {needed} file descriptors, but this process may open only {soft} \
         (ulimit -n; the hard limit is {hard}): raise it with `ulimit -n {needed}` or use fewer --players"
    );
    Ok(())
}
