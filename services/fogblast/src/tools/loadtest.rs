//! `fogblast-tools loadtest`: many pairs of bots playing random legal moves
//! through one or more gateways, to measure what a deployment holds:
//! connections, moves per second, and the relay latency of a move from
//! the mover's send to the opponent's receipt. It checks its own work at
//! the end: every game's move list, read back from the server, must be
//! exactly the moves the bots made and had acknowledged, or the command
//! fails.
//!
//! With `--spawn` it starts a local cluster first (shards and gateways as
//! child processes of the `fogblast` server binary, on Redis and NATS) and stops it
//! afterwards; otherwise it drives the gateways named by `--gateways`,
//! whose per-address limits must then allow the load.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, ensure, Context};
use fogblast_client::Http;
use fogblast_rules::Variant;
use fogblast_topology::{Profile, Topology};
use tokio::sync::{watch, Semaphore};
use tokio::time::{sleep_until, Instant};

mod bot;
mod cluster;
mod stats;
mod verify;

use bot::{PairSpec, PlayedGame, Settings, Shared};
use cluster::{Cluster, ClusterSpec};
use stats::Stats;

#[derive(Debug, clap::Args)]
pub struct LoadtestArgs {
    /// The gateways' WebSocket URLs (ws://host:port/ws), comma separated.
    #[arg(long, value_delimiter = ',', required_unless_present = "spawn", conflicts_with = "spawn")]
    gateways: Vec<String>,
    /// Start a local cluster (game shards and gateways, as child processes of the `fogblast` binary) and drive it.
    #[arg(long)]
    spawn: bool,
    /// With --spawn: the `fogblast` server binary [default: the one beside this executable].
    #[arg(long)]
    server_bin: Option<PathBuf>,
    /// With --spawn: game shards to start.
    #[arg(long, default_value_t = 2)]
    spawn_shards: u32,
    /// With --spawn: gateways to start.
    #[arg(long, default_value_t = 2)]
    spawn_gateways: u32,
    /// With --spawn: the Redis the cluster keeps games in (under a fresh key prefix, deleted afterwards).
    #[arg(long, env = "REDIS_URL", default_value = "redis://127.0.0.1:6379")]
    redis_url: String,
    /// With --spawn: the NATS server of the cluster's event bus (a fresh JetStream stream, deleted afterwards).
    #[arg(long, env = "NATS_URL", default_value = "nats://127.0.0.1:4222")]
    nats_url: String,
    /// With --spawn: no NATS; each process uses an in-process event bus.
    #[arg(long)]
    no_nats: bool,
    /// Idle connections besides the pairs: each says hello and holds its socket, as a player on the home page
    /// does; spread over the gateways. The report gives each spawned gateway's resident memory per socket.
    #[arg(long, default_value_t = 0)]
    idle: u32,
    /// Pairs of bots; each pair holds two connections.
    #[arg(long, default_value_t = 100)]
    pairs: u32,
    /// Plies after which the side to move resigns and the pair starts a new game.
    #[arg(long, default_value_t = 100)]
    moves_per_game: usize,
    /// Think time before each move in ms: MIN-MAX (uniform), or one number.
    #[arg(long, default_value = "0-100")]
    think_ms: String,
    /// Aim at this many moves per second in all: each pair thinks pairs/rate seconds on average (±50%). Overrides --think-ms.
    #[arg(long)]
    rate: Option<f64>,
    /// Seconds of measured play, counted from when every pair has connected.
    #[arg(long, default_value_t = 30)]
    duration_s: u64,
    /// New connections per second while ramping up.
    #[arg(long, default_value_t = 1000)]
    connect_rate: u32,
    /// Handshakes (connect, hello, welcome) in flight at once.
    #[arg(long, default_value_t = 200)]
    handshakes: usize,
    /// Variant of each game: standard, atomic, fog, or mixed (each game one of the three at random).
    #[arg(long, default_value = "mixed")]
    variant: String,
    /// Clock of each game: none, MINUTES+SECONDS (e.g. 5+3), or mixed (none or 10+5 at random).
    #[arg(long, default_value = "mixed")]
    clock: String,
    /// Where a pair's two bots connect: both to one gateway (same), or to two different ones (cross), so that every move crosses from one gateway to another.
    #[arg(long, value_enum, default_value_t = Placement::Cross)]
    placement: Placement,
    /// Seconds between progress lines (0: none).
    #[arg(long, default_value_t = 5)]
    report_every_s: u64,
    /// Do not read the games back at the end: for `fogblast-tools relay-server`, which keeps none. Each move is still
    /// checked as the bots play (acknowledged once, relayed once, legal by their own rules).
    #[arg(long)]
    no_verify: bool,
    /// Game reads in flight while verifying.
    #[arg(long, default_value_t = 32)]
    verify_concurrency: usize,
    /// Seed of the bots' choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Placement {
    Same,
    Cross,
}

