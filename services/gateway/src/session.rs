//! One client connection: reads its frames, checks them against the
//! connection's credits, hands each command to its lane (`lanes.rs`) so
//! that a slow one never holds up the socket, carries it out through the
//! game service or the matchmaker, and writes what comes back. Every
//! refusal is an `error` frame with a code, and the connection stays
//! usable; only abuse (flooding past the credits, a frame over the size
//! limit) or a client too slow to read closes it.

use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::command::Action;
use fogblast_proto::game::{
    self as proto, ClockSettings, CreateGameRequest, GameState, GetStateRequest, JoinGameRequest,
};
use fogblast_proto::ids::{GameId, PlayerId};
use fogblast_proto::matchmaker::Board;
use fogblast_protocol::convert::color;
use fogblast_protocol::{Create, GameCommand, GatewayFrame, Hello, Id, Level, Opponent, Routed, ServerFrame};
use futures::{SinkExt, StreamExt};
use tokio::time::Instant;

use crate::conn::{Close, Conn, Outbox};
use crate::feeds::Seat;
use crate::frames;
use crate::lanes::{Lane, Lanes, Order};
use crate::limits::Bucket;
use crate::Gateway;

/// How often a socket tries to follow a game whose feed keeps moving past
/// the state it was given.
const FOLLOW_ATTEMPTS: usize = 3;

/// How often the gateway pings a client to measure its lag.
const PING_EVERY: Duration = Duration::from_secs(5);

/// The most queued frames written to a socket with one flush.
const WRITE_BATCH: usize = 64;

pub async fn serve(socket: WebSocket, gateway: Arc<Gateway>, ip: IpAddr) {
    let (conn, mut outbox, mut closed) = Conn::from_ip(ip);
    gateway.metrics.connections.inc();
    let (mut sink, mut stream) = socket.split();
    let mut session = Session { gateway: gateway.clone(), conn: conn.clone(), ip, player: None, name: String::new() };
    let mut lanes = Lanes::new(gateway.config.settings.max_in_flight);
    let settings = &gateway.config.settings;
    let mut intake = Intake {
        credits: Bucket::new(settings.credits, Duration::from_millis(settings.credit_window_ms)),
        refusals: Bucket::new(settings.credits, Duration::from_millis(settings.credit_window_ms)),
        pinger: Pinger::default(),
        last_heard: Instant::now(),
    };
    let mut pings = tokio::time::interval(PING_EVERY);
    let idle_timeout = Duration::from_millis(settings.idle_timeout_ms);
    let write_timeout = settings.write_timeout();
    let mut draining = gateway.draining.clone();
    // Made once, not on every turn of the loop: each is a waiter on a
    // channel (the draining one shared by every socket of the gateway).
    let closed_changed = closed.changed();
    let draining_changed = draining.changed();
    tokio::pin!(closed_changed, draining_changed);
    let close = loop {
        tokio::select! {
            frame = outbox.recv() => {
                let Some(frame) = frame else { break None };
                match write_queued(&mut sink, frame, &mut outbox, write_timeout).await {
                    Written::Yes => {}
                    Written::Gone => break None,
                    Written::TooSlow => break Some(Close::TOO_SLOW),
                }
            }
            incoming = stream.next() => {
                if let Err(close) = intake.take(incoming, &mut session, &mut lanes).await {
                    break close;
                }
            }
            _ = pings.tick() => {
                if intake.last_heard.elapsed() > idle_timeout {
                    break Some(Close::IDLE);
                }
                let nonce = intake.pinger.ping();
                match write(&mut sink, Message::Ping(nonce.to_vec().into()), write_timeout).await {
                    Written::Yes => {}
                    Written::Gone => break None,
                    Written::TooSlow => break Some(Close::TOO_SLOW),
                }
            }
            () = lanes.reap() => {}
            _ = &mut closed_changed => break conn.close_reason(),
            _ = &mut draining_changed => {
                let reconnect = ServerFrame::Reconnect { reason: "server restarting".into() };
                match write(&mut sink, Message::Text(frames::text(&reconnect)), write_timeout).await {
                    Written::TooSlow => break Some(Close::TOO_SLOW),
                    Written::Yes | Written::Gone => break Some(Close::RESTARTING),
                }
            }
        }
    };
    if let Some(close) = close {
        gateway.metrics.closed.with_label_values(&[close.reason]).inc();
        // A client too slow to read would not read the close either.
        if close != Close::TOO_SLOW {
            let frame = CloseFrame { code: close.code, reason: Utf8Bytes::from_static(close.reason) };
            let _ = write(&mut sink, Message::Close(Some(frame)), write_timeout).await;
        }
    }
    // The socket closes now, not once the commands below are done.
    drop(sink);
    // Commands already sent are carried out, as they were when the socket
    // handled one at a time; each call has its own deadline, and the route
    // timeout bounds the wait for the lot.
    lanes.finish(gateway.config.settings.route_timeout()).await;
    session.finish();
    gateway.metrics.connections.dec();
}

