//! Quick pairing and the lobby, through the matchmaker: `seek` and
//! `cancel_seek` become its gRPC calls, open boards are listed as players
//! create games for a human opponent and leave when taken, and the lobby
//! notices the matchmaker publishes on the bus (the whole list) go to every
//! socket that asked for the lobby as `lobby_update` frames with only what
//! changed, after one `lobby` frame with the whole list. Pairings reach players on
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
use fogblast_protocol::{LobbyFrame, LobbyUpdateFrame, OpenBoard, ServerFrame};
use futures::StreamExt;
use tonic::transport::Channel;
use tracing::{debug, warn};

use crate::conn::Conn;
use crate::deadline::within;
use crate::{frames, notices};

const MATCHMAKER: &str = "matchmaker";

/// The lobby's subscribers on this gateway, each with the version of the
/// notice whose list it holds (`None` for a list from the matchmaker's
/// reply), and the newest list heard.
#[derive(Default)]
pub struct Lobby {
    state: Mutex<LobbyState>,
}

#[derive(Default)]
struct LobbyState {
    subscribers: HashMap<u64, (Arc<Conn>, Option<u64>)>,
    current: Option<LobbyFrame>,
}

impl std::fmt::Debug for Lobby {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lobby").finish_non_exhaustive()
    }
}

impl Lobby {
    /// Follows the matchmaker's lobby notices for as long as the gateway
    /// runs; each subscriber gets what changed since the list it holds.
    pub fn listen(self: &Arc<Self>, bus: Arc<dyn EventBus>) {
        let lobby = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut frames = match bus.subscribe(LOBBY_SUBJECT).await {
                Ok(frames) => frames,
                Err(error) => return warn!(%error, "not listening to the lobby"),
            };
            while let Some(message) = frames.next().await {
                let Some(lobby) = lobby.upgrade() else { return };
                let Some((_, frame)) = notices::lobby_notice(&message.payload) else {
                    debug!("a lobby notice that does not read");
                    continue;
                };
                lobby.heard(frame);
            }
        });
    }

    /// A new list: to each subscriber holding the previous one, what
    /// changed; to one holding another, the whole list; to one already as
    /// new, nothing. A list from a reply carries the version it was read
    /// at, but the boards beside it may differ from that version's notice
    /// (they are read one after the other), so no change is computed
    /// against it: its holder gets the next whole list.
    fn heard(&self, newest: LobbyFrame) {
        let mut state = self.state.lock().expect("lobby lock");
        if state.current.as_ref().is_some_and(|current| current.v >= newest.v) {
            return;
        }
        let update = state.current.as_ref().map(|previous| {
            let frame = ServerFrame::LobbyUpdate(changes(previous, &newest));
            (previous.v, frames::text(&frame))
        });
        let mut whole = None;
        for (conn, holds) in state.subscribers.values_mut() {
            if holds.is_some_and(|v| v >= newest.v) {
                continue;
            }
            match &update {
                Some((from, frame)) if *holds == Some(*from) => {
                    conn.send(frame.clone());
                }
                _ => {
                    let frame = whole.get_or_insert_with(|| frames::text(&ServerFrame::Lobby(newest.clone())));
                    conn.send(frame.clone());
                }
            }
            *holds = Some(newest.v);
        }
        state.current = Some(newest);
    }

    /// Sends `reply` (the list at its version) and follows the lobby from
    /// there, in one step, so no change reaches the socket before it.
    pub fn subscribe(&self, conn: &Arc<Conn>, reply: LobbyFrame) {
        let mut state = self.state.lock().expect("lobby lock");
        conn.send(frames::text(&ServerFrame::Lobby(reply)));
        state.subscribers.insert(conn.id, (conn.clone(), None));
    }

    pub fn unsubscribe(&self, conn: &Conn) {
        self.state.lock().expect("lobby lock").subscribers.remove(&conn.id);
    }
}