pub fn run(args: &LoadtestArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(main(args))
}

async fn main(args: &LoadtestArgs) -> anyhow::Result<()> {
    let settings = settings(args)?;
    ensure!(args.pairs > 0, "--pairs must be at least 1");
    ensure!(args.connect_rate > 0 && args.handshakes > 0, "--connect-rate and --handshakes must be at least 1");
    check_file_limit("this process", 2 * u64::from(args.pairs) + u64::from(args.idle))?;
    let mut cluster = None;
    let urls = if args.spawn {
        ensure!(args.spawn_shards > 0 && args.spawn_gateways > 0, "--spawn needs a shard and a gateway at least");
        // With cross placement each gateway holds two connections per pair
        // it is first for; either way 2 × pairs / gateways.
        check_file_limit(
            "each gateway",
            (2 * u64::from(args.pairs) + u64::from(args.idle)).div_ceil(u64::from(args.spawn_gateways)),
        )?;
        // Finished games must outlive the run, for the verification.
        let profile = Profile { finished_ttl_ms: Some((args.duration_s + 3600) * 1000), ..Profile::load() };
        let (shards, gateways) = (args.spawn_shards as usize, args.spawn_gateways as usize);
        let spec = ClusterSpec {
            topology: Topology { shards, gateways, ..Topology::new(profile) },
            redis_url: args.redis_url.clone(),
            nats_url: (!args.no_nats).then(|| args.nats_url.clone()),
            server_bin: crate::server_bin::locate(args.server_bin.as_deref())?,
        };
        println!(
            "starting {} game shard(s) and {} gateway(s) on {}{}",
            shards,
            gateways,
            spec.redis_url,
            spec.nats_url.as_ref().map_or(" with in-process buses".to_owned(), |url| format!(" and {url}"))
        );
        let started = cluster.insert(Cluster::start(&spec).await?);
        println!("cluster ready; logs in {}", started.log_dir.display());
        started.gateway_urls.clone()
    } else {
        args.gateways.clone()
    };
    let result = drive(args, settings, &urls, cluster.as_ref()).await;
    if let Some(mut cluster) = cluster {
        cluster.stop();
        if let Err(error) = cluster.clean_up().await {
            eprintln!("warning: the run's data was not all deleted: {error:#}");
        }
    }
    result
}

fn settings(args: &LoadtestArgs) -> anyhow::Result<Settings> {
    let think_ms = match args.rate {
        Some(rate) => {
            ensure!(rate > 0.0, "--rate must be positive");
            let mean = f64::from(args.pairs) / rate * 1000.0;
            ((mean * 0.5) as u64, (mean * 1.5) as u64)
        }
        None => parse_think(&args.think_ms)?,
    };
    Ok(Settings {
        moves_per_game: args.moves_per_game.max(1),
        think_ms,
        variants: parse_variants(&args.variant)?,
        clocks: parse_clocks(&args.clock)?,
        connect_attempts: 3,
    })
}

pub(crate) fn parse_think(text: &str) -> anyhow::Result<(u64, u64)> {
    let parsed = match text.split_once('-') {
        Some((low, high)) => (low.trim().parse()?, high.trim().parse()?),
        None => {
            let exact = text.trim().parse()?;
            (exact, exact)
        }
    };
    ensure!(parsed.0 <= parsed.1, "--think-ms {text}: the least is more than the most");
    Ok(parsed)
}

