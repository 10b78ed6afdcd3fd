//! The game service's calls as typed methods on [`Router`], one per RPC,
//! each with the retry policy that fits what it does, so no caller clones a
//! request into a closure or decides on its own what may be sent twice.
//! Every call carries the caller's trace context.

use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::game_client::GameClient;
use fogblast_proto::game::{
    CommandResponse, CreateGameRequest, CreateGameResponse, GameCommand, GameState, GetStateRequest, JoinGameRequest,
    JoinGameResponse, MakeMoveRequest, OfferRequest, PresenceRequest, RematchResponse, WatchEvent, WatchRequest,
};
use fogblast_proto::ids::GameId;
use tokio::time::Instant;
use tonic::transport::Channel;
use tonic::Streaming;

use crate::{Retry, Router};

/// The game a call names, to route it to the game's owner.
fn owner_of(request_game: &str) -> Result<GameId, ServiceError> {
    GameId::parse(request_game).map_err(|e| ServiceError::new(ErrorCode::BadRequest, e.to_string()))
}

impl Router {
    /// Creates a game on the shard that will own it.
    pub async fn create_game(&self, request: CreateGameRequest) -> Result<CreateGameResponse, ServiceError> {
        self.call_with(None, Retry::Command, move |mut client: GameClient<Channel>| {
            let request = fogblast_telemetry::traced(request.clone());
            async move { client.create_game(request).await }
        })
        .await
    }

    /// Seats a player by join code: any shard resolves the code, the owner
    /// seats the player.
    pub async fn join_game(&self, request: JoinGameRequest) -> Result<JoinGameResponse, ServiceError> {
        self.call_with(None, Retry::Command, move |mut client: GameClient<Channel>| {
            let request = fogblast_telemetry::traced(request.clone());
            async move { client.join_game(request).await }
        })
        .await
    }

    /// Sends a move to its game's owner. Each attempt tells the shard how
    /// long the move has been on its way (`waited_ms`: what the caller set,
    /// plus the time spent here), so retries across a failover are not
    /// charged to the mover's clock.
    pub async fn make_move(&self, request: MakeMoveRequest) -> Result<CommandResponse, ServiceError> {
        let game = owner_of(&request.game_id)?;
        let started = Instant::now();
        self.call_with(Some(&game), Retry::Command, move |mut client: GameClient<Channel>| {
            let mut request = request.clone();
            let here = u32::try_from(started.elapsed().as_millis()).unwrap_or(u32::MAX);
            request.waited_ms = request.waited_ms.saturating_add(here);
            let request = fogblast_telemetry::traced(request);
            async move { client.make_move(request).await }
        })
        .await
    }

    pub async fn resign(&self, request: GameCommand) -> Result<CommandResponse, ServiceError> {
        let game = owner_of(&request.game_id)?;
        self.call_with(Some(&game), Retry::Command, move |mut client: GameClient<Channel>| {
            let request = fogblast_telemetry::traced(request.clone());
            async move { client.resign(request).await }
        })
        .await
    }

    pub async fn abort(&self, request: GameCommand) -> Result<CommandResponse, ServiceError> {
        let game = owner_of(&request.game_id)?;
        self.call_with(Some(&game), Retry::Command, move |mut client: GameClient<Channel>| {
            let request = fogblast_telemetry::traced(request.clone());
            async move { client.abort(request).await }
        })
        .await
    }

    pub async fn claim_victory(&self, request: GameCommand) -> Result<CommandResponse, ServiceError> {
        let game = owner_of(&request.game_id)?;
        self.call_with(Some(&game), Retry::Command, move |mut client: GameClient<Channel>| {
            let request = fogblast_telemetry::traced(request.clone());
            async move { client.claim_victory(request).await }
        })
        .await
    }

    pub async fn rematch(&self, request: GameCommand) -> Result<RematchResponse, ServiceError> {
        let game = owner_of(&request.game_id)?;
        self.call_with(Some(&game), Retry::Command, move |mut client: GameClient<Channel>| {
            let request = fogblast_telemetry::traced(request.clone());
            async move { client.rematch(request).await }
        })
        .await
    }

    /// Offers, accepts or declines a draw.
    pub async fn draw(&self, request: OfferRequest) -> Result<CommandResponse, ServiceError> {
        let game = owner_of(&request.game_id)?;
        self.call_with(Some(&game), Retry::Command, move |mut client: GameClient<Channel>| {
            let request = fogblast_telemetry::traced(request.clone());
            async move { client.draw(request).await }
        })
        .await
    }

    /// Proposes, accepts or declines a takeback.
    pub async fn takeback(&self, request: OfferRequest) -> Result<CommandResponse, ServiceError> {
        let game = owner_of(&request.game_id)?;
        self.call_with(Some(&game), Retry::Command, move |mut client: GameClient<Channel>| {
            let request = fogblast_telemetry::traced(request.clone());
            async move { client.takeback(request).await }
        })
        .await
    }

    /// Says whether a seated player is connected. Saying the same thing
    /// twice changes nothing, so it is retried like a read.
    pub async fn report_presence(&self, request: PresenceRequest) -> Result<CommandResponse, ServiceError> {
        let game = owner_of(&request.game_id)?;
        self.call_with(Some(&game), Retry::Read, move |mut client: GameClient<Channel>| {
            let request = fogblast_telemetry::traced(request.clone());
            async move { client.report_presence(request).await }
        })
        .await
    }

    /// The game as `request.player_id` (empty: a spectator) sees it.
    pub async fn get_state(&self, request: GetStateRequest) -> Result<GameState, ServiceError> {
        let game = owner_of(&request.game_id)?;
        self.call_with(Some(&game), Retry::Read, move |mut client: GameClient<Channel>| {
            let request = fogblast_telemetry::traced(request.clone());
            async move { client.get_state(request).await }
        })
        .await
    }

    /// Opens the game's event stream after `request.after_version`.
    pub async fn watch(&self, request: WatchRequest) -> Result<Streaming<WatchEvent>, ServiceError> {
        let game = owner_of(&request.game_id)?;
        self.call_with(Some(&game), Retry::Read, move |mut client: GameClient<Channel>| {
            let request = fogblast_telemetry::traced(request.clone());
            async move { client.watch(request).await }
        })
        .await
    }
}
