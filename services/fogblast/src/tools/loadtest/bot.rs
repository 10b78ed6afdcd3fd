//! One pair of bots: two WebSocket connections that greet the gateway, then
//! play game after game against each other. One creates a game, the other
//! joins it by its code, and they take turns playing random legal moves
//! with a think time between them. Both live in one task and share one
//! local `fogblast_rules::Game`, so even in fog of war the bots know the
//! whole board, and the time from the mover's send to the opponent's
//! receipt of that move is read off one clock.
//!
//! The pair never panics on what the server says: anything unexpected is
//! counted, and a game in doubt is resigned and replaced. What each game's
//! move list should be (the moves the server acknowledged) is kept for the
//! final check against the server's record.

use std::borrow::Cow;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use fogblast_client::protocol::{
    self as wire, ClientFrame, ColorChoice, Create, GameRef, Hello, Join, Opponent, Request, TimeControl,
};
use fogblast_client::tungstenite::{self, Utf8Bytes};
use fogblast_client::{Connection, ConnectionOptions, Error as ClientError};
use fogblast_rules::{CastlingMode, Color, Game, Move, Position, Variant};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Deserialize;
use tokio::sync::{watch, Semaphore};
use tokio::time::{sleep_until, timeout, Instant};

use super::stats::Stats;

/// How long a bot waits for an answer before it counts a timeout.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(20);
/// After a refused `create` or `resign`, the wait before the next one.
const RETRY_AFTER: Duration = Duration::from_secs(1);
/// Times a pair asks for a game's end before it gives up on the game.
const END_TRIES: u32 = 3;
/// Bytes read from a socket at a time.
const READ_BUFFER: usize = 4096;
/// What `errno` says when a process is out of file descriptors (EMFILE,
/// ENFILE for the whole system).
const OUT_OF_FILES: [i32; 2] = [24, 23];

/// How the bots play; the same for every pair.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Plies after which the side to move resigns.
    pub moves_per_game: usize,
    /// Think time before each move, uniform in this range (ms).
    pub think_ms: (u64, u64),
    /// Each game's variant is drawn from these.
    pub variants: Vec<Variant>,
    /// Each game's clock (`initial_ms`, `increment_ms`) is drawn from these.
    pub clocks: Vec<Option<(u32, u32)>>,
    /// Tries at each connection before the pair gives up.
    pub connect_attempts: u32,
}

/// What every pair shares.
#[derive(Debug)]
pub struct Shared {
    pub stats: Stats,
    pub settings: Settings,
    /// Bounds the handshakes (connect, `hello`, `welcome`) in flight.
    pub handshakes: Semaphore,
}

/// Where one pair plays.
#[derive(Clone, Debug)]
pub struct PairSpec {
    /// WebSocket URLs of the creator's and the joiner's gateway.
    pub urls: [String; 2],
    /// The HTTP base (`http://host:port`) to read the pair's games from.
    pub http: String,
    pub seed: u64,
}

/// A game the pair played, with the moves the server acknowledged.
#[derive(Clone, Debug)]
pub struct PlayedGame {
    pub id: String,
    pub http: String,
    pub variant: Variant,
    pub moves: Vec<String>,
    /// Both bots saw its `end` frame.
    pub ended: bool,
}

/// The fields of a server frame the bots read; the rest is skipped. One
/// borrowed parse of only these, rather than the whole
/// [`ServerFrame`](fogblast_client::protocol::ServerFrame), keeps the
/// relay latency measured close to the socket's.
#[derive(Debug, Deserialize)]
struct Frame<'a> {
    #[serde(borrow)]
    t: Cow<'a, str>,
    #[serde(borrow)]
    game: Option<Cow<'a, str>>,
    /// The join code of `created`, the error code of `error`.
    #[serde(borrow)]
    code: Option<Cow<'a, str>>,
    #[serde(borrow)]
    color: Option<Cow<'a, str>>,
    ply: Option<u64>,
    #[serde(borrow)]
    uci: Option<Cow<'a, str>>,
    #[serde(borrow)]
    reason: Option<Cow<'a, str>>,
    /// The request an answer or error is for.
    id: Option<u64>,
}

