//! `fogblast-tools matchmaker-bench`: the time of one pairing wave over many
//! waiting seekers (10,000 by default) in one pool on the Redis at
//! `REDIS_URL`: the wave's atomic read, the pairing rules, and the locked,
//! fenced commit of every pair. Games are only pretended (no game service),
//! so the figure is the matchmaker's own. Each run checks that every seek
//! that could be paired was (no two left over would accept each other),
//! that none was paired twice and nobody with themself, and cleans up its
//! keys.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context};
use fogblast_bus::MemoryBus;
use fogblast_matchmaker::pairing::compatible;
use fogblast_matchmaker::{MatchStore, Matchmaker, MatchmakerConfig, PoolKey, PretendGames};
use fogblast_proto::game::{ClockSettings, Variant};
use fogblast_proto::matchmaker::{RatingRange, SeekRequest};
use futures::StreamExt;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Debug, clap::Args)]
pub struct MatchmakerBenchArgs {
    /// Seekers waiting in the pool when the wave runs.
    #[arg(long, default_value_t = 10_000)]
    pub seekers: usize,
    /// How many waves to time, each over a fresh pool.
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Share of seekers with a rating range of ±300 around their own rating.
    #[arg(long, default_value_t = 0.1)]
    pub ranged: f64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, env = "REDIS_URL", default_value = "redis://127.0.0.1:6379")]
    pub redis_url: String,
}

pub fn run(args: &MatchmakerBenchArgs) -> anyhow::Result<()> {
    ensure!(args.seekers >= 2, "a wave needs at least two seekers");
    ensure!((0.0..=1.0).contains(&args.ranged), "--ranged is a share between 0 and 1");
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(async {
        let mut waves = Vec::new();
        for run in 0..args.runs.max(1) {
            let prefix = format!("bench-mm-{:08x}:", rand::random::<u32>());
            let result = one_run(args, run, &prefix).await;
            clean_up(&args.redis_url, &prefix).await;
            waves.push(result?);
        }
        waves.sort();
        println!(
            "one wave over {} seekers: median {:.1} ms, best {:.1} ms",
            args.seekers,
            waves[waves.len() / 2].as_secs_f64() * 1e3,
            waves[0].as_secs_f64() * 1e3
        );
        Ok(())
    })
}

async fn one_run(args: &MatchmakerBenchArgs, run: usize, prefix: &str) -> anyhow::Result<Duration> {
    let store = MatchStore::connect(&args.redis_url, prefix)
        .await
        .with_context(|| format!("connecting to {}", args.redis_url))?;
    let config = MatchmakerConfig { replica_id: Some("bench".to_owned()), ..MatchmakerConfig::default() };
    let matchmaker =
        Matchmaker::new(config.clone(), store.clone(), Arc::new(MemoryBus::new()), Arc::new(PretendGames::default()))?;
    let clock = ClockSettings { initial_ms: 180_000, increment_ms: 2_000 };
    let pool = PoolKey::new(Variant::Atomic, Some(&clock), true);

    let mut rng = StdRng::seed_from_u64(args.seed.wrapping_add(run as u64));
    let requests: Vec<SeekRequest> = (0..args.seekers)
        .map(|i| {
            let rating = rng.random_range(800..2800);
            SeekRequest {
                player_id: format!("bench{run}x{i}"),
                name: format!("bot {i}"),
                variant: Variant::Atomic as i32,
                clock: Some(clock),
                rated: true,
                range: rng.random_bool(args.ranged).then(|| RatingRange { min: rating - 300, max: rating + 300 }),
                rating: Some(rating),
            }
        })
        .collect();
    let seeding = Instant::now();
    let placed: Vec<_> = futures::stream::iter(requests)
        .map(|request| {
            let matchmaker = matchmaker.clone();
            async move { matchmaker.seek(request).await }
        })
        .buffer_unordered(64)
        .collect()
        .await;
    for result in placed {
        result.context("placing a seek")?;
    }
    let seeded = seeding.elapsed();

    let token = store
        .acquire_lease(&pool.name(), matchmaker.replica(), Duration::from_secs(120))
        .await?
        .context("the fresh pool's lease is taken")?;
    let Some(report) = matchmaker.run_wave(&pool, &token).await? else { bail!("the wave lost its lease") };

    // Check: nobody twice, nobody with themself, every pair acceptable,
    // and no two seekers left over who would accept each other.
    ensure!(report.seeks.len() == args.seekers, "the wave saw {} seeks of {}", report.seeks.len(), args.seekers);
    ensure!(report.skipped == 0, "{} pairs were skipped with nothing else running", report.skipped);
    let index: std::collections::HashMap<&str, usize> =
        report.seeks.iter().enumerate().map(|(i, s)| (s.id.as_str(), i)).collect();
    let params = config.settings.params();
    let mut used_seeks = HashSet::new();
    let mut used_players = HashSet::new();
    for pairing in &report.paired {
        for seat in [&pairing.white, &pairing.black] {
            ensure!(used_seeks.insert(seat.seek.clone()), "seek {} paired twice", seat.seek);
            ensure!(used_players.insert(seat.player.clone()), "player {} paired twice", seat.player);
        }
        let (Some(&w), Some(&b)) = (index.get(pairing.white.seek.as_str()), index.get(pairing.black.seek.as_str()))
        else {
            bail!("a pairing of seeks the wave did not see");
        };
        ensure!(compatible(&params, &report.seekers[w], &report.seekers[b]), "an unacceptable pair");
    }
    let left: Vec<usize> = (0..report.seeks.len()).filter(|i| !used_seeks.contains(&report.seeks[*i].id)).collect();
    for (n, &a) in left.iter().enumerate() {
        for &b in &left[n + 1..] {
            ensure!(
                !compatible(&params, &report.seekers[a], &report.seekers[b]),
                "seekers {a} and {b} could have been paired"
            );
        }
    }
    let status = store.pool_status(&pool.name()).await?;
    ensure!(status.seeks == left.len(), "the pool holds {} seeks, {} were left over", status.seeks, left.len());

    println!(
        "run {}: {} seekers placed in {:.2} s; one wave: {} pairs, {} left over, rules {:.1} ms, wave {:.1} ms",
        run + 1,
        args.seekers,
        seeded.as_secs_f64(),
        report.paired.len(),
        left.len(),
        report.matching.as_secs_f64() * 1e3,
        report.elapsed.as_secs_f64() * 1e3,
    );
    // Let the pretend games finish before the keys go.
    let deadline = Instant::now() + Duration::from_secs(60);
    while store.pool_status(&pool.name()).await?.pending > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(report.elapsed)
}

pub(crate) async fn clean_up(url: &str, prefix: &str) {
    let Ok(client) = redis::Client::open(url) else { return };
    let Ok(mut connection) = client.get_multiplexed_async_connection().await else { return };
    let mut cursor: u64 = 0;
    loop {
        let Ok((next, keys)): redis::RedisResult<(u64, Vec<String>)> = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(format!("{prefix}*"))
            .arg("COUNT")
            .arg(1000)
            .query_async(&mut connection)
            .await
        else {
            return;
        };
        if !keys.is_empty() {
            let _: redis::RedisResult<i64> = redis::cmd("DEL").arg(&keys).query_async(&mut connection).await;
        }
        if next == 0 {
            return;
        }
        cursor = next;
    }
}
