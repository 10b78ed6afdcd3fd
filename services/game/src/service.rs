//! The gRPC face of a shard: each call's arguments are checked and turned
//! into a command, the answer or refusal into the contract's types. Every
//! refusal is a status carrying an `ErrorDetail`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use fogblast_proto::error::ServiceError;
use fogblast_proto::game::command::Action;
use fogblast_proto::game::game_server::Game;
use fogblast_proto::game::{
    self as proto, CommandCall, CommandResult, CreateGameRequest, CreateGameResponse, GameState, GamesInPlay,
    GetStateRequest, JoinGameRequest, JoinGameResponse, ListGamesInPlayRequest, ListSeatsRequest, ListSeatsResponse,
    WatchRequest,
};
use fogblast_proto::ids::{GameId, PlayerId, MAX_ID_LEN};
use tonic::{Request, Response, Status, Streaming};

use crate::command_stream::{self, AnswerStream};
use crate::commands::{self, bad, Command};
use crate::create;
use crate::shard::Shard;
use crate::watch_stream::{self, EncodedStream, WatchStream};

#[derive(Debug, Clone)]
pub struct GameService {
    shard: Arc<Shard>,
}

impl GameService {
    pub fn new(shard: Arc<Shard>) -> GameService {
        GameService { shard }
    }

    /// Runs `call`, recording its latency and outcome under `rpc`.
    async fn timed<T>(
        &self,
        rpc: &str,
        call: impl std::future::Future<Output = Result<T, ServiceError>>,
    ) -> Result<Response<T>, Status> {
        self.measured(rpc, call).await.map(Response::new).map_err(ServiceError::into_status)
    }

    /// Runs `call`, recording its latency and outcome under `rpc`.
    async fn measured<T>(
        &self,
        rpc: &str,
        call: impl std::future::Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, ServiceError> {
        let started = Instant::now();
        let result = call.await;
        let outcome = result.as_ref().map_or_else(|e| e.code.as_ws_code(), |_| "ok");
        let metrics = &self.shard.metrics;
        metrics.commands.with_label_values(&[rpc, outcome]).inc();
        metrics.command_seconds.with_label_values(&[rpc]).observe(started.elapsed().as_secs_f64());
        result
    }

    /// Runs one command, from a unary call or a stream: checks its
    /// arguments, executes it, and records it under its action's name, in a
    /// span that continues `trace` (the stream's calls) or the current one.
    pub(crate) async fn command(
        &self,
        request: proto::Command,
        trace: Option<&HashMap<String, String>>,
    ) -> Result<CommandResult, ServiceError> {
        let kind = request.action.as_ref().map_or("unknown", commands::action_kind);
        // A move's span names its ply; the move itself stays out: in fog of
        // war it is hidden from the opponent.
        let span = match &request.action {
            Some(Action::Move(m)) => tracing::info_span!("game.command", kind, game = %request.game_id, ply = m.ply),
            _ => tracing::info_span!("game.command", kind, game = %request.game_id),
        };
        if let Some(trace) = trace {
            fogblast_telemetry::follow_call(&span, trace);
        }
        let call = self.measured(kind, async {
            let game = game_id(&request.game_id)?;
            let player = player_id(&request.player_id)?;
            let action = request.action.ok_or_else(|| bad("a command names its action"))?;
            // Saying the same presence twice changes nothing: not recorded.
            let request_id = if matches!(action, Action::Presence(_)) { "" } else { request.request_id.as_str() };
            let rematch = matches!(action, Action::Rematch(_));
            let command = Command::of_action(player, action, &game)?;
            let done = self.shard.execute(&game, command, checked_request_id(request_id)?).await?;
            let new_game_id = if rematch { done.live.record.rematch_game_id.clone() } else { String::new() };
            Ok(CommandResult { version: done.version, new_game_id })
        });
        tracing::Instrument::instrument(call, span).await
    }
}

impl command_stream::Commands for GameService {
    async fn run(
        &self,
        command: proto::Command,
        trace: HashMap<String, String>,
    ) -> Result<CommandResult, ServiceError> {
        self.command(command, Some(&trace)).await
    }
}

fn game_id(text: &str) -> Result<GameId, ServiceError> {
    GameId::parse(text).map_err(|e| bad(e.to_string()))
}

fn player_id(text: &str) -> Result<PlayerId, ServiceError> {
    PlayerId::parse(text).map_err(|e| bad(e.to_string()))
}

/// A request id is at most as long as an id.
fn checked_request_id(text: &str) -> Result<&str, ServiceError> {
    if text.len() > MAX_ID_LEN {
        return Err(bad(format!("a request id is at most {MAX_ID_LEN} bytes")));
    }
    Ok(text)
}

#[tonic::async_trait]
impl Game for GameService {
    async fn create_game(&self, request: Request<CreateGameRequest>) -> Result<Response<CreateGameResponse>, Status> {
        let request = request.into_inner();
        self.timed("create_game", async {
            checked_request_id(&request.request_id)?;
            self.shard.create(&request).await
        })
        .await
    }