fn parse_variants(text: &str) -> anyhow::Result<Vec<Variant>> {
    if text == "mixed" {
        return Ok(Variant::ALL.to_vec());
    }
    Ok(vec![text.parse()?])
}

fn parse_clocks(text: &str) -> anyhow::Result<Vec<Option<(u32, u32)>>> {
    match text {
        "none" => Ok(vec![None]),
        "mixed" => Ok(vec![None, Some((600_000, 5_000))]),
        _ => {
            let (minutes, seconds) = text
                .split_once('+')
                .with_context(|| format!("--clock {text}: expected none, mixed or MINUTES+SECONDS"))?;
            let minutes: u32 = minutes.trim().parse()?;
            let seconds: u32 = seconds.trim().parse()?;
            ensure!((1..=60).contains(&minutes), "--clock {text}: the initial time is 1 to 60 minutes");
            Ok(vec![Some((minutes * 60_000, seconds * 1000))])
        }
    }
}

/// `http://host:port` of a `ws://host:port/path` URL.
fn http_base(url: &str) -> anyhow::Result<String> {
    let Some(rest) = url.strip_prefix("ws://") else {
        bail!("{url:?}: the load test speaks plain ws:// only");
    };
    let authority = rest.split('/').next().unwrap_or(rest);
    Ok(format!("http://{authority}"))
}

/// The soft limit on open files, from `/proc/self/limits`.
pub(crate) fn open_file_limit() -> Option<(u64, String)> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    let mut fields = line["Max open files".len()..].split_whitespace();
    let soft = fields.next()?.parse().ok()?;
    Some((soft, fields.next()?.to_owned()))
}

/// Fails early, and clearly, when `who` would run out of file descriptors.
fn check_file_limit(who: &str, sockets: u64) -> anyhow::Result<()> {
    let Some((soft, hard)) = open_file_limit() else { return Ok(()) };
    let needed = sockets + 100;
    if soft < needed {
        bail!(
            "{who} needs about {needed} file descriptors for {sockets} sockets, but may open only {soft} \
             (ulimit -n; the hard limit is {hard}): raise it with `ulimit -n {needed}` in this shell, use \
             fewer --pairs{}",
            if who == "each gateway" { ", or more --spawn-gateways" } else { "" }
        );
    }
    Ok(())
}

/// CPU time of a process so far, in clock ticks (`/proc/<pid>/stat`).
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // Fields 14 and 15 of the file (utime, stime); the first after the
    // name is field 3.
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// Processes named `comm` on this machine (Redis, NATS), to show their share.
fn pids_named(comm: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == comm))
        .collect()
}

/// The processes whose CPU time the report shows.
fn watched_processes(cluster: Option<&Cluster>) -> Vec<(String, u32)> {
    let mut procs = vec![("loadtest (bots)".to_owned(), std::process::id())];
    if let Some(cluster) = cluster {
        procs.extend(cluster.pids());
    }
    for comm in ["redis-server", "nats-server"] {
        procs.extend(pids_named(comm).into_iter().map(|pid| (comm.to_owned(), pid)));
    }
    procs
}

/// A process's resident memory (`VmRSS`), KiB.
fn resident_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|line| line.strip_prefix("VmRSS:"))?.trim().trim_end_matches("kB").trim().parse().ok()
}

/// The sockets each gateway was given: idle ones in turn, and each pair's
/// two as placed.
fn sockets_per_gateway(args: &LoadtestArgs, gateways: usize) -> Vec<u64> {
    let mut sockets = vec![0u64; gateways.max(1)];
    for i in 0..args.idle as usize {
        sockets[i % gateways.max(1)] += 1;
    }
    for i in 0..args.pairs as usize {
        let first = i % gateways.max(1);
        let second = match args.placement {
            Placement::Same => first,
            Placement::Cross => (first + 1) % gateways.max(1),
        };
        sockets[first] += 1;
        sockets[second] += 1;
    }
    sockets
}

