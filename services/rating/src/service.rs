//! The rating service's gRPC face: profiles, leaderboards, archived games
//! and PGN export, each argument checked and each refusal a status with an
//! `ErrorDetail`.

use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::Variant;
use fogblast_proto::ids::{GameId, PlayerId};
use fogblast_proto::rating::rating_server::Rating;
use fogblast_proto::rating::{
    AnalysisRequest, ArchivedGame, GameAnalysis, GameRequest, Leaderboard, LeaderboardRequest, Pgn, PlayerGames,
    PlayerGamesRequest, Profile, ProfileRequest, RecoveryIdentity, RedeemRecoveryRequest, RevokeRecoveryRequest,
    RevokeRecoveryResponse, SetRecoveryRequest,
};
use fogblast_proto::rating::{
    DailyPuzzleRequest, NextPuzzleRequest, PuzzleAttemptRequest, PuzzleAttemptResult, PuzzleRating,
    PuzzleRatingRequest, PuzzleRecord, PuzzleRequest,
};
use tonic::{Request, Response, Status};

use std::sync::Arc;

use fogblast_bus::EventBus;

use crate::analyses::{Requested, StoredAnalysis};
use crate::archive::{Archive, ArchiveError};
use crate::consumer::now_ms;
use crate::export;
use crate::judgement::judge;
use crate::puzzle_service;
use crate::recovery::is_code_hash;

/// The longest display name kept with a recovery code, in characters.
const MAX_NAME_CHARS: usize = 30;
/// The most analyses one requester (address) may wait for at once.
pub const MAX_WAITING_ANALYSES: u32 = 3;

#[derive(Debug, Clone)]
pub struct RatingService {
    archive: Archive,
    bus: Arc<dyn EventBus>,
}

impl RatingService {
    pub fn new(archive: Archive, bus: Arc<dyn EventBus>) -> RatingService {
        RatingService { archive, bus }
    }

    /// The archived game, or why it is not there.
    async fn archived(&self, game: &GameId) -> Result<ArchivedGame, Status> {
        self.archive.game(game.as_str()).await.map_err(unavailable)?.ok_or_else(|| {
            not_found(format!("no finished game {game}: it is still being played, or there is no such game"))
        })
    }
}

/// An analysis as the API gives it: evaluations, and once done, each move
/// judged and each side's accuracy.
fn game_analysis(stored: StoredAnalysis, archived: &ArchivedGame) -> GameAnalysis {
    let mut analysis = GameAnalysis {
        game_id: stored.game_id,
        state: stored.state.into(),
        error: stored.error,
        depth: stored.depth,
        requested_at_ms: stored.requested_ms,
        finished_at_ms: stored.finished_ms,
        ..Default::default()
    };
    if let Some(game) = archived.game.as_ref().filter(|_| !stored.positions.is_empty()) {
        let variant = fogblast_rules::Variant::try_from(game.variant()).unwrap_or(fogblast_rules::Variant::Standard);
        let white_first = fogblast_rules::Position::from_fen(&game.initial_fen, variant)
            .map_or(true, |start| start.turn() == fogblast_rules::Color::White);
        let judged = judge(&stored.positions, &game.moves, white_first);
        analysis.moves = judged.moves;
        [analysis.white_accuracy, analysis.black_accuracy] = judged.accuracy;
    }
    analysis.positions = stored.positions;
    analysis
}

fn bad(message: impl Into<String>) -> Status {
    ServiceError::new(ErrorCode::BadRequest, message).into_status()
}

fn not_found(message: impl Into<String>) -> Status {
    ServiceError::new(ErrorCode::NotFound, message).into_status()
}

fn unavailable(error: ArchiveError) -> Status {
    ServiceError::new(ErrorCode::Unavailable, format!("the archive is unavailable: {error}")).into_status()
}

/// Page tokens are opaque to clients: the last game's end time and id.
mod page_token {
    pub fn encode(ended_ms: i64, game: &str) -> String {
        format!("{ended_ms}.{game}")
    }

    pub fn decode(token: &str) -> Option<(i64, String)> {
        let (ms, game) = token.split_once('.')?;
        let game = fogblast_proto::ids::GameId::parse(game).ok()?;
        Some((ms.parse().ok()?, game.into_string()))
    }
}

