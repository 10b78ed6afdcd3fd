//! The matchmaker's settings, read once from flags and the environment by
//! the `fogblast` binary and passed down; tests and the benchmark build the
//! struct directly. `docs/matchmaker.md` tabulates them.
//!
//! [`MatchmakerSettings`] (leases, waves, windows, the lobby) means the same
//! whether the matchmaker runs on its own or inside `fogblast up`, so both
//! commands flatten it and take the same flags and variables; the addresses
//! and the replica's identity, which `up` wires itself, stay in
//! [`MatchmakerConfig`].

use std::net::SocketAddr;
use std::time::Duration;

use crate::pairing::Params;

#[derive(Clone, Debug, clap::Args)]
pub struct MatchmakerConfig {
    /// Address the gRPC service listens on.
    #[arg(long = "matchmaker-listen", env = "FOGBLAST_MATCHMAKER_LISTEN", default_value = "0.0.0.0:50055")]
    pub listen: SocketAddr,
    /// Address of `/metrics`, `/healthz` and `/readyz`.
    #[arg(
        long = "matchmaker-metrics-listen",
        env = "FOGBLAST_MATCHMAKER_METRICS_LISTEN",
        default_value = "0.0.0.0:9105"
    )]
    pub metrics_listen: SocketAddr,
    /// This replica's id, stable across restarts [default: random].
    #[arg(long = "matchmaker-id", env = "FOGBLAST_MATCHMAKER_ID")]
    pub replica_id: Option<String>,
    /// The rating service (`http://host:port`) to look ratings up in [default: the rating in the request, or 1500].
    #[arg(long = "matchmaker-rating-addr", env = "FOGBLAST_RATING_ADDR")]
    pub rating_addr: Option<String>,
    /// On SIGTERM, how long calls already open may take before the replica closes them, in ms.
    #[arg(long = "matchmaker-drain-ms", env = "FOGBLAST_MATCHMAKER_DRAIN_MS", default_value_t = 5_000)]
    pub drain_ms: u64,
    #[command(flatten)]
    pub settings: MatchmakerSettings,
}

