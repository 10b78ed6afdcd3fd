//! `fogblast-tools partitions`: the whole cluster on separate network nodes
//! (network namespaces, see [`crate::node_net`] and [`cluster`]) under bots
//! playing rated and casual, timed and untimed, atomic, standard and fog of
//! war games, while a schedule cuts the network: a node isolated, a shard
//! cut from the gateways but not from Redis, a NATS server cut from its
//! peers, a one-way cut, a flapping link, a shard's wall clock ahead or
//! behind. Each schedule runs on fresh bots: play, fault, heal, play, then
//! the bots stop, every game ends and reaches the archive, and the history
//! checker ([`history`]) judges what the bots were told against the final
//! state (the archive, the ratings, the public stream, the fog frames).
//! Needs root; refuses with the reason where namespaces cannot be made.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, ensure, Context};
use fogblast_rules::Variant;
use futures::StreamExt;
use sqlx::Connection;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::chaos::bot::{Bot, Records, Role, Settings, Shared};
use crate::chaos::verdict;
use crate::node_net::Endpoint;

pub mod cluster;
pub mod history;

use cluster::{PartitionCluster, RedisLayout, DATA, GATEWAYS, MATCHMAKER_NODE, REDIS, REDIS_PRIMARY_NODE, SHARDS};
use history::{FinalState, History, Outcome, Verdict};

/// The fault schedules, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Schedule {
    /// The node of shard-0 cut off from everything.
    IsolateShard,
    /// shard-0 cut off from both gateways, still reaching Redis and NATS.
    ShardFromGateways,
    /// The reverse: shard-0 cut off from the Redis and NATS nodes, still
    /// reaching the gateways.
    ShardFromData,
    /// One NATS server cut off from its two peers and from every client.
    NatsServer,
    /// The NATS server leading the public events' stream (moved to data3
    /// by stepping leaders down) cut off with the matchmaker beside it:
    /// the stream elects a new leader among the other two while moves go on.
    NatsLeader,
    /// Packets from shard-1 to the Redis primary dropped, the reverse flowing.
    OneWay,
    /// gate0's link down and up every second.
    Flapping,
    /// gate0 cut from shard0 only, still reaching shard1.
    GatewayFromShard,
    /// shard0's node and data3 (a NATS server, the matchmaker) isolated at once.
    TwoFaults,
    /// shard-1 started again with its wall clock 2 s ahead.
    ClockAhead,
    /// shard-1 started again with its wall clock 2 s behind.
    ClockBehind,
    /// The Redis primary cut from its replica while it takes moves, then
    /// failed over to the replica: what was not replicated is gone unless
    /// commits wait for the replica (`--redis-wait-replicas`). One primary
    /// and its replica (`--redis replicated`) only.
    RedisFailover,
    /// A Redis Cluster primary and a shard (`redis1` and `shard0`) cut
    /// off together from everything else: the minority primary takes
    /// shard-0's writes until it times its peers out, while the majority
    /// promotes its replica; healed, it rejoins as a replica and loses what
    /// it took alone. `--redis cluster` only.
    MinorityPrimary,
}

impl Schedule {
    const ALL: [Schedule; 13] = [
        Schedule::IsolateShard,
        Schedule::ShardFromGateways,
        Schedule::ShardFromData,
        Schedule::NatsServer,
        Schedule::NatsLeader,
        Schedule::OneWay,
        Schedule::Flapping,
        Schedule::GatewayFromShard,
        Schedule::TwoFaults,
        Schedule::ClockAhead,
        Schedule::ClockBehind,
        Schedule::RedisFailover,
        Schedule::MinorityPrimary,
    ];

    /// The Redis layout the schedule needs, if it needs one.
    fn needs(self) -> Option<RedisLayout> {
        match self {
            Schedule::RedisFailover => Some(RedisLayout::Replicated),
            Schedule::MinorityPrimary => Some(RedisLayout::Cluster),
            _ => None,
        }
    }

