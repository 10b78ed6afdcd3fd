//! The gRPC face of a shard: each call's arguments are checked and turned
//! into a command, the answer or refusal into the contract's types. Every
//! refusal is a status carrying an `ErrorDetail`.

use std::sync::Arc;
use std::time::Instant;

use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::game_server::Game;
use fogblast_proto::game::{
    CommandResponse, CreateGameRequest, CreateGameResponse, GameCommand, GameState, GetStateRequest, JoinGameRequest,
    JoinGameResponse, MakeMoveRequest, OfferAction, OfferRequest, PresenceRequest, RematchResponse, WatchRequest,
};
use fogblast_proto::ids::{GameId, PlayerId, MAX_ID_LEN};
use tonic::{Request, Response, Status};

use crate::commands::Command;
use crate::create;
use crate::shard::Shard;
use crate::watch_stream::{self, EncodedStream, WatchStream};

/// The longest UCI move: `e7e8q`.
const MAX_UCI_LEN: usize = 5;

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
        let started = Instant::now();
        let result = call.await;
        let outcome = result.as_ref().map_or_else(|e| e.code.as_ws_code(), |_| "ok");
        let metrics = &self.shard.metrics;
        metrics.commands.with_label_values(&[rpc, outcome]).inc();
        metrics.command_seconds.with_label_values(&[rpc]).observe(started.elapsed().as_secs_f64());
        result.map(Response::new).map_err(ServiceError::into_status)
    }

    async fn command(&self, game: &str, command: Command, request_id: &str) -> Result<CommandResponse, ServiceError> {
        let game = game_id(game)?;
        let done = self.shard.execute(&game, command, checked_request_id(request_id)?).await?;
        Ok(CommandResponse { version: done.version })
    }
}

fn bad(message: impl Into<String>) -> ServiceError {
    ServiceError::new(ErrorCode::BadRequest, message)
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

fn action(value: i32) -> Result<OfferAction, ServiceError> {
    match OfferAction::try_from(value) {
        Ok(OfferAction::Unspecified) | Err(_) => Err(bad("action must be offer, accept or decline")),
        Ok(action) => Ok(action),
    }
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

    async fn make_move(&self, request: Request<MakeMoveRequest>) -> Result<Response<CommandResponse>, Status> {
        let request = request.into_inner();
        // The move itself stays out: in fog of war it is hidden from the opponent.
        let span = tracing::info_span!("game.make_move", game = %request.game_id, ply = request.ply);
        let call = self.timed("make_move", async {
            if request.uci.len() > MAX_UCI_LEN {
                return Err(bad(format!("{:?} is not a UCI move", request.uci)));
            }
            let command = Command::Move {
                player: player_id(&request.player_id)?,
                uci: request.uci,
                ply: request.ply,
                lag_ms: request.lag_ms,
                waited_ms: request.waited_ms,
            };
            self.command(&request.game_id, command, &request.request_id).await
        });
        tracing::Instrument::instrument(call, span).await
    }

    async fn resign(&self, request: Request<GameCommand>) -> Result<Response<CommandResponse>, Status> {
        let request = request.into_inner();
        self.timed("resign", async {
            let command = Command::Resign { player: player_id(&request.player_id)? };
            self.command(&request.game_id, command, &request.request_id).await
        })
        .await
    }

    async fn abort(&self, request: Request<GameCommand>) -> Result<Response<CommandResponse>, Status> {
        let request = request.into_inner();
        self.timed("abort", async {
            let command = Command::Abort { player: player_id(&request.player_id)? };
            self.command(&request.game_id, command, &request.request_id).await
        })
        .await
    }

    async fn draw(&self, request: Request<OfferRequest>) -> Result<Response<CommandResponse>, Status> {
        let request = request.into_inner();
        self.timed("draw", async {
            let command = Command::Draw { player: player_id(&request.player_id)?, action: action(request.action)? };
            self.command(&request.game_id, command, &request.request_id).await
        })
        .await
    }

    async fn takeback(&self, request: Request<OfferRequest>) -> Result<Response<CommandResponse>, Status> {
        let request = request.into_inner();
        self.timed("takeback", async {
            let command = Command::Takeback { player: player_id(&request.player_id)?, action: action(request.action)? };
            self.command(&request.game_id, command, &request.request_id).await
        })
        .await
    }

    async fn claim_victory(&self, request: Request<GameCommand>) -> Result<Response<CommandResponse>, Status> {
        let request = request.into_inner();
        self.timed("claim_victory", async {
            let command = Command::ClaimVictory { player: player_id(&request.player_id)? };
            self.command(&request.game_id, command, &request.request_id).await
        })
        .await
    }

    async fn rematch(&self, request: Request<GameCommand>) -> Result<Response<RematchResponse>, Status> {
        let request = request.into_inner();
        self.timed("rematch", async {
            let game = game_id(&request.game_id)?;
            let new_game = create::rematch_id(game.as_str()).into_string();
            let done = self
                .shard
                .execute(
                    &game,
                    Command::Rematch { player: player_id(&request.player_id)?, new_game },
                    checked_request_id(&request.request_id)?,
                )
                .await?;
            Ok(RematchResponse { version: done.version, new_game_id: done.live.record.rematch_game_id.clone() })
        })
        .await
    }

    async fn decline_rematch(&self, request: Request<GameCommand>) -> Result<Response<CommandResponse>, Status> {
        let request = request.into_inner();
        self.timed("decline_rematch", async {
            let command = Command::DeclineRematch { player: player_id(&request.player_id)? };
            self.command(&request.game_id, command, &request.request_id).await
        })
        .await
    }

    async fn report_presence(&self, request: Request<PresenceRequest>) -> Result<Response<CommandResponse>, Status> {
        let request = request.into_inner();
        self.timed("report_presence", async {
            let command = Command::Presence {
                player: player_id(&request.player_id)?,
                connected: request.connected,
                lease_ms: request.lease_ms,
            };
            // Saying the same thing twice changes nothing: not recorded.
            self.command(&request.game_id, command, "").await
        })
        .await
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