#[tonic::async_trait]
impl Rating for RatingService {
    async fn get_profile(&self, request: Request<ProfileRequest>) -> Result<Response<Profile>, Status> {
        let player = PlayerId::parse(&request.into_inner().player_id).map_err(|e| bad(e.to_string()))?;
        let (name, ratings, games) = self
            .archive
            .profile(player.as_str())
            .await
            .map_err(unavailable)?
            .ok_or_else(|| not_found(format!("no games of player {player}")))?;
        Ok(Response::new(Profile { player_id: player.into_string(), name, ratings, games }))
    }

    async fn get_leaderboard(&self, request: Request<LeaderboardRequest>) -> Result<Response<Leaderboard>, Status> {
        let request = request.into_inner();
        let variant = match Variant::try_from(request.variant) {
            Ok(Variant::Unspecified) | Err(_) => return Err(bad("variant must be standard, atomic or fog")),
            Ok(variant) => variant,
        };
        let limit = match request.limit {
            0 => 50,
            1..=200 => request.limit,
            _ => return Err(bad("limit is 1 to 200")),
        };
        let entries = self.archive.leaderboard(variant, limit).await.map_err(unavailable)?;
        Ok(Response::new(Leaderboard { variant: variant as i32, entries }))
    }

    async fn get_game(&self, request: Request<GameRequest>) -> Result<Response<ArchivedGame>, Status> {
        let game = GameId::parse(&request.into_inner().game_id).map_err(|e| bad(e.to_string()))?;
        let archived = self.archive.game(game.as_str()).await.map_err(unavailable)?;
        archived.map(Response::new).ok_or_else(|| not_found(format!("no archived game {game}")))
    }

    async fn list_player_games(&self, request: Request<PlayerGamesRequest>) -> Result<Response<PlayerGames>, Status> {
        let request = request.into_inner();
        let player = PlayerId::parse(&request.player_id).map_err(|e| bad(e.to_string()))?;
        let size = match request.page_size {
            0 => 20,
            1..=100 => request.page_size,
            _ => return Err(bad("page_size is 1 to 100")),
        };
        let token = if request.page_token.is_empty() {
            None
        } else {
            Some(
                page_token::decode(&request.page_token)
                    .ok_or_else(|| bad("page_token is not one this service gave"))?,
            )
        };
        let (games, next) = self.archive.player_games(player.as_str(), size, token).await.map_err(unavailable)?;
        let next_page_token = next.map(|(ms, id)| page_token::encode(ms, &id)).unwrap_or_default();
        Ok(Response::new(PlayerGames { games, next_page_token }))
    }

    async fn export_pgn(&self, request: Request<GameRequest>) -> Result<Response<Pgn>, Status> {
        let game = GameId::parse(&request.into_inner().game_id).map_err(|e| bad(e.to_string()))?;
        let archived = self
            .archive
            .game(game.as_str())
            .await
            .map_err(unavailable)?
            .ok_or_else(|| not_found(format!("no archived game {game}")))?;
        let analysis = self.archive.analysis(game.as_str()).await.map_err(unavailable)?;
        let evals = analysis.map(|analysis| analysis.positions).unwrap_or_default();
        let pgn =
            export::pgn(&archived, &evals).map_err(|e| ServiceError::new(ErrorCode::Internal, e).into_status())?;
        Ok(Response::new(Pgn { pgn }))
    }

    async fn set_recovery(&self, request: Request<SetRecoveryRequest>) -> Result<Response<RecoveryIdentity>, Status> {
        let request = request.into_inner();
        let player = PlayerId::parse(&request.player_id).map_err(|e| bad(e.to_string()))?;
        if !is_code_hash(&request.code_hash) {
            return Err(bad("code_hash is a SHA-256 digest in lowercase hex"));
        }
        if request.name.chars().count() > MAX_NAME_CHARS {
            return Err(bad(format!("a name has at most {MAX_NAME_CHARS} characters")));
        }
        let kept = self.archive.set_recovery(player.as_str(), &request.name, &request.code_hash).await;
        if !kept.map_err(unavailable)? {
            return Err(ServiceError::new(ErrorCode::Conflict, "that code is another player's").into_status());
        }
        Ok(Response::new(RecoveryIdentity { player_id: player.into_string(), name: request.name }))
    }