/// What the client's own messages may cost it: a credit each, control
/// frames too, and a budget of refusals past which it is flooding; and
/// when it was last heard, and the pings it answers.
struct Intake {
    credits: Bucket,
    refusals: Bucket,
    pinger: Pinger,
    last_heard: Instant,
}

impl Intake {
    /// Takes one message from the client (`None`: the stream ended). An
    /// `Err` closes the socket, with a close code when there is one to send.
    async fn take(
        &mut self,
        incoming: Option<Result<Message, axum::Error>>,
        session: &mut Session,
        lanes: &mut Lanes,
    ) -> Result<(), Option<Close>> {
        let message = match incoming {
            Some(Ok(message)) => message,
            // Frames over the size limit are refused by the library, as
            // errors: tell the client why it is being closed.
            Some(Err(error)) => return Err(too_big(&error).then_some(Close::TOO_BIG)),
            None => return Err(None),
        };
        self.last_heard = Instant::now();
        if let Message::Close(_) = message {
            return Err(None);
        }
        session.gateway.metrics.frames_in.inc();
        if !self.credits.take() {
            // Refusals have a budget of their own: a client that keeps
            // sending past it is flooding.
            if !self.refusals.take() {
                return Err(Some(Close::FLOODING));
            }
            let id = match &message {
                Message::Text(text) => fogblast_protocol::id_of(text),
                _ => None,
            };
            session.error(ErrorCode::RateLimited, "too many messages: slow down", id);
            return Ok(());
        }
        match message {
            Message::Text(text) => session.accept(&text, lanes).await,
            Message::Binary(_) => session.error(ErrorCode::BadRequest, "frames are JSON text", None),
            Message::Pong(payload) => {
                if let Some(rtt) = self.pinger.answered(&payload) {
                    session.measured(rtt);
                }
            }
            Message::Ping(_) | Message::Close(_) => {}
        }
        Ok(())
    }
}

/// What came of writing one message to the client.
enum Written {
    Yes,
    /// The connection failed or was closed.
    Gone,
    /// The client took nothing for the write timeout: it holds a zero
    /// window, or reads too slowly for what it asked for.
    TooSlow,
}

/// Writes `message`, giving up after `limit`. Without the limit a client
/// that stops reading parks the socket's task in this write for good, and
/// with it the checks that would close the socket (the queue's bound, the
/// idle timeout).
async fn write<S>(sink: &mut S, message: Message, limit: Duration) -> Written
where
    S: futures::Sink<Message> + Unpin,
{
    match tokio::time::timeout(limit, sink.send(message)).await {
        Ok(Ok(())) => Written::Yes,
        Ok(Err(_)) => Written::Gone,
        Err(_) => Written::TooSlow,
    }
}

/// Writes `first` and the frames queued behind it (at most
/// [`WRITE_BATCH`] in all) with one flush, so a burst of frames (a move,
/// its clock, an opponent's answer) costs the socket one write instead of
/// one each. The whole batch has `limit`.
async fn write_queued<S>(sink: &mut S, first: Utf8Bytes, outbox: &mut Outbox, limit: Duration) -> Written
where
    S: futures::Sink<Message> + Unpin,
{
    let batch = async {
        sink.feed(Message::Text(first)).await?;
        for _ in 1..WRITE_BATCH {
            let Ok(frame) = outbox.try_recv() else { break };
            sink.feed(Message::Text(frame)).await?;
        }
        sink.flush().await
    };
    match tokio::time::timeout(limit, batch).await {
        Ok(Ok(())) => Written::Yes,
        Ok(Err(_)) => Written::Gone,
        Err(_) => Written::TooSlow,
    }
}

