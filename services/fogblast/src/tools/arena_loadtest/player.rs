//! One arena player: a WebSocket connection that greets a gateway, joins
//! the arena with its token over lichess's tournament API, and plays every
//! game the arena pairs it in. On `paired` it opens the game (`watch`),
//! then plays a random move of the `legal` list the server sends the side
//! to move, after a think time; it resigns a game that reaches the ply
//! limit. Some players go berserk before their first move. It only ever
//! sees its own seat's view, so it plays fog of war as a person would.
//!
//! It records what it saw of each game (the moves, `None` where the fog
//! hid one, and the result its `end` frame gave) for the final check
//! against the archive, and the wait from each game's end to its next
//! pairing. What the server says that it did not expect is counted, never
//! panicked on.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fogblast_client::protocol::Hello;
use fogblast_client::{Connection, ConnectionOptions, Http, Method};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::{watch, Semaphore};
use tokio::time::{sleep_until, timeout, Instant};

/// How long a connection attempt or an HTTP call may take.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(20);
/// Tries at connecting and at joining.
const ATTEMPTS: u32 = 5;
/// Bytes read from the socket at a time.
const READ_BUFFER: usize = 8192;
/// Once the arena is over and the player has no game, how long it still
/// listens for a pairing told just before the end.
const LINGER: Duration = Duration::from_secs(3);
/// With no frame for this long in a game, the player opens the game again.
const QUIET_IN_GAME: Duration = Duration::from_secs(15);

/// How every player plays.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Think time before each move, uniform in this range (ms).
    pub think_ms: (u64, u64),
    /// The side to move resigns at this many plies.
    pub max_plies: usize,
    /// The share of players who go berserk in every game.
    pub berserk_share: f64,
}

/// What every player shares.
#[derive(Debug)]
pub struct Shared {
    pub settings: Settings,
    pub tournament: String,
    /// Bounds the handshakes (connect, `hello`, join) in flight.
    pub handshakes: Semaphore,
    /// What went wrong, by kind, over all players.
    pub troubles: Mutex<BTreeMap<String, u64>>,
}

impl Shared {
    fn trouble(&self, what: impl Into<String>) {
        *self.troubles.lock().unwrap_or_else(|e| e.into_inner()).entry(what.into()).or_default() += 1;
    }
}

/// Where one player plays.
#[derive(Clone, Debug)]
pub struct PlayerSpec {
    /// The gateway's WebSocket URL.
    pub ws_url: String,
    /// The same gateway's HTTP API.
    pub http: Http,
    pub seed: u64,
}

/// One game as one of its players saw it.
#[derive(Clone, Debug)]
pub struct SeenGame {
    pub id: String,
    /// The player's colour, `white` or `black`.
    pub color: String,
    /// Every ply: its move, or `None` where the fog hid it.
    pub moves: Vec<Option<String>>,
    /// From the `end` frame; `None` if the player never saw the end.
    pub result: Option<String>,
    /// The moves the `end` frame (or the `state` of the ended game) listed.
    pub end_moves: Vec<Option<String>>,
    pub berserk: bool,
}

/// What one player did.
#[derive(Debug, Default)]
pub struct PlayerReport {
    /// `None` when it never got in.
    pub id: Option<String>,
    pub games: Vec<SeenGame>,
    /// From each game's end to the next `paired`.
    pub waits: Vec<Duration>,
    /// Moves this player made and saw acknowledged.
    pub moves: u64,
}

/// The fields of a server frame the player reads.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Frame {
    t: String,
    game: Option<String>,
    color: Option<String>,
    ply: Option<usize>,
    uci: Option<String>,
    legal: Vec<String>,
    moves: Vec<Option<String>>,
    result: Option<String>,
    tournament: Option<String>,
    message: Option<String>,
    id: Option<u64>,
}

/// The game being played and the move waiting for its think time.
struct Current {
    seen: SeenGame,
    /// When the next move goes, which, at which ply.
    next: Option<(Instant, String, usize)>,
    last_frame: Instant,
}

struct Player {
    shared: Arc<Shared>,
    rng: StdRng,
    berserker: bool,
    ws: Connection,
    report: PlayerReport,
    current: Option<Current>,
    /// When the last game ended (or the player joined).
    idle_since: Instant,
    next_id: u64,
}