    async fn redeem_recovery(
        &self,
        request: Request<RedeemRecoveryRequest>,
    ) -> Result<Response<RecoveryIdentity>, Status> {
        let hash = request.into_inner().code_hash;
        if !is_code_hash(&hash) {
            return Err(bad("code_hash is a SHA-256 digest in lowercase hex"));
        }
        let (player_id, name) = self
            .archive
            .redeem_recovery(&hash)
            .await
            .map_err(unavailable)?
            .ok_or_else(|| not_found("no player has that recovery code: it is mistyped or was revoked"))?;
        Ok(Response::new(RecoveryIdentity { player_id, name }))
    }

    async fn request_analysis(&self, request: Request<AnalysisRequest>) -> Result<Response<GameAnalysis>, Status> {
        let request = request.into_inner();
        let game = GameId::parse(&request.game_id).map_err(|e| bad(e.to_string()))?;
        let archived = self.archived(&game).await?;
        let requested = self
            .archive
            .request_analysis(game.as_str(), &request.requester, now_ms(), MAX_WAITING_ANALYSES)
            .await
            .map_err(unavailable)?;
        let stored = match requested {
            Requested::TooMany { max } => {
                return Err(ServiceError::new(
                    ErrorCode::RateLimited,
                    format!("you already wait for {max} analyses; ask again when one is done"),
                )
                .into_status())
            }
            Requested::Existing(stored) => stored,
            Requested::New(stored) => stored,
        };
        // A queued analysis is published again: if the first publish was
        // lost, this one counts, and if not, the stream drops it.
        if stored.state == fogblast_proto::rating::AnalysisState::Queued {
            let finished = archived.game.as_ref().ok_or_else(|| not_found(format!("no finished game {game}")))?;
            crate::analysis_results::publish_request(self.bus.as_ref(), finished).await.map_err(|e| {
                ServiceError::new(ErrorCode::Unavailable, format!("the analysis queue is unavailable: {e}"))
                    .into_status()
            })?;
        }
        Ok(Response::new(game_analysis(stored, &archived)))
    }

    async fn get_analysis(&self, request: Request<GameRequest>) -> Result<Response<GameAnalysis>, Status> {
        let game = GameId::parse(&request.into_inner().game_id).map_err(|e| bad(e.to_string()))?;
        let archived = self.archived(&game).await?;
        let stored = self
            .archive
            .analysis(game.as_str())
            .await
            .map_err(unavailable)?
            .ok_or_else(|| not_found(format!("game {game} has not been analysed: request an analysis first")))?;
        Ok(Response::new(game_analysis(stored, &archived)))
    }

    async fn revoke_recovery(
        &self,
        request: Request<RevokeRecoveryRequest>,
    ) -> Result<Response<RevokeRecoveryResponse>, Status> {
        let player = PlayerId::parse(&request.into_inner().player_id).map_err(|e| bad(e.to_string()))?;
        let revoked = self.archive.revoke_recovery(player.as_str()).await.map_err(unavailable)?;
        Ok(Response::new(RevokeRecoveryResponse { revoked }))
    }

    async fn get_puzzle(&self, request: Request<PuzzleRequest>) -> Result<Response<PuzzleRecord>, Status> {
        puzzle_service::get(&self.archive, request.into_inner()).await.map(Response::new)
    }

    async fn get_daily_puzzle(&self, request: Request<DailyPuzzleRequest>) -> Result<Response<PuzzleRecord>, Status> {
        puzzle_service::daily(&self.archive, request.into_inner()).await.map(Response::new)
    }

    async fn next_puzzle(&self, request: Request<NextPuzzleRequest>) -> Result<Response<PuzzleRecord>, Status> {
        puzzle_service::next(&self.archive, request.into_inner()).await.map(Response::new)
    }

    async fn record_puzzle_attempt(
        &self,
        request: Request<PuzzleAttemptRequest>,
    ) -> Result<Response<PuzzleAttemptResult>, Status> {
        puzzle_service::record_attempt(&self.archive, request.into_inner()).await.map(Response::new)
    }

    async fn get_puzzle_rating(&self, request: Request<PuzzleRatingRequest>) -> Result<Response<PuzzleRating>, Status> {
        puzzle_service::standing(&self.archive, request.into_inner()).await.map(Response::new)
    }
}
