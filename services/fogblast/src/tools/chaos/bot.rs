//! The chaos bots. Each bot is one player on one WebSocket, on its own:
//! it seeks quick pairings, creates invite games or joins them by code,
//! plays the computer, or watches games as a spectator. A seated bot plays
//! random legal moves from its own view of the board (in fog of war its
//! fog view, where every move of its own pieces is pseudo-legal; a move
//! the fog hid a blocker for is refused and another one tried), with a
//! think time before each.
//!
//! Bots outlive their gateway: when the connection breaks (a killed
//! gateway) or the gateway says `reconnect`, the bot connects to the next
//! gateway with its token, resumes its game from the last version it saw
//! and sends again the move it has no acknowledgement for, which the
//! server plays at most once because it carries its ply.
//!
//! Everything the verdict needs is written to [`Records`]: every move
//! sent and acknowledged, when each ply was first seen, the clocks each
//! move frame showed, and every fog-of-war frame a seat or a spectator
//! received.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fogblast_client::protocol::{
    self as wire, ClientFrame, ColorChoice, Create, GameRef, Hello, Join, Level, Opponent, Request, Resume, Seek,
    TimeControl,
};
use fogblast_client::{Connection, Error as ClientError};
use fogblast_rules::{CastlingMode, Color, Position, Variant};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use tokio::sync::watch;
use tokio::time::{sleep_until, timeout, Instant};

/// The clock of every rated game and seek: 5+2.
const RATED_CLOCK: TimeControl = TimeControl { initial_ms: 300_000, increment_ms: 2_000 };

/// A move without its acknowledgement after this long is sent again.
const RESEND_AFTER: Duration = Duration::from_secs(3);
/// After a refusal that may pass (`unavailable`), the wait before trying again.
const RETRY_AFTER: Duration = Duration::from_millis(500);
/// A game with no frame for this long is asked for its state again.
const QUIET_LIMIT: Duration = Duration::from_secs(15);
/// How long a creator waits for someone to join before aborting.
const JOIN_WAIT: Duration = Duration::from_secs(20);
/// How long an answer to `create`, `join`, `watch` or an end may take.
const ANSWER_WAIT: Duration = Duration::from_secs(15);
/// Connect and hello, per attempt.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// What a bot does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Quick pairing through the matchmaker, in the pool of this variant.
    Seeker(Variant),
    /// Creates invite games (fog of war when `fog`) for the joiners.
    Creator { fog: bool },
    /// Joins invite games by their codes.
    Joiner,
    /// Plays the computer.
    Computer,
    /// Watches games, fog of war included.
    Spectator,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Seeker(_) => "seeker",
            Role::Creator { fog: true } => "fog creator",
            Role::Creator { fog: false } => "creator",
            Role::Joiner => "joiner",
            Role::Computer => "computer player",
            Role::Spectator => "spectator",
        }
    }
}

/// How every bot plays.
#[derive(Clone, Debug)]
pub struct Settings {
    pub think_ms: (u64, u64),
    /// Plies after which the side to move resigns.
    pub max_plies: usize,
    /// Whether the server takes computer seats in fog of war.
    pub fog_computer: bool,
}

/// A game the bots took part in, as they learned it.
#[derive(Clone, Debug)]
pub struct GameInfo {
    pub variant: Variant,
    pub rated: bool,
    /// `(initial_ms, increment_ms)`.
    pub clock: Option<(u64, u64)>,
    /// Which seats a bot holds (the other is the computer).
    pub bot_seats: [bool; 2],
    pub kind: &'static str,
}

/// Every move a bot sent at one ply of one game.
#[derive(Clone, Debug, Default)]
pub struct Sent {
    pub tried: Vec<String>,
    /// Wall time of the first send, ms since the epoch.
    pub first_ms: u64,
    /// Wall time of the latest send, a resend of the same move included.
    pub last_ms: u64,
    /// The gateway (index into the URLs) of the latest send.
    pub gateway: usize,
}

/// A frame of a fog-of-war game in progress, as one receiver got it.
#[derive(Clone, Debug)]
pub struct FogFrame {
    pub game: String,
    /// `None`: a spectator.
    pub viewer: Option<Color>,
    /// Plies played when the frame was made.
    pub plies: usize,
    pub fen: String,
    pub visible: Option<Vec<String>>,
    /// Moves the frame names (`uci` of a move frame, `moves` of a state) by ply.
    pub moves: Vec<(usize, String)>,
    pub kind: &'static str,
}

/// A move frame acknowledging a bot's own move: when it arrived, how long
/// after the move was first sent, and in which game.
#[derive(Clone, Debug)]
pub struct Ack {
    pub at: Instant,
    pub latency: Duration,
    pub game: String,
}

/// What the bots write down for the verdict and the report.
#[derive(Debug, Default)]
pub struct Records {
    pub games: HashMap<String, GameInfo>,
    pub sent: HashMap<(String, usize), Sent>,
    /// The move acknowledged at each ply of a bot's seat.
    pub acked: HashMap<(String, usize), String>,
    /// Every acknowledgement a bot got for its own move.
    pub acks: Vec<Ack>,
    /// The earliest wall time (ms) any bot learned that a ply was played.
    pub seen: HashMap<(String, usize), u64>,
    /// The clocks (`white_ms`, `black_ms`) move frames showed after each ply.
    pub clocks: HashMap<(String, usize), (u64, u64)>,
    pub fog: Vec<FogFrame>,
    /// Games whose end frame a bot saw: result and reason.
    pub ends: HashMap<String, (String, String)>,
    /// Failures of the promise, in words (counted, with examples).
    pub problems: BTreeMap<String, (u64, Vec<String>)>,
    /// What happened that may happen (reconnects, refusals), counted.
    pub notes: BTreeMap<String, u64>,
    /// Moves sent, in all.
    pub moves_sent: u64,
}