/// Connects, joins the arena, plays until the arena is over and its last
/// game ended; returns what it did.
pub async fn run_player(spec: PlayerSpec, shared: Arc<Shared>, mut finished: watch::Receiver<bool>) -> PlayerReport {
    let mut rng = StdRng::seed_from_u64(spec.seed);
    let berserker = rng.random_bool(shared.settings.berserk_share.clamp(0.0, 1.0));
    let Some((ws, player)) = enter(&spec, &shared).await else {
        return PlayerReport::default();
    };
    let mut me = Player {
        shared,
        rng,
        berserker,
        ws,
        report: PlayerReport { id: Some(player), ..PlayerReport::default() },
        current: None,
        idle_since: Instant::now(),
        next_id: 1,
    };
    let mut over = false;
    let mut quiet_since: Option<Instant> = None;
    loop {
        if over && me.current.is_none() {
            let since = *quiet_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= LINGER {
                break;
            }
        } else {
            quiet_since = None;
        }
        let wake = me.wake_at(over);
        tokio::select! {
            frame = me.ws.recv() => match frame {
                Ok(text) => me.on_frame(&text).await,
                Err(error) => {
                    me.shared.trouble(format!("connection lost: {}", short(&error.to_string())));
                    break;
                }
            },
            _ = sleep_until(wake) => me.on_timer().await,
            changed = finished.changed(), if !over => over = changed.is_err() || *finished.borrow(),
        }
    }
    if let Some(current) = me.current.take() {
        me.shared.trouble("stopped in a game");
        me.report.games.push(current.seen);
    }
    me.ws.close(Duration::from_secs(2)).await;
    me.report
}

/// Connects, says hello and joins the arena, with retries.
async fn enter(spec: &PlayerSpec, shared: &Shared) -> Option<(Connection, String)> {
    for attempt in 1..=ATTEMPTS {
        let permit = shared.handshakes.acquire().await.ok()?;
        let result = timeout(ANSWER_TIMEOUT, greet_and_join(spec, shared)).await;
        drop(permit);
        match result {
            Ok(Ok(entered)) => return Some(entered),
            Ok(Err(failure)) => shared.trouble(failure),
            Err(_) => shared.trouble("enter: timed out"),
        }
        tokio::time::sleep(Duration::from_millis(500) * attempt).await;
    }
    shared.trouble("never entered");
    None
}

async fn greet_and_join(spec: &PlayerSpec, shared: &Shared) -> Result<(Connection, String), String> {
    let options = ConnectionOptions { read_buffer: Some(READ_BUFFER) };
    let mut ws = Connection::connect_with(&spec.ws_url, options).await.map_err(|e| format!("connect: {e}"))?;
    let name = format!("arena-bot-{}", spec.seed % 100_000);
    let welcome = ws.hello(Hello { token: None, name: Some(name) }).await.map_err(|e| format!("hello: {e}"))?;
    let path = format!("/api/tournament/{}/join", shared.tournament);
    let answer =
        spec.http.send(Method::POST, &path, Some(&welcome.token), None).await.map_err(|e| format!("join: {e}"))?;
    if answer.status != 200 {
        return Err(format!("join: status {}", answer.status));
    }
    Ok((ws, welcome.player))
}

impl Player {
    /// When the timer should next wake the player.
    fn wake_at(&self, over: bool) -> Instant {
        match &self.current {
            Some(Current { next: Some((at, ..)), .. }) => *at,
            Some(current) => current.last_frame + QUIET_IN_GAME,
            None if over => Instant::now() + LINGER,
            None => Instant::now() + Duration::from_secs(3600),
        }
    }

    async fn on_frame(&mut self, text: &str) {
        let frame: Frame = match serde_json::from_str(text) {
            Ok(frame) => frame,
            Err(_) => return self.shared.trouble("unreadable frame"),
        };
        match frame.t.as_str() {
            "paired" => self.on_paired(frame).await,
            "state" | "move" | "end" if self.follows(&frame) => {
                if let Some(current) = &mut self.current {
                    current.last_frame = Instant::now();
                }
                match frame.t.as_str() {
                    "state" => self.on_state(frame).await,
                    "move" => self.on_move(frame),
                    _ => self.on_end(frame),
                }
            }
            "error" => self.on_error(&frame).await,
            _ => {}
        }
    }

    fn follows(&self, frame: &Frame) -> bool {
        self.current.as_ref().is_some_and(|c| frame.game.as_deref() == Some(c.seen.id.as_str()))
    }