/// Whether reading failed on a frame or message over the size limit. The
/// WebSocket library's error is only reachable as text here: its
/// `CapacityError` reads "Space limit exceeded: Message too long: N > M".
fn too_big(error: &axum::Error) -> bool {
    error.to_string().contains("Space limit exceeded")
}

/// The gateway's own lag probe: each ping carries a fresh random nonce,
/// and the time it went out stays here. Only the pong to the last ping
/// measures anything; an unsolicited, replayed or forged pong is ignored,
/// so a client cannot claim more lag than it has (it can only answer late,
/// which the lag quota bounds).
#[derive(Debug, Default)]
struct Pinger {
    outstanding: Option<([u8; 8], Instant)>,
}

impl Pinger {
    /// The payload of a new ping, superseding any unanswered one.
    fn ping(&mut self) -> [u8; 8] {
        let nonce = rand::random::<[u8; 8]>();
        self.outstanding = Some((nonce, Instant::now()));
        nonce
    }

    /// The round trip, if `payload` answers the outstanding ping.
    fn answered(&mut self, payload: &[u8]) -> Option<Duration> {
        match self.outstanding {
            Some((nonce, sent)) if payload == nonce => {
                self.outstanding = None;
                Some(sent.elapsed())
            }
            _ => None,
        }
    }
}

/// Cheap to clone: each command runs on a copy taken when it arrived, so
/// it sees the player as of then (a command sent before `hello` stays
/// unauthorized even if it runs after).
#[derive(Clone)]
struct Session {
    gateway: Arc<Gateway>,
    conn: Arc<Conn>,
    ip: IpAddr,
    player: Option<PlayerId>,
    name: String,
}

/// Where a command runs: `None` for `hello`, which runs before the next
/// frame is read.
fn order(frame: &Routed) -> Option<Order> {
    // By the id as parsed, so two spellings of one game share its lane; a
    // malformed id is refused by the command itself.
    let game = |game: &str| {
        let id = GameId::parse(game).map_or_else(|_| game.to_owned(), |id| id.to_string());
        Some(Order::In(Lane::Game(id)))
    };
    let frame = match frame {
        Routed::Game(command) => return game(&command.game),
        Routed::Gateway(frame) => frame,
    };
    match frame {
        GatewayFrame::Hello(_) => None,
        GatewayFrame::Ping => Some(Order::Barrier),
        GatewayFrame::Watch(w) => game(&w.game),
        GatewayFrame::Resume(r) => game(&r.game),
        GatewayFrame::Seek(_) | GatewayFrame::CancelSeek => Some(Order::In(Lane::Seeks)),
        // A game is created or joined by a code, not yet by an id, and the
        // lobby is a read: none has an order to keep.
        GatewayFrame::Create(_) | GatewayFrame::Join(_) | GatewayFrame::Lobby => Some(Order::Free),
    }
}

fn bad(message: impl Into<String>) -> ServiceError {
    ServiceError::new(ErrorCode::BadRequest, message)
}

fn game_id(text: &str) -> Result<GameId, ServiceError> {
    GameId::parse(text).map_err(|e| bad(e.to_string()))
}

impl Session {
    fn send(&self, frame: &ServerFrame) {
        self.conn.send(frames::text(frame));
    }

    fn error(&self, code: ErrorCode, message: &str, id: Option<Id>) {
        self.gateway.metrics.errors.with_label_values(&[code.as_ws_code()]).inc();
        self.send(&ServerFrame::error(code, message, id));
    }

    /// Half the round trip of the last ping, as the player's lag.
    fn measured(&self, rtt: Duration) {
        let rtt = rtt.as_millis().min(60_000) as u64;
        let previous = self.conn.lag_ms.load(Ordering::Relaxed);
        let lag = if previous == 0 { rtt / 2 } else { (previous * 3 + rtt / 2) / 4 };
        self.conn.lag_ms.store(lag, Ordering::Relaxed);
    }