    /// The shards whose games the fault cuts off (none: it touches every
    /// game alike, or none).
    fn cut_shards(self) -> &'static [&'static str] {
        match self {
            Schedule::IsolateShard
            | Schedule::ShardFromGateways
            | Schedule::ShardFromData
            | Schedule::GatewayFromShard
            | Schedule::TwoFaults
            | Schedule::MinorityPrimary => &["shard-0"],
            Schedule::OneWay | Schedule::ClockAhead | Schedule::ClockBehind => &["shard-1"],
            Schedule::NatsServer | Schedule::NatsLeader | Schedule::Flapping | Schedule::RedisFailover => &[],
        }
    }

    fn name(self) -> &'static str {
        match self {
            Schedule::IsolateShard => "isolate-shard",
            Schedule::ShardFromGateways => "shard-from-gateways",
            Schedule::ShardFromData => "shard-from-data",
            Schedule::NatsServer => "nats-server",
            Schedule::NatsLeader => "nats-leader",
            Schedule::OneWay => "one-way",
            Schedule::Flapping => "flapping",
            Schedule::GatewayFromShard => "gateway-from-shard",
            Schedule::TwoFaults => "two-faults",
            Schedule::ClockAhead => "clock-ahead",
            Schedule::ClockBehind => "clock-behind",
            Schedule::RedisFailover => "redis-failover",
            Schedule::MinorityPrimary => "minority-primary",
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct PartitionsArgs {
    /// Schedules to run, comma separated, or `all` (every schedule the Redis layout allows).
    #[arg(long, default_value = "all")]
    schedule: String,
    /// How Redis is laid out over the data nodes.
    #[arg(long, value_enum, default_value_t = RedisLayout::Cluster)]
    redis: RedisLayout,
    /// Bots seeking quick pairings (rated, through the matchmaker), in pools of two per variant.
    #[arg(long, default_value_t = 6)]
    seekers: usize,
    /// Bots creating invite games, half of them fog of war, for as many joiners.
    #[arg(long, default_value_t = 4)]
    creators: usize,
    /// Bots watching games, fog of war included.
    #[arg(long, default_value_t = 2)]
    spectators: usize,
    /// Seconds of play before the fault and after the heal.
    #[arg(long, default_value_t = 8)]
    play_s: u64,
    /// Seconds a fault lasts.
    #[arg(long, default_value_t = 10)]
    fault_s: u64,
    /// The game shards' lease.
    #[arg(long, default_value_t = 2_000)]
    lease_ms: u64,
    /// Every service's `--redis-wait-replicas`: 1 makes a move acknowledged only once the Redis replica has it, which
    /// the redis-failover schedule needs to lose nothing; 0 (the services' default) shows the loss.
    #[arg(long, default_value_t = 1)]
    redis_wait_replicas: u32,
    /// Plies after which the side to move resigns.
    #[arg(long, default_value_t = 40)]
    max_plies: usize,
    /// A Postgres server the root namespace reaches: the run makes a database of its own there and drops it.
    #[arg(long, env = "FOGBLAST_CHAOS_POSTGRES", default_value = "postgres://postgres@127.0.0.1:5432")]
    postgres: String,
    /// Keep the processes' logs even when every verdict passed.
    #[arg(long)]
    keep_logs: bool,
    /// The `fogblast` server binary the cluster runs [default: the one beside this executable].
    #[arg(long)]
    server_bin: Option<PathBuf>,
    /// The NATS server the cluster runs. nats-server 2.9 (Debian's) loses
    /// acknowledged messages when one server is cut off again and again
    /// (docs/operations.md); `tests/run` installs a current release.
    #[arg(long, env = "FOGBLAST_NATS_SERVER_BIN", default_value = "nats-server")]
    nats_server: PathBuf,
}

/// The schedules named by `--schedule`, refusing one the Redis layout
/// cannot run.
fn schedules(list: &str, redis: RedisLayout) -> anyhow::Result<Vec<Schedule>> {
    let fits = |schedule: &Schedule| schedule.needs().is_none_or(|layout| layout == redis);
    if list == "all" {
        return Ok(Schedule::ALL.into_iter().filter(fits).collect());
    }
    let named: Vec<Schedule> = list
        .split(',')
        .map(|name| {
            Schedule::ALL.into_iter().find(|s| s.name() == name.trim()).with_context(|| {
                let names: Vec<&str> = Schedule::ALL.iter().map(|s| s.name()).collect();
                format!("--schedule {name:?}: one of {} or all", names.join(", "))
            })
        })
        .collect::<anyhow::Result<_>>()?;
    if let Some(misfit) = named.iter().find(|s| !fits(s)) {
        let needs = misfit.needs().map(|layout| format!("{layout:?}").to_lowercase()).unwrap_or_default();
        bail!("schedule {} runs with --redis {needs}", misfit.name());
    }
    Ok(named)
}

pub fn run(args: &PartitionsArgs) -> anyhow::Result<()> {
    let schedules = schedules(&args.schedule, args.redis)?;
    if let Some(reason) = crate::node_net::cannot_make_namespaces() {
        bail!("partitions cannot run here: {reason}");
    }
    let skews = schedules.iter().any(|s| matches!(s, Schedule::ClockAhead | Schedule::ClockBehind));
    if skews && std::process::Command::new("faketime").arg("--version").output().is_err() {
        bail!("the clock schedules need faketime (Debian's faketime package); run the others with --schedule");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(main(args, &schedules))
}

async fn main(args: &PartitionsArgs, schedules: &[Schedule]) -> anyhow::Result<()> {
    let server_bin = crate::server_bin::locate(args.server_bin.as_deref())?;
    let run = format!("{:08x}", rand::random::<u32>());
    let database = format!("fogblast_partitions_{run}");
    let mut admin = sqlx::PgConnection::connect(&format!("{}/postgres", args.postgres))
        .await
        .with_context(|| format!("connecting to {}", args.postgres))?;
    sqlx::query(&format!("CREATE DATABASE {database}")).execute(&mut admin).await?;
    let database_url = format!("{}/{database}", args.postgres);
    let log_dir = std::env::temp_dir().join(format!("fogblast-partitions-{run}"));
    std::fs::create_dir_all(&log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    let outcome = async {
        let mut cluster = PartitionCluster::plan(
            &server_bin,
            database_url,
            (args.lease_ms, args.redis_wait_replicas, args.redis),
            &args.nats_server,
            log_dir.clone(),
        )?;
        println!("nodes: {}", describe_nodes(&cluster));
        let redis = match args.redis {
            RedisLayout::Cluster => "a Redis Cluster (3 primaries, 6 replicas)",
            RedisLayout::Replicated => "Redis (primary and replica)",
        };
        println!("starting NATS (3 servers), {redis}, the rating service (root namespace), 2 shards, the matchmaker and 2 gateways; logs in {}", log_dir.display());
        cluster.start_all().await?;
        let interrupted = crate::signals::shutdown_signal().context("installing signal handlers")?;
        tokio::select! {
            verdicts = run_schedules(args, &mut cluster, schedules) => verdicts,
            _ = interrupted => Err(anyhow::anyhow!("interrupted: stopping the cluster and removing its nodes")),
        }
    }
    .await;
    let dropped = sqlx::query(&format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)")).execute(&mut admin).await;
    if let Err(error) = dropped {
        eprintln!("warning: database {database} was not dropped: {error}");
    }
    let verdicts = outcome?;
    println!();
    println!("verdicts:");
    let mut failed = 0;
    for (schedule, verdicts) in &verdicts {
        println!("  schedule {}:", schedule.name());
        for verdict in verdicts {
            failed += usize::from(!verdict.passed());
            println!("    {verdict}");
        }
    }
    if failed > 0 || args.keep_logs {
        println!("logs: {}", log_dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&log_dir);
    }
    ensure!(failed == 0, "{failed} verdict(s) failed");
    println!("partitions: every property held under every schedule");
    Ok(())
}

fn describe_nodes(cluster: &PartitionCluster) -> String {
    let nodes = cluster.net.nodes();
    let mut text: Vec<String> = nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            let on: Vec<&str> =
                cluster.processes.iter().filter(|p| p.node == Some(i)).map(|p| p.name.as_str()).collect();
            format!("{} {} [{}]", node.name, node.address, on.join(" "))
        })
        .collect();
    text.push(format!("root namespace {} [rating]", cluster.net.host_address()));
    text.join("; ")
}

async fn run_schedules(
    args: &PartitionsArgs,
    cluster: &mut PartitionCluster,
    schedules: &[Schedule],
) -> anyhow::Result<Vec<(Schedule, Vec<Verdict>)>> {
    let mut verdicts = Vec::new();
    for &schedule in schedules {
        println!("schedule {}: bots playing", schedule.name());
        cluster.player_link_cuts.clear();
        let shared = start_bots(args, cluster);
        let (stop_tx, stop_rx) = watch::channel(false);
        let bots: Vec<_> = roles(args)
            .into_iter()
            .enumerate()
            .map(|(i, role)| tokio::spawn(Bot::new(i, role, shared.clone(), i as u64 + 1).run(stop_rx.clone())))
            .collect();
        watch_over(cluster, &shared, Duration::from_secs(args.play_s)).await;
        let started = Instant::now();
        let fault_at_ms = crate::chaos::bot::wall_ms();
        apply_fault(args, cluster, &shared, schedule).await?;
        let healed_s = started.elapsed().as_secs_f64();
        cluster.net.heal_all()?;
        if cluster.redis == RedisLayout::Cluster {
            // A primary the fault failed over is made primary again, so
            // the next schedule finds the layout it was planned on.
            cluster.restore_redis_primaries().await?;
        }
        println!("schedule {}: healed after {:.1} s", schedule.name(), started.elapsed().as_secs_f64());
        watch_over(cluster, &shared, Duration::from_secs(args.play_s)).await;
        let _ = stop_tx.send(true);
        let deadline = Instant::now() + Duration::from_secs(90);
        for bot in bots {
            if tokio::time::timeout_at(deadline, bot).await.is_err() {
                shared.records().problem("a bot did not stop within 90 s", String::new());
            }
        }
        let records = std::mem::take(&mut *shared.records());
        println!("schedule {}: {}", schedule.name(), figures(&records));
        let (verdicts_of_schedule, lost_seen_ms, commits) = judge(cluster, &records).await?;
        let fault = (started, started + Duration::from_secs_f64(healed_s));
        println!("schedule {}: {}", schedule.name(), stalls(&records, &commits, fault, schedule.cut_shards()));
        if !lost_seen_ms.is_empty() {
            let offsets: Vec<String> =
                lost_seen_ms.iter().map(|ms| format!("{:.1}", (*ms as f64 - fault_at_ms as f64) / 1000.0)).collect();
            println!(
                "schedule {}: lost acknowledged moves were first shown played at these seconds after the fault began \
                 (healed at {healed_s:.1} s): {}",
                schedule.name(),
                offsets.join(" ")
            );
        }
        verdicts.push((schedule, verdicts_of_schedule));
    }
    Ok(verdicts)
}

fn roles(args: &PartitionsArgs) -> Vec<Role> {
    let pools = [Variant::Atomic, Variant::Standard, Variant::Fog];
    let mut roles: Vec<Role> = (0..args.seekers).map(|i| Role::Seeker(pools[(i / 2) % pools.len()])).collect();
    roles.extend((0..args.creators).map(|i| Role::Creator { fog: i % 2 == 1 }));
    roles.extend((0..args.creators).map(|_| Role::Joiner));
    roles.extend((0..args.spectators).map(|_| Role::Spectator));
    roles
}

fn start_bots(args: &PartitionsArgs, cluster: &PartitionCluster) -> Arc<Shared> {
    Arc::new(Shared {
        urls: cluster.gateway_urls(),
        settings: Settings { think_ms: (100, 500), max_plies: args.max_plies.max(2), fog_computer: false },
        records: Mutex::new(Records::default()),
        invites: Mutex::new(Default::default()),
        watchable: Mutex::new(Vec::new()),
    })
}

/// The acknowledgement latency (send to the frame showing the move
/// played) and the longest time no bot got any acknowledgement.
fn figures(records: &Records) -> String {
    let mut latencies: Vec<Duration> = records.acks.iter().map(|ack| ack.latency).collect();
    if latencies.is_empty() {
        return "no move acknowledged".to_owned();
    }
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize].as_millis();
    let mut times: Vec<Instant> = records.acks.iter().map(|ack| ack.at).collect();
    times.sort();
    let longest_pause = times.windows(2).map(|pair| pair[1] - pair[0]).max().unwrap_or_default();
    format!(
        "{} acknowledgements, latency p50 {} ms, p99 {} ms, max {} ms; longest pause between acknowledgements {} ms",
        latencies.len(),
        at(0.5),
        at(0.99),
        at(1.0),
        longest_pause.as_millis()
    )
}