/// How pools pair, how long seeks and boards live, and the lobby's size.
#[derive(Clone, Debug, clap::Args)]
pub struct MatchmakerSettings {
    /// A pool's lease, in ms; renewed every third of it. One replica at a time pairs a pool.
    #[arg(
        id = "matchmaker_lease_ms",
        long = "matchmaker-lease-ms",
        env = "FOGBLAST_MATCHMAKER_LEASE_MS",
        default_value_t = 3_000
    )]
    pub lease_ms: u64,
    /// How often a replica looks at its pools and for pools without a holder, in ms.
    #[arg(long = "matchmaker-tick-ms", env = "FOGBLAST_MATCHMAKER_TICK_MS", default_value_t = 100)]
    pub tick_ms: u64,
    /// A pool pairs at least this often, in ms.
    #[arg(long = "wave-ms", env = "FOGBLAST_MATCHMAKER_WAVE_MS", default_value_t = 2_000)]
    pub wave_ms: u64,
    /// A pool pairs at once when this many seekers are waiting.
    #[arg(long = "wave-players", env = "FOGBLAST_MATCHMAKER_WAVE_PLAYERS", default_value_t = 16)]
    pub wave_players: usize,
    /// Rating window of a seek that has just arrived.
    #[arg(long = "window-base", env = "FOGBLAST_MATCHMAKER_WINDOW_BASE", default_value_t = 100)]
    pub window_base: u32,
    /// Rating window widening per second waited.
    #[arg(long = "window-per-s", env = "FOGBLAST_MATCHMAKER_WINDOW_PER_S", default_value_t = 20)]
    pub window_per_s: u32,
    /// The widest rating window.
    #[arg(long = "window-max", env = "FOGBLAST_MATCHMAKER_WINDOW_MAX", default_value_t = 1_000)]
    pub window_max: u32,
    /// Pairing score bonus per missed wave.
    #[arg(long = "miss-bonus", env = "FOGBLAST_MATCHMAKER_MISS_BONUS", default_value_t = 30)]
    pub miss_bonus: u32,
    /// The largest miss bonus.
    #[arg(long = "miss-bonus-max", env = "FOGBLAST_MATCHMAKER_MISS_BONUS_MAX", default_value_t = 300)]
    pub miss_bonus_max: u32,
    /// How many recent colours of each player are kept for colour balancing.
    #[arg(long = "color-history", env = "FOGBLAST_MATCHMAKER_COLOR_HISTORY", default_value_t = 10)]
    pub color_history: usize,
    /// A seek still unpaired after this many ms is dropped (its player is told).
    #[arg(long = "seek-max-age-ms", env = "FOGBLAST_MATCHMAKER_SEEK_MAX_AGE_MS", default_value_t = 1_800_000)]
    pub seek_max_age_ms: u64,
    /// An open board leaves the lobby after this many ms, as the game service aborts open games.
    #[arg(long = "board-ttl-ms", env = "FOGBLAST_MATCHMAKER_BOARD_TTL_MS", default_value_t = 1_800_000)]
    pub board_ttl_ms: u64,
    /// Lobby changes within this many ms go out as one lobby notice.
    #[arg(long = "lobby-publish-ms", env = "FOGBLAST_MATCHMAKER_LOBBY_PUBLISH_MS", default_value_t = 100)]
    pub lobby_publish_ms: u64,
    /// Open boards one player may have in the lobby; opening one more takes their oldest out (the game stays open by its link).
    #[arg(long = "boards-per-player", env = "FOGBLAST_MATCHMAKER_BOARDS_PER_PLAYER", default_value_t = 3)]
    pub boards_per_player: usize,
    /// Open boards one address may have in the lobby, over all its players; past it their oldest leave.
    #[arg(long = "boards-per-address", env = "FOGBLAST_MATCHMAKER_BOARDS_PER_ADDRESS", default_value_t = 10)]
    pub boards_per_address: usize,
    /// The most boards a lobby notice lists (newest first).
    #[arg(long = "lobby-max", env = "FOGBLAST_MATCHMAKER_LOBBY_MAX", default_value_t = 500)]
    pub lobby_max: usize,
    /// How long a game-service call may take, retries and failovers included, in ms.
    #[arg(
        id = "matchmaker_route_timeout_ms",
        long = "matchmaker-route-timeout-ms",
        env = "FOGBLAST_MATCHMAKER_ROUTE_TIMEOUT_MS",
        default_value_t = 8_000
    )]
    pub route_timeout_ms: u64,
    /// A pairing whose game could not be made for this many ms is given up; both players are told.
    #[arg(long = "pairing-give-up-ms", env = "FOGBLAST_MATCHMAKER_PAIRING_GIVE_UP_MS", default_value_t = 60_000)]
    pub pairing_give_up_ms: u64,
    /// The shortest arena a player may create, in minutes.
    #[arg(long = "tournament-min-minutes", env = "FOGBLAST_TOURNAMENT_MIN_MINUTES", default_value_t = 10)]
    pub tournament_min_minutes: u32,
    /// Arenas the matchmaker makes on its own, each exactly once across replicas:
    /// `name|variant|<min>+<s>|minutes|<n>h or <n>d[@HH:MM]` entries separated by `;`
    /// (docs/tournaments.md).
    #[arg(long = "tournament-schedule", env = "FOGBLAST_TOURNAMENT_SCHEDULE", default_value = "")]
    pub tournament_schedule: String,
}

impl MatchmakerConfig {
    pub fn drain(&self) -> Duration {
        Duration::from_millis(self.drain_ms)
    }
}

impl MatchmakerSettings {
    pub fn tournament_limits(&self) -> crate::tournament::commands::Limits {
        let defaults = crate::tournament::commands::Limits::default();
        crate::tournament::commands::Limits { min_minutes: self.tournament_min_minutes.max(1), ..defaults }
    }

    pub fn lease(&self) -> Duration {
        Duration::from_millis(self.lease_ms.max(3))
    }

    pub fn tick(&self) -> Duration {
        Duration::from_millis(self.tick_ms.max(1))
    }

    pub fn route_timeout(&self) -> Duration {
        Duration::from_millis(self.route_timeout_ms)
    }

    pub fn params(&self) -> Params {
        Params {
            window_base: self.window_base,
            window_per_s: self.window_per_s,
            window_max: self.window_max,
            miss_bonus: self.miss_bonus,
            miss_bonus_max: self.miss_bonus_max,
            neighbours: Params::default().neighbours,
        }
    }
}

impl Default for MatchmakerConfig {
    /// The defaults of the flags, without reading the environment.
    fn default() -> MatchmakerConfig {
        fogblast_runtime::defaults()
    }
}

impl Default for MatchmakerSettings {
    /// The defaults of the flags, without reading the environment.
    fn default() -> MatchmakerSettings {
        fogblast_runtime::defaults()
    }
}
