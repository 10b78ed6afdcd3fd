//! The WebSocket test client and the moves of a game between two of them.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use fogblast_client::protocol::{ClientFrame, ColorChoice, Create, Hello, Join, Opponent, TimeControl};
use fogblast_client::tungstenite::Message;
pub use fogblast_client::Closed;
use serde_json::{json, Value};

use super::WAIT;

/// A bot on one WebSocket, on the client crate's [`fogblast_client::Client`]:
/// every frame it receives is kept both in `log` (all, in order, as JSON,
/// so tests see fields the types do not know) and in a queue the `expect`
/// calls take from. Anything unexpected fails the test with what came.
pub struct Client {
    pub name: String,
    /// The gateway it is connected to.
    pub gateway: SocketAddr,
    inner: fogblast_client::Client,
    /// How much of the inner client's log is already in `log`.
    seen: usize,
    pub log: Vec<Value>,
    pub player: String,
    pub token: String,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("name", &self.name).field("player", &self.player).finish_non_exhaustive()
    }
}

pub fn t(frame: &Value) -> &str {
    frame["t"].as_str().unwrap_or("")
}

impl Client {
    pub async fn connect(name: &str, gateway: SocketAddr) -> Client {
        let url = format!("ws://{gateway}/ws");
        let inner = tokio::time::timeout(WAIT, fogblast_client::Client::connect(&url))
            .await
            .unwrap_or_else(|_| panic!("{name}: connecting to {url} timed out"))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        Client {
            name: name.to_owned(),
            gateway,
            inner,
            seen: 0,
            log: Vec::new(),
            player: String::new(),
            token: String::new(),
        }
    }

    /// Connects and says hello (with `token`, or as a new player).
    pub async fn join(name: &str, gateway: SocketAddr, token: Option<&str>) -> Client {
        let mut client = Client::connect(name, gateway).await;
        client.hello(token).await;
        client
    }

    /// `hello`; returns the `welcome` and keeps its player and token.
    pub async fn hello(&mut self, token: Option<&str>) -> Value {
        let hello = Hello { token: token.map(str::to_owned), name: Some(self.name.clone()) };
        self.send_frame(ClientFrame::Hello(hello)).await;
        let welcome = self.expect("welcome").await;
        self.player = welcome["player"].as_str().expect("welcome has a player").to_owned();
        self.token = welcome["token"].as_str().expect("welcome has a token").to_owned();
        welcome
    }

    /// Sends a frame the protocol's types describe.
    pub async fn send_frame(&mut self, frame: ClientFrame) {
        let sent = tokio::time::timeout(WAIT, self.inner.send(frame.clone())).await;
        assert!(matches!(sent, Ok(Ok(()))), "{}: could not send {frame:?}", self.name);
    }

    /// Sends a frame written as JSON, as the test spells it.
    pub async fn send(&mut self, frame: Value) {
        let sent = self.send_text(frame.to_string()).await;
        assert!(sent, "{}: could not send {frame}", self.name);
    }

    /// Sends any message; `false` when the connection is gone.
    pub async fn send_message(&mut self, message: Message) -> bool {
        matches!(tokio::time::timeout(WAIT, self.inner.send_message(message)).await, Ok(Ok(())))
    }

    /// Sends every frame in one write; `false` when the connection is gone.
    pub async fn blast(&mut self, frames: impl IntoIterator<Item = String>) -> bool {
        let connection = self.inner.connection();
        for frame in frames {
            if connection.feed_text(frame).await.is_err() {
                return false;
            }
        }
        connection.flush().await.is_ok()
    }

    pub async fn send_text(&mut self, text: impl Into<String>) -> bool {
        matches!(tokio::time::timeout(WAIT, self.inner.send_text(text)).await, Ok(Ok(())))
    }

    /// Copies what the inner client received since the last look into `log`.
    fn catch_up(&mut self) {
        let fresh = &self.inner.log()[self.seen..];
        self.log.extend(fresh.iter().map(|f| f.json().clone()));
        self.seen = self.inner.log().len();
    }

    /// How the connection ended, once it did.
    pub fn closed(&self) -> Option<Closed> {
        self.inner.closed().cloned()
    }

    /// The first queued or arriving frame that `matches`, taken from the
    /// queue (the others stay); `None` after `limit` or when the
    /// connection ended.
    pub async fn find(&mut self, limit: Duration, matches: impl Fn(&Value) -> bool) -> Option<Value> {
        let found = self.inner.find(limit, |f| matches(f.json())).await;
        self.catch_up();
        let found = found.unwrap_or_else(|e| panic!("{}: {e}", self.name));
        found.map(|f| f.json().clone())
    }