/// How long moves sent during the fault waited, apart for the games of
/// the shards the fault cut off (`cut`) and the others: each game counted
/// with the shard that made it, by the shards' commit lines.
fn stalls(records: &Records, commits: &[history::CommitLine], fault: (Instant, Instant), cut: &[&str]) -> String {
    let mut maker: HashMap<&str, (u64, &str)> = HashMap::new();
    for commit in commits {
        let entry = maker.entry(commit.game.as_str()).or_insert((u64::MAX, ""));
        if commit.from < entry.0 {
            *entry = (commit.from, commit.shard.as_str());
        }
    }
    let (mut on_cut, mut elsewhere) = (Vec::new(), Vec::new());
    for ack in &records.acks {
        let sent = ack.at - ack.latency;
        if sent < fault.0 || sent > fault.1 {
            continue;
        }
        let shard = maker.get(ack.game.as_str()).map_or("", |(_, shard)| *shard);
        if cut.contains(&shard) {
            on_cut.push(ack.latency);
        } else {
            elsewhere.push(ack.latency);
        }
    }
    let worst = |latencies: &[Duration]| latencies.iter().max().map_or(0, Duration::as_millis);
    let over_1s = |latencies: &[Duration]| latencies.iter().filter(|l| **l > Duration::from_secs(1)).count();
    let others = format!(
        "{} moves sent during the fault in games {}, max {} ms, {} over 1 s",
        elsewhere.len(),
        if cut.is_empty() { "on every shard".to_owned() } else { format!("off {}", cut.join(", ")) },
        worst(&elsewhere),
        over_1s(&elsewhere)
    );
    if cut.is_empty() {
        return others;
    }
    format!("{others}; {} in games on {}, max {} ms", on_cut.len(), cut.join(", "), worst(&on_cut))
}

