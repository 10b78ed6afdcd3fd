//! How the matchmaker makes the games it pairs: through the game service,
//! like a gateway. [`Games`] is the little it needs (create for one
//! player, seat the other by code, look, abort); [`ShardRouter`] does it
//! over gRPC with `fogblast-routing`, which finds each game's owner and
//! follows redirects and failovers as it does for the gateways.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::command::Action;
use fogblast_proto::game::{
    Abort, Command, CreateGameRequest, CreateGameResponse, GameState, GetStateRequest, JoinGameRequest,
    JoinGameResponse,
};
use fogblast_routing::Membership;
use fogblast_routing::Router;

/// What the matchmaker asks of the game service.
#[async_trait]
pub trait Games: Send + Sync + std::fmt::Debug {
    async fn create(&self, request: CreateGameRequest) -> Result<CreateGameResponse, ServiceError>;
    async fn join(&self, request: JoinGameRequest) -> Result<JoinGameResponse, ServiceError>;
    /// The game as `player` sees it.
    async fn state(&self, game: &str, player: &str) -> Result<GameState, ServiceError>;
    async fn abort(&self, game: &str, player: &str) -> Result<(), ServiceError>;
}

/// Calls the game shards, each game at its owner, through the same router
/// the gateways use.
#[derive(Debug)]
pub struct ShardRouter {
    router: Arc<Router>,
}

impl ShardRouter {
    /// A router that reads membership now and then every second.
    pub async fn new(membership: Arc<dyn Membership>, timeout: Duration) -> Arc<ShardRouter> {
        let router = Arc::new(Router::new(membership, timeout).await);
        router.keep_fresh(Duration::from_secs(1));
        Arc::new(ShardRouter { router })
    }
}

#[async_trait]
impl Games for ShardRouter {
    async fn create(&self, request: CreateGameRequest) -> Result<CreateGameResponse, ServiceError> {
        self.router.create_game(request).await
    }

    async fn join(&self, request: JoinGameRequest) -> Result<JoinGameResponse, ServiceError> {
        // Any shard resolves the code; the owner seats the player.
        self.router.join_game(request).await
    }

    async fn state(&self, game: &str, player: &str) -> Result<GameState, ServiceError> {
        self.router.get_state(GetStateRequest { game_id: game.to_owned(), player_id: player.to_owned() }).await
    }

    async fn abort(&self, game: &str, player: &str) -> Result<(), ServiceError> {
        self.router.command(Command::new(game, player, Action::Abort(Abort {}))).await.map(drop)
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
