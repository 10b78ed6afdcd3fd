//! What a Fogblast cluster is made of and how its services are tuned,
//! written once for every place that starts one: the in-process sandbox,
//! the end-to-end tests' process cluster, the chaos run, the load tests'
//! spawned clusters and `fogblast up` (one of each, on
//! [`Profile::production`], its settings from the user's own flags).
//!
//! A [`Topology`] counts the services; a [`Profile`] holds the settings a
//! cluster changes from the services' defaults (short leases and sweeps for
//! tests, drains, open per-address limits for load), each `None` meaning
//! "the service's own default", so no default is copied here. A profile is
//! rendered as the flags of each service's command ([`Profile::game_flags`]
//! and the others): process clusters pass them on the command line, and
//! in-process clusters parse the same flags into the services' config
//! structs (`fogblast_runtime::from_flags`), so both kinds of cluster run
//! one value through one flag. A cluster of processes that share Redis and
//! NATS names them in [`SharedBackends`], the environment every process of
//! it gets.
//!
//! A crate of its own, with no dependencies: the sandbox (a library the
//! server package's tests use) and the server package (its tools, its
//! tests) both need it, and neither can depend on the other's code; the
//! services' crates and `fogblast-runtime` describe one service, not a
//! cluster of them.

use std::fmt::Display;

/// The limit every per-address limit is lifted to by
/// [`Profile::open_limits`]: a load run's bots all come from 127.0.0.1.
const OPEN_LIMIT: u32 = 1_000_000;

/// The gateway's per-address and per-connection limits that
/// [`Profile::open_limits`] lifts.
const PER_ADDRESS_LIMITS: [&str; 7] = [
    "--max-connections-per-ip",
    "--max-sockets-per-ip",
    "--games-per-ip-minute",
    "--http-requests-per-ip-minute",
    "--bot-requests-per-ip-minute",
    "--bot-requests-per-player-minute",
    "--credits",
];

/// How many of each service a cluster runs, and their settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// Engine pools, for games against the computer and analyses.
    pub engines: usize,
    pub shards: usize,
    pub matchmakers: usize,
    pub gateways: usize,
    /// Whether the rating service (and with it the archive) runs.
    pub rating: bool,
    pub profile: Profile,
}

impl Topology {
    /// One shard and one gateway, nothing else, on `profile`: the smallest
    /// cluster that plays a game; set the counts from there.
    pub fn new(profile: Profile) -> Topology {
        Topology { engines: 0, shards: 1, matchmakers: 0, gateways: 1, rating: false, profile }
    }
}

/// Where a cluster of processes keeps what its services share: a Redis key
/// prefix and, unless each process runs an in-process bus, a JetStream
/// stream and subject prefix that no other cluster uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedBackends {
    pub redis_url: String,
    pub redis_prefix: String,
    /// `None`: each process runs an in-process bus.
    pub nats: Option<NatsStream>,
}

/// A cluster's own stream on a NATS server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NatsStream {
    pub url: String,
    pub stream: String,
    pub subject_prefix: String,
    /// The stream's bound: JetStream refuses a stream larger than the
    /// storage it may still reserve, so a run sizes its own.
    pub max_bytes: u64,
}

impl SharedBackends {
    /// The environment a `fogblast` process reads these from.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        let mut env = vec![("REDIS_URL", self.redis_url.clone()), ("FOGBLAST_REDIS_PREFIX", self.redis_prefix.clone())];
        if let Some(nats) = &self.nats {
            env.extend([
                ("NATS_URL", nats.url.clone()),
                ("FOGBLAST_NATS_STREAM", nats.stream.clone()),
                ("FOGBLAST_NATS_SUBJECT_PREFIX", nats.subject_prefix.clone()),
                ("FOGBLAST_NATS_MAX_BYTES", nats.max_bytes.to_string()),
            ]);
        }
        env
    }
}

/// The settings a cluster changes from the services' defaults; `None`
/// (or `false`) leaves a service's default as it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// A game shard's membership lease (`--lease-ms`).
    pub lease_ms: Option<u64>,
    /// How often a shard sweeps deadlines and its outbox (`--sweep-ms`).
    pub sweep_ms: Option<u64>,
    /// How long a finished game stays in the live store (`--finished-ttl-ms`).
    pub finished_ttl_ms: Option<u64>,
    /// How often a gateway reads shard membership again (`--membership-refresh-ms`).
    pub membership_refresh_ms: Option<u64>,
    /// How long a gateway lets its clients leave on SIGTERM (`--drain-ms`).
    pub gateway_drain_ms: Option<u64>,
    /// Every other service's drain on stop: the engine pool, the shard,
    /// the matchmaker and the rating service.
    pub drain_ms: Option<u64>,
    /// Lift the gateway's per-address limits (connections, sockets, games,
    /// HTTP and bot requests, message credits) to a million each.
    pub open_limits: bool,
    /// How often the matchmaker pairs a pool at least (`--wave-ms`).
    pub wave_ms: Option<u64>,
    /// How long the matchmaker gathers lobby changes into one notice (`--lobby-publish-ms`).
    pub lobby_publish_ms: Option<u64>,
    /// How long the rating service has to acknowledge a finished game (`--rating-ack-wait-ms`).
    pub rating_ack_wait_ms: Option<u64>,
    /// An engine pool's search threads (`--workers`).
    pub engine_workers: Option<u32>,
    /// Each search thread's hash table in MiB (`--hash-mb`).
    pub engine_hash_mb: Option<u32>,
    /// How deep an analysis searches (`--analysis-depth`).
    pub analysis_depth: Option<u32>,
}