impl Records {
    pub fn problem(&mut self, what: &str, example: String) {
        let entry = self.problems.entry(what.to_owned()).or_default();
        entry.0 += 1;
        if entry.1.len() < 5 {
            entry.1.push(example);
        }
    }

    pub fn note(&mut self, what: &str) {
        *self.notes.entry(what.to_owned()).or_default() += 1;
    }
}

/// An open game waiting for a joiner.
#[derive(Clone, Debug)]
pub struct Invite {
    pub game: String,
    pub code: String,
}

/// What all bots share.
#[derive(Debug)]
pub struct Shared {
    pub urls: Vec<String>,
    pub settings: Settings,
    pub records: Mutex<Records>,
    pub invites: Mutex<VecDeque<Invite>>,
    /// Games in progress a spectator may watch.
    pub watchable: Mutex<Vec<String>>,
}

impl Shared {
    pub fn records(&self) -> std::sync::MutexGuard<'_, Records> {
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }
}

pub fn wall_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Idle,
    Seeking,
    Creating,
    /// Created an invite game; waiting for the joiner.
    Open,
    Joining,
    /// Asked for the state of a game (paired, or watching).
    Opening,
    Playing,
    /// `resign` or `abort` sent; waiting for the end.
    Ending,
    Done,
}

#[derive(Debug)]
struct Pending {
    ply: usize,
    uci: String,
    id: u64,
    first: Instant,
    last: Instant,
}

/// The game a bot is in or watches.
#[derive(Debug)]
struct Play {
    id: String,
    variant: Variant,
    /// `None` while unknown or as a spectator.
    color: Option<Color>,
    spectator: bool,
    last_v: u64,
    /// Plies played, as far as this bot knows.
    ply: usize,
    fen: String,
    status: String,
    pending: Option<Pending>,
    /// Moves the server refused at the current ply (fog of war).
    refused: Vec<String>,
    think_until: Option<Instant>,
    last_frame: Instant,
    end_id: u64,
    /// The `id` of the last `watch` or `create`/`join` request.
    request_id: u64,
}

impl Play {
    fn new(id: String, variant: Variant) -> Play {
        Play {
            id,
            variant,
            color: None,
            spectator: false,
            last_v: 0,
            ply: 0,
            fen: String::new(),
            status: "waiting".into(),
            pending: None,
            refused: Vec::new(),
            think_until: None,
            last_frame: Instant::now(),
            end_id: 0,
            request_id: 0,
        }
    }

    fn my_turn(&self) -> bool {
        let turn = if self.ply.is_multiple_of(2) { Color::White } else { Color::Black };
        self.status == "playing" && self.color == Some(turn) && !self.spectator
    }
}

pub struct Bot {
    name: String,
    role: Role,
    shared: Arc<Shared>,
    rng: StdRng,
    gateway: usize,
    ws: Option<Connection>,
    token: Option<String>,
    stage: Stage,
    stage_since: Instant,
    game: Option<Play>,
    /// When to try the next thing while idle.
    idle_until: Instant,
    stopping: bool,
    next_id: u64,
    /// The `id` of the current create/join/seek request.
    request_id: u64,
    /// The invite being joined.
    joining: Option<Invite>,
}

