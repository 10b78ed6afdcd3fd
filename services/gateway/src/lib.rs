//! The gateway: the WebSocket edge between clients and the game shards.
//! It gives anonymous players signed tokens, speaks the published protocol
//! (`docs/protocol.md`), routes each command to the shard that owns the
//! game, and fans each game's events out to its local sockets, one Watch
//! stream per game whatever the number of sockets. It refuses abuse with
//! error codes, and on SIGTERM tells its clients to reconnect elsewhere
//! before it exits.
//!
//! The service is a library: the `fogblast gateway` command, `fogblast up`
//! and the tests all start it through [`run`].

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use fogblast_bus::EventBus;
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::ids::GameId;
use fogblast_routing::Membership;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_util::task::TaskTracker;
use tracing::{info, warn};

mod accept;
mod address;
mod analysis_api;
mod archive_api;
mod bot_api;
mod computer_games;
mod config;
mod conn;
mod deadline;
mod feeds;
mod fog_review;
pub mod frames;
mod games_in_play;
mod http;
mod lanes;
mod limits;
mod lobby;
mod metrics;
mod notices;
mod online;
mod players;
mod presence;
mod puzzle_api;
mod recovery;
mod session;
mod token;
mod tournament_views;

/// The embedded web client and the browser engine it plays offline with.
pub use http::web;

pub use config::{GatewayConfig, GatewaySettings};
pub use token::TokenSigner;