    /// Starts the command in `text` in its lane. Only `hello` is carried
    /// out before the next frame is read: every later command depends on
    /// who it names, and it waits for no other service (the gateway's
    /// one subscription to players' notices is there from its start).
    async fn accept(&mut self, text: &str, lanes: &mut Lanes) {
        let received = Instant::now();
        let request = match fogblast_protocol::parse(text) {
            Ok(request) => request,
            Err(bad) => return self.error(bad.code, &bad.message, bad.id),
        };
        let kind = request.frame.kind();
        let (frame, id) = (Routed::from(request.frame), request.id);
        let order = match order(&frame) {
            // Boxed: awaited here, `handle`'s state (the largest of every
            // command's, gRPC calls and all) would be part of the socket's
            // own task for its whole life, idle or not, when only `hello`
            // ever runs in it, once.
            None => return Box::pin(self.handle(frame, kind, id, received)).await,
            Some(order) => order,
        };
        let mut session = self.clone();
        let answer_to = id.clone();
        if !lanes.start(order, async move { session.handle(frame, kind, answer_to, received).await }) {
            self.error(ErrorCode::RateLimited, "too many commands waiting for an answer: wait for them", id);
        }
    }

    /// Carries out the frame of type `kind` read from the socket at
    /// `received`, its answer to carry `id`.
    async fn handle(&mut self, frame: Routed, kind: &'static str, id: Option<Id>, received: Instant) {
        let started = Instant::now();
        let result = self.dispatch(frame, id.as_ref(), received).await;
        self.gateway.metrics.command_seconds.with_label_values(&[kind]).observe(started.elapsed().as_secs_f64());
        if let Err(error) = result {
            if let Some(detail) = &error.detail {
                tracing::warn!(command = kind, code = error.code.as_ws_code(), %detail, "command failed inside");
            }
            self.error(error.code, &error.message, id);
        }
    }

    fn player(&self) -> Result<&PlayerId, ServiceError> {
        self.player.as_ref().ok_or_else(|| ServiceError::new(ErrorCode::Unauthorized, "say hello first"))
    }

    async fn dispatch(&mut self, frame: Routed, id: Option<&Id>, received: Instant) -> Result<(), ServiceError> {
        let frame = match frame {
            Routed::Game(command) => {
                let player = self.player()?.clone();
                return self.game_command(command, &player, id, received).await;
            }
            Routed::Gateway(frame) => frame,
        };
        if let GatewayFrame::Hello(hello) = frame {
            return self.hello(hello, id).await;
        }
        if let GatewayFrame::Ping = frame {
            self.send(&ServerFrame::Pong { id: id.cloned() });
            return Ok(());
        }
        let player = self.player()?.clone();
        let router = self.gateway.router.clone();
        match frame {
            GatewayFrame::Hello(_) | GatewayFrame::Ping => unreachable!("answered above"),
            GatewayFrame::Create(create) => self.create(create, id).await,
            GatewayFrame::Join(join) => {
                let code = join.code.trim().to_ascii_uppercase();
                if code.is_empty() || code.len() > 16 {
                    return Err(bad("code must be a join code"));
                }
                let request = JoinGameRequest {
                    player_id: player.to_string(),
                    player_name: self.name.clone(),
                    code,
                    ..Default::default()
                };
                let joined = router.join_game(request).await?;
                let color = color(joined.color());
                self.send(&ServerFrame::Joined { game: joined.game_id.clone(), color, id: id.cloned() });
                self.gateway.matchmaker.close_board(&joined.game_id);
                self.follow_from(&game_id(&joined.game_id)?, joined.state, id).await?;
                Ok(())
            }
            // Following a game again replaces the socket's subscription in
            // place, so the player never looks gone in between.
            GatewayFrame::Watch(watch) => self.follow(&game_id(&watch.game)?, id).await,
            GatewayFrame::Resume(resume) => {
                let game = game_id(&resume.game)?;
                let state = self.state(&game).await?;
                let seat = Seat::of(state.audience());
                if resume.v > state.version {
                    return Err(bad(format!("version {} is ahead of the game ({})", resume.v, state.version)));
                }
                // Replay from the gateway's feed when it reaches back far
                // enough and is as new as the store; otherwise the whole
                // state.
                self.within_computer_cap(&game, &state).await?;
                self.within_follow_cap(&game)?;
                self.gateway.feeds.note(&game, &state);
                if !self.gateway.feeds.resume(&game, &self.conn, seat, Some(player), resume.v, state.version) {
                    self.follow_from(&game, Some(state), id).await?;
                }
                Ok(())
            }
            GatewayFrame::Seek(seek) => {
                let variant = seek.variant.into();
                let clock = seek.clock.map(ClockSettings::from);
                let range = seek.range.map(|r| (r.min, r.max));
                // A seek is a game to be: sockets of one address seeking one
                // pool must not be paired past the address's game budget.
                self.gateway.may_create_game(self.ip)?;
                let (seek_id, pool) = self
                    .gateway
                    .matchmaker
                    .seek(player.as_str(), &self.name, variant, clock, seek.rated.unwrap_or(false), range)
                    .await?;
                self.send(&ServerFrame::Seeking { seek: seek_id, pool, id: id.cloned() });
                Ok(())
            }
            GatewayFrame::CancelSeek => {
                let cancelled = self.gateway.matchmaker.cancel_seek(player.as_str()).await?;
                self.send(&ServerFrame::SeekCancelled { cancelled: Some(cancelled), reason: None, id: id.cloned() });
                Ok(())
            }
            GatewayFrame::Lobby => {
                let mut frame = self.gateway.matchmaker.list().await?;
                frame.id = id.cloned();
                self.gateway.lobby.subscribe(&self.conn, frame);
                Ok(())
            }
        }
    }