fn text(frame: &Value, key: &str) -> Option<String> {
    frame.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn color_of(name: Option<&str>) -> Option<Color> {
    match name {
        Some("white") => Some(Color::White),
        Some("black") => Some(Color::Black),
        _ => None,
    }
}

fn clock_of(frame: &Value) -> Option<(u64, u64)> {
    let clock = frame.get("time_control").or_else(|| frame.get("clock"))?;
    Some((clock.get("initial_ms")?.as_u64()?, clock.get("increment_ms").and_then(Value::as_u64).unwrap_or(0)))
}

impl Bot {
    pub fn new(index: usize, role: Role, shared: Arc<Shared>, seed: u64) -> Bot {
        let gateways = shared.urls.len().max(1);
        Bot {
            name: format!("{}-{index}", role.name().replace(' ', "-")),
            role,
            shared,
            rng: StdRng::seed_from_u64(seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            gateway: index % gateways,
            ws: None,
            token: None,
            stage: Stage::Idle,
            stage_since: Instant::now(),
            game: None,
            idle_until: Instant::now(),
            stopping: false,
            next_id: 0,
            request_id: 0,
            joining: None,
        }
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn set_stage(&mut self, stage: Stage) {
        self.stage = stage;
        self.stage_since = Instant::now();
    }

    fn think(&mut self) -> Duration {
        let (low, high) = self.shared.settings.think_ms;
        Duration::from_millis(if high > low { self.rng.random_range(low..=high) } else { low })
    }

    fn note(&self, what: &str) {
        self.shared.records().note(what);
    }

    fn problem(&self, what: &str, example: String) {
        self.shared.records().problem(what, example);
    }

    /// Plays until told to stop, then ends what it is in and closes.
    pub async fn run(mut self, mut stop: watch::Receiver<bool>) {
        // Spread the first connections a little.
        self.idle_until = Instant::now() + self.think();
        while self.stage != Stage::Done {
            if self.ws.is_none() {
                if self.stopping && self.game.is_none() {
                    break;
                }
                if !self.reconnect(&mut stop).await {
                    break;
                }
                continue;
            }
            let wake = self.next_wake();
            let ws = self.ws.as_mut().expect("connected");
            let event = tokio::select! {
                message = ws.recv() => Some(message),
                _ = sleep_until(wake) => None,
                _ = stop.changed(), if !self.stopping => {
                    self.stopping = true;
                    self.on_stop().await;
                    continue;
                }
            };
            match event {
                Some(Ok(text)) => {
                    if let Ok(frame) = serde_json::from_str::<Value>(&text) {
                        self.on_frame(frame).await;
                    } else {
                        self.problem("a frame that is not JSON", text.chars().take(80).collect());
                    }
                }
                Some(Err(ClientError::Binary(_))) => {}
                Some(Err(_)) => {
                    self.note("connection lost");
                    self.ws = None;
                }
                None => self.on_wake().await,
            }
        }
        if let Some(ws) = self.ws.take() {
            ws.close(Duration::from_secs(2)).await;
        }
    }

    fn next_wake(&self) -> Instant {
        let mut wake = Instant::now() + Duration::from_secs(1);
        if self.stage == Stage::Idle {
            wake = wake.min(self.idle_until);
        }
        if let Some(game) = &self.game {
            if let Some(at) = game.think_until {
                wake = wake.min(at);
            }
            if let Some(pending) = &game.pending {
                wake = wake.min(pending.last + RESEND_AFTER);
            }
        }
        wake
    }

    /// Connects to the next gateway that answers (the current one first
    /// on the first connection), says hello with the token, and picks up
    /// where the bot was. `false` when told to stop with nothing to finish.
    async fn reconnect(&mut self, stop: &mut watch::Receiver<bool>) -> bool {
        let first = self.token.is_none();
        let gateways = self.shared.urls.len();
        let mut attempt = 0usize;
        loop {
            if !first || attempt > 0 {
                self.gateway = (self.gateway + 1) % gateways;
            }
            attempt += 1;
            let url = self.shared.urls[self.gateway].clone();
            match timeout(CONNECT_TIMEOUT, greet(&url, &self.name, self.token.as_deref())).await {
                Ok(Ok((ws, token))) => {
                    self.ws = Some(ws);
                    self.token = Some(token);
                    break;
                }
                Ok(Err(_)) | Err(_) => self.note("connection attempt failed"),
            }
            if *stop.borrow() && attempt > 20 {
                self.problem("a bot could not reconnect to finish its game", self.name.clone());
                return false;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        if first {
            return true;
        }
        self.note("reconnected to another gateway");
        // Pick up where we were.
        match self.stage {
            Stage::Seeking => self.seek().await,
            Stage::Joining => {
                // Whether the join went through: the state says.
                if let Some(invite) = self.joining.clone() {
                    let mut play = Play::new(invite.game.clone(), Variant::Standard);
                    play.request_id = self.id();
                    let frame = request(ClientFrame::Watch(GameRef { game: invite.game.clone() }), play.request_id);
                    self.game = Some(play);
                    self.set_stage(Stage::Opening);
                    self.send(frame).await;
                }
            }
            Stage::Creating => {
                // The reply was lost with the connection: start again.
                self.game = None;
                self.set_stage(Stage::Idle);
            }
            _ => {}
        }
        if let Some(game) = &self.game {
            let (id, v) = (game.id.clone(), game.last_v);
            let resend = game.pending.as_ref().map(|p| (p.ply, p.uci.clone()));
            if v > 0 {
                self.send(Request { frame: ClientFrame::Resume(Resume { game: id, v }), id: None }).await;
            } else if self.stage != Stage::Opening {
                let request = self.id();
                if let Some(game) = self.game.as_mut() {
                    game.request_id = request;
                }
                self.send(self::request(ClientFrame::Watch(GameRef { game: id }), request)).await;
            }
            if let Some((ply, uci)) = resend {
                self.note("unacknowledged move sent again after a reconnect");
                self.send_move(ply, uci).await;
            }
            if self.stage == Stage::Ending {
                let how = if self.game.as_ref().is_some_and(|g| g.status == "waiting") { "abort" } else { "resign" };
                self.end_game(how).await;
            }
        }
        true
    }

    async fn send(&mut self, frame: Request) {
        let Some(ws) = self.ws.as_mut() else { return };
        if ws.send_request(&frame).await.is_err() {
            self.note("connection lost while sending");
            self.ws = None;
        }
    }

    async fn on_stop(&mut self) {
        match self.stage {
            Stage::Idle => self.set_stage(Stage::Done),
            Stage::Seeking => {
                self.send(Request { frame: ClientFrame::CancelSeek, id: None }).await;
                // A pairing may still come: wait for it briefly.
                self.set_stage(Stage::Seeking);
            }
            Stage::Open => self.end_game("abort").await,
            Stage::Playing if self.role == Role::Spectator => {
                self.game = None;
                self.set_stage(Stage::Done);
            }
            Stage::Playing => {
                let waiting = self.game.as_ref().is_some_and(|g| g.status == "waiting");
                self.end_game(if waiting { "abort" } else { "resign" }).await;
            }
            _ => {}
        }
    }

    async fn on_wake(&mut self) {
        let now = Instant::now();
        match self.stage {
            Stage::Idle if self.stopping => self.set_stage(Stage::Done),
            Stage::Idle if now >= self.idle_until => self.start_next().await,
            Stage::Seeking if self.stopping && now > self.stage_since + Duration::from_secs(3) => {
                self.set_stage(Stage::Done)
            }
            Stage::Open if now > self.stage_since + JOIN_WAIT => {
                self.note("invite not taken in time: aborted");
                self.end_game("abort").await;
            }
            Stage::Creating | Stage::Joining | Stage::Opening if now > self.stage_since + ANSWER_WAIT => {
                self.note("no answer to create, join or watch in time");
                self.game = None;
                self.joining = None;
                self.go_idle();
            }
            Stage::Ending if now > self.stage_since + ANSWER_WAIT => {
                self.note("no end in time: asked again");
                let how = if self.game.as_ref().is_some_and(|g| g.status == "waiting") { "abort" } else { "resign" };
                self.refresh().await;
                self.end_game(how).await;
            }
            Stage::Playing => self.on_playing_wake(now).await,
            _ => {}
        }
    }

    async fn on_playing_wake(&mut self, now: Instant) {
        let Some(game) = self.game.as_mut() else { return };
        if let Some(pending) = &mut game.pending {
            if now >= pending.last + RESEND_AFTER {
                let (ply, uci) = (pending.ply, pending.uci.clone());
                self.note("unacknowledged move sent again after a wait");
                self.send_move(ply, uci).await;
            }
            return;
        }
        if game.think_until.is_some_and(|t| now >= t) {
            game.think_until = None;
            self.play_move().await;
            return;
        }
        if now > game.last_frame + QUIET_LIMIT {
            game.last_frame = now;
            self.note("quiet game: asked for its state");
            self.refresh().await;
        }
    }

    /// Asks for a fresh state of the current game.
    async fn refresh(&mut self) {
        let request = self.id();
        let Some(game) = self.game.as_mut() else { return };
        game.request_id = request;
        let frame = self::request(ClientFrame::Watch(GameRef { game: game.id.clone() }), request);
        self.send(frame).await;
    }

    fn go_idle(&mut self) {
        self.game = None;
        self.set_stage(if self.stopping { Stage::Done } else { Stage::Idle });
        self.idle_until = Instant::now() + self.think();
    }

    async fn start_next(&mut self) {
        match self.role {
            Role::Seeker(_) => {
                self.set_stage(Stage::Seeking);
                self.seek().await;
            }
            Role::Creator { fog } => {
                let variant =
                    if fog { Variant::Fog } else { [Variant::Standard, Variant::Atomic][self.rng.random_range(0..2)] };
                let rated = self.rng.random_bool(0.5);
                let clock = (rated || self.rng.random_bool(0.5)).then_some(RATED_CLOCK);
                self.create(variant, Opponent::Human, Some(rated), clock).await;
            }
            Role::Computer => {
                let mut variants = vec![Variant::Standard, Variant::Atomic];
                if self.shared.settings.fog_computer {
                    variants.push(Variant::Fog);
                }
                let variant = variants[self.rng.random_range(0..variants.len())];
                self.create(variant, Opponent::Computer, None, None).await;
            }
            Role::Joiner => {
                let invite = self.shared.invites.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                let Some(invite) = invite else {
                    self.idle_until = Instant::now() + Duration::from_millis(200);
                    return;
                };
                self.request_id = self.id();
                let frame = request(ClientFrame::Join(Join { code: invite.code.clone() }), self.request_id);
                self.joining = Some(invite);
                self.set_stage(Stage::Joining);
                self.send(frame).await;
            }
            Role::Spectator => {
                let choice = {
                    let watchable = self.shared.watchable.lock().unwrap_or_else(|e| e.into_inner());
                    (!watchable.is_empty()).then(|| watchable[self.rng.random_range(0..watchable.len())].clone())
                };
                let Some(id) = choice else {
                    self.idle_until = Instant::now() + Duration::from_millis(300);
                    return;
                };
                let mut play = Play::new(id.clone(), Variant::Standard);
                play.spectator = true;
                play.request_id = self.id();
                let frame = request(ClientFrame::Watch(GameRef { game: id }), play.request_id);
                self.game = Some(play);
                self.set_stage(Stage::Opening);
                self.send(frame).await;
            }
        }
    }

    async fn seek(&mut self) {
        let Role::Seeker(variant) = self.role else { return };
        self.request_id = self.id();
        let seek = Seek { variant: variant.into(), clock: Some(RATED_CLOCK), rated: Some(true), range: None };
        let frame = request(ClientFrame::Seek(seek), self.request_id);
        self.send(frame).await;
    }

    /// A game of `variant` at a random colour; against the computer it
    /// plays Easy.
    async fn create(&mut self, variant: Variant, opponent: Opponent, rated: Option<bool>, clock: Option<TimeControl>) {
        self.request_id = self.id();
        let level = (opponent == Opponent::Computer).then_some(Level::Easy);
        let create = Create {
            variant: variant.into(),
            color: ColorChoice::Random,
            clock,
            opponent,
            level,
            rated,
            chess960: None,
        };
        let frame = request(ClientFrame::Create(create), self.request_id);
        let mut play = Play::new(String::new(), variant);
        play.request_id = self.request_id;
        self.game = Some(play);
        self.set_stage(Stage::Creating);
        self.send(frame).await;
    }

    async fn end_game(&mut self, how: &'static str) {
        let id = self.id();
        let Some(game) = self.game.as_mut() else {
            self.go_idle();
            return;
        };
        if game.id.is_empty() {
            self.go_idle();
            return;
        }
        game.end_id = id;
        game.think_until = None;
        let game_ref = GameRef { game: game.id.clone() };
        let frame =
            request(if how == "abort" { ClientFrame::Abort(game_ref) } else { ClientFrame::Resign(game_ref) }, id);
        self.set_stage(Stage::Ending);
        self.send(frame).await;
    }

    async fn play_move(&mut self) {
        let Some(game) = self.game.as_ref() else { return };
        if !game.my_turn() || game.pending.is_some() {
            return;
        }
        if self.stopping || game.ply >= self.shared.settings.max_plies {
            if !self.stopping {
                self.note("resigned at the ply limit");
            }
            self.end_game("resign").await;
            return;
        }
        let candidates = match moves_from_view(&game.fen, game.variant, game.color) {
            Ok(moves) => moves.into_iter().filter(|uci| !game.refused.contains(uci)).collect::<Vec<_>>(),
            Err(error) => {
                self.problem("a bot could not read its view", format!("game {}: {}: {error}", game.id, game.fen));
                self.end_game("resign").await;
                return;
            }
        };
        if candidates.is_empty() {
            self.note("resigned with no move left to try");
            self.end_game("resign").await;
            return;
        }
        let uci = candidates[self.rng.random_range(0..candidates.len())].clone();
        let ply = game.ply;
        self.send_move(ply, uci).await;
    }

    async fn send_move(&mut self, ply: usize, uci: String) {
        let id = self.id();
        let Some(game) = self.game.as_mut() else { return };
        let now = Instant::now();
        let frame =
            request(ClientFrame::Move(wire::Move { game: game.id.clone(), uci: uci.clone(), ply: ply as u32 }), id);
        match &mut game.pending {
            Some(pending) if pending.ply == ply && pending.uci == uci => {
                pending.id = id;
                pending.last = now;
                if let Some(sent) = self.shared.records().sent.get_mut(&(game.id.clone(), ply)) {
                    sent.last_ms = wall_ms();
                    sent.gateway = self.gateway;
                }
            }
            _ => {
                let mut records = self.shared.records();
                records.moves_sent += 1;
                let sent = records.sent.entry((game.id.clone(), ply)).or_default();
                let at = wall_ms();
                if sent.tried.is_empty() {
                    sent.first_ms = at;
                }
                sent.last_ms = at;
                sent.gateway = self.gateway;
                sent.tried.push(uci.clone());
                drop(records);
                game.pending = Some(Pending { ply, uci, id, first: now, last: now });
            }
        }
        self.send(frame).await;
    }

    async fn on_frame(&mut self, frame: Value) {
        let kind = text(&frame, "t").unwrap_or_default();
        let for_game = text(&frame, "game");
        if let (Some(game), Some(id)) = (self.game.as_mut(), for_game.as_deref()) {
            if game.id == id {
                game.last_frame = Instant::now();
            }
        }
        match kind.as_str() {
            "created" => self.on_created(&frame).await,
            "joined" => self.on_joined(&frame),
            "paired" => self.on_paired(&frame).await,
            "state" => self.on_state(&frame).await,
            "seated" if self.matches(&frame) && self.stage == Stage::Open => {
                if let Some(game) = self.game.as_mut() {
                    game.status = "playing".into();
                    game.last_v = game.last_v.max(frame["v"].as_u64().unwrap_or(0));
                }
                self.set_stage(Stage::Playing);
                self.after_change();
            }
            "move" => self.on_move(&frame).await,
            "end" => self.on_end(&frame),
            "error" => self.on_error(&frame).await,
            "reconnect" => {
                self.note("told to reconnect");
                if let Some(ws) = self.ws.take() {
                    ws.close(Duration::from_secs(1)).await;
                }
            }
            "rating" => self.note("rating frame"),
            _ => {}
        }
    }

    fn matches(&self, frame: &Value) -> bool {
        let id = frame.get("game").and_then(Value::as_str);
        self.game.as_ref().is_some_and(|g| Some(g.id.as_str()) == id)
    }

    fn register(&self, id: &str, info: GameInfo) {
        self.shared.records().games.entry(id.to_owned()).or_insert(info);
        self.shared.watchable.lock().unwrap_or_else(|e| e.into_inner()).push(id.to_owned());
    }

    async fn on_created(&mut self, frame: &Value) {
        if self.stage != Stage::Creating || frame["id"].as_u64() != Some(self.request_id) {
            return;
        }
        let (Some(id), Some(game)) = (text(frame, "game"), self.game.as_mut()) else { return };
        game.id = id.clone();
        game.color = color_of(frame["color"].as_str());
        let variant = game.variant;
        let computer = self.role == Role::Computer;
        let color = game.color;
        if computer {
            let seats = [color == Some(Color::White), color == Some(Color::Black)];
            let info = GameInfo { variant, rated: false, clock: None, bot_seats: seats, kind: "computer" };
            self.register(&id, info);
            self.set_stage(Stage::Playing);
        } else {
            self.set_stage(Stage::Open);
            if let Some(code) = text(frame, "code") {
                self.shared.invites.lock().unwrap_or_else(|e| e.into_inner()).push_back(Invite { game: id, code });
            }
        }
    }

    fn on_joined(&mut self, frame: &Value) {
        if self.stage != Stage::Joining || frame["id"].as_u64() != Some(self.request_id) {
            return;
        }
        let Some(id) = text(frame, "game") else { return };
        let mut play = Play::new(id, Variant::Standard);
        play.color = color_of(frame["color"].as_str());
        self.game = Some(play);
        self.joining = None;
        // The `state` that follows tells the rest.
        self.set_stage(Stage::Opening);
    }

    async fn on_paired(&mut self, frame: &Value) {
        if self.stage != Stage::Seeking {
            self.note("paired while not seeking");
        }
        let Some(id) = text(frame, "game") else { return };
        let variant = frame["variant"].as_str().and_then(|v| v.parse().ok()).unwrap_or(Variant::Standard);
        let info = GameInfo {
            variant,
            rated: frame["rated"].as_bool().unwrap_or(false),
            clock: clock_of(frame),
            bot_seats: [true, true],
            kind: "quick pairing",
        };
        self.register(&id, info);
        if self.game.is_some() {
            // Already in a game (a pairing of a seek this bot replaced):
            // the server aborts it when nobody moves.
            self.note("paired twice: the second game is left to abort");
            return;
        }
        let mut play = Play::new(id.clone(), variant);
        play.color = color_of(frame["color"].as_str());
        play.request_id = self.id();
        let request = play.request_id;
        self.game = Some(play);
        self.set_stage(Stage::Opening);
        self.send(self::request(ClientFrame::Watch(GameRef { game: id }), request)).await;
    }

    async fn on_state(&mut self, frame: &Value) {
        if !self.matches(frame) {
            return;
        }
        let v = frame["v"].as_u64().unwrap_or(0);
        let moves: Vec<Option<String>> = frame["moves"]
            .as_array()
            .map(|a| a.iter().map(|m| m.as_str().map(str::to_owned)).collect())
            .unwrap_or_default();
        let status = text(frame, "status").unwrap_or_default();
        let variant = frame["variant"].as_str().and_then(|v| v.parse().ok());
        let you = text(frame, "you");
        let now_ms = wall_ms();
        let spectator_role = self.role == Role::Spectator;
        let Some(game) = self.game.as_mut() else { return };
        if v < game.last_v {
            return;
        }
        game.last_v = v;
        if let Some(variant) = variant {
            game.variant = variant;
        }
        match you.as_deref() {
            // A joiner that lost its connection while joining asks for
            // the state to learn whether it got the seat: it did not.
            Some("spectator") if self.role == Role::Joiner && self.stage == Stage::Opening && game.color.is_none() => {
                self.note("a join lost with the connection did not happen");
                self.go_idle();
                return;
            }
            Some("spectator") => game.spectator = true,
            you => {
                if let Some(color) = color_of(you) {
                    game.color = Some(color);
                }
            }
        }
        game.ply = moves.len();
        game.fen = text(frame, "fen").unwrap_or_default();
        game.status = status.clone();
        game.refused.clear();
        let id = game.id.clone();
        {
            let mut records = self.shared.records();
            for ply in 0..moves.len() {
                records.seen.entry((id.clone(), ply)).or_insert(now_ms);
            }
            if game.variant == Variant::Fog && status != "ended" {
                let named = moves.iter().enumerate().filter_map(|(p, m)| Some((p, m.clone()?))).collect();
                records.fog.push(FogFrame {
                    game: id.clone(),
                    viewer: if game.spectator { None } else { game.color },
                    plies: moves.len(),
                    fen: game.fen.clone(),
                    visible: frame["visible"]
                        .as_array()
                        .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect()),
                    moves: named,
                    kind: "state",
                });
            }
            // Our move in flight: the list says whether it was played.
            if let Some(pending) = &game.pending {
                if let Some(played) = moves.get(pending.ply) {
                    if played.as_deref() == Some(pending.uci.as_str()) {
                        records.acked.insert((id.clone(), pending.ply), pending.uci.clone());
                    } else {
                        records.problem(
                            "a ply of a bot's seat holds another move",
                            format!("game {id} ply {}: {:?}, sent {}", pending.ply, played, pending.uci),
                        );
                    }
                    game.pending = None;
                }
            }
            if game.spectator && !spectator_role {
                records.problem("a seated player was shown the spectators' view", format!("game {id}"));
            }
        }
        if status == "ended" {
            let result = text(frame, "result").unwrap_or_default();
            let reason = text(frame, "reason").unwrap_or_default();
            self.finish(&id, result, reason);
            return;
        }
        if matches!(self.stage, Stage::Opening | Stage::Open) {
            if status == "playing" || self.stage == Stage::Opening {
                self.set_stage(if status == "waiting" && !spectator_role { Stage::Open } else { Stage::Playing });
            }
            if self.stage == Stage::Open {
                // A joiner's watch after a reconnect shows it never got the seat.
                if self.role == Role::Joiner {
                    self.go_idle();
                    return;
                }
            }
            self.register_from_state(frame);
        }
        self.after_change();
    }

    /// Invite games are registered once both seats are known (the state).
    fn register_from_state(&self, frame: &Value) {
        let Some(game) = &self.game else { return };
        if game.spectator || game.id.is_empty() {
            return;
        }
        let players = &frame["players"];
        let bot = |color: &str| players[color].is_object() && players[color]["computer"] != true;
        let info = GameInfo {
            variant: game.variant,
            rated: frame["rated"].as_bool().unwrap_or(false),
            clock: clock_of(frame),
            bot_seats: [bot("white"), bot("black")],
            kind: if matches!(self.role, Role::Seeker(_)) { "quick pairing" } else { "invite" },
        };
        if info.bot_seats == [true, true] || self.role == Role::Computer {
            let mut records = self.shared.records();
            let entry = records.games.entry(game.id.clone()).or_insert(info.clone());
            // The paired frame knew less: the state is the truth.
            entry.rated = info.rated;
            entry.clock = info.clock;
            if entry.kind != "computer" {
                entry.bot_seats = info.bot_seats;
            }
            drop(records);
            let mut watchable = self.shared.watchable.lock().unwrap_or_else(|e| e.into_inner());
            if !watchable.contains(&game.id) {
                watchable.push(game.id.clone());
            }
        }
    }

    /// After the view changed: think about the next move, or end the game.
    fn after_change(&mut self) {
        let think = self.think();
        let Some(game) = self.game.as_mut() else { return };
        if self.stage != Stage::Playing || !game.my_turn() || game.pending.is_some() {
            return;
        }
        if game.think_until.is_none() {
            game.think_until = Some(Instant::now() + think);
        }
    }

    async fn on_move(&mut self, frame: &Value) {
        if self.apply_move(frame) {
            self.refresh().await;
        }
    }

    /// Takes in a move frame; `true` when a fresh state is needed.
    fn apply_move(&mut self, frame: &Value) -> bool {
        if !self.matches(frame) {
            return false;
        }
        let received = Instant::now();
        let now_ms = wall_ms();
        let v = frame["v"].as_u64().unwrap_or(0);
        let Some(ply) = frame["ply"].as_u64().map(|p| p as usize) else { return false };
        let uci = text(frame, "uci");
        let Some(game) = self.game.as_mut() else { return false };
        if v <= game.last_v {
            // Seen already: a resume overlapped what arrived before.
            return false;
        }
        let id = game.id.clone();
        let mut records = self.shared.records();
        if ply < game.ply {
            records.problem(
                "a ply delivered twice under different versions (a move applied twice?)",
                format!("game {id} ply {ply} at v {v}, the bot was at ply {}", game.ply),
            );
            return false;
        }
        if ply > game.ply {
            // A gap: a later state fills it in.
            records.note("move frame ahead of the bot's view");
        }
        game.last_v = v;
        game.ply = ply + 1;
        game.fen = text(frame, "fen").unwrap_or_default();
        game.refused.clear();
        game.think_until = None;
        records.seen.entry((id.clone(), ply)).or_insert(now_ms);
        if let Some(clock) = frame.get("clock").filter(|c| c.is_object()) {
            let pair = (clock["white_ms"].as_u64().unwrap_or(0), clock["black_ms"].as_u64().unwrap_or(0));
            let known = *records.clocks.entry((id.clone(), ply)).or_insert(pair);
            if known != pair {
                records.problem(
                    "two receivers were shown different clocks for one move",
                    format!("game {id} ply {ply}: {known:?} and {pair:?}"),
                );
            }
        }
        if game.variant == Variant::Fog {
            records.fog.push(FogFrame {
                game: id.clone(),
                viewer: if game.spectator { None } else { game.color },
                plies: ply + 1,
                fen: game.fen.clone(),
                visible: frame["visible"]
                    .as_array()
                    .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect()),
                moves: uci.clone().map(|u| vec![(ply, u)]).unwrap_or_default(),
                kind: "move",
            });
        }
        if let Some(pending) = &game.pending {
            if pending.ply == ply {
                if uci.as_deref() == Some(pending.uci.as_str()) {
                    records.acked.insert((id.clone(), ply), pending.uci.clone());
                    records.acks.push(Ack { at: received, latency: received - pending.first, game: id.clone() });
                } else {
                    records.problem(
                        "a ply of a bot's seat holds another move",
                        format!("game {id} ply {ply}: {uci:?}, sent {}", pending.uci),
                    );
                }
                game.pending = None;
            } else if pending.ply < ply {
                // A later ply before our own: a fresh state says what
                // became of ours.
                records.note("a move frame skipped over the move in flight");
                return true;
            }
        }
        drop(records);
        self.after_change();
        false
    }

    fn on_end(&mut self, frame: &Value) {
        if !self.matches(frame) {
            return;
        }
        let id = text(frame, "game").unwrap_or_default();
        let moves: Vec<String> = frame["moves"]
            .as_array()
            .map(|a| a.iter().filter_map(|m| m.as_str().map(str::to_owned)).collect())
            .unwrap_or_default();
        if let Some(game) = self.game.as_mut() {
            game.last_v = game.last_v.max(frame["v"].as_u64().unwrap_or(0));
            if let Some(pending) = game.pending.take() {
                if moves.get(pending.ply) == Some(&pending.uci) {
                    self.shared.records().acked.insert((id.clone(), pending.ply), pending.uci);
                }
            }
        }
        let result = text(frame, "result").unwrap_or_default();
        let reason = text(frame, "reason").unwrap_or_default();
        self.finish(&id, result, reason);
    }

    fn finish(&mut self, id: &str, result: String, reason: String) {
        {
            let mut records = self.shared.records();
            let known = records.ends.entry(id.to_owned()).or_insert((result.clone(), reason.clone())).clone();
            if known != (result.clone(), reason.clone()) {
                records.problem(
                    "two receivers were told different results",
                    format!("game {id}: {known:?} and {result} {reason}"),
                );
            }
        }
        self.shared.watchable.lock().unwrap_or_else(|e| e.into_inner()).retain(|g| g != id);
        self.go_idle();
    }

    async fn on_error(&mut self, frame: &Value) {
        let code = text(frame, "code").unwrap_or_default();
        let id = frame["id"].as_u64();
        self.note(&format!("error {code}"));
        if id.is_some() && id == Some(self.request_id) {
            match self.stage {
                Stage::Seeking => {
                    // Try again later.
                    self.set_stage(Stage::Idle);
                    self.idle_until = Instant::now() + Duration::from_secs(1);
                    return;
                }
                Stage::Creating | Stage::Joining => {
                    self.joining = None;
                    self.go_idle();
                    return;
                }
                _ => {}
            }
        }
        let Some(game) = self.game.as_mut() else { return };
        if id.is_some() && id == Some(game.request_id) && matches!(self.stage, Stage::Opening) {
            // A watch refused: nothing to follow.
            self.go_idle();
            return;
        }
        if id.is_some() && id == Some(game.end_id) {
            match code.as_str() {
                // Over already: the end frame comes, or a state tells.
                "game_over" => self.refresh().await,
                "conflict" => self.end_game("resign").await,
                _ => {
                    self.refresh().await;
                }
            }
            return;
        }
        let Some(pending) = game.pending.as_ref().filter(|p| Some(p.id) == id) else { return };
        match code.as_str() {
            "illegal_move" => {
                // The fog hid what blocks it: try another.
                let uci = pending.uci.clone();
                if game.variant != Variant::Fog {
                    let example = format!("game {} ply {}: {uci}", game.id, pending.ply);
                    self.shared.records().problem("a legal move was refused", example);
                }
                game.refused.push(uci);
                game.pending = None;
                game.think_until = Some(Instant::now());
            }
            "unavailable" | "internal" | "rate_limited" => {
                if let Some(pending) = game.pending.as_mut() {
                    // Sent again soon by the wake-up.
                    pending.last = Instant::now() - RESEND_AFTER + RETRY_AFTER;
                }
            }
            _ => self.refresh().await,
        }
    }
}

/// The moves a seat may try from its view: every legal move in standard
/// and atomic chess, where the view is the whole board. In fog of war the
/// view holds only what the seat sees, usually without the enemy king, and
/// the rules generate no move for a board without one; a stand-in king is
/// put on a fogged square none of our pieces could move to (every square a
/// piece of ours reaches is visible, except a pawn's push or capture
/// square), which changes none of our moves, and moves onto it are dropped.
pub fn moves_from_view(fen: &str, variant: Variant, color: Option<Color>) -> Result<Vec<String>, String> {
    let mut fields: Vec<String> = fen.split_whitespace().map(str::to_owned).collect();
    let mut stand_in = None;
    if variant == Variant::Fog {
        let color = color.ok_or("no seat")?;
        let mut board = expand(fields.first().ok_or("an empty FEN")?)?;
        let (king, pawn, up) = match color {
            Color::White => ('k', 'P', 1i32),
            Color::Black => ('K', 'p', -1i32),
        };
        if !board.contains(&king) {
            let mut blocked = [false; 64];
            for (index, &c) in board.iter().enumerate() {
                if c != pawn {
                    continue;
                }
                let (file, rank) = ((index % 8) as i32, (index / 8) as i32);
                for (df, dr) in [(0, up), (0, 2 * up), (-1, up), (1, up)] {
                    let (f, r) = (file + df, rank + dr);
                    if (0..8).contains(&f) && (0..8).contains(&r) {
                        blocked[(r * 8 + f) as usize] = true;
                    }
                }
            }
            // An empty square with nothing around it, on the far side
            // first: a stand-in there can only take moves away, and moves
            // onto it are dropped below.
            let order: Vec<usize> = if color == Color::White { (0..64).rev().collect() } else { (0..64).collect() };
            let isolated = |i: usize| {
                let (file, rank) = ((i % 8) as i32, (i / 8) as i32);
                (-1..=1).all(|df| {
                    (-1..=1).all(|dr| {
                        let (f, r) = (file + df, rank + dr);
                        !((0..8).contains(&f) && (0..8).contains(&r)) || board[(r * 8 + f) as usize] == '.'
                    })
                })
            };
            let empty = |i: &usize| board[*i] == '.' && !blocked[*i];
            let free = order.iter().copied().filter(empty).find(|&i| isolated(i));
            let free = free.or_else(|| order.iter().copied().find(empty));
            let free = free.ok_or("no square for a stand-in king")?;
            board[free] = king;
            stand_in = Some(format!("{}{}", (b'a' + (free % 8) as u8) as char, free / 8 + 1));
            fields[0] = compress(&board);
        }
    }
    let position = Position::from_fen(&fields.join(" "), variant).map_err(|e| format!("{e:?}"))?;
    Ok(position
        .legal_moves()
        .iter()
        .map(|m| m.to_uci(CastlingMode::Standard).to_string())
        .filter(|uci| stand_in.as_ref().is_none_or(|sq| uci.get(2..4) != Some(sq.as_str())))
        .collect())
}

/// A FEN placement as 64 squares, a1 first; `.` is empty.
fn expand(placement: &str) -> Result<Vec<char>, String> {
    let mut board = vec!['.'; 64];
    let ranks: Vec<&str> = placement.split('/').collect();
    if ranks.len() != 8 {
        return Err(format!("{placement}: not 8 ranks"));
    }
    for (row, text) in ranks.iter().enumerate() {
        let mut file = 0usize;
        for c in text.chars() {
            match c.to_digit(10) {
                Some(skip) => file += skip as usize,
                None => {
                    if file < 8 {
                        board[(7 - row) * 8 + file] = c;
                    }
                    file += 1;
                }
            }
        }
        if file != 8 {
            return Err(format!("{placement}: rank {} has {file} squares", 8 - row));
        }
    }
    Ok(board)
}

fn compress(board: &[char]) -> String {
    let mut out = String::new();
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            match board[rank * 8 + file] {
                '.' => empty += 1,
                c => {
                    if empty > 0 {
                        out.push_str(&empty.to_string());
                        empty = 0;
                    }
                    out.push(c);
                }
            }
        }
        if empty > 0 {
            out.push_str(&empty.to_string());
        }
        if rank > 0 {
            out.push('/');
        }
    }
    out
}

/// A frame with the `id` its answer echoes.
fn request(frame: ClientFrame, id: u64) -> Request {
    Request { frame, id: Some(id.into()) }
}

/// Connects and says hello; returns the socket and the token.
async fn greet(url: &str, name: &str, token: Option<&str>) -> anyhow::Result<(Connection, String)> {
    let mut ws = Connection::connect(url).await?;
    let welcome = ws.hello(Hello { token: token.map(str::to_owned), name: Some(name.to_owned()) }).await?;
    Ok((ws, welcome.token))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fog_views_without_the_enemy_king_still_give_moves() {
        let white =
            moves_from_view("8/8/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1", Variant::Fog, Some(Color::White)).unwrap();
        assert_eq!(white.len(), 20, "{white:?}");
        let black =
            moves_from_view("rnbqkbnr/pppppppp/8/8/4P3/8/8/8 b kq - 0 1", Variant::Fog, Some(Color::Black)).unwrap();
        assert_eq!(black.len(), 20, "{black:?}");
        // A pawn's capture square is never where the stand-in goes.
        let lone = moves_from_view("8/8/8/8/8/8/4P3/4K3 w - - 0 1", Variant::Fog, Some(Color::White)).unwrap();
        assert!(lone.iter().all(|m| !m.starts_with("e2d3") && !m.starts_with("e2f3")), "{lone:?}");
        assert!(lone.contains(&"e2e4".to_owned()));
        // A crowded view with no empty square away from every piece.
        let crowded = "8/1p1p1p1p/B6q/4pQ2/4P3/2P3P1/PP1b1P2/RNB1K1NR w KQ - 0 9";
        assert!(!moves_from_view(crowded, Variant::Fog, Some(Color::White)).unwrap().is_empty());
    }

    #[test]
    fn full_views_give_the_legal_moves() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        assert_eq!(moves_from_view(start, Variant::Atomic, Some(Color::White)).unwrap().len(), 20);
        assert!(moves_from_view("not a fen", Variant::Fog, Some(Color::White)).is_err());
    }

    #[test]
    fn placements_round_trip() {
        for placement in ["rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR", "8/8/8/8/8/8/8/8", "k7/8/8/3Q4/8/8/8/7K"] {
            assert_eq!(compress(&expand(placement).unwrap()), placement);
        }
        assert!(expand("8/8/8").is_err());
    }
}
