//! `fogblast-tools relay-server`: the least a server must do for the load
//! test's bots, in one process and in memory, as the yardstick the whole
//! path is measured against (docs/performance.md). It speaks the same
//! WebSocket frames (`hello`, `create`, `join`, `move`, `resign`, `abort`,
//! `ping`), checks every move by the rules as a shard does, and relays
//! each to both players with the position and the next side's legal moves;
//! no store, no bus, no clocks, no archive (so the load test runs against it
//! with `--no-verify`).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use fogblast_proto::error::ErrorCode;
use fogblast_protocol::{
    ClientFrame, Color, EndFrame, EndReason, Id, MoveFrame, Request, ServerFrame, Variant as WireVariant,
};
use fogblast_rules::{CastlingMode, Game, Position, Uci};
use futures::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

#[derive(Debug, clap::Args)]
pub struct RelayServerArgs {
    /// Where to listen for WebSockets (any path is accepted).
    #[arg(long, default_value = "127.0.0.1:7790")]
    listen: SocketAddr,
}

pub fn run(args: &RelayServerArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(serve(args.listen))
}

type Outbox = mpsc::UnboundedSender<Message>;

/// A game between two sockets.
struct Table {
    game: Game,
    seats: [Option<Outbox>; 2],
}

#[derive(Default)]
struct Relay {
    tables: Mutex<HashMap<String, Table>>,
    codes: Mutex<HashMap<String, String>>,
    next: AtomicU64,
}

async fn serve(listen: SocketAddr) -> anyhow::Result<()> {
    let listener = TcpListener::bind(listen).await.with_context(|| format!("binding {listen}"))?;
    println!("relay listening on ws://{}/ws", listener.local_addr()?);
    let relay = Arc::new(Relay::default());
    let interrupted = crate::signals::shutdown_signal().context("installing signal handlers")?;
    tokio::pin!(interrupted);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (socket, _) = accepted?;
                tokio::spawn(connection(relay.clone(), socket));
            }
            _ = &mut interrupted => return Ok(()),
        }
    }
}

async fn connection(relay: Arc<Relay>, socket: TcpStream) {
    let _ = socket.set_nodelay(true);
    let Ok(ws) = tokio_tungstenite::accept_async(socket).await else { return };
    let (mut sink, mut stream) = ws.split();
    let (outbox, mut queued) = mpsc::unbounded_channel::<Message>();
    let writer = tokio::spawn(async move {
        while let Some(message) = queued.recv().await {
            if sink.feed(message).await.is_err() {
                return;
            }
            // What else is queued goes out with the same flush.
            while let Ok(message) = queued.try_recv() {
                if sink.feed(message).await.is_err() {
                    return;
                }
            }
            if sink.flush().await.is_err() {
                return;
            }
        }
    });
    let player = format!("p{}", relay.next.fetch_add(1, Ordering::Relaxed));
    while let Some(Ok(message)) = stream.next().await {
        let Message::Text(text) = message else { continue };
        match fogblast_protocol::parse(&text) {
            Ok(request) => relay.answer(&player, &outbox, request),
            Err(bad) => send(&outbox, &ServerFrame::error(bad.code, bad.message, bad.id)),
        }
    }
    writer.abort();
}

fn send(outbox: &Outbox, frame: &ServerFrame) {
    if let Ok(text) = serde_json::to_string(frame) {
        let _ = outbox.send(Message::text(text));
    }
}

fn refuse(outbox: &Outbox, code: ErrorCode, message: &str, id: Option<Id>) {
    send(outbox, &ServerFrame::error(code, message, id));
}

impl Relay {
    fn answer(&self, player: &str, outbox: &Outbox, request: Request) {
        let Request { frame, id } = request;
        match frame {
            ClientFrame::Hello(_) => {
                send(outbox, &ServerFrame::Welcome { player: player.to_owned(), token: String::new(), id });
            }
            ClientFrame::Ping => send(outbox, &ServerFrame::Pong { id }),
            ClientFrame::Create(create) => self.create(outbox, create.variant, id),
            ClientFrame::Join(join) => self.join(outbox, &join.code, id),
            ClientFrame::Move(m) => self.play(outbox, &m.game, &m.uci, m.ply, id),
            ClientFrame::Resign(game) => self.end(outbox, &game.game, EndReason::Resign, id),
            ClientFrame::Abort(game) => self.end(outbox, &game.game, EndReason::Aborted, id),
            other => refuse(outbox, ErrorCode::BadRequest, &format!("the relay has no {}", other.kind()), id),
        }
    }