    /// A command on one game, sent to its shard as one message. A mover
    /// follows the game first (it hears its move's acknowledgement on the
    /// feed), and a rematch both sides agreed to is followed once made.
    async fn game_command(
        &self,
        command: GameCommand,
        player: &PlayerId,
        id: Option<&Id>,
        received: Instant,
    ) -> Result<(), ServiceError> {
        let game = game_id(&command.game)?;
        let mut request = command.by(player.as_str());
        request.game_id = game.to_string();
        let span = match &mut request.action {
            Some(Action::Move(m)) => {
                if m.uci.len() > 5 {
                    return Err(bad(format!("{:?} is not a UCI move", m.uci.chars().take(16).collect::<String>())));
                }
                if !self.gateway.feeds.follows(&game, &self.conn) {
                    self.follow(&game, None).await?;
                }
                m.lag_ms = self.conn.lag_ms.load(Ordering::Relaxed).min(u64::from(u32::MAX)) as u32;
                // Waiting in this connection's lane (and following the
                // game, above) is not the mover's time either.
                m.waited_ms = u32::try_from(received.elapsed().as_millis()).unwrap_or(u32::MAX);
                // The move's trace starts here; the move itself stays out
                // (in fog of war it is hidden from the opponent).
                tracing::info_span!("gateway.move", game = %game, ply = m.ply)
            }
            Some(Action::Chat(_)) => {
                self.gateway.may_chat(player)?;
                tracing::Span::none()
            }
            _ => tracing::Span::none(),
        };
        let aborted = matches!(request.action, Some(Action::Abort(_)));
        let result = tracing::Instrument::instrument(self.gateway.router.command(request), span).await?;
        if aborted {
            // An open board aborted by its creator leaves the lobby at once.
            self.gateway.matchmaker.close_board(&game.to_string());
        }
        if !result.new_game_id.is_empty() {
            self.follow(&game_id(&result.new_game_id)?, id).await?;
        }
        Ok(())
    }

    async fn hello(&mut self, hello: Hello, id: Option<&Id>) -> Result<(), ServiceError> {
        if self.player.is_some() {
            return Err(bad("hello is the first frame, and only the first"));
        }
        if let Some(name) = &hello.name {
            if name.chars().count() > 30 || name.chars().any(char::is_control) {
                return Err(bad("a name is at most 30 printable characters"));
            }
        }
        let (player, token) = match hello.token.as_deref() {
            Some(token) => {
                let verified = self.gateway.signer.verify(token).ok_or_else(|| {
                    ServiceError::new(ErrorCode::Unauthorized, "the token is not valid here (or has expired)")
                })?;
                (verified.player, verified.renewed.unwrap_or_else(|| token.to_owned()))
            }
            None => self.gateway.signer.new_player(),
        };
        self.name = hello.name.unwrap_or_default();
        self.gateway.players.add(&player, &self.conn);
        self.send(&ServerFrame::Welcome { player: player.as_str().to_owned(), token, id: id.cloned() });
        self.player = Some(player);
        Ok(())
    }