impl Default for Profile {
    fn default() -> Profile {
        Profile::production()
    }
}

impl Profile {
    /// The services' own defaults, as deployed: no flag is set.
    pub const fn production() -> Profile {
        Profile {
            lease_ms: None,
            sweep_ms: None,
            finished_ttl_ms: None,
            membership_refresh_ms: None,
            gateway_drain_ms: None,
            drain_ms: None,
            open_limits: false,
            wave_ms: None,
            lobby_publish_ms: None,
            rating_ack_wait_ms: None,
            engine_workers: None,
            engine_hash_mb: None,
            analysis_depth: None,
        }
    }

    /// For tests on real processes: a shard that dies is replaced within
    /// about a second (900 ms leases, sweeps and membership reads every
    /// 200 ms), the matchmaker pairs every 300 ms and publishes the lobby
    /// every 50 ms, a finished game not acknowledged by the rating service
    /// in 2 s is delivered again, engine pools have one small search
    /// thread, and a gateway drains for 2 s.
    pub const fn fast_test() -> Profile {
        Profile {
            lease_ms: Some(900),
            sweep_ms: Some(200),
            membership_refresh_ms: Some(200),
            gateway_drain_ms: Some(2_000),
            wave_ms: Some(300),
            lobby_publish_ms: Some(50),
            rating_ack_wait_ms: Some(2_000),
            engine_workers: Some(1),
            engine_hash_mb: Some(4),
            ..Profile::production()
        }
    }

    /// For tests inside one process (the sandbox): [`Profile::fast_test`]
    /// with every service draining for half a second (a test's clients are
    /// gone or do not matter by then), shallow analyses for unoptimised
    /// builds, and the rating service's own acknowledgement wait.
    pub const fn in_process_test() -> Profile {
        Profile {
            gateway_drain_ms: Some(500),
            drain_ms: Some(500),
            analysis_depth: Some(4),
            rating_ack_wait_ms: None,
            ..Profile::fast_test()
        }
    }

    /// For the chaos run and the arena load test: the timings of
    /// [`Profile::fast_test`] under load, with the shards' production
    /// lease (a run may set its own) and lobby notices.
    pub const fn chaos() -> Profile {
        Profile { lease_ms: None, lobby_publish_ms: None, ..Profile::fast_test().under_load() }
    }

    /// For the load test's spawned cluster: production timings under load.
    pub const fn load() -> Profile {
        Profile::production().under_load()
    }

    /// This profile with bots from one address in mind: the per-address
    /// limits lifted, and gateways that drain for one second.
    pub const fn under_load(self) -> Profile {
        Profile { open_limits: true, gateway_drain_ms: Some(1_000), ..self }
    }

    /// The flags of `fogblast engine` this profile sets.
    pub fn engine_flags(&self) -> Vec<String> {
        let mut flags = Flags::default();
        flags.set("--workers", self.engine_workers);
        flags.set("--hash-mb", self.engine_hash_mb);
        flags.set("--analysis-depth", self.analysis_depth);
        flags.set("--drain-ms", self.drain_ms);
        flags.0
    }

    /// The flags of `fogblast game` this profile sets.
    pub fn game_flags(&self) -> Vec<String> {
        let mut flags = Flags::default();
        flags.set("--lease-ms", self.lease_ms);
        flags.set("--sweep-ms", self.sweep_ms);
        flags.set("--finished-ttl-ms", self.finished_ttl_ms);
        flags.set("--game-drain-ms", self.drain_ms);
        flags.0
    }

    /// The flags of `fogblast gateway` this profile sets.
    pub fn gateway_flags(&self) -> Vec<String> {
        let mut flags = Flags::default();
        flags.set("--membership-refresh-ms", self.membership_refresh_ms);
        flags.set("--drain-ms", self.gateway_drain_ms);
        for limit in PER_ADDRESS_LIMITS {
            flags.set(limit, self.open_limits.then_some(OPEN_LIMIT));
        }
        flags.0
    }