    fn create(&self, outbox: &Outbox, variant: WireVariant, id: Option<Id>) {
        let Some(variant) = variant.rules() else {
            return refuse(outbox, ErrorCode::BadRequest, "unknown variant", id);
        };
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let (game, code) = (format!("g{n}"), format!("C{n}"));
        let table = Table { game: Game::new(Position::new(variant)), seats: [Some(outbox.clone()), None] };
        self.tables.lock().expect("tables lock").insert(game.clone(), table);
        self.codes.lock().expect("codes lock").insert(code.clone(), game.clone());
        let created = ServerFrame::Created { game, code: Some(code), invite: None, color: Some(Color::White), id };
        send(outbox, &created);
    }

    fn join(&self, outbox: &Outbox, code: &str, id: Option<Id>) {
        let Some(game) = self.codes.lock().expect("codes lock").remove(code) else {
            return refuse(outbox, ErrorCode::NotFound, "no open game has that code", id);
        };
        if let Some(table) = self.tables.lock().expect("tables lock").get_mut(&game) {
            table.seats[1] = Some(outbox.clone());
        }
        send(outbox, &ServerFrame::Joined { game, color: Some(Color::Black), id });
    }

    fn play(&self, outbox: &Outbox, game_id: &str, uci: &str, ply: u32, id: Option<Id>) {
        let mut tables = self.tables.lock().expect("tables lock");
        let Some(table) = tables.get_mut(game_id) else {
            return refuse(outbox, ErrorCode::NotFound, "no such game", id);
        };
        let game = &mut table.game;
        if ply as usize != game.ply() {
            return refuse(outbox, ErrorCode::StalePly, "not the game's ply", id);
        }
        let position = game.position();
        let Some(mv) = uci.parse::<Uci>().ok().and_then(|uci| position.parse_uci(&uci)) else {
            return refuse(outbox, ErrorCode::IllegalMove, "not a legal move here", id);
        };
        if game.play(mv).is_err() {
            return refuse(outbox, ErrorCode::IllegalMove, "not a legal move here", id);
        }
        let position = game.position();
        let legal: Vec<String> =
            position.legal_moves().iter().map(|m| m.to_uci(CastlingMode::Standard).to_string()).collect();
        let frame = MoveFrame {
            game: game_id.to_owned(),
            v: u64::from(ply) + 1,
            ply,
            uci: Some(uci.to_owned()),
            san: None,
            fen: position.fen(),
            visible: Vec::new(),
            exploded: Vec::new(),
            lost: Vec::new(),
            clock: None,
            legal,
            first_move_in_ms: 0,
        };
        let ended = game.outcome();
        let seats = table.seats.clone();
        let end = ended.map(|outcome| {
            let reason = EndReason::from(fogblast_game_service::record::end_reason(outcome));
            end_frame(game_id, &table.game, outcome.result_str(), reason)
        });
        if end.is_some() {
            tables.remove(game_id);
        }
        drop(tables);
        let frame = ServerFrame::Move(Box::new(frame));
        for seat in seats.iter().flatten() {
            send(seat, &frame);
            if let Some(end) = &end {
                send(seat, end);
            }
        }
    }

    fn end(&self, outbox: &Outbox, game_id: &str, reason: EndReason, id: Option<Id>) {
        let Some(table) = self.tables.lock().expect("tables lock").remove(game_id) else {
            return refuse(outbox, ErrorCode::NotFound, "no such game", id);
        };
        let result = match (reason, table.game.position().turn()) {
            (EndReason::Aborted, _) => "*",
            (_, fogblast_rules::Color::White) => "0-1",
            (_, fogblast_rules::Color::Black) => "1-0",
        };
        let frame = end_frame(game_id, &table.game, result, reason);
        for seat in table.seats.iter().flatten() {
            send(seat, &frame);
        }
    }
}

/// The `end` both players get: the result, why, and the whole game.
fn end_frame(game_id: &str, game: &Game, result: &str, reason: EndReason) -> ServerFrame {
    ServerFrame::End(Box::new(EndFrame {
        game: game_id.to_owned(),
        v: game.ply() as u64 + 1,
        result: result.to_owned(),
        reason,
        moves: game.uci_moves(CastlingMode::Standard).split_whitespace().map(str::to_owned).collect(),
        fen: game.position().fen(),
        clock: None,
    }))
}