/// Applies the schedule's fault and keeps it for `--fault-s`; the caller heals.
async fn apply_fault(
    args: &PartitionsArgs,
    cluster: &mut PartitionCluster,
    shared: &Shared,
    schedule: Schedule,
) -> anyhow::Result<()> {
    let span = Duration::from_secs(args.fault_s);
    let shard = |i: usize| Endpoint::Node(SHARDS[i]);
    match schedule {
        Schedule::IsolateShard => cluster.net.isolate(SHARDS[0])?,
        Schedule::ShardFromGateways => {
            for gateway in GATEWAYS {
                cluster.net.cut_between(shard(0), Endpoint::Node(gateway))?;
            }
        }
        Schedule::ShardFromData => {
            for data in DATA.into_iter().chain(REDIS) {
                cluster.net.cut_between(shard(0), Endpoint::Node(data))?;
            }
        }
        Schedule::NatsServer => {
            // data3's NATS server; the matchmaker beside it is cut with it.
            let cut = DATA[2];
            debug_assert_eq!(cut, MATCHMAKER_NODE);
            cluster.net.isolate(cut)?;
        }
        Schedule::NatsLeader => {
            let public = fogblast_bus::public_stream(cluster::STREAM);
            cluster.lead_stream_from(&public, DATA[2]).await?;
            println!("    {public}'s leader is on {}; cutting it off", cluster::NODES[DATA[2]]);
            cluster.net.isolate(DATA[2])?;
        }
        Schedule::GatewayFromShard => cluster.net.cut_between(Endpoint::Node(GATEWAYS[0]), shard(0))?,
        Schedule::TwoFaults => {
            cluster.net.isolate(SHARDS[0])?;
            cluster.net.isolate(DATA[2])?;
        }
        Schedule::OneWay => cluster.net.cut_one_way(shard(1), Endpoint::Node(REDIS_PRIMARY_NODE))?,
        Schedule::RedisFailover => {
            let replica = cluster.processes[cluster.index("redis-replica")?].node.context("a node")?;
            cluster.net.cut_between(Endpoint::Node(REDIS_PRIMARY_NODE), Endpoint::Node(replica))?;
            watch_over(cluster, shared, span).await;
            return cluster.redis_failover().await;
        }
        Schedule::Flapping => {
            let end = Instant::now() + span;
            while Instant::now() < end {
                let cut_at = crate::chaos::bot::wall_ms();
                cluster.net.isolate(GATEWAYS[0])?;
                watch_over(cluster, shared, Duration::from_secs(1)).await;
                cluster.net.heal(Endpoint::Node(GATEWAYS[0]))?;
                cluster.player_link_cuts.push((0, cut_at, crate::chaos::bot::wall_ms()));
                watch_over(cluster, shared, Duration::from_secs(1)).await;
            }
            return Ok(());
        }
        Schedule::MinorityPrimary => {
            cluster.net.split_off(&[REDIS_PRIMARY_NODE, SHARDS[0]])?;
        }
        Schedule::ClockAhead | Schedule::ClockBehind => {
            let skew = if schedule == Schedule::ClockAhead { 2_000 } else { -2_000 };
            let i = cluster.index("shard-1")?;
            cluster.kill(i);
            cluster.spawn(i, skew)?;
            cluster.wait_ready(i).await?;
            watch_over(cluster, shared, span).await;
            cluster.kill(i);
            cluster.spawn(i, 0)?;
            return cluster.wait_ready(i).await;
        }
    }
    watch_over(cluster, shared, span).await;
    Ok(())
}

