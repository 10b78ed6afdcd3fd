//! `fogblast-tools chaos`: the promise "never lose a move, never leak the fog,
//! rate exactly once", shown under load while processes die.
//!
//! It starts a whole deployment as child processes of the `fogblast` server
//! binary (the one beside this executable, or `--server-bin`) on
//! loopback (engine replicas, game shards, matchmakers, the rating service
//! and gateways) over the real Redis, NATS and Postgres, each under names
//! of the run's own (a key prefix, a stream and subject prefix, a fresh
//! database, all removed at the end). Bots then play through the gateways:
//! quick pairings, invite games, fog-of-war games, games against the
//! computer, and spectators. While they play, one process at a time is
//! killed with `SIGKILL` and started again (a game shard, a gateway, the
//! rating service, an engine replica), a shard is paused with `SIGSTOP`
//! past its lease and resumed (its sockets stay open), every shard is
//! restarted in turn as a Kubernetes rollout does (`SIGTERM`, back two
//! seconds later), a matchmaker is frozen with `SIGSTOP` while players move,
//! the other gateway is stopped with `SIGTERM` (it drains, telling its
//! clients to reconnect) and started again, the replies to game commits
//! are lost for a while (the processes reach Redis through a proxy that
//! cuts the connection instead of answering), and NATS (the run's own
//! server) is killed for `--nats-down-s` and started again.
//!
//! At the end every game is ended, read back from the archive and judged
//! (see `chaos/verdict.rs`), and the report gives moves per second and the
//! acknowledgement latency before, during and after each fault, and for
//! each fault that touches games the acknowledgement p50 and max of the
//! moves it held up. The command fails if any line of the verdict does.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{ensure, Context};
use fogblast_client::protocol::{
    ClientFrame, ColorChoice, Create, GameRef, Hello, Level, Opponent, Variant as ProtocolVariant,
};
use fogblast_client::Client;
use fogblast_rules::Variant;
use fogblast_topology::{Profile, Topology};
use sqlx::Connection;
use tokio::sync::watch;
use tokio::time::Instant;

pub(crate) mod bot;
mod deps;
pub mod procs;
pub(crate) mod verdict;

use bot::{Bot, Records, Role, Settings, Shared};
use procs::{Backends, Cluster, Layout};

#[derive(Debug, clap::Args)]
pub struct ChaosArgs {
    /// Bots seeking quick pairings (rated, through the matchmakers), in pools of two per variant.
    #[arg(long, default_value_t = 12)]
    seekers: usize,
    /// Bots creating invite games (standard or atomic) for the joiners.
    #[arg(long, default_value_t = 6)]
    creators: usize,
    /// Bots creating fog-of-war invite games for the joiners.
    #[arg(long, default_value_t = 6)]
    fog_creators: usize,
    /// Bots joining invite games by code [default: one per creator].
    #[arg(long)]
    joiners: Option<usize>,
    /// Bots playing the computer (easy, through the engine replicas).
    #[arg(long, default_value_t = 4)]
    computer: usize,
    /// Bots watching games, fog of war included.
    #[arg(long, default_value_t = 6)]
    spectators: usize,
    /// Think time before each move in ms: MIN-MAX (uniform), or one number.
    #[arg(long, default_value = "100-600")]
    think_ms: String,
    /// Plies after which the side to move resigns.
    #[arg(long, default_value_t = 80)]
    max_plies: usize,
    /// Seconds of play before the first fault, between faults, and after the last.
    #[arg(long, default_value_t = 10)]
    fault_gap_s: u64,
    /// Seconds a killed process stays down before it is started again.
    #[arg(long, default_value_t = 5)]
    down_s: u64,
    /// The game shards' lease; the paused shard stays stopped for twice this.
    #[arg(long, default_value_t = 1_500)]
    lease_ms: u64,
    /// How far a clock may be off what the bots' own times allow, beyond up to one second of lag compensation.
    #[arg(long, default_value_t = 250)]
    clock_tolerance_ms: u64,
    /// Skip the faults: the same load with nothing killed (a baseline).
    #[arg(long)]
    no_faults: bool,
    #[arg(long, env = "REDIS_URL", default_value = "redis://127.0.0.1:6379")]
    redis_url: String,
    /// Run on a Redis Cluster of the run's own (six local `redis-server` processes, three primaries with a
    /// replica each) instead of `--redis-url`; the fault of lost Redis replies becomes a primary killed.
    #[arg(long)]
    redis_cluster: bool,
    /// The `nats-server` binary: the run starts a NATS server of its own, so that it can stop it.
    #[arg(long, default_value = "nats-server")]
    nats_server_bin: PathBuf,
    /// Seconds NATS stays stopped in its fault.
    #[arg(long, default_value_t = 60)]
    nats_down_s: u64,
    /// A Postgres server: the run makes a database of its own there and drops it afterwards.
    #[arg(long, env = "FOGBLAST_CHAOS_POSTGRES", default_value = "postgres://postgres@127.0.0.1:5432")]
    postgres: String,
    /// Keep the processes' logs (in the temporary directory) even when the run passes.
    #[arg(long)]
    keep_logs: bool,
    /// Seed of the bots' choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The `fogblast` server binary the cluster runs [default: the one beside this executable].
    #[arg(long)]
    server_bin: Option<PathBuf>,
}

