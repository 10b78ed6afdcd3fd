//! Quick pairing and the lobby, through the matchmaker: `seek` and
//! `cancel_seek` become its gRPC calls, open boards are listed as players
//! create games for a human opponent and leave when taken, and the lobby
//! notices the matchmaker publishes on the bus go, as `lobby` frames, to
//! every socket that asked for the lobby. Pairings reach players on
//! `player.<id>` like any other notice.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fogblast_bus::EventBus;
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::{ClockSettings, Variant};
use fogblast_proto::matchmaker::matchmaker_client::MatchmakerClient;
use fogblast_proto::matchmaker::{
    Board, CancelSeekRequest, CloseBoardRequest, ListLobbyRequest, OpenBoardRequest, PlayerLeftRequest, RatingRange,
    SeekRequest,
};
use fogblast_proto::notices::LOBBY_SUBJECT;
use fogblast_protocol::{LobbyFrame, ServerFrame};
use futures::StreamExt;
use tonic::transport::Channel;
use tracing::{debug, warn};

use crate::conn::Conn;
use crate::deadline::within;
use crate::{frames, notices};

const MATCHMAKER: &str = "matchmaker";

/// The lobby's subscribers on this gateway and the newest frame seen.
#[derive(Default)]
pub struct Lobby {
    subscribers: Mutex<HashMap<u64, Arc<Conn>>>,
    newest: Mutex<u64>,
}

impl std::fmt::Debug for Lobby {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lobby").finish_non_exhaustive()
    }
}

impl Lobby {
    /// Writes the matchmaker's lobby notices as `lobby` frames, newest
    /// only, for as long as the gateway runs.
    pub fn listen(self: &Arc<Self>, bus: Arc<dyn EventBus>) {
        let lobby = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut frames = match bus.subscribe(LOBBY_SUBJECT).await {
                Ok(frames) => frames,
                Err(error) => return warn!(%error, "not listening to the lobby"),
            };
            while let Some(message) = frames.next().await {
                let Some(lobby) = lobby.upgrade() else { return };
                let Some((version, frame)) = notices::lobby_notice(&message.payload) else {
                    debug!("a lobby notice that does not read");
                    continue;
                };
                {
                    let mut newest = lobby.newest.lock().expect("lobby lock");
                    if version < *newest {
                        continue;
                    }
                    *newest = version;
                }
                let frame = frames::text(&ServerFrame::Lobby(frame));
                let subscribers: Vec<Arc<Conn>> =
                    lobby.subscribers.lock().expect("lobby lock").values().cloned().collect();
                for conn in subscribers {
                    conn.send(frame.clone());
                }
            }
        });
    }

    pub fn subscribe(&self, conn: &Arc<Conn>) {
        self.subscribers.lock().expect("lobby lock").insert(conn.id, conn.clone());
    }

    pub fn unsubscribe(&self, conn: &Conn) {
        self.subscribers.lock().expect("lobby lock").remove(&conn.id);
    }
}

fn no_matchmaker() -> ServiceError {
    ServiceError::new(ErrorCode::Unavailable, "quick pairing and the lobby are not running on this server")
}

/// The matchmaker, if this gateway has one. Every call has `timeout`, the
/// ones a client waits for and the best-effort ones alike (those would
/// otherwise pile up as tasks while the matchmaker hangs).
#[derive(Clone, Debug)]
pub struct Matchmaker {
    client: Option<MatchmakerClient<Channel>>,
    timeout: Duration,
}

impl Matchmaker {
    pub fn new(client: Option<MatchmakerClient<Channel>>, timeout: Duration) -> Matchmaker {
        Matchmaker { client, timeout }
    }

    fn client(&self) -> Result<MatchmakerClient<Channel>, ServiceError> {
        self.client.clone().ok_or_else(no_matchmaker)
    }

    pub async fn seek(
        &self,
        player: &str,
        name: &str,
        variant: Variant,
        clock: Option<ClockSettings>,
        rated: bool,
        range: Option<(u32, u32)>,
    ) -> Result<(String, String), ServiceError> {
        let request = SeekRequest {
            player_id: player.to_owned(),
            name: name.to_owned(),
            variant: variant as i32,
            clock,
            rated,
            range: range.map(|(min, max)| RatingRange { min, max }),
            rating: None,
        };
        let answer = within(self.timeout, MATCHMAKER, self.client()?.seek(request)).await?;
        Ok((answer.seek_id, answer.pool))
    }

    pub async fn cancel_seek(&self, player: &str) -> Result<bool, ServiceError> {
        let request = CancelSeekRequest { player_id: player.to_owned() };
        Ok(within(self.timeout, MATCHMAKER, self.client()?.cancel_seek(request)).await?.cancelled)
    }

    /// The lobby now, as its frame.
    pub async fn list(&self) -> Result<LobbyFrame, ServiceError> {
        let request = ListLobbyRequest { variant: Variant::Unspecified as i32, limit: 0 };
        let answer = within(self.timeout, MATCHMAKER, self.client()?.list_lobby(request)).await?;
        Ok(notices::lobby_frame(answer.version, &answer.open))
    }

    /// Best effort: a game waiting for a human opponent appears in the lobby.
    pub fn open_board(&self, board: Board) {
        let Some(mut client) = self.client.clone() else { return };
        let timeout = self.timeout;
        tokio::spawn(async move {
            let listed = within(timeout, MATCHMAKER, client.open_board(OpenBoardRequest { board: Some(board) })).await;
            if let Err(error) = listed {
                debug!(code = ?error.code, message = error.message, "board not listed");
            }
        });
    }

    pub fn close_board(&self, game: &str) {
        let Some(mut client) = self.client.clone() else { return };
        let request = CloseBoardRequest { game_id: game.to_owned(), player_id: String::new() };
        let timeout = self.timeout;
        tokio::spawn(async move {
            let _ = within(timeout, MATCHMAKER, client.close_board(request)).await;
        });
    }

    /// The player's last socket here closed: withdraw their seek and boards.
    pub fn player_left(&self, player: &str) {
        let Some(mut client) = self.client.clone() else { return };
        let request = PlayerLeftRequest { player_id: player.to_owned() };
        let timeout = self.timeout;
        tokio::spawn(async move {
            let _ = within(timeout, MATCHMAKER, client.player_left(request)).await;
        });
    }
}