/// Waits `span`, noting any process that exits by itself meanwhile.
async fn watch_over(cluster: &mut PartitionCluster, shared: &Shared, span: Duration) {
    let end = Instant::now() + span;
    while Instant::now() < end {
        for name in cluster.exited() {
            shared.records().note(&format!("{name} exited by itself"));
            eprintln!("{name} exited by itself");
        }
        tokio::time::sleep(Duration::from_millis(100).min(end.saturating_duration_since(Instant::now()))).await;
    }
}

/// The history the bots wrote: each ply a bot sent moves for is an
/// operation per move tried, acknowledged when the server acknowledged it,
/// unknown otherwise (the bots do not tell a refusal from a lost answer).
fn history_of(records: &Records) -> History {
    let mut history = History::default();
    let mut sent: Vec<_> = records.sent.iter().collect();
    sent.sort_by_key(|((game, ply), sent)| (sent.first_ms, game.clone(), *ply));
    for ((game, ply), sent) in sent {
        let acked = records.acked.get(&(game.clone(), *ply));
        for uci in &sent.tried {
            let op = history.invoke(0, game, *ply, uci);
            history.complete(op, if acked == Some(uci) { Outcome::Ok } else { Outcome::Unknown });
        }
    }
    history
}

/// Waits for every game of the bots in the archive, reads the final state
/// and judges it; also returns when (wall ms) each acknowledged move the
/// archive lacks was first shown played, and the commits the shards logged.
async fn judge(
    cluster: &PartitionCluster,
    records: &Records,
) -> anyhow::Result<(Vec<Verdict>, Vec<u64>, Vec<history::CommitLine>)> {
    let wanted: Vec<String> = records.games.keys().cloned().collect();
    let deadline = Instant::now() + Duration::from_secs(90);
    let db = loop {
        let db = verdict::read_database(&cluster.database_url).await?;
        if wanted.iter().all(|id| db.games.contains_key(id)) || Instant::now() > deadline {
            break db;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let fog_line = verdict::judge(records, &db, &[], 1_000, None)
        .into_iter()
        .find(|line| line.promise.contains("fog"))
        .context("the fog line of the verdict")?;
    let archived_moves: HashMap<String, usize> =
        wanted.iter().map(|id| (id.clone(), db.games.get(id).map_or(0, |g| g.moves.len()))).collect();
    let public_events = public_move_numbers_settled(&cluster.nats_url(), &archived_moves).await?;
    let rated_games: Vec<String> =
        wanted.iter().filter(|id| records.games.get(*id).is_some_and(|g| g.rated)).cloned().collect();
    let state = FinalState {
        games: wanted.iter().filter_map(|id| Some((id.clone(), db.games.get(id)?.moves.clone()))).collect(),
        finished: wanted.clone(),
        archived: wanted.iter().filter(|id| db.games.contains_key(*id)).map(|id| (id.clone(), 1)).collect(),
        rated: db.rated.iter().filter(|(id, _)| wanted.contains(id)).map(|(id, n)| (id.clone(), *n as u32)).collect(),
        rated_games,
        public_events,
        fog_frames: records.fog.len(),
        fog_leaks: fog_line.failures,
        commits: logged_commits(&cluster.log_dir)?,
        charges: charges(records, &db, &cluster.player_link_cuts),
    };
    let history = history_of(records);
    let [invoked, ok, fail, unknown] = history.counts();
    println!("history: {ok} ok, {fail} fail, {unknown} unknown, {invoked} open; {} games", wanted.len());
    let mut lost_seen_ms: Vec<u64> = records
        .acked
        .iter()
        .filter(|((game, ply), uci)| state.games.get(game).and_then(|moves| moves.get(*ply)) != Some(*uci))
        .filter_map(|(key, _)| records.seen.get(key).copied())
        .collect();
    lost_seen_ms.sort_unstable();
    Ok((history::check(&history, &state), lost_seen_ms, state.commits))
}

/// What each move from the third of every timed game between two bots
/// cost its mover, with the bots' send times around it, and whether the
/// gateway it went to had its link to the players cut (`player_link_cuts`:
/// gateway, from, to) between its last send and its being shown played.
fn charges(records: &Records, db: &verdict::Database, player_link_cuts: &[(usize, u64, u64)]) -> Vec<history::Charge> {
    let mut charges = Vec::new();
    for (id, info) in &records.games {
        let Some(game) = db.games.get(id) else { continue };
        if info.clock.is_none() || info.bot_seats != [true, true] || game.clocks.len() != game.moves.len() {
            continue;
        }
        let increment = game.increment_ms.unwrap_or(0) as i64;
        for ply in 2..game.moves.len() {
            let (Some(sent), Some(before)) =
                (records.sent.get(&(id.clone(), ply)), records.sent.get(&(id.clone(), ply - 1)))
            else {
                continue;
            };
            // Not shown played: held up until the end of the run at most.
            let shown = records.seen.get(&(id.clone(), ply)).copied().unwrap_or(u64::MAX);
            let over_cut_client_link = player_link_cuts
                .iter()
                .any(|&(gateway, from, to)| gateway == sent.gateway && from <= shown && to >= sent.last_ms);
            charges.push(history::Charge {
                game: id.clone(),
                ply,
                charged_ms: game.clocks[ply - 2] as i64 - game.clocks[ply] as i64 + increment,
                turn_began_ms: before.first_ms,
                last_sent_ms: sent.last_ms,
                over_cut_client_link,
            });
        }
    }
    charges
}

/// The commits every shard process logged (`shard-N.S.log` in `log_dir`).
fn logged_commits(log_dir: &std::path::Path) -> anyhow::Result<Vec<history::CommitLine>> {
    let mut commits = Vec::new();
    for entry in std::fs::read_dir(log_dir).with_context(|| format!("reading {}", log_dir.display()))? {
        let path = entry?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
        let Some(shard) = name.strip_suffix(".log").and_then(|n| n.rsplit_once('.')).map(|(shard, _)| shard) else {
            continue;
        };
        if !shard.starts_with("shard-") {
            continue;
        }
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        commits.extend(text.lines().filter_map(|line| history::CommitLine::parse(shard, line)));
    }
    Ok(commits)
}

/// How long the judge waits for the public stream to hold every archived move.
const PUBLIC_SETTLE: Duration = Duration::from_secs(90);

/// [`public_move_numbers`], read again while the NATS cluster, just healed,
/// still times out its JetStream requests (a leader being elected), and
/// while some game has fewer move events than `moves` (its archived move
/// count): a shard may still be publishing what waited out the fault. After
/// [`PUBLIC_SETTLE`] the last reading is judged as it is.
async fn public_move_numbers_settled(
    nats_url: &str,
    moves: &HashMap<String, usize>,
) -> anyhow::Result<HashMap<String, Vec<u64>>> {
    let games: Vec<String> = moves.keys().cloned().collect();
    let deadline = Instant::now() + PUBLIC_SETTLE;
    let mut failures = 0;
    loop {
        match public_move_numbers(nats_url, &games).await {
            Ok(numbers) => {
                let whole = moves.iter().all(|(game, n)| numbers.get(game).map_or(0, Vec::len) >= *n);
                if whole || Instant::now() > deadline {
                    return Ok(numbers);
                }
                println!("the public stream is still behind the archive; reading it again in 3 s");
            }
            Err(error) if failures < 10 => {
                failures += 1;
                println!("reading the public stream: {error:#}; again in 3 s");
            }
            Err(error) => return Err(error.context("reading the public stream")),
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
}

/// Each game's move events on the public stream as numbers 1, 2, 3... (ply + 1), in stream order.
async fn public_move_numbers(nats_url: &str, games: &[String]) -> anyhow::Result<HashMap<String, Vec<u64>>> {
    #[derive(serde::Deserialize)]
    struct Moved {
        #[serde(default)]
        ply: u64,
    }
    #[derive(serde::Deserialize)]
    struct MoveEvent {
        game_id: String,
        moved: Moved,
    }
    let client = async_nats::connect(fogblast_bus::nats_servers(nats_url)?).await?;
    let jetstream = async_nats::jetstream::new(client);
    let public = fogblast_bus::public_stream(cluster::STREAM);
    let stream = jetstream.get_stream(&public).await.with_context(|| format!("stream {public}"))?;
    let consumer = stream
        .create_consumer(async_nats::jetstream::consumer::pull::OrderedConfig {
            filter_subject: "games.public.json.*.move".into(),
            ..Default::default()
        })
        .await?;
    let mut messages = consumer.messages().await?;
    let mut numbers: HashMap<String, Vec<u64>> = games.iter().map(|g| (g.clone(), Vec::new())).collect();
    while let Ok(Some(message)) = tokio::time::timeout(Duration::from_secs(5), messages.next()).await {
        let message = message?;
        let pending = message.info().map(|info| info.pending).unwrap_or(0);
        if let Ok(event) = serde_json::from_slice::<MoveEvent>(&message.payload) {
            if let Some(list) = numbers.get_mut(&event.game_id) {
                list.push(event.moved.ply + 1);
            }
        }
        if pending == 0 {
            break;
        }
    }
    Ok(numbers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chaos::bot::Ack;

    #[test]
    fn a_schedule_runs_only_on_the_redis_layout_it_needs() {
        let on_cluster = schedules("all", RedisLayout::Cluster).unwrap();
        assert!(on_cluster.contains(&Schedule::MinorityPrimary) && !on_cluster.contains(&Schedule::RedisFailover));
        let on_one = schedules("all", RedisLayout::Replicated).unwrap();
        assert!(on_one.contains(&Schedule::RedisFailover) && !on_one.contains(&Schedule::MinorityPrimary));
        assert_eq!(on_cluster.len() + 1, Schedule::ALL.len());
        let refused = schedules("one-way,redis-failover", RedisLayout::Cluster).unwrap_err();
        assert_eq!(refused.to_string(), "schedule redis-failover runs with --redis replicated");
        let refused = schedules("minority-primary", RedisLayout::Replicated).unwrap_err();
        assert_eq!(refused.to_string(), "schedule minority-primary runs with --redis cluster");
        assert_eq!(schedules("one-way", RedisLayout::Replicated).unwrap(), [Schedule::OneWay]);
    }

    #[test]
    fn moves_sent_during_the_fault_are_told_apart_by_the_shard_of_their_game() {
        let start = Instant::now();
        let fault = (start + Duration::from_secs(10), start + Duration::from_secs(20));
        let ack = |sent_s: u64, latency_ms: u64, game: &str| Ack {
            at: start + Duration::from_secs(sent_s) + Duration::from_millis(latency_ms),
            latency: Duration::from_millis(latency_ms),
            game: game.to_owned(),
        };
        let records = Records {
            acks: vec![ack(5, 9_000, "cut"), ack(12, 2_500, "cut"), ack(12, 40, "free"), ack(15, 1_200, "free")],
            ..Records::default()
        };
        let commit = |shard: &str, game: &str, from, to| history::CommitLine {
            shard: shard.into(),
            game: game.into(),
            from,
            to,
            epoch: 1,
        };
        // "cut" was made on shard-0 and taken over by shard-1 later.
        let commits = [commit("shard-1", "cut", 7, 8), commit("shard-0", "cut", 0, 2), commit("shard-1", "free", 0, 2)];
        let told = stalls(&records, &commits, fault, &["shard-0"]);
        assert_eq!(
            told,
            "2 moves sent during the fault in games off shard-0, max 1200 ms, 1 over 1 s; 1 in games on shard-0, max \
             2500 ms"
        );
        let told = stalls(&records, &commits, fault, &[]);
        assert_eq!(told, "3 moves sent during the fault in games on every shard, max 2500 ms, 2 over 1 s");
    }
}