/// From `previous` to `newest`: the boards added, in `newest`'s order, and
/// the games of those removed.
fn changes(previous: &LobbyFrame, newest: &LobbyFrame) -> LobbyUpdateFrame {
    let by_game = |list: &'_ LobbyFrame| -> HashMap<String, OpenBoard> {
        list.open.iter().map(|b| (b.game.clone(), b.clone())).collect()
    };
    let (before, after) = (by_game(previous), by_game(newest));
    LobbyUpdateFrame {
        v: newest.v,
        from: previous.v,
        added: newest.open.iter().filter(|b| before.get(&b.game) != Some(b)).cloned().collect(),
        // A board that changed is removed and added again.
        removed: previous.open.iter().filter(|b| after.get(&b.game) != Some(b)).map(|b| b.game.clone()).collect(),
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

    /// The matchmaker's client; tournaments call it directly.
    pub fn client(&self) -> Result<MatchmakerClient<Channel>, ServiceError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use fogblast_protocol::{ColorChoice, Variant as WireVariant};

    fn board(game: &str, rating: u32) -> OpenBoard {
        OpenBoard {
            game: game.to_owned(),
            code: "ABCDEFGH".to_owned(),
            variant: WireVariant::Atomic,
            clock: None,
            color: ColorChoice::Random,
            rating,
            rated: false,
            player: "p".to_owned(),
            name: "n".to_owned(),
        }
    }

    fn list(v: u64, boards: &[OpenBoard]) -> LobbyFrame {
        LobbyFrame { v, open: boards.to_vec(), id: None }
    }

    fn read(frames: &mut crate::conn::Outbox) -> Vec<serde_json::Value> {
        std::iter::from_fn(|| frames.try_recv().ok()).map(|f| serde_json::from_str(f.as_str()).unwrap()).collect()
    }

    /// A subscriber's list as a client keeps it: a whole list replaces
    /// it, an update applies to the version it follows (`None`: missed).
    fn apply(held: Option<(u64, Vec<String>)>, frame: &serde_json::Value) -> Option<(u64, Vec<String>)> {
        let games = |list: &serde_json::Value| -> Vec<String> {
            list.as_array().unwrap().iter().map(|b| b["game"].as_str().unwrap().to_owned()).collect()
        };
        let v = frame["v"].as_u64().unwrap();
        if frame["t"] == "lobby" {
            return Some((v, games(&frame["open"])));
        }
        let (at, open) = held?;
        if Some(at) != frame["from"].as_u64() {
            return None;
        }
        let removed: Vec<String> =
            frame["removed"].as_array().unwrap().iter().map(|g| g.as_str().unwrap().to_owned()).collect();
        let mut next = games(&frame["added"]);
        next.extend(open.into_iter().filter(|g| !removed.contains(g)));
        Some((v, next))
    }

    /// A change reaches a subscriber as what changed, not the whole list;
    /// one whose list is older than the last one heard, or came from a
    /// reply, gets the whole list.
    #[tokio::test]
    async fn subscribers_get_what_changed_since_the_list_they_hold() {
        let lobby = Lobby::default();
        let (a, b, c) = (board("game-a", 1500), board("game-b", 1600), board("game-c", 1700));
        lobby.heard(list(1, &[b.clone(), a.clone()]));
        let (following, mut following_frames, _closed) = Conn::new();
        lobby.subscribe(&following, list(1, &[b.clone(), a.clone()]));
        let (behind, mut behind_frames, _closed2) = Conn::new();
        lobby.subscribe(&behind, list(0, &[]));
        for frames in [&mut following_frames, &mut behind_frames] {
            assert_eq!(read(frames).len(), 1, "the reply");
        }

        // The first notice after a reply is the whole list.
        lobby.heard(list(2, &[b.clone(), a.clone(), c.clone()]));
        for frames in [&mut following_frames, &mut behind_frames] {
            let got = read(frames);
            assert_eq!((got.len(), got[0]["t"].as_str(), got[0]["v"].as_u64()), (1, Some("lobby"), Some(2)));
            assert_eq!(got[0]["open"].as_array().unwrap().len(), 3);
        }

        // b taken, a's creator rated anew: what changed.
        let a_again = board("game-a", 1510);
        lobby.heard(list(3, &[c.clone(), a_again.clone()]));
        let got = read(&mut following_frames);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0]["t"], "lobby_update");
        assert_eq!((got[0]["from"].as_u64(), got[0]["v"].as_u64()), (Some(2), Some(3)));
        let added: Vec<&str> =
            got[0]["added"].as_array().unwrap().iter().map(|b| b["game"].as_str().unwrap()).collect();
        assert_eq!(added, ["game-a"]);
        let mut removed: Vec<&str> =
            got[0]["removed"].as_array().unwrap().iter().map(|g| g.as_str().unwrap()).collect();
        removed.sort_unstable();
        assert_eq!(removed, ["game-a", "game-b"]);
        assert_eq!(read(&mut behind_frames), got, "both hold version 2");

        // An old notice arriving late changes nothing.
        lobby.heard(list(1, &[b]));
        assert!(read(&mut following_frames).is_empty());
        // The next change is a delta for both.
        lobby.heard(list(4, &[a_again]));
        for frames in [&mut following_frames, &mut behind_frames] {
            let got = read(frames);
            assert_eq!((got.len(), got[0]["t"].as_str()), (1, Some("lobby_update")));
            assert_eq!(got[0]["removed"], serde_json::json!(["game-c"]));
            assert_eq!(got[0]["added"], serde_json::json!([]));
        }
    }

    /// The matchmaker reads the version, then the boards: a reply at
    /// version 5 can list a board that version 5's notice does not. The
    /// client's list must still end with the board once, and without a
    /// board closed in between.
    #[tokio::test]
    async fn a_reply_newer_than_its_version_leaves_no_board_twice_or_stale() {
        let lobby = Lobby::default();
        let (a, x, y) = (board("game-a", 1500), board("game-x", 1600), board("game-y", 1700));
        lobby.heard(list(5, std::slice::from_ref(&a)));
        let (conn, mut frames, _closed) = Conn::new();
        // Read after x opened and while y was briefly open.
        lobby.subscribe(&conn, list(5, &[y.clone(), x.clone(), a.clone()]));
        lobby.heard(list(6, &[x.clone(), a.clone()]));
        let held = read(&mut frames).iter().fold(None, apply);
        assert_eq!(held, Some((6, vec!["game-x".to_owned(), "game-a".to_owned()])));
    }
}
