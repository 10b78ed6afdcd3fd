//! The gateway's settings, read once from flags and the environment by the
//! `fogblast` binary and passed down; tests build the struct directly.
//!
//! [`GatewaySettings`] holds what means the same whether the gateway runs on
//! its own or inside `fogblast up` (limits, timeouts, the token secret), so
//! both commands flatten it and take the same flags and variables; the
//! addresses, which `up` wires itself, stay in [`GatewayConfig`].

use std::net::SocketAddr;
use std::time::Duration;

#[derive(Clone, Debug, clap::Args)]
pub struct GatewayConfig {
    /// Address the WebSocket and HTTP server listens on.
    #[arg(long = "gateway-listen", env = "FOGBLAST_GATEWAY_LISTEN", default_value = "0.0.0.0:8080")]
    pub listen: SocketAddr,
    /// Address of the admin server: Prometheus `/metrics`, `/healthz`, `/readyz`; kept off the public port.
    #[arg(long = "gateway-metrics-listen", env = "FOGBLAST_GATEWAY_METRICS_LISTEN", default_value = "0.0.0.0:9101")]
    pub metrics_listen: Option<SocketAddr>,
    /// The rating service (`http://host:port`), for profiles, leaderboards, archived games and PGN [default: none, and those routes answer 503].
    #[arg(long = "rating-addr", env = "FOGBLAST_RATING_ADDR")]
    pub rating_addr: Option<String>,
    /// The matchmaker (`http://host:port`), for quick pairing and the lobby [default: none, and `seek`/`lobby` answer `unavailable`].
    #[arg(long = "matchmaker-addr", env = "FOGBLAST_MATCHMAKER_ADDR")]
    pub matchmaker_addr: Option<String>,
    #[command(flatten)]
    pub settings: GatewaySettings,
}