fn sample_cpu(procs: &[(String, u32)]) -> Vec<Option<u64>> {
    procs.iter().map(|(_, pid)| cpu_ticks(*pid)).collect()
}

/// The CPU share (percent of a core) of everything but the watched
/// processes between two samples `secs` apart.
fn outside_share(
    before: &(Vec<Option<u64>>, Option<u64>),
    after: &(Vec<Option<u64>>, Option<u64>),
    secs: f64,
) -> Option<f64> {
    let machine = after.1?.checked_sub(before.1?)?;
    let ours: u64 = before.0.iter().zip(&after.0).filter_map(|(b, a)| a.as_ref()?.checked_sub((*b)?)).sum();
    Some((machine.saturating_sub(ours)) as f64 / secs.max(1e-9))
}

/// The whole machine's busy CPU time so far, in clock ticks (`/proc/stat`),
/// to tell the load test's share from everything else running.
fn machine_busy_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let fields: Vec<u64> = stat.lines().next()?.split_whitespace().skip(1).filter_map(|f| f.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal (guest time is in user).
    let total: u64 = fields.iter().take(8).sum();
    Some(total - fields.get(3)? - fields.get(4)?)
}

/// Reads the named gauges off a Prometheus `/metrics` page at `base`.
async fn gauges(base: &str, names: &[&str]) -> Vec<String> {
    let Ok(answer) = Http::new(base).metrics().await else { return Vec::new() };
    if answer.status != 200 {
        return Vec::new();
    }
    let text = answer.text();
    names
        .iter()
        .filter_map(|name| {
            let value = text.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))?;
            let short = name.rsplit_once("_game_").or_else(|| name.rsplit_once("_gateway_")).map_or(*name, |(_, s)| s);
            Some(format!("{short} {}", value.trim()))
        })
        .collect()
}

/// What the servers say they hold: connections and Watch streams.
async fn server_gauges(bases: &[String], cluster: Option<&Cluster>) -> Vec<String> {
    let mut lines = Vec::new();
    // A spawned cluster's gateways serve metrics on ports of their own; a
    // deployment's are tried on the addresses given.
    let bases = cluster.map_or(bases, |c| c.gateway_metrics.as_slice());
    for base in bases {
        let addr = base.trim_start_matches("http://");
        let found = gauges(base, &["fogblast_gateway_connections", "fogblast_gateway_game_feeds"]).await;
        if !found.is_empty() {
            lines.push(format!("gateway {addr}: {}", found.join(", ")));
        }
    }
    for (name, addr) in cluster.map(Cluster::shard_metrics).unwrap_or_default() {
        let found =
            gauges(&format!("http://{addr}"), &["fogblast_game_watch_streams", "fogblast_game_games_cached"]).await;
        if !found.is_empty() {
            lines.push(format!("{name}: {}", found.join(", ")));
        }
    }
    lines
}

