//! How the matchmaker makes the games it pairs: through the game service,
//! like a gateway. [`Games`] is the little it needs (create for one
//! player, seat the other by code, look, abort); [`ShardRouter`] does it
//! over gRPC, finding each game's owner by the same rendezvous hash over
//! the same store membership the shards use, following `NOT_OWNER`
//! redirects and retrying through failovers until the route timeout. It is
//! a trimmed copy of the gateway's router (`services/gateway/src/routing.rs`).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::game_client::GameClient;
use fogblast_proto::game::{
    CreateGameRequest, CreateGameResponse, GameCommand, GameState, GetStateRequest, JoinGameRequest, JoinGameResponse,
};
use fogblast_proto::ids::GameId;
use fogblast_store::{placement, Member, Membership};
use rand::Rng;
use tokio::time::Instant;
use tonic::transport::{Channel, Endpoint};
use tracing::warn;

/// What the matchmaker asks of the game service.
#[async_trait]
pub trait Games: Send + Sync + std::fmt::Debug {
    async fn create(&self, request: CreateGameRequest) -> Result<CreateGameResponse, ServiceError>;
    async fn join(&self, request: JoinGameRequest) -> Result<JoinGameResponse, ServiceError>;
    /// The game as `player` sees it.
    async fn state(&self, game: &str, player: &str) -> Result<GameState, ServiceError>;
    async fn abort(&self, game: &str, player: &str) -> Result<(), ServiceError>;
}

/// Calls the game shards, each game at its owner.
#[derive(Debug)]
pub struct ShardRouter {
    membership: Arc<dyn Membership>,
    members: RwLock<Arc<Vec<Member>>>,
    clients: Mutex<HashMap<String, GameClient<Channel>>>,
    timeout: Duration,
}

impl ShardRouter {
    /// A router that reads membership now and then every second.
    pub async fn new(membership: Arc<dyn Membership>, timeout: Duration) -> Arc<ShardRouter> {
        let router =
            Arc::new(ShardRouter { membership, members: RwLock::default(), clients: Mutex::default(), timeout });
        router.refresh().await;
        let weak = Arc::downgrade(&router);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                let Some(router) = weak.upgrade() else { return };
                router.refresh().await;
            }
        });
        router
    }

    async fn refresh(&self) {
        match self.membership.members().await {
            Ok(mut members) => {
                members.sort_by(|a, b| a.shard.cmp(&b.shard));
                *self.members.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(members);
            }
            Err(error) => warn!(%error, "could not read shard membership"),
        }
    }

    fn members(&self) -> Arc<Vec<Member>> {
        self.members.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn client(&self, addr: &str) -> Result<GameClient<Channel>, ServiceError> {
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(client) = clients.get(addr) {
            return Ok(client.clone());
        }
        let endpoint = Endpoint::from_shared(addr.to_owned())
            .map_err(|e| ServiceError::new(ErrorCode::Internal, format!("bad shard address {addr}: {e}")))?
            .connect_timeout(Duration::from_secs(2))
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(10))
            .keep_alive_while_idle(true);
        let client = GameClient::new(endpoint.connect_lazy());
        clients.insert(addr.to_owned(), client.clone());
        Ok(client)
    }

    fn target(&self, game: Option<&GameId>) -> Option<String> {
        let members = self.members();
        match game {
            Some(game) => placement::owner(game, &members).map(|m| m.addr.clone()),
            None if members.is_empty() => None,
            None => Some(members[rand::rng().random_range(0..members.len())].addr.clone()),
        }
    }

    /// Calls the owner of `game` (any shard for `None`), following
    /// redirects and retrying unavailability until the route timeout.
    async fn call<T, F, Fut>(&self, game: Option<&GameId>, mut call: F) -> Result<T, ServiceError>
    where
        F: FnMut(GameClient<Channel>) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let deadline = Instant::now() + self.timeout;
        let mut redirect: Option<String> = None;
        let mut backoff = Duration::from_millis(25);
        loop {
            let target = redirect.take().or_else(|| self.target(game));
            let result = match target.as_deref() {
                Some(addr) => match self.client(addr) {
                    Ok(client) => {
                        call(client).await.map(tonic::Response::into_inner).map_err(|s| ServiceError::from_status(&s))
                    }
                    Err(error) => Err(error),
                },
                None => Err(ServiceError::new(ErrorCode::Unavailable, "no game shard is running")),
            };
            let error = match result {
                Ok(answer) => return Ok(answer),
                Err(error) if matches!(error.code, ErrorCode::NotOwner | ErrorCode::Unavailable) => error,
                Err(error) => return Err(error),
            };
            if Instant::now() + backoff > deadline {
                return Err(ServiceError::new(ErrorCode::Unavailable, format!("the game service: {}", error.message)));
            }
            match error.owner.filter(|owner| Some(owner) != target.as_ref()) {
                Some(owner) => redirect = Some(owner),
                None => {
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_millis(500));
                    self.refresh().await;
                }
            }
        }
    }
}

fn game_id(game: &str) -> Result<GameId, ServiceError> {
    GameId::parse(game).map_err(|e| ServiceError::new(ErrorCode::BadRequest, e.to_string()))
}

#[async_trait]
impl Games for ShardRouter {
    async fn create(&self, request: CreateGameRequest) -> Result<CreateGameResponse, ServiceError> {
        self.call(None, |mut client| {
            let request = request.clone();
            async move { client.create_game(request).await }
        })
        .await
    }

    async fn join(&self, request: JoinGameRequest) -> Result<JoinGameResponse, ServiceError> {
        // Any shard resolves the code; the owner seats the player.
        self.call(None, |mut client| {
            let request = request.clone();
            async move { client.join_game(request).await }
        })
        .await
    }

    async fn state(&self, game: &str, player: &str) -> Result<GameState, ServiceError> {
        let id = game_id(game)?;
        let request = GetStateRequest { game_id: game.to_owned(), player_id: player.to_owned() };
        self.call(Some(&id), |mut client| {
            let request = request.clone();
            async move { client.get_state(request).await }
        })
        .await
    }

    async fn abort(&self, game: &str, player: &str) -> Result<(), ServiceError> {
        let id = game_id(game)?;
        let request = GameCommand { game_id: game.to_owned(), player_id: player.to_owned() };
        self.call(Some(&id), |mut client| {
            let request = request.clone();
            async move { client.abort(request).await }
        })
        .await
        .map(drop)
    }
}

/// Games that exist only as names: every create and join succeeds at once
/// without a game service. For measuring the matchmaker alone (`fogblast
/// matchmaker-bench`); never for serving players.
#[derive(Debug, Default)]
pub struct PretendGames {
    made: std::sync::atomic::AtomicU64,
}

#[async_trait]
impl Games for PretendGames {
    async fn create(&self, _request: CreateGameRequest) -> Result<CreateGameResponse, ServiceError> {
        let n = self.made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(CreateGameResponse {
            game_id: format!("pretend{n}"),
            code: "PRETENDS".to_owned(),
            color: fogblast_proto::game::Color::White as i32,
            state: None,
        })
    }

    async fn join(&self, request: JoinGameRequest) -> Result<JoinGameResponse, ServiceError> {
        Ok(JoinGameResponse { game_id: request.code, color: fogblast_proto::game::Color::Black as i32, state: None })
    }

    async fn state(&self, _game: &str, _player: &str) -> Result<GameState, ServiceError> {
        Err(ServiceError::new(ErrorCode::NotFound, "pretend games have no state"))
    }

    async fn abort(&self, _game: &str, _player: &str) -> Result<(), ServiceError> {
        Ok(())
    }
}