pub fn run(args: &ChaosArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(main(args))
}

/// A stretch of the run the report has a line for.
#[derive(Debug)]
struct Phase {
    name: String,
    start: Instant,
    end: Instant,
}

/// A fault of the schedule. The shard killed and the shard paused are
/// each the one that applied the most moves just before.
#[derive(Clone, Copy, Debug)]
enum Fault {
    KillShard,
    Kill(&'static str),
    /// `SIGTERM`: the gateway drains (`reconnect` to its clients), then starts again.
    Drain(&'static str),
    PauseShard,
    /// Every shard in turn: `SIGTERM`, exit, back two seconds later.
    RollShards,
    /// `SIGSTOP` for the down time, then `SIGCONT`: a hung dependency.
    Freeze(&'static str),
    /// For the down time, the replies to game commits are lost four times
    /// a second, each with the connection of the process that sent it.
    DropRedisAnswers,
    /// NATS killed (`SIGKILL`) for `--nats-down-s`, then started again.
    StopNats,
    /// On a cluster: the Redis primary holding the most keys killed
    /// (`SIGKILL`); its replica takes over its slots.
    KillRedisPrimary,
}

const SCHEDULE: [Fault; 10] = [
    Fault::KillShard,
    Fault::Kill("gateway-0"),
    Fault::Kill("rating"),
    Fault::Kill("engine-0"),
    Fault::PauseShard,
    Fault::RollShards,
    Fault::Freeze("matchmaker-0"),
    Fault::Drain("gateway-1"),
    Fault::DropRedisAnswers,
    Fault::StopNats,
];

/// A stretch in which a fault held up moves: the report gives the
/// acknowledgements of the moves in flight at its start or sent within it.
#[derive(Debug)]
struct Stall {
    what: String,
    start: Instant,
    end: Instant,
}

/// How long a shard replaced in a rolling restart stays away, as a pod
/// being replaced does.
const ROLL_GAP: Duration = Duration::from_secs(2);

/// The busiest shard since `before` (moves applied per shard), and its count.
/// The shard that applied the most moves since `moves_before`, after
/// printing what each applied.
async fn busiest_shard(cluster: &Cluster, moves_before: &[(usize, u64)], at_s: f64) -> Option<usize> {
    let now = cluster.shard_moves().await;
    let counts: Vec<String> = now
        .iter()
        .map(|&(j, n)| {
            let before = moves_before.iter().find(|(k, _)| *k == j).map_or(0, |(_, m)| *m);
            format!("{} {}", cluster.procs[j].name, n.saturating_sub(before))
        })
        .collect();
    println!("{at_s:>6.1}s  moves applied since the last fault: {}", counts.join(", "));
    busiest(moves_before, &now).map(|(i, _)| i)
}

fn busiest(before: &[(usize, u64)], now: &[(usize, u64)]) -> Option<(usize, u64)> {
    now.iter()
        .map(|&(i, moves)| (i, moves - before.iter().find(|(j, _)| *j == i).map_or(0, |(_, m)| *m).min(moves)))
        .max_by_key(|&(i, moves)| (moves, std::cmp::Reverse(i)))
}

async fn main(args: &ChaosArgs) -> anyhow::Result<()> {
    let think_ms = crate::loadtest::parse_think(&args.think_ms)?;
    // Before anything is made that would have to be removed again.
    let server_bin = crate::server_bin::locate(args.server_bin.as_deref())?;
    ensure!(args.lease_ms >= 300, "--lease-ms must be at least 300");
    let run = format!("{:08x}", rand::random::<u32>());
    let database = format!("fogblast_chaos_{run}");
    let mut admin = sqlx::PgConnection::connect(&format!("{}/postgres", args.postgres))
        .await
        .with_context(|| format!("connecting to {}", args.postgres))?;
    sqlx::query(&format!("CREATE DATABASE {database}")).execute(&mut admin).await?;
    let database_url = format!("{}/{database}", args.postgres);
    let log_dir = std::env::temp_dir().join(format!("fogblast-chaos-{run}"));
    std::fs::create_dir_all(&log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    let nats_bin = which(&args.nats_server_bin);
    let nats = deps::NatsServer::start(&nats_bin, &log_dir).await?;
    let redis = if args.redis_cluster {
        println!("starting a Redis Cluster of six nodes");
        deps::RedisDeps::Cluster(fogblast_testkit::RedisCluster::start().await)
    } else {
        let upstream = args.redis_url.trim_start_matches("redis://").trim_end_matches('/').to_owned();
        deps::RedisDeps::Proxy(fogblast_testkit::proxy::AnswerDropper::start(&upstream).await)
    };
    let mut deps = deps::Deps { nats, redis };
    let backends = Backends {
        redis_url: deps.redis.url(),
        redis_prefix: format!("fogblast-chaos-{run}:"),
        nats_url: deps.nats.url(),
        stream: format!("FOGBLAST_CHAOS_{}", run.to_uppercase()),
        subject_prefix: format!("chaos_{run}."),
    };
    let profile = Profile { lease_ms: Some(args.lease_ms), ..Profile::chaos() };
    let topology = Topology { engines: 2, shards: 3, matchmakers: 2, gateways: 2, rating: true, profile };
    let layout = Layout { topology, database_url, matchmaker_flags: Vec::new() };
    let outcome = match Cluster::plan(server_bin, backends.clone(), &layout, log_dir.clone()) {
        Ok(mut cluster) => {
            // SIGINT or SIGTERM ends the run early, but the cluster is
            // still stopped and everything the run made removed.
            let interrupted = crate::signals::shutdown_signal().context("installing signal handlers")?;
            let outcome = tokio::select! {
                outcome = scenario(args, think_ms, &mut cluster, &layout, &mut deps) => outcome,
                _ = interrupted => Err(anyhow::anyhow!("interrupted: stopping the cluster and removing the run's data")),
            };
            cluster.stop_all().await;
            outcome.map(|o| (o, cluster.troubles()))
        }
        Err(error) => Err(error),
    };
    let cleaned = clean_up(&backends).await;
    let dropped = sqlx::query(&format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)")).execute(&mut admin).await;
    let ((records, db, phases, fenced, stalls), troubles) = outcome?;
    if let Err(error) = cleaned {
        eprintln!("warning: the run's Redis keys or stream were not all deleted: {error:#}");
    }
    if let Err(error) = dropped {
        eprintln!("warning: database {database} was not dropped: {error}");
    }

    report(&records, &phases, &stalls, args.lease_ms);
    let lines = verdict::judge(&records, &db, &troubles, args.clock_tolerance_ms, fenced);
    println!();
    println!("verdict:");
    for line in &lines {
        println!("  {:<4} {}  ({})", if line.passed() { "PASS" } else { "FAIL" }, line.promise, line.checked);
        for failure in line.failures.iter().take(10) {
            println!("         {failure}");
        }
        if line.failures.len() > 10 {
            println!("         ... and {} more", line.failures.len() - 10);
        }
    }
    let failed = lines.iter().filter(|l| !l.passed()).count();
    if failed > 0 || args.keep_logs {
        println!("logs: {}", log_dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&log_dir);
    }
    ensure!(failed == 0, "{failed} verdict line(s) failed");
    ensure!(!records.acked.is_empty(), "no move was acknowledged");
    println!("chaos: every promise held");
    Ok(())
}

type Outcome = (Records, verdict::Database, Vec<Phase>, Option<bool>, Vec<Stall>);

async fn scenario(
    args: &ChaosArgs,
    think_ms: (u64, u64),
    cluster: &mut Cluster,
    layout: &Layout,
    deps: &mut deps::Deps,
) -> anyhow::Result<Outcome> {
    println!(
        "starting {} engine replicas, the rating service, {} game shards, {} matchmakers and {} gateways \
         (Redis prefix {}, stream {}, logs in {})",
        layout.topology.engines,
        layout.topology.shards,
        layout.topology.matchmakers,
        layout.topology.gateways,
        cluster.backends.redis_prefix,
        cluster.backends.stream,
        cluster.log_dir.display()
    );
    cluster.start_all().await?;
    let fog_computer = fog_computer_offered(&cluster.gateway_urls[0]).await?;
    println!(
        "fog-of-war computer games: {}",
        if fog_computer { "offered by the server, included" } else { "refused by the server, left out" }
    );
    let shared = Arc::new(Shared {
        urls: cluster.gateway_urls.clone(),
        settings: Settings { think_ms, max_plies: args.max_plies.max(2), fog_computer },
        records: Mutex::new(Records::default()),
        invites: Mutex::new(Default::default()),
        watchable: Mutex::new(Vec::new()),
    });
    let mut roles = Vec::new();
    let pools = [Variant::Atomic, Variant::Standard, Variant::Fog];
    roles.extend((0..args.seekers).map(|i| Role::Seeker(pools[(i / 2) % pools.len()])));
    roles.extend((0..args.creators).map(|_| Role::Creator { fog: false }));
    roles.extend((0..args.fog_creators).map(|_| Role::Creator { fog: true }));
    roles.extend((0..args.joiners.unwrap_or(args.creators + args.fog_creators)).map(|_| Role::Joiner));
    roles.extend((0..args.computer).map(|_| Role::Computer));
    roles.extend((0..args.spectators).map(|_| Role::Spectator));
    ensure!(!roles.is_empty(), "no bots: give some --seekers, --creators, --computer ...");
    println!(
        "{} bots: {} seekers, {} creators, {} fog creators, {} joiners, {} computer players, {} spectators; \
         think {}-{} ms",
        roles.len(),
        args.seekers,
        args.creators,
        args.fog_creators,
        args.joiners.unwrap_or(args.creators + args.fog_creators),
        args.computer,
        args.spectators,
        think_ms.0,
        think_ms.1
    );
    let (stop_tx, stop_rx) = watch::channel(false);
    let bots: Vec<_> = roles
        .into_iter()
        .enumerate()
        .map(|(i, role)| tokio::spawn(Bot::new(i, role, shared.clone(), args.seed).run(stop_rx.clone())))
        .collect();

    let gap = Duration::from_secs(args.fault_gap_s.max(1));
    let run_start = Instant::now();
    let elapsed = || run_start.elapsed().as_secs_f64();
    let mut phases = Vec::new();
    let mut fenced = None;
    let mut stalls = Vec::new();
    let mut moves_before = cluster.shard_moves().await;
    watch_over(cluster, &shared, gap).await;
    let on_cluster: Vec<Fault> = SCHEDULE
        .iter()
        .map(|fault| if matches!(fault, Fault::DropRedisAnswers) { Fault::KillRedisPrimary } else { *fault })
        .collect();
    let schedule: &[Fault] = match (args.no_faults, args.redis_cluster) {
        (true, _) => &[],
        (false, false) => &SCHEDULE,
        (false, true) => &on_cluster,
    };
    let (mut label, mut mark) = (if args.no_faults { "no faults" } else { "before the faults" }.to_owned(), run_start);
    for fault in schedule {
        let fault_at = Instant::now();
        phases.push(Phase { name: label, start: mark, end: fault_at });
        let name = match *fault {
            Fault::Kill(name) => {
                let i = cluster.index(name)?;
                kill_and_restart(cluster, &shared, i, args.down_s, elapsed()).await?;
                println!("{:>6.1}s  {name} started again and ready", elapsed());
                format!("kill -9 {name}")
            }
            Fault::Drain(name) => {
                let i = cluster.index(name)?;
                println!("{:>6.1}s  SIGTERM {name}", elapsed());
                cluster.terminate(i).await?;
                println!("{:>6.1}s  {name} drained and exited", elapsed());
                watch_over(cluster, &shared, Duration::from_secs(args.down_s)).await;
                cluster.spawn(i)?;
                cluster.wait_ready(i).await?;
                println!("{:>6.1}s  {name} started again and ready", elapsed());
                format!("SIGTERM {name}")
            }
            Fault::KillShard => {
                let i = busiest_shard(cluster, &moves_before, elapsed()).await.context("no shard to kill")?;
                let name = cluster.procs[i].name.clone();
                let lease = Duration::from_millis(args.lease_ms);
                stalls.push(Stall { what: "kill -9 of a shard".into(), start: fault_at, end: fault_at + lease });
                kill_and_restart(cluster, &shared, i, args.down_s, elapsed()).await?;
                println!("{:>6.1}s  {name} started again and ready", elapsed());
                format!("kill -9 {name}")
            }
            Fault::PauseShard => {
                let i = busiest_shard(cluster, &moves_before, elapsed()).await.context("no shard to pause")?;
                let name = cluster.procs[i].name.clone();
                println!("{:>6.1}s  SIGSTOP {name} for {} ms", elapsed(), 2 * args.lease_ms);
                let lease = Duration::from_millis(args.lease_ms);
                stalls.push(Stall { what: "SIGSTOP of a shard".into(), start: fault_at, end: fault_at + lease });
                let logged = cluster.log_len(i);
                cluster.pause(i)?;
                watch_over(cluster, &shared, Duration::from_millis(2 * args.lease_ms)).await;
                cluster.resume(i)?;
                println!("{:>6.1}s  SIGCONT {name}", elapsed());
                // The stale owner must notice it lost its lease, stop
                // serving, and come back under a new epoch.
                let deadline = Instant::now() + Duration::from_secs(10);
                let mut seen = false;
                while !seen && Instant::now() < deadline {
                    let text = cluster.log_since(i, logged);
                    seen = text.contains("lease lost") && text.contains("registered again");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                fenced = Some(seen);
                if let Some(refused) = cluster.metric(i, "fogblast_game_commit_conflicts_total").await {
                    println!(
                        "{:>6.1}s  {name} fenced itself: {seen}; commits it had refused so far: {refused}",
                        elapsed()
                    );
                }
                format!("SIGSTOP {name}")
            }
            Fault::RollShards => {
                let shards: Vec<usize> =
                    (0..cluster.procs.len()).filter(|&i| cluster.procs[i].kind == procs::Kind::Shard).collect();
                for &i in &shards {
                    let name = cluster.procs[i].name.clone();
                    println!("{:>6.1}s  SIGTERM {name} (rolling restart)", elapsed());
                    cluster.terminate(i).await?;
                    watch_over(cluster, &shared, ROLL_GAP).await;
                    cluster.spawn(i)?;
                    cluster.wait_ready(i).await?;
                    println!("{:>6.1}s  {name} back and ready", elapsed());
                }
                let what = format!("rolling restart of {} shards", shards.len());
                stalls.push(Stall { what: what.clone(), start: fault_at, end: Instant::now() });
                what
            }
            Fault::DropRedisAnswers => {
                println!("{:>6.1}s  losing Redis replies to commits for {} s", elapsed(), args.down_s);
                let before = deps.dropped_answers();
                let end = Instant::now() + Duration::from_secs(args.down_s);
                while Instant::now() < end {
                    deps.drop_next_commit_answer();
                    watch_over(cluster, &shared, Duration::from_millis(250)).await;
                }
                let lost = deps.dropped_answers() - before;
                println!("{:>6.1}s  {lost} commit replies lost", elapsed());
                let what = format!("{lost} Redis replies lost");
                stalls.push(Stall { what: what.clone(), start: fault_at, end: Instant::now() });
                what
            }
            Fault::KillRedisPrimary => {
                let deps::RedisDeps::Cluster(redis) = &mut deps.redis else {
                    anyhow::bail!("a Redis primary is killed only on a cluster");
                };
                let mut busiest = None;
                for port in redis.primaries().await {
                    let keys = redis.keys_on(port).await;
                    if busiest.is_none_or(|(_, most)| keys > most) {
                        busiest = Some((port, keys));
                    }
                }
                let (port, keys) = busiest.context("the cluster has no primary")?;
                println!("{:>6.1}s  SIGKILL redis primary on port {port} ({keys} keys)", elapsed());
                redis.kill(port);
                let deadline = Instant::now() + Duration::from_secs(30);
                loop {
                    watch_over(cluster, &shared, Duration::from_millis(250)).await;
                    let deps::RedisDeps::Cluster(redis) = &deps.redis else { unreachable!("checked above") };
                    let primaries = redis.primaries().await;
                    if primaries.len() == 3 && !primaries.contains(&port) {
                        break;
                    }
                    ensure!(Instant::now() < deadline, "no replica took over the killed Redis primary in 30 s");
                }
                println!("{:>6.1}s  a replica serves the killed primary's slots", elapsed());
                let what = "SIGKILL of a Redis primary".to_owned();
                stalls.push(Stall { what: what.clone(), start: fault_at, end: Instant::now() });
                what
            }
            Fault::StopNats => {
                println!("{:>6.1}s  SIGKILL nats for {} s", elapsed(), args.nats_down_s);
                deps.nats.kill();
                watch_over(cluster, &shared, Duration::from_secs(args.nats_down_s)).await;
                deps.nats.restart().await?;
                println!("{:>6.1}s  nats back", elapsed());
                "NATS stopped".to_owned()
            }
            Fault::Freeze(name) => {
                let i = cluster.index(name)?;
                println!("{:>6.1}s  SIGSTOP {name} for {} s", elapsed(), args.down_s);
                cluster.pause(i)?;
                watch_over(cluster, &shared, Duration::from_secs(args.down_s)).await;
                cluster.resume(i)?;
                println!("{:>6.1}s  SIGCONT {name}", elapsed());
                let what = format!("frozen {name}");
                stalls.push(Stall { what: what.clone(), start: fault_at, end: Instant::now() });
                what
            }
        };
        let back = Instant::now();
        phases.push(Phase { name: format!("during {name}"), start: fault_at, end: back });
        (label, mark) = (format!("after {name}"), back);
        moves_before = cluster.shard_moves().await;
        watch_over(cluster, &shared, gap).await;
    }
    phases.push(Phase { name: label, start: mark, end: Instant::now() });

    println!("stopping the bots: every game is ended");
    let _ = stop_tx.send(true);
    let deadline = Instant::now() + Duration::from_secs(60);
    for bot in bots {
        if tokio::time::timeout_at(deadline, bot).await.is_err() {
            shared.records().problem("a bot did not stop within 60 s", String::new());
        }
    }
    // Every game the bots were in must reach the archive.
    let wanted: Vec<String> = shared.records().games.keys().cloned().collect();
    let db_url = layout.database_url.clone();
    let deadline = Instant::now() + Duration::from_secs(60);
    let db = loop {
        let db = verdict::read_database(&db_url).await?;
        if wanted.iter().all(|id| db.games.contains_key(id)) || Instant::now() > deadline {
            break db;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    // How the rating service's consumer dealt with redeliveries after its kill.
    let rating = cluster.index("rating")?;
    let mut counts = Vec::new();
    for (what, name) in [
        ("archived", "fogblast_rating_games_archived_total"),
        ("rated", "fogblast_rating_games_rated_total"),
        ("redelivered and skipped", "fogblast_rating_duplicates_total"),
        ("failed", "fogblast_rating_failures_total"),
    ] {
        if let Some(n) = cluster.metric(rating, name).await {
            counts.push(format!("{what} {n}"));
        }
    }
    println!("rating service since its restart: {}", counts.join(", "));
    let records = std::mem::take(&mut *shared.records());
    Ok((records, db, phases, fenced, stalls))
}

async fn kill_and_restart(
    cluster: &mut Cluster,
    shared: &Shared,
    i: usize,
    down_s: u64,
    elapsed: f64,
) -> anyhow::Result<()> {
    println!("{elapsed:>6.1}s  kill -9 {}", cluster.procs[i].name);
    cluster.kill(i);
    watch_over(cluster, shared, Duration::from_secs(down_s)).await;
    cluster.spawn(i)?;
    cluster.wait_ready(i).await
}

/// Waits `span`, noting any process that exits by itself meanwhile.
async fn watch_over(cluster: &mut Cluster, shared: &Shared, span: Duration) {
    let end = Instant::now() + span;
    while Instant::now() < end {
        for name in cluster.reap() {
            shared.records().note(&format!("{name} exited by itself"));
            eprintln!("{name} exited by itself");
        }
        tokio::time::sleep(Duration::from_millis(100).min(end.saturating_duration_since(Instant::now()))).await;
    }
}

/// Whether the server takes a computer seat in fog of war: one `create`
/// asks, and the game is aborted at once if it was made.
async fn fog_computer_offered(url: &str) -> anyhow::Result<bool> {
    let mut client = Client::connect(url).await.context("connecting to a gateway")?;
    let limit = Duration::from_secs(15);
    client.hello(Hello { token: None, name: Some("chaos-probe".into()) }, limit).await?;
    let create = Create {
        variant: ProtocolVariant::Fog,
        color: ColorChoice::White,
        clock: None,
        opponent: Opponent::Computer,
        level: Some(Level::Easy),
        rated: None,
        chess960: None,
    };
    client.send_with_id(ClientFrame::Create(create), 1).await?;
    let answer = client
        .wait_for("answer to a fog-of-war computer game", limit, |f| {
            f.json()["id"] == 1 && matches!(f.kind(), "created" | "error")
        })
        .await?;
    let offered = answer.kind() == "created";
    if let (true, Some(game)) = (offered, answer.json()["game"].as_str()) {
        client.send(ClientFrame::Abort(GameRef { game: game.to_owned() })).await?;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    client.close(Duration::from_secs(2)).await;
    Ok(offered)
}

/// `bin` as found on the PATH (or in /usr/sbin, where Debian puts
/// nats-server), or as given.
fn which(bin: &std::path::Path) -> PathBuf {
    if bin.components().count() > 1 {
        return bin.to_owned();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
        .map(|dir| dir.join(bin))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| bin.to_owned())
}

/// Deletes the run's Redis keys (a cluster of the run's own goes with
/// them) and its stream.
pub(crate) async fn clean_up(backends: &Backends) -> anyhow::Result<()> {
    if backends.redis_url.starts_with("redis-cluster://") {
        return delete_stream(backends).await;
    }
    let client = redis::Client::open(backends.redis_url.as_str())?;
    let mut conn = client.get_multiplexed_async_connection().await?;
    let keys: Vec<String> =
        redis::cmd("KEYS").arg(format!("{}*", backends.redis_prefix)).query_async(&mut conn).await?;
    for chunk in keys.chunks(500) {
        let _: i64 = redis::cmd("UNLINK").arg(chunk).query_async(&mut conn).await?;
    }
    delete_stream(backends).await
}

async fn delete_stream(backends: &Backends) -> anyhow::Result<()> {
    let nats = async_nats::connect(backends.nats_url.as_str()).await?;
    let jetstream = async_nats::jetstream::new(nats);
    let _ = jetstream.delete_stream(&backends.stream).await;
    let _ = jetstream.delete_stream(fogblast_bus::public_stream(&backends.stream)).await;
    Ok(())
}

/// p50, p99 and max of some latencies.
pub(crate) fn percentiles(mut latencies: Vec<Duration>) -> (Duration, Duration, Duration) {
    if latencies.is_empty() {
        return Default::default();
    }
    latencies.sort();
    let at = |p: f64| latencies[((latencies.len() as f64 * p).ceil() as usize).clamp(1, latencies.len()) - 1];
    (at(0.5), at(0.99), latencies[latencies.len() - 1])
}

fn report(records: &Records, phases: &[Phase], stalls: &[Stall], lease_ms: u64) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!();
    println!("moves acknowledged and their latency (send to the mover's own move frame), by phase:");
    println!(
        "  {:<28} {:>7} {:>7} {:>8} {:>10} {:>10} {:>10}",
        "phase", "secs", "moves", "moves/s", "p50 ms", "p99 ms", "max ms"
    );
    for phase in phases {
        let latencies: Vec<Duration> =
            records.acks.iter().filter(|a| a.at >= phase.start && a.at < phase.end).map(|a| a.latency).collect();
        let secs = (phase.end - phase.start).as_secs_f64().max(1e-9);
        let n = latencies.len();
        let (p50, p99, max) = percentiles(latencies);
        println!(
            "  {:<28} {:>7.1} {:>7} {:>8.1} {:>10.1} {:>10.1} {:>10.1}",
            phase.name,
            secs,
            n,
            n as f64 / secs,
            ms(p50),
            ms(p99),
            ms(max)
        );
    }
    println!();
    println!(
        "moves held up by each fault (in flight at its start or sent during it; a shard's kill or SIGSTOP: within \
         a lease, {lease_ms} ms, after it), from send to acknowledgement:"
    );
    println!("  {:<32} {:>7} {:>10} {:>10} {:>14}", "fault", "moves", "p50 ms", "max ms", "over 1 s");
    for stall in stalls {
        let held: Vec<Duration> = records
            .acks
            .iter()
            .filter(|ack| {
                let sent = ack.at - ack.latency;
                ack.at >= stall.start && sent <= stall.end && sent + Duration::from_secs(5) >= stall.start
            })
            .map(|ack| ack.latency)
            .collect();
        let n = held.len();
        let over = held.iter().filter(|l| **l > Duration::from_secs(1)).count();
        let (p50, _, max) = percentiles(held);
        println!("  {:<32} {:>7} {:>10.1} {:>10.1} {:>14}", stall.what, n, ms(p50), ms(max), over);
    }
    let games = records.games.len();
    let fog = records.games.values().filter(|g| g.variant == Variant::Fog).count();
    let rated = records.games.values().filter(|g| g.rated).count();
    let computer = records.games.values().filter(|g| g.kind == "computer").count();
    let paired = records.games.values().filter(|g| g.kind == "quick pairing").count();
    println!(
        "games: {games} ({paired} quick pairings, {} invites, {computer} against the computer; {fog} fog of war, \
         {rated} rated); {} moves sent, {} acknowledged",
        games - paired - computer,
        records.moves_sent,
        records.acked.len()
    );
    let mut reasons: std::collections::BTreeMap<&str, usize> = Default::default();
    for (_, reason) in records.ends.values() {
        *reasons.entry(reason.as_str()).or_default() += 1;
    }
    let reasons: Vec<String> = reasons.iter().map(|(reason, n)| format!("{reason} {n}")).collect();
    println!("endings the players saw: {}", reasons.join(", "));
    let notes: Vec<String> = records.notes.iter().map(|(what, n)| format!("{what} {n}")).collect();
    println!("events: {}", if notes.is_empty() { "none".to_owned() } else { notes.join(", ") });
}