async fn drive(
    args: &LoadtestArgs,
    settings: Settings,
    urls: &[String],
    cluster: Option<&Cluster>,
) -> anyhow::Result<()> {
    ensure!(!urls.is_empty(), "no gateway to drive");
    let bases = urls.iter().map(|u| http_base(u)).collect::<anyhow::Result<Vec<_>>>()?;
    println!(
        "{} pairs ({} connections) on {} gateway(s), placement {:?}; variants {}; clock {}; think {}-{} ms; \
         {} plies a game at most",
        args.pairs,
        2 * args.pairs,
        urls.len(),
        args.placement,
        args.variant,
        args.clock,
        settings.think_ms.0,
        settings.think_ms.1,
        settings.moves_per_game
    );
    let shared = Arc::new(Shared { stats: Stats::default(), settings, handshakes: Semaphore::new(args.handshakes) });
    let stats = &shared.stats;
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut interrupted = std::pin::pin!(crate::signals::shutdown_signal().context("installing signal handlers")?);
    let gateway_pids: Vec<(String, u32)> =
        watched_processes(cluster).into_iter().filter(|(name, _)| name.starts_with("gateway")).collect();
    let rss_before: Vec<Option<u64>> = gateway_pids.iter().map(|(_, pid)| resident_kib(*pid)).collect();
    let start = Instant::now();
    // Two connections per pair.
    let pair_gap = Duration::from_secs_f64(2.0 / f64::from(args.connect_rate));
    let idle_gap = Duration::from_secs_f64(1.0 / f64::from(args.connect_rate));
    let mut idle = Vec::new();
    for i in 0..args.idle as usize {
        let url = urls[i % urls.len()].clone();
        let at = start + idle_gap.mul_f64(i as f64);
        let (shared, stop) = (shared.clone(), stop_rx.clone());
        idle.push(tokio::spawn(async move {
            sleep_until(at).await;
            bot::hold_idle(url, shared, stop).await
        }));
    }
    let start = start + idle_gap.mul_f64(f64::from(args.idle));
    let gateways = urls.len();
    let mut pairs = Vec::new();
    for i in 0..args.pairs as usize {
        let first = i % gateways;
        let second = match args.placement {
            Placement::Same => first,
            Placement::Cross => (first + 1) % gateways,
        };
        let spec = PairSpec {
            urls: [urls[first].clone(), urls[second].clone()],
            http: bases[first].clone(),
            seed: args.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i as u64,
        };
        let at = start + pair_gap.mul_f64(i as f64);
        let (shared, stop) = (shared.clone(), stop_rx.clone());
        pairs.push(tokio::spawn(async move {
            sleep_until(at).await;
            bot::run_pair(spec, shared, stop).await
        }));
    }

    // Ramp up.
    let report_every = Duration::from_secs(args.report_every_s.max(1));
    let ramp_limit = start + pair_gap.mul_f64(f64::from(args.pairs)) + Duration::from_secs(60);
    let mut stopped_early = false;
    let mut next_report = start + report_every;
    loop {
        let settled = stats.pairs_ready.load(Ordering::Relaxed) + stats.pairs_failed.load(Ordering::Relaxed);
        let idle_settled = stats.idle_held.load(Ordering::Relaxed) + stats.idle_failed.load(Ordering::Relaxed);
        if settled >= u64::from(args.pairs) && idle_settled >= u64::from(args.idle) {
            break;
        }
        if Instant::now() > ramp_limit {
            eprintln!("ramp-up: {settled} of {} pairs settled in time; measuring with what is connected", args.pairs);
            break;
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            _ = &mut interrupted => {
                stopped_early = true;
                break;
            }
        }
        if args.report_every_s > 0 && Instant::now() >= next_report {
            next_report += report_every;
            println!(
                "  ramp {:>5.1}s  connections {}  pairs failed {}  moves {}",
                start.elapsed().as_secs_f64(),
                stats.connections.load(Ordering::Relaxed),
                stats.pairs_failed.load(Ordering::Relaxed),
                stats.moves.load(Ordering::Relaxed)
            );
        }
    }
    let ramp = start.elapsed();
    if stats.out_of_files.load(Ordering::Relaxed) {
        let limit = open_file_limit().map_or("unknown".to_owned(), |(soft, _)| soft.to_string());
        eprintln!(
            "error: connecting failed with \"too many open files\" (EMFILE): the open-file limit \
             (ulimit -n, now {limit}) of this process or of a gateway is too low for {} connections",
            2 * args.pairs
        );
    }
    println!(
        "ramp-up: {} connections held after {:.1} s ({} pairs ready, {} failed, {} failed connection attempts)",
        stats.connections.load(Ordering::Relaxed),
        ramp.as_secs_f64(),
        stats.pairs_ready.load(Ordering::Relaxed),
        stats.pairs_failed.load(Ordering::Relaxed),
        stats.connect_failures.load(Ordering::Relaxed)
    );

    // The measured window.
    let watched = watched_processes(cluster);
    let cpu_before = sample_cpu(&watched);
    let machine_before = machine_busy_ticks();
    stats.relay_recent.reset();
    stats.measuring.store(true, Ordering::Relaxed);
    let window_start = Instant::now();
    let window_end = window_start + Duration::from_secs(args.duration_s);
    let mut last = (window_start, stats.moves.load(Ordering::Relaxed));
    let mut last_cpu = (cpu_before.clone(), machine_before);
    while !stopped_early && Instant::now() < window_end {
        let next = if args.report_every_s > 0 { (last.0 + report_every).min(window_end) } else { window_end };
        tokio::select! {
            _ = sleep_until(next) => {}
            _ = &mut interrupted => stopped_early = true,
        }
        if args.report_every_s > 0 && !stopped_early {
            let now = Instant::now();
            let moves = stats.moves.load(Ordering::Relaxed);
            let rate = (moves - last.1) as f64 / (now - last.0).as_secs_f64().max(1e-9);
            let errors: u64 = stats.errors().values().map(|t| t.count).sum();
            let cpu = (sample_cpu(&watched), machine_busy_ticks());
            let outside = outside_share(&last_cpu, &cpu, (now - last.0).as_secs_f64());
            println!(
                "  {:>5.1}s  connections {}  moves/s {:.0}  relay {}  games {}  errors {}{}",
                (now - window_start).as_secs_f64(),
                stats.connections.load(Ordering::Relaxed),
                rate,
                stats.relay_recent.summary(),
                stats.games_started.load(Ordering::Relaxed),
                errors,
                outside.map_or(String::new(), |o| format!("  other CPU {o:.0}%"))
            );
            last_cpu = cpu;
            stats.relay_recent.reset();
            last = (now, moves);
        }
    }
    stats.measuring.store(false, Ordering::Relaxed);
    let window = window_start.elapsed();
    let cpu_after = sample_cpu(&watched);
    let machine_after = machine_busy_ticks();
    let held_at_end = stats.connections.load(Ordering::Relaxed);
    let server_side = server_gauges(&bases, cluster).await;
    let rss_after: Vec<Option<u64>> = gateway_pids.iter().map(|(_, pid)| resident_kib(*pid)).collect();
    let idle_held = stats.idle_held.load(Ordering::Relaxed);
    let window_moves = stats.window_moves.load(Ordering::Relaxed);
    if stopped_early {
        println!("interrupted: stopping the bots (again to abandon the run)");
    }

    // Stop: every pair ends its game and closes.
    let _ = stop_tx.send(true);
    let mut interrupted = std::pin::pin!(crate::signals::shutdown_signal().context("installing signal handlers")?);
    let stop_deadline = Instant::now() + Duration::from_secs(60);
    let mut games: Vec<PlayedGame> = Vec::new();
    let mut stuck = 0;
    for handle in pairs {
        tokio::select! {
            joined = tokio::time::timeout_at(stop_deadline, handle) => match joined {
                Ok(Ok(played)) => games.extend(played),
                Ok(Err(_)) | Err(_) => stuck += 1,
            },
            _ = &mut interrupted => bail!("interrupted while the bots were stopping"),
        }
    }
    for handle in idle {
        let _ = tokio::time::timeout_at(stop_deadline, handle).await;
    }

    let errors = stats.errors();
    let relay = stats.relay.summary();
    let ack = stats.ack.summary();
    let secs = window.as_secs_f64().max(1e-9);
    println!();
    println!("window: {:.1} s after a {:.1} s ramp-up", secs, ramp.as_secs_f64());
    println!(
        "connections held: peak {}, at the end of the window {}",
        stats.peak_connections.load(Ordering::Relaxed),
        held_at_end
    );
    println!(
        "games: {} started, {} finished with an end frame (whole run)",
        stats.games_started.load(Ordering::Relaxed),
        stats.games_finished.load(Ordering::Relaxed)
    );
    println!(
        "moves acknowledged: {} in the window = {:.0} moves/s ({} in the whole run)",
        window_moves,
        window_moves as f64 / secs,
        stats.moves.load(Ordering::Relaxed)
    );
    println!("relay latency (mover's send to the opponent's receipt): {relay}  (n = {})", relay.count);
    println!("ack latency (mover's send to its own move frame):      {ack}  (n = {})", ack.count);
    println!(
        "connection failures: {} attempts, {} pairs never connected, {} connections lost while playing",
        stats.connect_failures.load(Ordering::Relaxed),
        stats.pairs_failed.load(Ordering::Relaxed),
        stats.disconnects.load(Ordering::Relaxed)
    );
    for line in &server_side {
        println!("at the end of the window, {line}");
    }
    if args.idle > 0 {
        println!(
            "idle connections: {idle_held} of {} held to the end ({} could not connect)",
            args.idle,
            stats.idle_failed.load(Ordering::Relaxed)
        );
    }
    let sockets = sockets_per_gateway(args, urls.len());
    for (((name, _), (before, after)), sockets) in
        gateway_pids.iter().zip(rss_before.iter().zip(&rss_after)).zip(&sockets)
    {
        if let (Some(before), Some(after)) = (before, after) {
            println!(
                "gateway memory: {name} {after} KiB resident ({before} KiB before the connections): {:.1} KiB a socket \
                 over {sockets} sockets",
                after.saturating_sub(*before) as f64 / (*sockets).max(1) as f64
            );
        }
    }
    if errors.is_empty() {
        println!("errors: none");
    } else {
        println!("errors:");
        for (what, trouble) in &errors {
            let games =
                if trouble.games.is_empty() { String::new() } else { format!("  (games {})", trouble.games.join(" ")) };
            println!("  {:>8}  {what}{games}", trouble.count);
        }
    }
    if stuck > 0 {
        println!("pairs that did not stop within 60 s: {stuck} (their games are not verified)");
    }
    // USER_HZ is 100 on Linux: ticks per second are percent of a core.
    let shares: Vec<(String, f64)> = watched
        .iter()
        .zip(cpu_before.iter().zip(&cpu_after))
        .filter_map(|((name, pid), (before, after))| {
            let ticks = after.as_ref()?.checked_sub((*before)?)?;
            Some((format!("{name}[{pid}]"), ticks as f64 / secs))
        })
        .collect();
    let cpu: Vec<String> = shares.iter().map(|(name, share)| format!("{name} {share:.0}%")).collect();
    println!("CPU in the window (100% = one core): {}", cpu.join(", "));
    if let (Some(before), Some(after)) = (machine_before, machine_after) {
        let busy = after.saturating_sub(before) as f64 / secs;
        let ours: f64 = shares.iter().map(|(_, share)| share).sum();
        println!(
            "machine: {busy:.0}% busy of {}%, {:.0}% of it outside the processes above",
            100 * std::thread::available_parallelism().map_or(1, |n| n.get()),
            (busy - ours).max(0.0)
        );
    }

    println!();
    if args.no_verify {
        println!("not verified against the server (--no-verify): {} games played", games.len());
        ensure!(!games.is_empty() && window_moves > 0, "no move was acknowledged in the window");
        ensure!(!stopped_early, "interrupted: the figures above cover a shortened run");
        return Ok(());
    }
    println!("verifying {} games against the server's move lists...", games.len());
    let verify = verify::verify(games, args.verify_concurrency);
    let verdict = tokio::select! {
        verdict = verify => verdict,
        _ = &mut interrupted => bail!("interrupted while verifying"),
    };
    println!(
        "verified: {} of {} games match ({} moves){}; {} mismatched, {} unreadable",
        verdict.matched,
        verdict.games,
        verdict.moves,
        if verdict.partly_hidden > 0 {
            format!(", {} fog games in progress checked as far as spectators see", verdict.partly_hidden)
        } else {
            String::new()
        },
        verdict.mismatches,
        verdict.unreadable
    );
    for problem in &verdict.problems {
        println!("  {problem}");
    }
    ensure!(verdict.passed(), "{} games do not match what the bots played", verdict.mismatches + verdict.unreadable);
    ensure!(verdict.games > 0, "no game was played");
    ensure!(verdict.moves > 0 && window_moves > 0, "no move was acknowledged in the window");
    if stopped_early {
        bail!("interrupted: the figures above cover a shortened run");
    }
    Ok(())
}