    async fn join_game(&self, request: Request<JoinGameRequest>) -> Result<Response<JoinGameResponse>, Status> {
        let request = request.into_inner();
        self.timed("join_game", async {
            let player = player_id(&request.player_id)?;
            let code = request.code.trim().to_ascii_uppercase();
            if code.len() != create::CODE_LEN || !code.bytes().all(|b| b.is_ascii_alphanumeric()) {
                return Err(bad(format!("a join code is {} letters and digits", create::CODE_LEN)));
            }
            if request.player_name.len() > create::MAX_NAME_BYTES {
                return Err(bad(format!("names are at most {} bytes", create::MAX_NAME_BYTES)));
            }
            self.shard.join(&code, player, request.player_name, checked_request_id(&request.request_id)?).await
        })
        .await
    }

    async fn execute(&self, request: Request<proto::Command>) -> Result<Response<CommandResult>, Status> {
        self.command(request.into_inner(), None).await.map(Response::new).map_err(ServiceError::into_status)
    }

    type ExecuteStreamStream = AnswerStream;

    async fn execute_stream(&self, calls: Request<Streaming<CommandCall>>) -> Result<Response<AnswerStream>, Status> {
        Ok(Response::new(command_stream::serve(self.clone(), calls.into_inner())))
    }

    async fn get_state(&self, request: Request<GetStateRequest>) -> Result<Response<GameState>, Status> {
        let request = request.into_inner();
        self.timed("get_state", async {
            let game = game_id(&request.game_id)?;
            let player = if request.player_id.is_empty() { None } else { Some(player_id(&request.player_id)?) };
            self.shard.state_for(&game, player.as_ref()).await
        })
        .await
    }

    async fn list_seats(&self, request: Request<ListSeatsRequest>) -> Result<Response<ListSeatsResponse>, Status> {
        let request = request.into_inner();
        self.timed("list_seats", async {
            let player = player_id(&request.player_id)?;
            let games = self.shard.seats_of(&player).await?;
            Ok(ListSeatsResponse { game_ids: games.into_iter().map(GameId::into_string).collect() })
        })
        .await
    }

    async fn list_games_in_play(&self, _: Request<ListGamesInPlayRequest>) -> Result<Response<GamesInPlay>, Status> {
        self.timed("list_games_in_play", async { Ok(GamesInPlay { games: self.shard.games_in_play().await? }) }).await
    }

    type WatchStream = WatchStream;
    type WatchEncodedStream = EncodedStream;

    async fn watch_encoded(&self, request: Request<WatchRequest>) -> Result<Response<EncodedStream>, Status> {
        let request = request.into_inner();
        self.timed("watch", async {
            let game = game_id(&request.game_id)?;
            watch_stream::watch_encoded(self.shard.clone(), game, request.after_version)
        })
        .await
    }

    async fn watch(&self, request: Request<WatchRequest>) -> Result<Response<WatchStream>, Status> {
        let request = request.into_inner();
        self.timed("watch", async {
            let game = game_id(&request.game_id)?;
            watch_stream::watch(self.shard.clone(), game, request.after_version)
        })
        .await
    }
}