    async fn create(&mut self, create: Create, id: Option<&Id>) -> Result<(), ServiceError> {
        let player = self.player()?.clone();
        let variant = proto::Variant::from(create.variant);
        let choice = proto::ColorChoice::from(create.color);
        let computer = create.opponent == Opponent::Computer;
        let level = if computer { create.level.unwrap_or(Level::Hard).into() } else { proto::Level::Unspecified };
        if computer {
            self.gateway.computer_games_allowed(self.ip, None).await?;
        }
        self.gateway.may_create_game(self.ip)?;
        let request = CreateGameRequest {
            player_id: player.to_string(),
            player_name: self.name.clone(),
            variant: variant as i32,
            chess960: create.chess960.unwrap_or(false),
            color: choice as i32,
            clock: create.clock.map(ClockSettings::from),
            computer,
            level: level as i32,
            rated: create.rated.unwrap_or(false),
            ..Default::default()
        };
        let created = self.gateway.router.create_game(request.clone()).await?;
        if computer {
            self.gateway.computer_games.started(self.ip, game_id(&created.game_id)?);
        }
        let code = Some(created.code.clone()).filter(|code| !code.is_empty());
        self.send(&ServerFrame::Created {
            game: created.game_id.clone(),
            invite: code.as_ref().map(|code| format!("/g/{code}")),
            code,
            color: color(created.color()),
            id: id.cloned(),
        });
        if !computer {
            self.gateway.matchmaker.open_board(Board {
                game_id: created.game_id.clone(),
                code: created.code.clone(),
                variant: variant as i32,
                clock: request.clock,
                color: choice as i32,
                rated: request.rated,
                player_id: player.to_string(),
                name: self.name.clone(),
                rating: 0,
                opened_ms: 0,
                address: self.ip.to_string(),
            });
        }
        self.follow_from(&game_id(&created.game_id)?, created.state, id).await?;
        Ok(())
    }

    async fn state(&self, game: &GameId) -> Result<GameState, ServiceError> {
        let request = GetStateRequest {
            game_id: game.to_string(),
            player_id: self.player.as_ref().map(ToString::to_string).unwrap_or_default(),
        };
        self.gateway.router.get_state(request).await
    }

    /// Sends the game's state and follows it from there.
    async fn follow(&self, game: &GameId, id: Option<&Id>) -> Result<(), ServiceError> {
        let state = self.state(game).await?;
        self.follow_from(game, Some(state), id).await
    }

    /// Sends `state` and follows the game from there. When the game's feed
    /// has moved on past what it still holds since `state`, a fresh state
    /// goes out and the socket follows from that one, so it is never left
    /// silently unsubscribed.
    async fn follow_from(&self, game: &GameId, state: Option<GameState>, id: Option<&Id>) -> Result<(), ServiceError> {
        let Some(mut state) = state else { return Ok(()) };
        self.within_computer_cap(game, &state).await?;
        self.within_follow_cap(game)?;
        let mut reply_id = id.cloned();
        for _ in 0..FOLLOW_ATTEMPTS {
            let seat = Seat::of(state.audience());
            let mut frame = frames::state(&state);
            frame.id = reply_id.take();
            self.send(&ServerFrame::State(Box::new(frame)));
            self.gateway.feeds.note(game, &state);
            if self.gateway.feeds.subscribe(game, &self.conn, seat, self.player.clone(), state.version) {
                return Ok(());
            }
            state = self.state(game).await?;
        }
        Err(ServiceError::new(ErrorCode::Unavailable, "the game moved on too fast to follow: resume it"))
    }