    /// The flags of `fogblast matchmaker` this profile sets.
    pub fn matchmaker_flags(&self) -> Vec<String> {
        let mut flags = Flags::default();
        flags.set("--wave-ms", self.wave_ms);
        flags.set("--lobby-publish-ms", self.lobby_publish_ms);
        flags.set("--matchmaker-drain-ms", self.drain_ms);
        flags.0
    }

    /// The flags of `fogblast rating` this profile sets.
    pub fn rating_flags(&self) -> Vec<String> {
        let mut flags = Flags::default();
        flags.set("--rating-ack-wait-ms", self.rating_ack_wait_ms);
        flags.set("--rating-drain-ms", self.drain_ms);
        flags.0
    }
}

/// `--flag=value` for each setting that is set.
#[derive(Default)]
struct Flags(Vec<String>);

impl Flags {
    fn set(&mut self, flag: &str, value: Option<impl Display>) {
        if let Some(value) = value {
            self.0.push(format!("{flag}={value}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn production_sets_no_flag() {
        let production = Profile::production();
        for flags in [
            production.engine_flags(),
            production.game_flags(),
            production.gateway_flags(),
            production.matchmaker_flags(),
            production.rating_flags(),
        ] {
            assert!(flags.is_empty(), "{flags:?}");
        }
    }

    #[test]
    fn fast_test_shortens_leases_sweeps_and_waves() {
        let fast = Profile::fast_test();
        assert_eq!(fast.game_flags(), ["--lease-ms=900", "--sweep-ms=200"]);
        assert_eq!(fast.gateway_flags(), ["--membership-refresh-ms=200", "--drain-ms=2000"]);
        assert_eq!(fast.matchmaker_flags(), ["--wave-ms=300", "--lobby-publish-ms=50"]);
        assert_eq!(fast.rating_flags(), ["--rating-ack-wait-ms=2000"]);
        assert_eq!(fast.engine_flags(), ["--workers=1", "--hash-mb=4"]);
    }

    #[test]
    fn in_process_drains_every_service_briefly() {
        let in_process = Profile::in_process_test();
        assert!(in_process.game_flags().contains(&"--game-drain-ms=500".to_owned()));
        assert!(in_process.gateway_flags().contains(&"--drain-ms=500".to_owned()));
        assert_eq!(in_process.rating_flags(), ["--rating-drain-ms=500"]);
        assert_eq!(in_process.engine_flags(), ["--workers=1", "--hash-mb=4", "--analysis-depth=4", "--drain-ms=500"]);
    }

    #[test]
    fn under_load_lifts_every_per_address_limit() {
        let flags = Profile::load().gateway_flags();
        assert_eq!(flags.len(), 1 + PER_ADDRESS_LIMITS.len(), "{flags:?}");
        assert_eq!(flags[0], "--drain-ms=1000");
        for limit in PER_ADDRESS_LIMITS {
            assert!(flags.contains(&format!("{limit}={OPEN_LIMIT}")), "{limit} in {flags:?}");
        }
        assert!(Profile::load().game_flags().is_empty());
    }

    #[test]
    fn chaos_keeps_the_fast_timings_but_the_production_lease() {
        let chaos = Profile::chaos();
        assert_eq!(chaos.game_flags(), ["--sweep-ms=200"]);
        assert_eq!(chaos.matchmaker_flags(), ["--wave-ms=300"]);
        assert!(chaos.open_limits);
        assert_eq!(chaos.gateway_drain_ms, Some(1_000));
    }

    #[test]
    fn shared_backends_name_the_bus_only_when_there_is_one() {
        let redis = SharedBackends { redis_url: "redis://r".into(), redis_prefix: "run:".into(), nats: None };
        let names: Vec<&str> = redis.env().iter().map(|(name, _)| *name).collect();
        assert_eq!(names, ["REDIS_URL", "FOGBLAST_REDIS_PREFIX"]);
        let nats =
            NatsStream { url: "nats://n".into(), stream: "RUN".into(), subject_prefix: "run.".into(), max_bytes: 7 };
        let both = SharedBackends { nats: Some(nats), ..redis };
        assert!(both.env().contains(&("FOGBLAST_NATS_STREAM", "RUN".to_owned())));
        assert!(both.env().contains(&("FOGBLAST_NATS_MAX_BYTES", "7".to_owned())));
    }

    #[test]
    fn a_new_topology_is_one_shard_and_one_gateway() {
        let topology = Topology::new(Profile::fast_test());
        assert_eq!((topology.engines, topology.shards, topology.matchmakers, topology.gateways), (0, 1, 0, 1));
        assert!(!topology.rating);
    }
}
