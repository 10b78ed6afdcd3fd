//! The rating service's gRPC face: profiles, leaderboards, archived games
//! and PGN export, each argument checked and each refusal a status with an
//! `ErrorDetail`.

use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::Variant;
use fogblast_proto::ids::{GameId, PlayerId};
use fogblast_proto::rating::rating_server::Rating;
use fogblast_proto::rating::{
    ArchivedGame, GameRequest, Leaderboard, LeaderboardRequest, Pgn, PlayerGames, PlayerGamesRequest, Profile,
    ProfileRequest, RecoveryIdentity, RedeemRecoveryRequest, RevokeRecoveryRequest, RevokeRecoveryResponse,
    SetRecoveryRequest,
};
use tonic::{Request, Response, Status};

use crate::archive::{Archive, ArchiveError};
use crate::export;
use crate::recovery::is_code_hash;

/// The longest display name kept with a recovery code, in characters.
const MAX_NAME_CHARS: usize = 30;

#[derive(Debug, Clone)]
pub struct RatingService {
    archive: Archive,
}

impl RatingService {
    pub fn new(archive: Archive) -> RatingService {
        RatingService { archive }
    }
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
        let pgn = export::pgn(&archived).map_err(|e| ServiceError::new(ErrorCode::Internal, e).into_status())?;
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

    async fn revoke_recovery(
        &self,
        request: Request<RevokeRecoveryRequest>,
    ) -> Result<Response<RevokeRecoveryResponse>, Status> {
        let player = PlayerId::parse(&request.into_inner().player_id).map_err(|e| bad(e.to_string()))?;
        let revoked = self.archive.revoke_recovery(player.as_str()).await.map_err(unavailable)?;
        Ok(Response::new(RevokeRecoveryResponse { revoked }))
    }
}