    async fn on_paired(&mut self, frame: Frame) {
        let (Some(game), Some(color)) = (frame.game, frame.color) else {
            return self.shared.trouble("paired without a game");
        };
        if frame.tournament.as_deref() != Some(self.shared.tournament.as_str()) {
            return self.shared.trouble("paired by something else than the arena");
        }
        if self.current.as_ref().is_some_and(|c| c.seen.id == game) {
            // Told again (a driver that took over tells what it cannot
            // know was told): the same game, already followed.
            return;
        }
        if let Some(current) = self.current.take() {
            // The pairing (over the bus) may overtake the game's `end` (over
            // the shard's stream) on a busy cluster: the player moves on.
            self.shared.trouble("paired before the last game's end arrived");
            self.report.games.push(current.seen);
        }
        if !self.report.games.is_empty() {
            self.report.waits.push(self.idle_since.elapsed());
        }
        let seen = SeenGame {
            id: game.clone(),
            color,
            moves: Vec::new(),
            result: None,
            end_moves: Vec::new(),
            berserk: false,
        };
        self.current = Some(Current { seen, next: None, last_frame: Instant::now() });
        self.send(json!({"t": "watch", "game": game})).await;
    }

    async fn on_state(&mut self, frame: Frame) {
        let Some(current) = &mut self.current else { return };
        current.seen.moves = frame.moves.clone();
        current.next = None;
        if frame.result.is_some() {
            // It ended before the player opened it again.
            return self.on_end(frame);
        }
        let played = current.seen.moves.len();
        let before_first_move = if current.seen.color == "white" { played == 0 } else { played <= 1 };
        if self.berserker && !current.seen.berserk && before_first_move {
            current.seen.berserk = true;
            let game = current.seen.id.clone();
            self.send(json!({"t": "berserk", "game": game})).await;
        }
        self.plan_move(&frame.legal);
    }

    fn on_move(&mut self, frame: Frame) {
        let Some(current) = &mut self.current else { return };
        let Some(ply) = frame.ply else { return self.shared.trouble("move without a ply") };
        if ply != current.seen.moves.len() {
            // A frame from before a `state`, or a gap: open the game again.
            self.shared.trouble("move out of order");
            current.next = None;
            current.last_frame = Instant::now() - QUIET_IN_GAME;
            return;
        }
        let mine = (ply % 2 == 0) == (current.seen.color == "white");
        if mine {
            self.report.moves += 1;
        }
        current.seen.moves.push(frame.uci);
        current.next = None;
        self.plan_move(&frame.legal);
    }

    fn on_end(&mut self, frame: Frame) {
        let Some(mut current) = self.current.take() else { return };
        current.seen.result = frame.result;
        current.seen.end_moves = frame.moves;
        self.report.games.push(current.seen);
        self.idle_since = Instant::now();
    }

    /// Picks the reply to `legal` (the list the side to move gets) and when it goes.
    fn plan_move(&mut self, legal: &[String]) {
        let Some(current) = &mut self.current else { return };
        if legal.is_empty() {
            return;
        }
        let ply = current.seen.moves.len();
        let (low, high) = self.shared.settings.think_ms;
        let at = Instant::now() + Duration::from_millis(self.rng.random_range(low..=high));
        let uci = if ply >= self.shared.settings.max_plies {
            String::new()
        } else {
            legal[self.rng.random_range(0..legal.len())].clone()
        };
        current.next = Some((at, uci, ply));
    }

    async fn on_timer(&mut self) {
        let Some(current) = &mut self.current else { return };
        let game = current.seen.id.clone();
        match current.next.take() {
            Some((_, uci, _)) if uci.is_empty() => self.send(json!({"t": "resign", "game": game})).await,
            Some((_, uci, ply)) => self.send(json!({"t": "move", "game": game, "uci": uci, "ply": ply})).await,
            None => {
                // Nothing heard for a while in a game: see where it stands.
                current.last_frame = Instant::now();
                self.send(json!({"t": "watch", "game": game})).await;
            }
        }
    }

    async fn on_error(&mut self, frame: &Frame) {
        let message = frame.message.as_deref().unwrap_or("");
        self.shared.trouble(format!("error: {}", short(message)));
        if frame.id.is_some() {
            if let Some(current) = &mut self.current {
                // A refused move or berserk: read the game again.
                current.next = None;
                current.last_frame = Instant::now() - QUIET_IN_GAME;
            }
        }
    }

    async fn send(&mut self, mut frame: serde_json::Value) {
        frame["id"] = json!(self.next_id);
        self.next_id += 1;
        if let Err(error) = self.ws.send_text(frame.to_string()).await {
            self.shared.trouble(format!("send: {}", short(&error.to_string())));
        }
    }
}

/// The start of a message, without what varies (ids, numbers), to count
/// troubles by kind.
fn short(text: &str) -> String {
    text.chars().take(48).map(|c| if c.is_ascii_digit() { '#' } else { c }).collect()
}