/// A move sent and not yet heard back from both sockets.
#[derive(Debug)]
struct Pending {
    /// The `id` the move was sent with.
    id: u64,
    ply: usize,
    uci: String,
    mv: Move,
    mover: usize,
    sent: Instant,
    acked: bool,
    relayed: bool,
}

/// The game being played.
#[derive(Debug)]
struct Current {
    id: String,
    variant: Variant,
    /// The colour each socket sits at.
    colors: [Option<Color>; 2],
    joined: bool,
    local: Game,
    moves: Vec<String>,
    pending: Option<Pending>,
    /// Which sockets have seen the `end` frame.
    ended: [bool; 2],
    /// How we asked the game to end, if we did.
    ending: Option<&'static str>,
    /// The `id`s of the requests that made and end the game.
    create_id: u64,
    join_id: u64,
    end_id: u64,
    /// Times the end was asked for.
    end_tries: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// No game; the timer starts the next.
    Idle,
    /// `create` sent on socket 0.
    Creating,
    /// `join` sent on socket 1.
    Joining,
    /// Thinking (timer set) or a move in flight (`pending`).
    Playing,
    /// `resign` or `abort` sent; waiting for `end`.
    Ending,
    Done,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Idle => "idle",
            Phase::Creating => "create",
            Phase::Joining => "join",
            Phase::Playing => "move",
            Phase::Ending => "end",
            Phase::Done => "done",
        }
    }
}