/// Why a gateway could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("setting up metrics: {0}")]
    Metrics(#[from] prometheus::Error),
    #[error("serving: {0}")]
    Serve(#[source] std::io::Error),
    #[error("rating service or matchmaker address: {0}")]
    RatingAddress(#[source] tonic::transport::Error),
    #[error("refusing to start: {0} (--token-secret, FOGBLAST_TOKEN_SECRET)")]
    TokenSecret(String),
}

/// What every connection of the gateway shares.
#[derive(Debug)]
pub struct Gateway {
    config: GatewayConfig,
    signer: TokenSigner,
    router: Arc<fogblast_routing::Router>,
    feeds: Arc<feeds::Feeds>,
    players: players::Players,
    limits: limits::IpLimits,
    addresses: address::AddressPolicy,
    metrics: Arc<metrics::Metrics>,
    draining: watch::Receiver<bool>,
    rating: Option<fogblast_proto::rating::rating_client::RatingClient<tonic::transport::Channel>>,
    matchmaker: lobby::Matchmaker,
    lobby: Arc<lobby::Lobby>,
    /// Player notices: the bot API listens and publishes here.
    bus: Arc<dyn EventBus>,
    /// Every session and presence report: a draining gateway waits for
    /// them all before it goes.
    tasks: TaskTracker,
    /// The Bot API's open seek answers, one per player.
    seek_streams: bot_api::SeekStreams,
    /// Games against the computer started here, per address.
    computer_games: computer_games::ComputerGames,
    /// The bots with an open event stream here.
    online: Arc<online::Online>,
    /// Tournaments as this gateway shows them, read once per change.
    tournament_views: Arc<tournament_views::TournamentViews>,
    /// The games being played now, read at most every few seconds.
    games_in_play: games_in_play::GamesInPlay,
}

impl Gateway {
    /// The rating service's client, or `unavailable` saying that `what`
    /// needs it.
    pub(crate) fn rating_for(
        &self,
        what: &str,
    ) -> Result<fogblast_proto::rating::rating_client::RatingClient<tonic::transport::Channel>, ServiceError> {
        self.rating.clone().ok_or_else(|| {
            ServiceError::new(ErrorCode::Unavailable, format!("{what} the rating service, which this gateway lacks"))
        })
    }

    /// Whether `ip` may create another game now (the per-address budget).
    fn may_create_game(&self, ip: std::net::IpAddr) -> Result<(), ServiceError> {
        if self.limits.create_game(ip) {
            return Ok(());
        }
        Err(ServiceError::new(ErrorCode::RateLimited, "too many new games from your address: wait a minute"))
    }

    /// Whether `player` may write another chat line now (one budget over
    /// the WebSocket and the Bot API).
    fn may_chat(&self, player: &fogblast_proto::ids::PlayerId) -> Result<(), ServiceError> {
        self.limits.chat_line(player).map_err(|wait| {
            ServiceError::new(
                ErrorCode::RateLimited,
                format!("too many chat lines: wait {} s", wait.as_secs_f64().ceil().max(1.0) as u64),
            )
        })
    }

    /// A seat in another live game against the computer is refused once
    /// `ip` holds as many on this gateway (other than `except`): a few
    /// addresses must not take the whole engine pool.
    ///
    /// One count over both paths: the seats its sockets hold here, and the
    /// games it started here over either. A started game that may have
    /// ended unseen (a bot's, played by HTTP requests) is asked about only
    /// once the address is at the cap, and then at most every few seconds.
    async fn computer_games_allowed(&self, ip: std::net::IpAddr, except: Option<&GameId>) -> Result<(), ServiceError> {
        let cap = self.config.settings.computer_games_per_ip as usize;
        let count = || {
            let mut playing: HashSet<GameId> = self.feeds.computer_games_from(ip, except).into_iter().collect();
            playing.extend(self.computer_games.of(ip, except));
            playing.len()
        };
        let mut playing = count();
        if playing >= cap {
            // What a feed here saw end costs nothing to forget; the rest
            // are asked about, each at most every few seconds.
            for game in self.computer_games.of(ip, except) {
                if self.feeds.ended(&game) {
                    self.computer_games.ended(ip, &game);
                }
            }
            for game in self.computer_games.to_check(ip, except) {
                if self.has_ended(&game).await {
                    self.computer_games.ended(ip, &game);
                }
            }
            playing = count();
        }
        if playing >= cap {
            return Err(ServiceError::new(
                ErrorCode::RateLimited,
                format!("{playing} games against the computer are in play from your address: finish one first"),
            ));
        }
        Ok(())
    }

    /// Whether the game service says `game` is over (or gone); a game it
    /// cannot answer for now counts as live.
    async fn has_ended(&self, game: &GameId) -> bool {
        let request = fogblast_proto::game::GetStateRequest { game_id: game.to_string(), player_id: String::new() };
        match self.router.get_state(request).await {
            Ok(state) => state.status() == fogblast_proto::game::Status::Ended,
            Err(error) => error.code == ErrorCode::NotFound,
        }
    }
}

/// The signer of this gateway's tokens: with the configured secret (and
/// the previous ones still accepted), or with a random one when none is
/// configured.
fn token_signer(config: &GatewayConfig) -> Result<TokenSigner, ServeError> {
    let secret = match &config.settings.token_secret {
        Some(secret) => {
            if let Some(reason) = token::refuse_secret(secret) {
                return Err(ServeError::TokenSecret(reason));
            }
            secret.as_bytes().to_vec()
        }
        None => {
            warn!("no token secret configured: tokens from this gateway work only here and only until it stops");
            rand::random::<[u8; 32]>().to_vec()
        }
    };
    let mut previous_secrets = Vec::new();
    for previous in &config.settings.token_previous_secrets {
        if let Some(reason) = token::refuse_secret(previous) {
            return Err(ServeError::TokenSecret(format!("a previous secret: {reason}")));
        }
        previous_secrets.push(previous.as_bytes().to_vec());
    }
    Ok(TokenSigner::new(&secret, &previous_secrets, config.settings.token_max_age_days * 24 * 3600))
}

type RatingClient = fogblast_proto::rating::rating_client::RatingClient<tonic::transport::Channel>;
type MatchmakerClient = fogblast_proto::matchmaker::matchmaker_client::MatchmakerClient<tonic::transport::Channel>;

/// Clients of the rating service and the matchmaker, when configured,
/// connecting on first use.
fn service_clients(config: &GatewayConfig) -> Result<(Option<RatingClient>, Option<MatchmakerClient>), ServeError> {
    let rating = match &config.rating_addr {
        Some(addr) => {
            let endpoint = tonic::transport::Endpoint::from_shared(addr.clone())
                .map_err(ServeError::RatingAddress)?
                .connect_timeout(config.settings.rating_timeout());
            Some(RatingClient::new(endpoint.connect_lazy()))
        }
        None => None,
    };
    let matchmaker = match &config.matchmaker_addr {
        Some(addr) => {
            let endpoint = tonic::transport::Endpoint::from_shared(addr.clone())
                .map_err(ServeError::RatingAddress)?
                .connect_timeout(config.settings.matchmaker_timeout());
            Some(MatchmakerClient::new(endpoint.connect_lazy()))
        }
        None => None,
    };
    Ok((rating, matchmaker))
}

/// Serves metrics and readiness on the admin address, if one is
/// configured, until the gateway drains; returns where.
async fn serve_admin(
    gateway: &Arc<Gateway>,
    metrics: &metrics::Metrics,
) -> Result<Option<std::net::SocketAddr>, ServeError> {
    let Some(metrics_addr) = gateway.config.metrics_listen else { return Ok(None) };
    let listener = TcpListener::bind(metrics_addr).await.map_err(ServeError::Serve)?;
    let bound = listener.local_addr().map_err(ServeError::Serve)?;
    let ready = gateway.clone();
    let readiness: fogblast_runtime::Readiness = Arc::new(move || http::readiness(&ready));
    let mut stopping = gateway.draining.clone();
    let stopped = async move {
        let _ = stopping.wait_for(|d| *d).await;
    };
    let registry = metrics.registry();
    tokio::spawn(async move {
        if let Err(error) = fogblast_runtime::serve_admin(listener, registry, readiness, stopped).await {
            warn!(%error, "the admin server stopped");
        }
    });
    Ok(Some(bound))
}

/// Serves `listener` until `shutdown` completes; then stops accepting,
/// tells every client to reconnect (close code 1012) and returns once they
/// have gone or `drain_ms` has passed.
pub async fn run(
    config: GatewayConfig,
    membership: Arc<dyn Membership>,
    bus: Arc<dyn EventBus>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let addr = listener.local_addr().map_err(ServeError::Serve)?;
    let signer = token_signer(&config)?;
    let metrics = Arc::new(metrics::Metrics::new()?);
    let router = Arc::new(fogblast_routing::Router::new(membership, config.settings.route_timeout()).await);
    router.keep_fresh(Duration::from_millis(config.settings.membership_refresh_ms));
    let (drain, draining) = watch::channel(false);
    let (rating, matchmaker) = service_clients(&config)?;
    let lobby = Arc::new(lobby::Lobby::default());
    if matchmaker.is_some() {
        lobby.listen(bus.clone());
    }
    let tasks = TaskTracker::new();
    let gateway = Arc::new(Gateway {
        signer,
        feeds: feeds::Feeds::new(
            router.clone(),
            metrics.clone(),
            tasks.clone(),
            config.settings.presence_lease().as_millis() as u64,
        ),
        players: players::Players::start(bus.clone(), metrics.clone()).await,
        bus,
        limits: limits::IpLimits::new(
            config.settings.max_connections_per_ip,
            config.settings.games_per_ip_minute,
            config.settings.http_requests_per_ip_minute,
            limits::WebBudget {
                pages_per_minute: config.settings.web_pages_per_ip_minute,
                files_per_minute: config.settings.web_files_per_ip_minute(),
            },
            limits::BotBudget {
                per_player_minute: config.settings.bot_requests_per_player_minute,
                per_ip_minute: config.settings.bot_requests_per_ip_minute,
            },
        ),
        addresses: address::AddressPolicy::new(config.settings.trusted_proxies.clone(), config.settings.ipv6_prefix),
        router,
        metrics: metrics.clone(),
        draining,
        rating,
        matchmaker: lobby::Matchmaker::new(matchmaker, config.settings.matchmaker_timeout()),
        lobby,
        config,
        tasks,
        seek_streams: bot_api::SeekStreams::default(),
        computer_games: computer_games::ComputerGames::default(),
        online: Arc::default(),
        tournament_views: Arc::default(),
        games_in_play: games_in_play::GamesInPlay::default(),
    });
    online::answer_questions(gateway.bus.clone(), Arc::downgrade(&gateway));
    presence::renew(Arc::downgrade(&gateway.feeds), gateway.router.clone(), gateway.config.settings.presence_lease());
    let drain_time = Duration::from_millis(gateway.config.settings.drain_ms);
    let app = http::routes(gateway.clone());
    let sockets = accept::Sockets::new(gateway.config.settings.sockets_per_ip(), gateway.addresses.clone());
    let admin = serve_admin(&gateway, &metrics).await?;
    match admin {
        Some(metrics) => info!(addr = %addr, metrics = %metrics, "gateway listening"),
        None => info!(addr = %addr, "gateway listening"),
    }
    let signal = async move {
        shutdown.await;
        info!("draining: no new connections; telling clients to reconnect elsewhere");
        let _ = drain.send(true);
        // Keep the sender alive until the server is done.
        std::future::pending::<()>().await;
    };
    let settings = &gateway.config.settings;
    let serving = accept::Serving {
        header_read_timeout: settings.header_read_timeout(),
        send_buffer: Some(settings.socket_send_buffer_bytes).filter(|&b| b > 0),
        drain: drain_time,
    };
    let server =
        tokio::spawn(accept::serve(listener, app, sockets, metrics.clone(), serving, gateway.draining.clone()));
    let signal = tokio::spawn(signal);
    let served = server.await;
    // Upgraded sockets outlive the HTTP server: wait for them to go, and for
    // the presence reports of their players, which sessions spawn as they
    // close (a closed tracker still tracks what is spawned on it).
    gateway.tasks.close();
    let _ = tokio::time::timeout(drain_time, gateway.tasks.wait()).await;
    signal.abort();
    info!(left = metrics.connections.get(), "gateway stopped");
    if let Err(error) = served {
        warn!(%error, "the accept loop failed");
    }
    Ok(())
}