/// The gateway's limits and timeouts.
#[derive(Clone, Debug, clap::Args)]
pub struct GatewaySettings {
    /// Secret that signs player tokens; every gateway of a deployment needs the same one [default: random, so tokens die with the process].
    #[arg(
        long = "token-secret",
        env = "FOGBLAST_TOKEN_SECRET",
        hide_env_values = true,
        overrides_with = "token_secret"
    )]
    pub token_secret: Option<String>,
    /// Secrets tokens were signed with before the current one, still accepted (comma-separated); a player who comes back with such a token is handed one of the current secret. Drop them once the grace period is over.
    #[arg(
        long = "token-previous-secrets",
        env = "FOGBLAST_TOKEN_PREVIOUS_SECRETS",
        hide_env_values = true,
        value_delimiter = ','
    )]
    pub token_previous_secrets: Vec<String>,
    /// A token whose player has not come back for this many days is refused (each return renews it); 0: tokens never expire.
    #[arg(long = "token-max-age-days", env = "FOGBLAST_TOKEN_MAX_AGE_DAYS", default_value_t = 400)]
    pub token_max_age_days: u64,
    /// Largest WebSocket frame or message accepted, in bytes; a larger one closes the connection.
    #[arg(long = "max-frame-bytes", env = "FOGBLAST_GATEWAY_MAX_FRAME_BYTES", default_value_t = 4096)]
    pub max_frame_bytes: usize,
    /// Messages a connection may send per `credit-window-ms`; past that they are refused with `rate_limited`.
    #[arg(long = "credits", env = "FOGBLAST_GATEWAY_CREDITS", default_value_t = 100)]
    pub credits: u32,
    #[arg(long = "credit-window-ms", env = "FOGBLAST_GATEWAY_CREDIT_WINDOW_MS", default_value_t = 20_000)]
    pub credit_window_ms: u64,
    /// Concurrent connections from one IP address.
    #[arg(long = "max-connections-per-ip", env = "FOGBLAST_GATEWAY_MAX_CONNECTIONS_PER_IP", default_value_t = 64)]
    pub max_connections_per_ip: u32,
    /// Games one IP address may create per minute.
    #[arg(long = "games-per-ip-minute", env = "FOGBLAST_GATEWAY_GAMES_PER_IP_MINUTE", default_value_t = 30)]
    pub games_per_ip_minute: u32,
    /// Live games against the computer one address may hold seats in on this gateway; past that a new one (or following another) is refused with `rate_limited`.
    #[arg(long = "computer-games-per-ip", env = "FOGBLAST_GATEWAY_COMPUTER_GAMES_PER_IP", default_value_t = 8)]
    pub computer_games_per_ip: u32,
    /// HTTP API requests (`/api/...`) one address may make per minute; past that they are answered 429 with `Retry-After`.
    #[arg(
        long = "http-requests-per-ip-minute",
        env = "FOGBLAST_GATEWAY_HTTP_REQUESTS_PER_IP_MINUTE",
        default_value_t = 240
    )]
    pub http_requests_per_ip_minute: u32,
    /// Bot API requests (a move is one) one player may make per minute; past that 429 with `Retry-After`.
    #[arg(
        long = "bot-requests-per-player-minute",
        env = "FOGBLAST_GATEWAY_BOT_REQUESTS_PER_PLAYER_MINUTE",
        default_value_t = 600
    )]
    pub bot_requests_per_player_minute: u32,
    /// Bot API requests the bots of one address may make together per minute.
    #[arg(
        long = "bot-requests-per-ip-minute",
        env = "FOGBLAST_GATEWAY_BOT_REQUESTS_PER_IP_MINUTE",
        default_value_t = 3_000
    )]
    pub bot_requests_per_ip_minute: u32,
    /// Loads of the web client's page (`/`, `/g/{code}`) one address may make per minute; past that 429 with `Retry-After`. Many players share one address behind a school's or an office's NAT.
    #[arg(long = "web-pages-per-ip-minute", env = "FOGBLAST_GATEWAY_WEB_PAGES_PER_IP_MINUTE", default_value_t = 120)]
    pub web_pages_per_ip_minute: u32,
    /// Requests for the web client's files (scripts, styles, images, the service worker) one address may make per minute; past that 429 with `Retry-After` [default: enough for every page load `--web-pages-per-ip-minute` allows to fetch every file twice, once for the page and once for the service worker's offline copy].
    #[arg(long = "web-requests-per-ip-minute", env = "FOGBLAST_GATEWAY_WEB_REQUESTS_PER_IP_MINUTE")]
    pub web_requests_per_ip_minute: Option<u32>,
    /// Shards are asked to fail over for at most this long before a command is answered `unavailable`.
    #[arg(long = "route-timeout-ms", env = "FOGBLAST_GATEWAY_ROUTE_TIMEOUT_MS", default_value_t = 8_000)]
    pub route_timeout_ms: u64,
    /// Games one WebSocket may follow at once (its own and those it watches; games that ended are let go first to make room); past that `watch` is refused with `rate_limited`. Each costs the gateway a Watch stream and the shard a task.
    #[arg(long = "max-games-per-socket", env = "FOGBLAST_GATEWAY_MAX_GAMES_PER_SOCKET", default_value_t = 32)]
    pub max_games_per_socket: usize,
    /// Commands one connection may have waiting for an answer; past that they are refused with `rate_limited`.
    #[arg(long = "max-in-flight", env = "FOGBLAST_GATEWAY_MAX_IN_FLIGHT", default_value_t = 16)]
    pub max_in_flight: usize,
    /// Each matchmaker call (`seek`, `cancel_seek`, `lobby`) is answered `unavailable` after this long.
    #[arg(long = "matchmaker-timeout-ms", env = "FOGBLAST_GATEWAY_MATCHMAKER_TIMEOUT_MS", default_value_t = 2_000)]
    pub matchmaker_timeout_ms: u64,
    /// Each rating service call (profiles, leaderboards, archived games, PGN) is answered 503 after this long.
    #[arg(long = "rating-timeout-ms", env = "FOGBLAST_GATEWAY_RATING_TIMEOUT_MS", default_value_t = 3_000)]
    pub rating_timeout_ms: u64,
    /// A seated player here counts as gone this long after the gateway last renewed their presence (renewed every third of it), so a gateway that dies leaves no one present for good; 0: present until reported gone.
    #[arg(long = "presence-lease-ms", env = "FOGBLAST_GATEWAY_PRESENCE_LEASE_MS", default_value_t = 20_000)]
    pub presence_lease_ms: u64,
    /// How often shard membership is read again (also at once when a shard does not answer).
    #[arg(long = "membership-refresh-ms", env = "FOGBLAST_GATEWAY_MEMBERSHIP_REFRESH_MS", default_value_t = 250)]
    pub membership_refresh_ms: u64,
    /// A connection that sends nothing (not even a ping) for this long is closed.
    #[arg(long = "idle-timeout-ms", env = "FOGBLAST_GATEWAY_IDLE_TIMEOUT_MS", default_value_t = 60_000)]
    pub idle_timeout_ms: u64,
    /// A message the client has not taken in this long closes its connection as too slow to read (a client that stops reading holds the gateway's write, its queue and its address's connection slot until then).
    #[arg(long = "write-timeout-ms", env = "FOGBLAST_GATEWAY_WRITE_TIMEOUT_MS", default_value_t = 10_000)]
    pub write_timeout_ms: u64,
    /// An HTTP request's headers must arrive within this long of the connection opening or of the request before it; a connection that sends none (or too slowly) in that time is closed.
    #[arg(long = "header-read-timeout-ms", env = "FOGBLAST_GATEWAY_HEADER_READ_TIMEOUT_MS", default_value_t = 10_000)]
    pub header_read_timeout_ms: u64,
    /// TCP connections one peer address may hold open at once, of any kind and counted when accepted, before any HTTP is read; trusted proxies are not counted. At least `max-connections-per-ip` + 32, to leave room for page loads beside a client's WebSockets.
    #[arg(long = "max-sockets-per-ip", env = "FOGBLAST_GATEWAY_MAX_SOCKETS_PER_IP", default_value_t = 96)]
    pub max_sockets_per_ip: u32,
    /// The kernel's send buffer of each client socket, in bytes; 0: the system's, which grows with the connection (to megabytes). A smaller one bounds the kernel memory a client that does not read can hold, and makes it found out sooner.
    #[arg(long = "socket-send-buffer-bytes", env = "FOGBLAST_GATEWAY_SOCKET_SEND_BUFFER_BYTES", default_value_t = 0)]
    pub socket_send_buffer_bytes: usize,
    /// On SIGTERM, how long clients get to leave before the gateway exits.
    #[arg(long = "drain-ms", env = "FOGBLAST_GATEWAY_DRAIN_MS", default_value_t = 10_000)]
    pub drain_ms: u64,
    /// Proxies whose `X-Forwarded-For` is believed, as addresses or networks (`10.0.0.0/8`), comma-separated; the client is the nearest address in it that is not one of them [default: none: the peer is the client].
    #[arg(long = "trusted-proxies", env = "FOGBLAST_GATEWAY_TRUSTED_PROXIES", value_delimiter = ',', value_parser = crate::address::parse_network)]
    pub trusted_proxies: Vec<ipnet::IpNet>,
    /// The per-address limits count IPv6 clients by this network prefix (a subscriber is handed a whole /64).
    #[arg(long = "ipv6-prefix", env = "FOGBLAST_GATEWAY_IPV6_PREFIX", default_value_t = 64, value_parser = clap::value_parser!(u8).range(0..=128))]
    pub ipv6_prefix: u8,
}