    /// A seat in a live game against the computer is refused once this
    /// address holds as many on this gateway (other than `game`): a few
    /// addresses must not take the whole engine pool.
    /// A socket follows a bounded number of games: each is a Watch stream
    /// here and a task on its shard. Games that ended are let go first.
    fn within_follow_cap(&self, game: &GameId) -> Result<(), ServiceError> {
        let cap = self.gateway.config.settings.max_games_per_socket;
        if self.conn.following.load(Ordering::Relaxed) < cap || self.gateway.feeds.follows(game, &self.conn) {
            return Ok(());
        }
        self.gateway.feeds.unsubscribe_ended(&self.conn);
        let following = self.conn.following.load(Ordering::Relaxed);
        if following < cap {
            return Ok(());
        }
        Err(ServiceError::new(
            ErrorCode::RateLimited,
            format!("this connection follows {following} live games, the most allowed: open another for more"),
        ))
    }

    async fn within_computer_cap(&self, game: &GameId, state: &GameState) -> Result<(), ServiceError> {
        let seated = Seat::of(state.audience()) != Seat::Spectator;
        let against_computer = [&state.white, &state.black].iter().any(|p| p.as_ref().is_some_and(|p| p.computer));
        if !seated || !against_computer || state.status() == fogblast_proto::game::Status::Ended {
            return Ok(());
        }
        self.gateway.computer_games_allowed(self.ip, Some(game)).await
    }

    fn finish(&self) {
        self.gateway.feeds.unsubscribe_all(&self.conn);
        self.gateway.lobby.unsubscribe(&self.conn);
        if let Some(player) = &self.player {
            if self.gateway.players.remove(player, &self.conn) {
                self.gateway.matchmaker.player_left(player.as_str());
            }
        }
        self.gateway.limits.disconnect(self.ip);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink that records what it was given and how often it was flushed.
    #[derive(Default)]
    struct Recording {
        messages: Vec<String>,
        flushes: usize,
    }

    impl futures::Sink<Message> for Recording {
        type Error = std::convert::Infallible;
        fn poll_ready(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Result<(), Self::Error>> {
            std::task::Poll::Ready(Ok(()))
        }
        fn start_send(mut self: std::pin::Pin<&mut Self>, message: Message) -> Result<(), Self::Error> {
            if let Message::Text(text) = message {
                self.messages.push(text.to_string());
            }
            Ok(())
        }
        fn poll_flush(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Result<(), Self::Error>> {
            self.flushes += 1;
            std::task::Poll::Ready(Ok(()))
        }
        fn poll_close(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Result<(), Self::Error>> {
            std::task::Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn frames_queued_together_go_out_in_order_with_one_flush_per_batch() {
        let (conn, mut outbox, _closed) = Conn::new();
        let frames: Vec<String> = (0..WRITE_BATCH + 6).map(|i| format!("{{\"n\":{i}}}")).collect();
        for frame in &frames {
            assert!(conn.send(Utf8Bytes::from(frame.as_str())));
        }
        let mut sink = Recording::default();
        let limit = Duration::from_secs(5);
        let first = outbox.recv().await.unwrap();
        assert!(matches!(write_queued(&mut sink, first, &mut outbox, limit).await, Written::Yes));
        assert_eq!((sink.messages.len(), sink.flushes), (WRITE_BATCH, 1), "a full batch, one flush");
        let first = outbox.recv().await.unwrap();
        assert!(matches!(write_queued(&mut sink, first, &mut outbox, limit).await, Written::Yes));
        assert_eq!(sink.flushes, 2);
        assert_eq!(sink.messages, frames, "every frame once, in order");
        assert!(outbox.try_recv().is_err());
    }

    #[tokio::test]
    async fn only_the_answer_to_the_last_ping_measures_lag() {
        let mut pinger = Pinger::default();
        let forged_clock = (1_700_000_000_000u64).to_be_bytes();
        assert_eq!(pinger.answered(&forged_clock), None, "an unsolicited pong");
        let first = pinger.ping();
        tokio::time::sleep(Duration::from_millis(40)).await;
        assert_eq!(pinger.answered(&forged_clock), None, "a pong that is not the nonce");
        assert_eq!(pinger.answered(&first[..4]), None, "a short pong");
        let second = pinger.ping();
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert_eq!(pinger.answered(&first), None, "the answer to a superseded ping");
        let rtt = pinger.answered(&second).expect("the answer to the last ping");
        assert!(rtt >= Duration::from_millis(30) && rtt < Duration::from_secs(5), "{rtt:?}");
        assert_eq!(pinger.answered(&second), None, "a replayed pong");
    }
}
