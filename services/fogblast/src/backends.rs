//! Where services keep state and send events: Redis and NATS JetStream
//! when their URLs are given, the in-process adapters otherwise. Parsed
//! once from flags and the environment, shared by every service command.

use std::sync::Arc;

use anyhow::Context;
use fogblast_bus::{EventBus, MemoryBus, NatsBus, NatsConfig};
use fogblast_store::{Durability, GameStore, MemoryStore, RedisStore};
use tracing::info;

#[derive(Clone, Debug, clap::Args)]
pub struct BackendArgs {
    /// Redis for live games, membership and deadlines [default: an in-process store].
    #[arg(long, env = "REDIS_URL")]
    pub redis_url: Option<String>,
    /// Prefix of every Redis key, so several deployments can share one Redis.
    #[arg(long, env = "FOGBLAST_REDIS_PREFIX", default_value = "fogblast:")]
    pub redis_prefix: String,
    /// Acknowledge a move only once this many Redis replicas confirmed it (`WAIT`); 0: once the primary applied it.
    /// A failover to a replica then loses no acknowledged move (docs/operations.md, "Durability").
    #[arg(long, env = "FOGBLAST_REDIS_WAIT_REPLICAS", default_value_t = 0)]
    pub redis_wait_replicas: u32,
    /// How long a commit waits for its replicas before it is answered as a store failure (and retried); at most 400.
    #[arg(long, env = "FOGBLAST_REDIS_WAIT_MS", default_value_t = 300)]
    pub redis_wait_ms: u64,
    /// How often the game clocks read Redis's own time (`TIME`); in between, the last reading is carried forward on
    /// this machine's monotonic clock, so a move costs one Redis round trip instead of two. 0: read it for every
    /// command.
    #[arg(long, env = "FOGBLAST_REDIS_CLOCK_SYNC_MS", default_value_t = 500)]
    pub redis_clock_sync_ms: u64,
    /// NATS with JetStream for finished games and notifications [default: an in-process bus]. On a NATS cluster,
    /// several seed servers, comma separated (`nats://a:4222,nats://b:4222,nats://c:4222`).
    #[arg(long, env = "NATS_URL")]
    pub nats_url: Option<String>,
    /// Copies JetStream keeps of each of Fogblast's streams (1 to 5). On a NATS cluster of three servers, 3: then
    /// losing one server loses no finished game (docs/operations.md, "On a NATS cluster").
    #[arg(long, env = "FOGBLAST_NATS_REPLICAS", default_value_t = 1)]
    pub nats_replicas: usize,
    /// The JetStream stream that keeps finished games.
    #[arg(long, env = "FOGBLAST_NATS_STREAM", default_value = "FOGBLAST_GAMES")]
    pub nats_stream: String,
    /// Put in front of every NATS subject (e.g. `staging.`), so that several deployments, each with a stream of its
    /// own, can share one NATS server: two streams may not hold the same subjects [default: none].
    #[arg(long, env = "FOGBLAST_NATS_SUBJECT_PREFIX", default_value = "")]
    pub nats_subject_prefix: String,
    /// Finished games older than this many hours leave the stream (0: never). Consumers that fall further behind
    /// miss them, so keep it above the longest outage of the archive and rating service.
    #[arg(long, env = "FOGBLAST_NATS_MAX_AGE_H", default_value_t = 168)]
    pub nats_max_age_h: u64,
    /// The stream's bound in bytes; past it the oldest finished games leave (0: no bound).
    #[arg(long, env = "FOGBLAST_NATS_MAX_BYTES", default_value_t = 10 * 1024 * 1024 * 1024)]
    pub nats_max_bytes: u64,
    /// The public game events (docs/events.md) are kept in a stream of their own beside the site's, named with
    /// `_PUBLIC` after it: this many hours [default: as --nats-max-age-h].
    #[arg(long, env = "FOGBLAST_NATS_PUBLIC_MAX_AGE_H")]
    pub nats_public_max_age_h: Option<u64>,
    /// The public events' stream's bound in bytes [default: as --nats-max-bytes].
    #[arg(long, env = "FOGBLAST_NATS_PUBLIC_MAX_BYTES")]
    pub nats_public_max_bytes: Option<u64>,
    /// How long the public events' stream remembers an event's id, so that one published again by a shard taking
    /// its game over is dropped (every move's ids are held in the NATS server's memory that long).
    #[arg(long, env = "FOGBLAST_NATS_PUBLIC_DUPLICATE_WINDOW_S", default_value_t = 600)]
    pub nats_public_duplicate_window_s: u64,
}

/// The subject prefix as the bus wants it: empty, or ending in `.`.
fn subject_prefix(prefix: &str) -> String {
    if prefix.is_empty() || prefix.ends_with('.') {
        prefix.to_owned()
    } else {
        format!("{prefix}.")
    }
}

/// The store's durability from its two settings.
pub fn durability(wait_replicas: u32, wait_ms: u64) -> Durability {
    if wait_replicas == 0 {
        Durability::Applied
    } else {
        Durability::Replicated { replicas: wait_replicas, timeout: std::time::Duration::from_millis(wait_ms) }
    }
}

pub async fn store(args: &BackendArgs) -> anyhow::Result<Arc<dyn GameStore>> {
    Ok(match &args.redis_url {
        Some(url) => {
            info!(url = %url, prefix = %args.redis_prefix, wait_replicas = args.redis_wait_replicas, "store: redis");
            let store =
                RedisStore::connect(url, &args.redis_prefix).await.with_context(|| format!("connecting to {url}"))?;
            Arc::new(
                store
                    .with_durability(durability(args.redis_wait_replicas, args.redis_wait_ms))
                    .with_clock_sync(std::time::Duration::from_millis(args.redis_clock_sync_ms)),
            )
        }
        None => {
            info!("store: in-process (REDIS_URL not set); games live and die with this process");
            Arc::new(MemoryStore::new())
        }
    })
}

pub async fn bus(args: &BackendArgs) -> anyhow::Result<Arc<dyn EventBus>> {
    Ok(match &args.nats_url {
        Some(url) => {
            let subject_prefix = subject_prefix(&args.nats_subject_prefix);
            info!(
                url = %url,
                stream = %args.nats_stream,
                replicas = args.nats_replicas,
                subject_prefix = %subject_prefix,
                "event bus: nats jetstream"
            );
            let config = NatsConfig {
                url: url.clone(),
                replicas: args.nats_replicas,
                stream: args.nats_stream.clone(),
                subject_prefix,
                max_age: std::time::Duration::from_secs(args.nats_max_age_h.saturating_mul(3600)),
                max_bytes: args.nats_max_bytes,
                public_duplicate_window: std::time::Duration::from_secs(args.nats_public_duplicate_window_s),
                public_max_age: args
                    .nats_public_max_age_h
                    .map(|h| std::time::Duration::from_secs(h.saturating_mul(3600))),
                public_max_bytes: args.nats_public_max_bytes,
                ..NatsConfig::default()
            };
            Arc::new(NatsBus::connect(config).await.with_context(|| format!("connecting to {url}"))?)
        }
        None => {
            info!("event bus: in-process (NATS_URL not set)");
            Arc::new(MemoryBus::new())
        }
    })
}