impl GatewaySettings {
    pub fn route_timeout(&self) -> Duration {
        Duration::from_millis(self.route_timeout_ms)
    }

    pub fn presence_lease(&self) -> Duration {
        Duration::from_millis(self.presence_lease_ms)
    }

    pub fn matchmaker_timeout(&self) -> Duration {
        Duration::from_millis(self.matchmaker_timeout_ms)
    }

    pub fn rating_timeout(&self) -> Duration {
        Duration::from_millis(self.rating_timeout_ms)
    }

    pub fn write_timeout(&self) -> Duration {
        Duration::from_millis(self.write_timeout_ms)
    }

    /// The accept-time cap per address: never below the WebSocket cap plus
    /// room for a page load, so raising one for a classroom raises both.
    pub fn sockets_per_ip(&self) -> u32 {
        self.max_sockets_per_ip.max(self.max_connections_per_ip.saturating_add(32))
    }

    /// Requests for the web client's files one address may make per
    /// minute: as set, or by default every file twice for each page load
    /// allowed.
    pub fn web_files_per_ip_minute(&self) -> u32 {
        self.web_requests_per_ip_minute
            .unwrap_or_else(|| self.web_pages_per_ip_minute.saturating_mul(crate::web::files_per_page_load()))
    }

    pub fn header_read_timeout(&self) -> Duration {
        Duration::from_millis(self.header_read_timeout_ms)
    }
}

impl Default for GatewayConfig {
    /// The defaults of the flags, without reading the environment.
    fn default() -> GatewayConfig {
        fogblast_runtime::defaults()
    }
}

impl Default for GatewaySettings {
    /// The defaults of the flags, without reading the environment.
    fn default() -> GatewaySettings {
        fogblast_runtime::defaults()
    }
}