/// A connection that can no longer be used.
#[derive(Debug)]
struct Broken(&'static str);

enum Event {
    Frame(usize, Result<Utf8Bytes, ClientError>),
    Wake,
    Stop,
}

/// Connects the pair, plays until `stop` turns true, ends its last game
/// and closes; returns the games played.
pub async fn run_pair(spec: PairSpec, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) -> Vec<PlayedGame> {
    let stats = &shared.stats;
    if *stop.borrow() {
        return Vec::new();
    }
    let Some(first) = open(&spec.urls[0], &shared).await else {
        stats.pairs_failed.fetch_add(1, Ordering::Relaxed);
        return Vec::new();
    };
    stats.connected();
    let Some(second) = open(&spec.urls[1], &shared).await else {
        stats.pairs_failed.fetch_add(1, Ordering::Relaxed);
        close(first, stats).await;
        return Vec::new();
    };
    stats.connected();
    stats.pairs_ready.fetch_add(1, Ordering::Relaxed);
    let mut pair = Pair {
        socks: [first, second],
        open: [true, true],
        rng: StdRng::seed_from_u64(spec.seed),
        spec,
        shared: shared.clone(),
        phase: Phase::Idle,
        game: None,
        timer: None,
        deadline: None,
        stopping: false,
        played: Vec::new(),
        next_id: 1,
    };
    pair.run(&mut stop).await;
    let Pair { socks, open, played, .. } = pair;
    for (sock, open) in socks.into_iter().zip(open) {
        if open {
            close(sock, stats).await;
        }
    }
    played
}

/// An idle connection: connects, says hello and holds the socket (reading,
/// so the gateway's pings are answered) until told to stop. Returns
/// whether it was held to the end.
pub async fn hold_idle(url: String, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) -> bool {
    let Some(mut ws) = open(&url, &shared).await else {
        shared.stats.idle_failed.fetch_add(1, Ordering::Relaxed);
        return false;
    };
    shared.stats.connected();
    shared.stats.idle_held.fetch_add(1, Ordering::Relaxed);
    let held = loop {
        tokio::select! {
            message = ws.recv() => if message.is_err() { break false },
            _ = stop.changed() => break true,
        }
    };
    shared.stats.idle_held.fetch_sub(1, Ordering::Relaxed);
    close(ws, &shared.stats).await;
    held
}

/// Connects and says hello; `None` after the last failed attempt.
async fn open(url: &str, shared: &Shared) -> Option<Connection> {
    let stats = &shared.stats;
    for attempt in 1..=shared.settings.connect_attempts {
        let permit = shared.handshakes.acquire().await.ok()?;
        let result = timeout(ANSWER_TIMEOUT, greet(url)).await;
        drop(permit);
        let failure = match result {
            Ok(Ok(ws)) => return Some(ws),
            Ok(Err(failure)) => failure,
            Err(_) => "connect: timed out".to_owned(),
        };
        stats.connect_failures.fetch_add(1, Ordering::Relaxed);
        stats.count_error(&failure);
        if failure.contains("too many open files") {
            stats.out_of_files.store(true, Ordering::Relaxed);
            return None;
        }
        if attempt < shared.settings.connect_attempts {
            tokio::time::sleep(RETRY_AFTER * attempt).await;
        }
    }
    None
}

async fn greet(url: &str) -> Result<Connection, String> {
    // The library zeroes its whole read buffer (128 KiB by default) on every
    // read; the server's frames are small.
    let options = ConnectionOptions { read_buffer: Some(READ_BUFFER) };
    let mut ws = Connection::connect_with(url, options).await.map_err(|e| describe("connect", &e))?;
    ws.hello(Hello { token: None, name: Some("loadtest".into()) }).await.map_err(|e| describe("hello", &e))?;
    Ok(ws)
}

/// A short name for a connection failure, for the error counts.
fn describe(stage: &str, error: &ClientError) -> String {
    let error = match error {
        ClientError::Connect { source, .. } | ClientError::Send(source) => source,
        ClientError::Closed(_) => return format!("{stage}: closed"),
        ClientError::Refused { code, .. } => return format!("{stage}: error {code}"),
        other => return format!("{stage}: {}", other.to_string().chars().take(60).collect::<String>()),
    };
    match error {
        tungstenite::Error::Io(io) if io.raw_os_error().is_some_and(|e| OUT_OF_FILES.contains(&e)) => {
            format!("{stage}: too many open files")
        }
        tungstenite::Error::Io(io) => format!("{stage}: {}", io.kind()),
        tungstenite::Error::Http(response) => format!("{stage}: HTTP {}", response.status().as_u16()),
        tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => format!("{stage}: closed"),
        tungstenite::Error::Protocol(_) => format!("{stage}: protocol error"),
        other => format!("{stage}: {}", other.to_string().chars().take(60).collect::<String>()),
    }
}

/// Closes a connection politely, waiting briefly for the server's close.
async fn close(ws: Connection, stats: &Stats) {
    ws.close(Duration::from_secs(2)).await;
    stats.disconnected();
}

struct Pair {
    socks: [Connection; 2],
    open: [bool; 2],
    rng: StdRng,
    spec: PairSpec,
    shared: Arc<Shared>,
    phase: Phase,
    game: Option<Current>,
    /// When to start the next game or make the next move.
    timer: Option<Instant>,
    /// When the answer being waited for is overdue.
    deadline: Option<Instant>,
    stopping: bool,
    played: Vec<PlayedGame>,
    /// The `id` of the next request.
    next_id: u64,
}

impl Pair {
    fn stats(&self) -> &Stats {
        &self.shared.stats
    }

    fn think(&mut self) -> Duration {
        let (low, high) = self.shared.settings.think_ms;
        Duration::from_millis(if high > low { self.rng.random_range(low..=high) } else { low })
    }

    async fn run(&mut self, stop: &mut watch::Receiver<bool>) {
        self.timer = Some(Instant::now() + self.think());
        while self.phase != Phase::Done {
            let wake = match (self.timer, self.deadline) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let event = {
                let [first, second] = &mut self.socks;
                tokio::select! {
                    message = first.recv() => Event::Frame(0, message),
                    message = second.recv() => Event::Frame(1, message),
                    _ = sleep_until(wake.unwrap_or_else(Instant::now)), if wake.is_some() => Event::Wake,
                    _ = stop.changed(), if !self.stopping => Event::Stop,
                }
            };
            let result = match event {
                Event::Frame(side, message) => self.on_message(side, message).await,
                Event::Wake => self.on_wake().await,
                Event::Stop => self.on_stop().await,
            };
            if let Err(Broken(why)) = result {
                self.stats().disconnects.fetch_add(1, Ordering::Relaxed);
                let game = self.game.as_ref().map(|g| g.id.as_str());
                self.stats().count_error_in(why, game);
                self.finish_game(false);
                self.phase = Phase::Done;
            }
        }
    }

    /// A fresh request `id`.
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    async fn send(&mut self, side: usize, frame: ClientFrame, id: u64) -> Result<(), Broken> {
        match self.socks[side].send_request(&Request { frame, id: Some(id.into()) }).await {
            Ok(()) => Ok(()),
            Err(_) => {
                self.open[side] = false;
                self.stats().disconnected();
                Err(Broken("connection lost while sending"))
            }
        }
    }

    async fn on_message(&mut self, side: usize, message: Result<Utf8Bytes, ClientError>) -> Result<(), Broken> {
        let text = match message {
            Ok(text) => text,
            Err(ClientError::Binary(_)) => return Ok(()),
            Err(_) => {
                self.open[side] = false;
                self.stats().disconnected();
                return Err(Broken("connection closed by the server"));
            }
        };
        let received = Instant::now();
        let frame = match serde_json::from_str::<Frame<'_>>(&text) {
            Ok(frame) => frame,
            Err(_) => {
                self.stats().count_error("unreadable frame");
                return Ok(());
            }
        };
        match frame.t.as_ref() {
            "created" => self.on_created(side, &frame).await,
            "joined" => self.on_joined(side, &frame).await,
            "move" => self.on_move(side, &frame, received).await,
            "end" => self.on_end(side, &frame),
            "error" => self.on_error(&frame).await,
            "state" | "seated" | "pong" | "opponent_back" => Ok(()),
            "reconnect" => {
                self.stats().count_error("told to reconnect");
                Ok(())
            }
            other => {
                let shown: String = other.chars().take(20).collect();
                self.stats().count_error(&format!("unexpected frame {shown}"));
                Ok(())
            }
        }
    }

    async fn on_wake(&mut self) -> Result<(), Broken> {
        let now = Instant::now();
        if self.deadline.is_some_and(|d| now >= d) {
            self.deadline = None;
            return self.on_timeout().await;
        }
        if self.timer.is_some_and(|t| now >= t) {
            self.timer = None;
            match self.phase {
                Phase::Idle if self.stopping => self.phase = Phase::Done,
                Phase::Idle => return self.create().await,
                Phase::Playing => return self.play_move().await,
                Phase::Ending => {
                    if let Some(how) = self.game.as_ref().and_then(|g| g.ending) {
                        return self.end_game(how).await;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    async fn on_stop(&mut self) -> Result<(), Broken> {
        self.stopping = true;
        match self.phase {
            Phase::Idle => self.phase = Phase::Done,
            // Thinking: resign now rather than after the think time.
            Phase::Playing if self.timer.is_some() => {
                self.timer = None;
                return self.end_game("resign").await;
            }
            _ => {}
        }
        Ok(())
    }

    async fn create(&mut self) -> Result<(), Broken> {
        let settings = &self.shared.settings;
        let variant = settings.variants[self.rng.random_range(0..settings.variants.len())];
        let clock = settings.clocks[self.rng.random_range(0..settings.clocks.len())];
        let clock = clock.map(|(initial_ms, increment_ms)| TimeControl { initial_ms, increment_ms });
        let create_id = self.id();
        let create = Create {
            variant: variant.into(),
            color: ColorChoice::Random,
            clock,
            opponent: Opponent::Human,
            level: None,
            rated: None,
            chess960: None,
        };
        self.send(0, ClientFrame::Create(create), create_id).await?;
        self.game = Some(Current {
            id: String::new(),
            variant,
            colors: [None, None],
            joined: false,
            local: Game::new(Position::new(variant)),
            moves: Vec::new(),
            pending: None,
            ended: [false, false],
            ending: None,
            create_id,
            join_id: 0,
            end_id: 0,
            end_tries: 0,
        });
        self.phase = Phase::Creating;
        self.deadline = Some(Instant::now() + ANSWER_TIMEOUT);
        Ok(())
    }

    async fn on_created(&mut self, side: usize, frame: &Frame<'_>) -> Result<(), Broken> {
        let (Phase::Creating, 0, Some(game)) = (self.phase, side, self.game.as_mut()) else {
            self.stats().count_error("unexpected created");
            return Ok(());
        };
        let (Some(id), Some(code)) = (frame.game.as_deref(), frame.code.as_deref()) else {
            self.stats().count_error("created without game or code");
            self.phase = Phase::Idle;
            self.game = None;
            self.timer = Some(Instant::now() + RETRY_AFTER);
            return Ok(());
        };
        game.id = id.to_owned();
        game.colors[0] = color(frame.color.as_deref());
        self.next_id += 1;
        game.join_id = self.next_id;
        let (join, join_id) = (ClientFrame::Join(Join { code: code.to_owned() }), game.join_id);
        self.phase = Phase::Joining;
        self.deadline = Some(Instant::now() + ANSWER_TIMEOUT);
        self.send(1, join, join_id).await
    }

    async fn on_joined(&mut self, side: usize, frame: &Frame<'_>) -> Result<(), Broken> {
        let stats = &self.shared.stats;
        let (Phase::Joining, 1, Some(game)) = (self.phase, side, self.game.as_mut()) else {
            stats.count_error_in("unexpected joined", frame.game.as_deref());
            return Ok(());
        };
        if frame.game.as_deref() != Some(game.id.as_str()) {
            stats.count_error_in("joined another game", frame.game.as_deref());
            return Ok(());
        }
        game.joined = true;
        game.colors[1] = color(frame.color.as_deref());
        stats.games_started.fetch_add(1, Ordering::Relaxed);
        self.phase = Phase::Playing;
        self.deadline = None;
        let seats_ok = matches!(game.colors, [Some(a), Some(b)] if a != b);
        if !seats_ok {
            stats.count_error_in("seat colours unclear", frame.game.as_deref());
            return self.end_game("resign").await;
        }
        self.next_move().await
    }

    /// After a move, or at the start: think, resign, or wait for the end.
    async fn next_move(&mut self) -> Result<(), Broken> {
        let Some(game) = &self.game else { return Ok(()) };
        if game.local.outcome().is_some() {
            // The server ends it too: wait for its `end`.
            self.deadline = Some(Instant::now() + ANSWER_TIMEOUT);
            return Ok(());
        }
        if self.stopping || game.local.ply() >= self.shared.settings.moves_per_game {
            return self.end_game("resign").await;
        }
        self.timer = Some(Instant::now() + self.think());
        self.deadline = None;
        Ok(())
    }

    async fn play_move(&mut self) -> Result<(), Broken> {
        let Some(game) = &self.game else { return Ok(()) };
        let legal = game.local.position().legal_moves();
        if legal.is_empty() || game.local.outcome().is_some() {
            self.deadline = Some(Instant::now() + ANSWER_TIMEOUT);
            return Ok(());
        }
        let mv = legal[self.rng.random_range(0..legal.len())];
        let turn = game.local.position().turn();
        let Some(mover) = game.colors.iter().position(|c| *c == Some(turn)) else {
            return self.end_game("resign").await;
        };
        let ply = game.local.ply();
        let uci = mv.to_uci(CastlingMode::Standard).to_string();
        self.next_id += 1;
        let id = self.next_id;
        let frame = ClientFrame::Move(wire::Move { game: game.id.clone(), uci: uci.clone(), ply: ply as u32 });
        let sent = Instant::now();
        self.send(mover, frame, id).await?;
        if let Some(game) = self.game.as_mut() {
            game.pending = Some(Pending { id, ply, uci, mv, mover, sent, acked: false, relayed: false });
        }
        self.deadline = Some(sent + ANSWER_TIMEOUT);
        Ok(())
    }

    async fn on_move(&mut self, side: usize, frame: &Frame<'_>, received: Instant) -> Result<(), Broken> {
        let stats = &self.shared.stats;
        let Some(game) = self.game.as_mut() else {
            stats.count_error_in("move frame between games", frame.game.as_deref());
            return Ok(());
        };
        if frame.game.as_deref() != Some(game.id.as_str()) {
            stats.count_error_in("move frame of another game", frame.game.as_deref());
            return Ok(());
        }
        let Some(pending) = game.pending.as_mut() else {
            stats.count_error_in("move frame with no move in flight", frame.game.as_deref());
            return Ok(());
        };
        if frame.ply != Some(pending.ply as u64) {
            stats.count_error_in("move frame for another ply", frame.game.as_deref());
            return Ok(());
        }
        if side == pending.mover {
            if pending.acked {
                stats.count_error_in("move acknowledged twice", frame.game.as_deref());
                return Ok(());
            }
            if frame.uci.as_deref().is_some_and(|uci| uci != pending.uci) {
                stats.count_error_in("a different move acknowledged", frame.game.as_deref());
            }
            pending.acked = true;
            stats.moved(received - pending.sent);
            if game.local.play(pending.mv).is_err() {
                stats.count_error_in("local rules refused an acknowledged move", frame.game.as_deref());
            }
            game.moves.push(pending.uci.clone());
        } else {
            if pending.relayed {
                stats.count_error_in("move relayed twice", frame.game.as_deref());
                return Ok(());
            }
            pending.relayed = true;
            stats.relayed(received - pending.sent);
        }
        if pending.acked && pending.relayed {
            game.pending = None;
            if self.phase == Phase::Playing {
                return self.next_move().await;
            }
        }
        Ok(())
    }

    fn on_end(&mut self, side: usize, frame: &Frame<'_>) -> Result<(), Broken> {
        let stats = &self.shared.stats;
        let Some(game) = self.game.as_mut() else {
            stats.count_error_in("end frame between games", frame.game.as_deref());
            return Ok(());
        };
        if frame.game.as_deref() != Some(game.id.as_str()) {
            stats.count_error_in("end frame of another game", frame.game.as_deref());
            return Ok(());
        }
        if game.ended[side] {
            stats.count_error_in("end frame twice", frame.game.as_deref());
            return Ok(());
        }
        let first = !game.ended[0] && !game.ended[1];
        game.ended[side] = true;
        if first {
            let reason = frame.reason.as_deref().unwrap_or("");
            let natural = matches!(
                reason,
                "explosion"
                    | "checkmate"
                    | "king_captured"
                    | "stalemate"
                    | "threefold"
                    | "fifty_moves"
                    | "insufficient_material"
            );
            let asked = match game.ending {
                Some("resign") => reason == "resign",
                Some("abort") => reason == "aborted",
                _ => false,
            };
            if natural && game.local.outcome().is_none() && game.pending.is_none() {
                stats.count_error_in("server ended a game the local rules had not", frame.game.as_deref());
            } else if !natural && !asked {
                let shown: String = reason.chars().take(24).collect();
                stats.count_error_in(&format!("game ended: {shown}"), frame.game.as_deref());
            }
        }
        let all = game.ended[0] && (game.ended[1] || !game.joined);
        if all {
            self.finish_game(true);
        }
        Ok(())
    }

    /// An error answers the request with its `id`; one without a known
    /// `id` is only counted.
    async fn on_error(&mut self, frame: &Frame<'_>) -> Result<(), Broken> {
        let code = frame.code.as_deref().unwrap_or("no code");
        let shown: String = code.chars().take(24).collect();
        let game = self.game.as_ref().map(|g| g.id.as_str()).or(frame.game.as_deref());
        self.stats().count_error_in(&format!("error {shown}"), game);
        let (Some(id), Some(game)) = (frame.id, self.game.as_ref()) else { return Ok(()) };
        match self.phase {
            Phase::Creating if id == game.create_id => {
                self.game = None;
                self.phase = if self.stopping { Phase::Done } else { Phase::Idle };
                self.deadline = None;
                self.timer = Some(Instant::now() + RETRY_AFTER);
            }
            Phase::Joining if id == game.join_id => return self.end_game("abort").await,
            // A refused move may still have been applied (the store took
            // it but answered late): its frame is still taken as its
            // acknowledgement until the game is over.
            Phase::Playing if game.pending.as_ref().is_some_and(|p| p.id == id) => {
                return self.end_game("resign").await;
            }
            // Over already: its `end` frames come (or came) anyway.
            Phase::Ending if id == game.end_id && code == "game_over" => {}
            Phase::Ending if id == game.end_id && game.end_tries < END_TRIES => {
                self.timer = Some(Instant::now() + RETRY_AFTER);
            }
            _ => {}
        }
        Ok(())
    }

    async fn on_timeout(&mut self) -> Result<(), Broken> {
        let phase = self.phase;
        let game = self.game.as_ref().map(|g| g.id.as_str());
        self.stats().count_error_in(&format!("timeout waiting ({})", phase.name()), game);
        match phase {
            Phase::Creating => {
                self.game = None;
                self.phase = if self.stopping { Phase::Done } else { Phase::Idle };
                self.timer = Some(Instant::now());
            }
            Phase::Joining => return self.end_game("abort").await,
            Phase::Playing => return self.end_game("resign").await,
            Phase::Ending => self.finish_game(false),
            Phase::Idle | Phase::Done => {}
        }
        Ok(())
    }

    /// Asks for the game's end (the creator, who is always seated, asks).
    async fn end_game(&mut self, how: &'static str) -> Result<(), Broken> {
        self.next_id += 1;
        let id = self.next_id;
        let Some(game) = self.game.as_mut() else { return Ok(()) };
        game.ending = Some(how);
        game.end_id = id;
        game.end_tries += 1;
        let game_ref = GameRef { game: game.id.clone() };
        let frame = if how == "abort" { ClientFrame::Abort(game_ref) } else { ClientFrame::Resign(game_ref) };
        self.phase = Phase::Ending;
        self.timer = None;
        self.deadline = Some(Instant::now() + ANSWER_TIMEOUT);
        self.send(0, frame, id).await
    }

    /// Records the game and goes on to the next, or stops.
    fn finish_game(&mut self, ended: bool) {
        let Some(game) = self.game.take() else { return };
        if game.pending.as_ref().is_some_and(|p| !p.acked) {
            self.stats().count_error_in("move never acknowledged", Some(&game.id));
        }
        if ended {
            self.stats().games_finished.fetch_add(1, Ordering::Relaxed);
        }
        if !game.id.is_empty() {
            self.played.push(PlayedGame {
                id: game.id,
                http: self.spec.http.clone(),
                variant: game.variant,
                moves: game.moves,
                ended,
            });
        }
        self.deadline = None;
        if self.stopping {
            self.phase = Phase::Done;
            self.timer = None;
        } else {
            self.phase = Phase::Idle;
            self.timer = Some(Instant::now() + self.think());
        }
    }
}

fn color(name: Option<&str>) -> Option<Color> {
    match name {
        Some("white") => Some(Color::White),
        Some("black") => Some(Color::Black),
        _ => None,
    }
}
