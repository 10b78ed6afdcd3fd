//! The gRPC face of a replica: each call is handed to the shared
//! [`Matchmaker`], timed and counted, and every refusal leaves as a status
//! carrying an `ErrorDetail`.

use std::sync::Arc;
use std::time::Instant;

use fogblast_proto::error::ServiceError;
use fogblast_proto::matchmaker::matchmaker_server::Matchmaker as MatchmakerRpc;
use fogblast_proto::matchmaker::{
    CancelSeekRequest, CancelSeekResponse, CloseBoardRequest, CloseBoardResponse, CreateTournamentRequest,
    GetTournamentRequest, ListLobbyRequest, ListTournamentsRequest, Lobby, OpenBoardRequest, OpenBoardResponse,
    PlayerLeftRequest, PlayerLeftResponse, SeekRequest, SeekResponse, Tournament, TournamentList,
    TournamentPlayerRequest,
};
use tonic::{Request, Response, Status};

use crate::core::{bad, Matchmaker};
use crate::tournament::commands::Tournaments;
use crate::tournament::Presence;

#[derive(Debug, Clone)]
pub struct MatchmakerService {
    matchmaker: Arc<Matchmaker>,
    tournaments: Arc<Tournaments>,
}

impl MatchmakerService {
    pub fn new(matchmaker: Arc<Matchmaker>, tournaments: Arc<Tournaments>) -> MatchmakerService {
        MatchmakerService { matchmaker, tournaments }
    }

    async fn timed<T>(
        &self,
        rpc: &str,
        call: impl std::future::Future<Output = Result<T, ServiceError>>,
    ) -> Result<Response<T>, Status> {
        let started = Instant::now();
        let result = call.await;
        let outcome = result.as_ref().map_or_else(|e| e.code.as_ws_code(), |_| "ok");
        let metrics = self.matchmaker.metrics();
        metrics.commands.with_label_values(&[rpc, outcome]).inc();
        metrics.command_seconds.with_label_values(&[rpc]).observe(started.elapsed().as_secs_f64());
        result.map(Response::new).map_err(ServiceError::into_status)
    }
}

#[tonic::async_trait]
impl MatchmakerRpc for MatchmakerService {
    async fn seek(&self, request: Request<SeekRequest>) -> Result<Response<SeekResponse>, Status> {
        self.timed("seek", self.matchmaker.seek(request.into_inner())).await
    }

    async fn cancel_seek(&self, request: Request<CancelSeekRequest>) -> Result<Response<CancelSeekResponse>, Status> {
        let request = request.into_inner();
        self.timed("cancel_seek", async {
            let cancelled = self.matchmaker.cancel_seek(&request.player_id).await?;
            Ok(CancelSeekResponse { cancelled })
        })
        .await
    }

    async fn player_left(&self, request: Request<PlayerLeftRequest>) -> Result<Response<PlayerLeftResponse>, Status> {
        let request = request.into_inner();
        self.timed("player_left", async {
            let (seek_cancelled, boards_closed) = self.matchmaker.player_left(&request.player_id).await?;
            Ok(PlayerLeftResponse { seek_cancelled, boards_closed })
        })
        .await
    }

    async fn open_board(&self, request: Request<OpenBoardRequest>) -> Result<Response<OpenBoardResponse>, Status> {
        let request = request.into_inner();
        self.timed("open_board", async {
            let board = request.board.ok_or_else(|| bad("a board is needed"))?;
            let board = self.matchmaker.open_board(board).await?;
            Ok(OpenBoardResponse { board: Some(board) })
        })
        .await
    }

    async fn close_board(&self, request: Request<CloseBoardRequest>) -> Result<Response<CloseBoardResponse>, Status> {
        let request = request.into_inner();
        self.timed("close_board", async {
            let closed = self.matchmaker.close_board(&request.game_id, &request.player_id).await?;
            Ok(CloseBoardResponse { closed })
        })
        .await
    }

    async fn list_lobby(&self, request: Request<ListLobbyRequest>) -> Result<Response<Lobby>, Status> {
        let request = request.into_inner();
        self.timed("list_lobby", self.matchmaker.list_lobby(request.variant, request.limit)).await
    }

    async fn create_tournament(
        &self,
        request: Request<CreateTournamentRequest>,
    ) -> Result<Response<Tournament>, Status> {
        self.timed("create_tournament", self.tournaments.create(&request.into_inner())).await
    }

    async fn list_tournaments(&self, _: Request<ListTournamentsRequest>) -> Result<Response<TournamentList>, Status> {
        self.timed("list_tournaments", async { Ok(TournamentList { tournaments: self.tournaments.list().await? }) })
            .await
    }

    async fn get_tournament(&self, request: Request<GetTournamentRequest>) -> Result<Response<Tournament>, Status> {
        self.timed("get_tournament", self.tournaments.get(&request.into_inner())).await
    }

    async fn join_tournament(&self, request: Request<TournamentPlayerRequest>) -> Result<Response<Tournament>, Status> {
        self.timed("join_tournament", self.tournaments.join(&request.into_inner())).await
    }

    async fn withdraw_tournament(
        &self,
        request: Request<TournamentPlayerRequest>,
    ) -> Result<Response<Tournament>, Status> {
        self.timed("withdraw_tournament", self.tournaments.leave(&request.into_inner(), Presence::Withdrawn)).await
    }

    async fn pause_tournament(
        &self,
        request: Request<TournamentPlayerRequest>,
    ) -> Result<Response<Tournament>, Status> {
        self.timed("pause_tournament", self.tournaments.leave(&request.into_inner(), Presence::Paused)).await
    }
}
