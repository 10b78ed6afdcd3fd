//! The game shard's settings, read once from flags and the environment by
//! the `fogblast` binary and passed down; tests build the struct directly.
//!
//! [`GameSettings`] holds what means the same whether the shard runs on its
//! own or inside `fogblast up` (lease, sweep, timeouts), so both commands
//! flatten it and take the same flags and variables; the addresses and the
//! shard's identity, which `up` wires itself, stay in [`GameConfig`].

use std::net::SocketAddr;
use std::time::Duration;

use fogblast_proto::public_events::Encoding;

/// How long the service waits before acting for absent players.
#[derive(Clone, Debug, PartialEq, Eq, clap::Args)]
pub struct Timeouts {
    /// A game both seats joined is aborted if a side has not made its first move within this many ms.
    #[arg(long = "no-start-ms", env = "FOGBLAST_GAME_NO_START_MS", default_value_t = 30_000)]
    pub no_start_ms: u64,
    /// An open game nobody joins is aborted after this many ms.
    #[arg(long = "open-game-ms", env = "FOGBLAST_GAME_OPEN_GAME_MS", default_value_t = 1_800_000)]
    pub open_game_ms: u64,
    /// After a player's last connection drops, the opponent may claim victory after this many ms.
    #[arg(long = "claim-after-ms", env = "FOGBLAST_GAME_CLAIM_AFTER_MS", default_value_t = 30_000)]
    pub claim_after_ms: u64,
    /// A game both players left ends after this many ms.
    #[arg(long = "abandon-ms", env = "FOGBLAST_GAME_ABANDON_MS", default_value_t = 600_000)]
    pub abandon_ms: u64,
}

impl Default for Timeouts {
    /// The defaults of the flags, without reading the environment.
    fn default() -> Timeouts {
        fogblast_runtime::defaults()
    }
}

/// How a game shard runs.
#[derive(Clone, Debug, clap::Args)]
pub struct GameConfig {
    /// Address the gRPC service listens on.
    #[arg(long = "game-listen", env = "FOGBLAST_GAME_LISTEN", default_value = "0.0.0.0:50052")]
    pub listen: SocketAddr,
    /// Address the Prometheus `/metrics`, `/healthz` and `/readyz` endpoints listen on.
    #[arg(long = "game-metrics-listen", env = "FOGBLAST_GAME_METRICS_LISTEN", default_value = "0.0.0.0:9102")]
    pub metrics_listen: SocketAddr,
    /// The address other processes reach this shard's gRPC service at [default: the listen address, with 127.0.0.1 for 0.0.0.0].
    #[arg(long = "game-advertise", env = "FOGBLAST_GAME_ADVERTISE")]
    pub advertise: Option<String>,
    /// This shard's id, stable across restarts (a StatefulSet pod name) [default: random].
    #[arg(long = "shard-id", env = "FOGBLAST_GAME_SHARD_ID")]
    pub shard_id: Option<String>,
    /// Engine pool addresses (`http://host:port`), comma separated; each call tries the next on failure.
    #[arg(long = "engine-addrs", env = "FOGBLAST_ENGINE_ADDRS", value_delimiter = ',')]
    pub engine_addrs: Vec<String>,
    /// On SIGTERM, how long calls and Watch streams already open may take before the shard closes them, in ms.
    #[arg(long = "game-drain-ms", env = "FOGBLAST_GAME_DRAIN_MS", default_value_t = 5_000)]
    pub drain_ms: u64,
    #[command(flatten)]
    pub settings: GameSettings,
}

/// The shard's lease, sweep and timeouts.
#[derive(Clone, Debug, clap::Args)]
pub struct GameSettings {
    /// The membership lease; renewed every third of it. A shard that cannot renew in time stops serving.
    #[arg(long = "lease-ms", env = "FOGBLAST_GAME_LEASE_MS", default_value_t = 3_000)]
    pub lease_ms: u64,
    /// How often membership is read again and the other shards' ports are probed; a shard whose port refuses connections loses its lease at once.
    #[arg(long = "peer-check-ms", env = "FOGBLAST_GAME_PEER_CHECK_MS", default_value_t = 100)]
    pub peer_check_ms: u64,
    /// How often the deadline set and the outbox are swept.
    #[arg(long = "sweep-ms", env = "FOGBLAST_GAME_SWEEP_MS", default_value_t = 1_000)]
    pub sweep_ms: u64,
    /// A finished game stays in the store this long for reconnects and rematches, in ms.
    #[arg(long = "finished-ttl-ms", env = "FOGBLAST_GAME_FINISHED_TTL_MS", default_value_t = 3_600_000)]
    pub finished_ttl_ms: u64,
    /// Publish every game's public events (created, started, moves, takebacks, finished; docs/events.md) to the stream. Off on the in-process bus, which no outside consumer can read.
    #[arg(long = "public-events", env = "FOGBLAST_GAME_PUBLIC_EVENTS", default_value_t = true, action = clap::ArgAction::Set)]
    pub public_events: bool,
    /// The encodings each public event is published in, of `pb` and `json`, comma-separated: each costs a stored message an event, so an operator whose consumers read one encoding publishes only that one.
    #[arg(
        long = "public-event-encodings",
        env = "FOGBLAST_GAME_PUBLIC_EVENT_ENCODINGS",
        value_delimiter = ',',
        num_args = 1..,
        default_value = "pb,json"
    )]
    pub public_event_encodings: Vec<Encoding>,
    #[command(flatten)]
    pub timeouts: Timeouts,
}

impl GameConfig {
    pub fn drain(&self) -> Duration {
        Duration::from_millis(self.drain_ms)
    }
}

impl GameSettings {
    pub fn lease(&self) -> Duration {
        Duration::from_millis(self.lease_ms)
    }

    pub fn peer_check_interval(&self) -> Duration {
        Duration::from_millis(self.peer_check_ms)
    }

    pub fn sweep_interval(&self) -> Duration {
        Duration::from_millis(self.sweep_ms)
    }
}

impl Default for GameConfig {
    /// The defaults of the flags, without reading the environment.
    fn default() -> GameConfig {
        fogblast_runtime::defaults()
    }
}

impl Default for GameSettings {
    /// The defaults of the flags, without reading the environment.
    fn default() -> GameSettings {
        fogblast_runtime::defaults()
    }
}