    /// Follows the lobby as this client hears it (a whole `lobby`, then
    /// `lobby_update`s with what changed) until the list of open boards
    /// satisfies `done`; `None` if it does not within `limit`.
    pub async fn lobby_until(&mut self, limit: Duration, done: impl Fn(&[Value]) -> bool) -> Option<Vec<Value>> {
        let deadline = Instant::now() + limit;
        let mut open: Vec<Value> = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let frame = self.find(left, |f| t(f) == "lobby" || t(f) == "lobby_update").await?;
            if t(&frame) == "lobby" {
                open = frame["open"].as_array().cloned().unwrap_or_default();
            } else {
                let removed: Vec<&Value> = frame["removed"].as_array().map(|r| r.iter().collect()).unwrap_or_default();
                open.retain(|b| !removed.contains(&&b["game"]));
                let mut added = frame["added"].as_array().cloned().unwrap_or_default();
                added.append(&mut open);
                open = added;
            }
            if done(&open) {
                return Some(open);
            }
        }
    }

    /// The next frame of type `kind` (others stay queued); fails the test
    /// after [`WAIT`].
    pub async fn expect(&mut self, kind: &str) -> Value {
        self.expect_where(kind, |f| t(f) == kind).await
    }

    pub async fn expect_where(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        match self.find(WAIT, matches).await {
            Some(frame) => frame,
            None => panic!(
                "{}: no {what} within {WAIT:?}; closed: {:?}; received:\n{}",
                self.name,
                self.closed(),
                self.log.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")
            ),
        }
    }

    /// The `move` frame of `ply`.
    pub async fn expect_move(&mut self, ply: usize) -> Value {
        self.expect_where(&format!("move of ply {ply}"), |f| t(f) == "move" && f["ply"] == ply).await
    }

    /// The `error` frame answering `id`.
    pub async fn expect_error_for(&mut self, id: &str) -> Value {
        self.expect_where(&format!("error for {id}"), |f| t(f) == "error" && f["id"] == id).await
    }

    /// Everything that arrives within `window`, plus what was queued.
    pub async fn drain(&mut self, window: Duration) -> Vec<Value> {
        let drained = self.inner.drain(window).await;
        self.catch_up();
        let drained = drained.unwrap_or_else(|e| panic!("{}: {e}", self.name));
        drained.iter().map(|f| f.json().clone()).collect()
    }

    /// Sends a ping with `id` and returns every frame that came before its pong.
    pub async fn sync(&mut self, id: &str) -> Vec<Value> {
        let sent = self.inner.send_with_id(ClientFrame::Ping, id).await;
        assert!(sent.is_ok(), "{}: could not send a ping: {sent:?}", self.name);
        self.expect_where(&format!("pong {id}"), |f| t(f) == "pong" && f["id"] == id).await;
        self.inner.take_pending().iter().map(|f| f.json().clone()).collect()
    }

    /// Reads until the connection ends; fails the test after `limit`.
    pub async fn wait_closed(&mut self, limit: Duration) -> Closed {
        let closed = self.inner.wait_closed(limit).await;
        self.catch_up();
        match closed.unwrap_or_else(|e| panic!("{}: {e}", self.name)) {
            Some(closed) => closed,
            None => panic!("{}: still open after {limit:?}", self.name),
        }
    }

    /// Closes the socket cleanly.
    pub async fn close(self) {
        self.inner.close(Duration::from_secs(2)).await;
    }

    /// The highest version among the frames received.
    pub fn last_v(&self) -> u64 {
        self.log.iter().filter_map(|f| f["v"].as_u64()).max().unwrap_or(0)
    }

    /// The `move` frames received, in order.
    pub fn moves(&self) -> Vec<Value> {
        self.log.iter().filter(|f| t(f) == "move").cloned().collect()
    }
}

pub fn move_frame(game: &str, uci: &str, ply: usize) -> Value {
    json!({ "t": "move", "game": game, "uci": uci, "ply": ply })
}

/// `white` creates a game of `variant` as white and `black` joins it by its
/// code; returns the game id once both have its state.
pub async fn start_game(white: &mut Client, black: &mut Client, variant: &str) -> String {
    start_game_with_clock(white, black, variant, None).await
}

/// [`start_game`] with a clock of `clock` = (initial, increment) ms.
pub async fn start_game_with_clock(
    white: &mut Client,
    black: &mut Client,
    variant: &str,
    clock: Option<(u32, u32)>,
) -> String {
    let create = Create {
        variant: serde_json::from_value(json!(variant)).expect("a variant of the protocol"),
        color: ColorChoice::White,
        clock: clock.map(|(initial_ms, increment_ms)| TimeControl { initial_ms, increment_ms }),
        opponent: Opponent::Human,
        level: None,
        rated: None,
        chess960: None,
    };
    white.send_frame(ClientFrame::Create(create)).await;
    let created = white.expect("created").await;
    assert_eq!(created["color"], "white");
    let game = created["game"].as_str().expect("created has a game").to_owned();
    let code = created["code"].as_str().expect("created has a code").to_owned();
    assert_eq!(created["invite"], format!("/g/{code}"));
    let state = white.expect("state").await;
    assert_eq!((state["game"].as_str(), state["you"].as_str()), (Some(game.as_str()), Some("white")));
    black.send_frame(ClientFrame::Join(Join { code: code.clone() })).await;
    let joined = black.expect("joined").await;
    assert_eq!((joined["game"].as_str(), joined["color"].as_str()), (Some(game.as_str()), Some("black")));
    let state = black.expect("state").await;
    assert_eq!((state["status"].as_str(), state["you"].as_str()), (Some("playing"), Some("black")));
    game
}

/// Plays plies `from..to` of `line`: the side to move sends its move and
/// both wait for that ply's `move` frame (the mover's is its acknowledgement).
pub async fn play(white: &mut Client, black: &mut Client, game: &str, line: &[String], from: usize, to: usize) {
    for (ply, uci) in line.iter().enumerate().take(to).skip(from) {
        let (mover, other) = if ply % 2 == 0 { (&mut *white, &mut *black) } else { (&mut *black, &mut *white) };
        mover.send(move_frame(game, uci, ply)).await;
        let ack = mover.expect_move(ply).await;
        assert_eq!(ack["uci"], uci.as_str(), "{}: the acknowledgement of ply {ply}", mover.name);
        other.expect_move(ply).await;
    }
}
