//! The game service's calls as typed methods on [`Router`]: a create, a
//! join, a read, a watch and every command on a game as one message,
//! each with the retry policy that fits what it does, so no caller clones a
//! request into a closure or decides on its own what may be sent twice.
//! Every command carries a request id (the caller's, or one given here)
//! that stays the same across its retries, so the shard applies it once
//! whichever attempts were lost; a create carries the id of the game it
//! makes, and goes to that game's owner. Commands go over the one stream
//! this router keeps to each shard (`command_stream`). Every call carries
//! the caller's trace context.

use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::command::Action;
use fogblast_proto::game::game_client::GameClient;
use fogblast_proto::game::{
    Command, CommandResult, CreateGameRequest, CreateGameResponse, EncodedWatchEvent, GameInPlay, GameState,
    GetStateRequest, JoinGameRequest, JoinGameResponse, ListGamesInPlayRequest, ListSeatsRequest, WatchEvent,
    WatchRequest,
};
use fogblast_proto::ids::{GameId, PlayerId};
use futures::stream::{BoxStream, StreamExt};
use prost::Message;
use rand::Rng;
use tokio::time::Instant;
use tonic::transport::Channel;
use tonic::Streaming;

use crate::{Retry, Router};

/// The game a call names, to route it to the game's owner.
fn owner_of(request_game: &str) -> Result<GameId, ServiceError> {
    GameId::parse(request_game).map_err(|e| ServiceError::new(ErrorCode::BadRequest, e.to_string()))
}

/// Gives a command without a request id one, for all its attempts.
fn with_request_id(request_id: &mut String) {
    if request_id.is_empty() {
        *request_id = rand::rng().sample_iter(rand::distr::Alphanumeric).take(16).map(char::from).collect();
    }
}

impl Router {
    /// Creates a game on the shard that will own it: the game named by
    /// `request.game_id`, or a new id drawn here.
    pub async fn create_game(&self, mut request: CreateGameRequest) -> Result<CreateGameResponse, ServiceError> {
        if request.game_id.is_empty() {
            request.game_id = GameId::random(&mut rand::rng()).into_string();
        }
        with_request_id(&mut request.request_id);
        let game = owner_of(&request.game_id)?;
        self.call_with(Some(&game), Retry::Command, move |mut client: GameClient<Channel>| {
            let request = fogblast_telemetry::traced(request.clone());
            async move { client.create_game(request).await }
        })
        .await
    }

    /// Seats a player by join code: any shard resolves the code, the owner
    /// seats the player.
    pub async fn join_game(&self, mut request: JoinGameRequest) -> Result<JoinGameResponse, ServiceError> {
        with_request_id(&mut request.request_id);
        self.call_with(None, Retry::Command, move |mut client: GameClient<Channel>| {
            let request = fogblast_telemetry::traced(request.clone());
            async move { client.join_game(request).await }
        })
        .await
    }

    /// Sends a command to its game's owner, on the stream to that shard. A move's attempts tell the
    /// shard how long it has been on its way (`waited_ms`: what the caller
    /// set, plus the time spent here), so retries across a failover are not
    /// charged to the mover's clock. A presence report says the same thing
    /// however often it lands, so it is retried like a read and recorded
    /// under no id.
    pub async fn command(&self, mut request: Command) -> Result<CommandResult, ServiceError> {
        let game = owner_of(&request.game_id)?;
        let retry = match request.action {
            Some(Action::Presence(_)) => Retry::Read,
            _ => {
                with_request_id(&mut request.request_id);
                Retry::Command
            }
        };
        let started = Instant::now();
        let budget = self.attempt_timeout;
        self.attempts(Some(&game), retry, move |addr, client| {
            let mut request = request.clone();
            if let Some(Action::Move(m)) = &mut request.action {
                let here = u32::try_from(started.elapsed().as_millis()).unwrap_or(u32::MAX);
                m.waited_ms = m.waited_ms.saturating_add(here);
            }
            let stream = self.command_stream(addr, client.clone());
            async move {
                if stream.is_unsupported() {
                    return unary_command(client, request).await;
                }
                stream.call(request, budget).await
            }
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

    /// The games `player` sits in that have not ended, the latest first;
    /// any shard answers.
    pub async fn seats_of(&self, player: &PlayerId) -> Result<Vec<GameId>, ServiceError> {
        let request = ListSeatsRequest { player_id: player.to_string() };
        let seats = self
            .call_with(None, Retry::Read, move |mut client: GameClient<Channel>| {
                let request = fogblast_telemetry::traced(request.clone());
                async move { client.list_seats(request).await }
            })
            .await?;
        Ok(seats.game_ids.iter().filter_map(|id| GameId::parse(id).ok()).collect())
    }

    /// The games being played now across every shard; any shard answers.
    pub async fn games_in_play(&self) -> Result<Vec<GameInPlay>, ServiceError> {
        let listed = self
            .call_with(None, Retry::Read, move |mut client: GameClient<Channel>| {
                let request = fogblast_telemetry::traced(ListGamesInPlayRequest {});
                async move { client.list_games_in_play(request).await }
            })
            .await?;
        Ok(listed.games)
    }

    /// Opens the game's event stream after `request.after_version`: the
    /// encoded stream, decoded here, or the plain one from a shard of a
    /// release that has no encoded stream yet.
    pub async fn watch(&self, request: WatchRequest) -> Result<WatchEvents, ServiceError> {
        let game = owner_of(&request.game_id)?;
        self.call_with(Some(&game), Retry::Read, move |mut client: GameClient<Channel>| {
            let request = request.clone();
            async move {
                match client.watch_encoded(fogblast_telemetry::traced(request.clone())).await {
                    Ok(response) => Ok(response.map(decoded)),
                    Err(status) if status.code() == tonic::Code::Unimplemented => {
                        let response = client.watch(fogblast_telemetry::traced(request)).await?;
                        Ok(response.map(StreamExt::boxed))
                    }
                    Err(status) => Err(status),
                }
            }
        })
        .await
    }
}

/// A command as a call of its own, for a shard without the command stream.
async fn unary_command(mut client: GameClient<Channel>, request: Command) -> Result<CommandResult, ServiceError> {
    let answer = client.execute(fogblast_telemetry::traced(request)).await;
    answer.map(tonic::Response::into_inner).map_err(|s| ServiceError::from_status(&s))
}

/// A game's events as a watcher reads them.
pub type WatchEvents = BoxStream<'static, Result<WatchEvent, tonic::Status>>;

#[allow(clippy::result_large_err)] // the item type tonic gives every stream
fn decoded(stream: Streaming<EncodedWatchEvent>) -> WatchEvents {
    stream
        .map(|event| {
            let event = event?;
            WatchEvent::decode(event.event).map_err(|e| tonic::Status::internal(format!("unreadable event: {e}")))
        })
        .boxed()
}
