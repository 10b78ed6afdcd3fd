//! What each audience may see. In standard and atomic everyone sees the
//! same thing; in fog of war each seat sees only its own view, spectators
//! see no pieces and no moves, and once the game ends the fog lifts for
//! everyone. Every byte a client receives about a game is cut here, so the
//! fog is kept in one place and tested in one place.

use fogblast_proto::game::event_payload::Kind;
use fogblast_proto::game::offer_event::Kind as OfferKind;
use fogblast_proto::game::{
    Audience, AudienceEvent, BerserkEvent, ChatRoom, EndEvent, EventPayload, GameState, MoveEvent, MoveView,
    OfferEvent, PresenceEvent, RematchEvent, SeatEvent, Status, TimeGivenEvent, Variant as WireVariant,
};
use fogblast_rules::{Bitboard, Board, Color, Fen, Position, Setup, Variant};

use crate::commands::{castling_mode, wire, Event};
use crate::config::Timeouts;
use crate::record::{color_to_wire, LiveGame};

/// One audience of a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Viewer {
    Seat(Color),
    Spectator,
}

impl Viewer {
    pub const ALL: [Viewer; 3] = [Viewer::Seat(Color::White), Viewer::Seat(Color::Black), Viewer::Spectator];

    fn audience(self) -> Audience {
        match self {
            Viewer::Seat(Color::White) => Audience::WhiteSeat,
            Viewer::Seat(Color::Black) => Audience::BlackSeat,
            Viewer::Spectator => Audience::Spectators,
        }
    }
}

/// Whether the fog still hides anything in this game.
fn fogged(live: &LiveGame) -> bool {
    live.variant() == Variant::Fog && live.status() != Status::Ended
}

/// The position as `viewer` may see it, FEN with fogged squares empty, and
/// the squares it sees (empty when nothing is hidden).
fn board_view(position: &Position, viewer: Viewer, fog: bool) -> (String, Vec<String>) {
    if !fog {
        return (Fen::from_position(position).to_string(), Vec::new());
    }
    match viewer {
        Viewer::Seat(color) => {
            let view = position.fog_view(color);
            let setup = Setup::from(&view);
            (Fen(setup).to_string(), square_names(view.visible))
        }
        Viewer::Spectator => {
            let setup = Setup {
                board: Board::empty(),
                turn: position.turn(),
                castling_rooks: Bitboard::EMPTY,
                ep_square: None,
                halfmoves: 0,
                fullmoves: position.fullmoves(),
            };
            (Fen(setup).to_string(), Vec::new())
        }
    }
}

/// The legal moves of `position` in UCI for `viewer` when it is the seat
/// to move in a game being played; nothing otherwise. A fog player's moves
/// only reach squares that player sees, so they reveal nothing hidden.
fn legal_for(live: &LiveGame, position: &Position, viewer: Viewer) -> Vec<String> {
    if live.status() != Status::Playing || viewer != Viewer::Seat(position.turn()) {
        return Vec::new();
    }
    let mode = castling_mode(live);
    position.legal_moves().iter().map(|m| m.to_uci(mode).text()).collect()
}

fn square_names(squares: Bitboard) -> Vec<String> {
    squares.into_iter().map(|sq| sq.name().to_owned()).collect()
}

/// The whole game as `viewer` may see it, at version `version`.
pub fn state_for(live: &LiveGame, version: u64, viewer: Viewer, now_ms: u64, timeouts: &Timeouts) -> GameState {
    let record = &live.record;
    let fog = fogged(live);
    let (fen, visible) = board_view(live.game.position(), viewer, fog);
    let initial_turn = live.game.initial().turn();
    let moves = record
        .moves
        .iter()
        .enumerate()
        .map(|(ply, uci)| {
            let mover = if ply.is_multiple_of(2) { initial_turn } else { !initial_turn };
            let known = !fog || viewer == Viewer::Seat(mover);
            MoveView { uci: known.then(|| uci.clone()) }
        })
        .collect();
    let seated = matches!(viewer, Viewer::Seat(_));
    let gone = Color::ALL.into_iter().find(|&c| live.seat(c).gone_since_ms != 0 && live.status() == Status::Playing);
    let claim_in_ms = gone.map_or(0, |c| (live.seat(c).gone_since_ms + timeouts.claim_after_ms).saturating_sub(now_ms));
    let player = |c: Color| live.seat(c).player.clone().unwrap_or_default();
    GameState {
        game_id: record.game_id.clone(),
        version,
        variant: WireVariant::from(live.variant()) as i32,
        chess960: record.chess960,
        audience: viewer.audience() as i32,
        initial_fen: record.initial_fen.clone(),
        fen,
        visible,
        moves,
        clock_settings: record.clock,
        clock: live.clock_at(now_ms),
        status: record.status,
        result: record.result.clone(),
        reason: record.reason,
        white: Some(player(Color::White)),
        black: Some(player(Color::Black)),
        rated: record.rated,
        code: if seated && live.status() == Status::Waiting { record.code.clone() } else { String::new() },
        draw_offer: record.draw_offer,
        takeback_offer: record.takeback_offer,
        rematch_offer: record.rematch_offer,
        rematch_game_id: record.rematch_game_id.clone(),
        gone: gone.map_or(0, |c| color_to_wire(c) as i32),
        claim_in_ms,
        legal: legal_for(live, live.game.position(), viewer),
        first_move_in_ms: first_move_in_ms(live, now_ms, timeouts),
        created_at_ms: record.created_at_ms,
        chat: record.chat.iter().filter(|line| reads_room(line.room(), viewer)).cloned().collect(),
        tournament_id: record.tournament_id.clone(),
        white_berserk: live.seat(Color::White).berserk,
        black_berserk: live.seat(Color::Black).berserk,
    }
}

/// The time left before a game between people is aborted for a missing
/// first move; 0 when no such deadline runs.
fn first_move_in_ms(live: &LiveGame, now_ms: u64, timeouts: &Timeouts) -> u64 {
    live.first_move_due_ms(timeouts.no_start_ms).map_or(0, |due| due.saturating_sub(now_ms))
}

/// Every audience's view of the whole game, for a snapshot.
pub fn snapshot(live: &LiveGame, version: u64, now_ms: u64, timeouts: &Timeouts) -> [GameState; 3] {
    Viewer::ALL.map(|viewer| state_for(live, version, viewer, now_ms, timeouts))
}

/// One event as each audience may see it. `live` is the game after the
/// commit that made the event, `version` the event's own version.
pub fn event_for_all(live: &LiveGame, event: &Event, version: u64, now_ms: u64, timeouts: &Timeouts) -> AudienceEvent {
    // Without fog every audience sees the same board: written once.
    let shared_fen = match event {
        Event::Moved { after, .. } if live.variant() != Variant::Fog => Some(Fen::from_position(after).to_string()),
        _ => None,
    };
    let [white, black, spectators] = Viewer::ALL.map(|viewer| {
        if !reads(event, viewer) {
            return None;
        }
        let kind = payload(live, event, version, viewer, now_ms, timeouts, shared_fen.as_deref());
        Some(EventPayload { kind: Some(kind) })
    });
    AudienceEvent { white, black, spectators }
}

/// Whether `viewer` hears of `event` at all: the players' chat room is
/// the seats' alone.
fn reads(event: &Event, viewer: Viewer) -> bool {
    match event {
        Event::Chat(line) => reads_room(line.room(), viewer),
        _ => true,
    }
}

fn reads_room(room: ChatRoom, viewer: Viewer) -> bool {
    room != ChatRoom::Players || matches!(viewer, Viewer::Seat(_))
}

/// `shared_fen`: the board after a move when every audience sees all of it.
fn payload(
    live: &LiveGame,
    event: &Event,
    version: u64,
    viewer: Viewer,
    now_ms: u64,
    timeouts: &Timeouts,
    shared_fen: Option<&str>,
) -> Kind {
    match event {
        Event::Moved { ply, uci, san, effects, after, clock } => {
            // The fog is judged on the variant alone: a move that ends the
            // game is still shown in fog, and the end event lifts it.
            let fog = live.variant() == Variant::Fog;
            let (fen, visible) = match shared_fen {
                Some(fen) => (fen.to_owned(), Vec::new()),
                None => board_view(after, viewer, fog),
            };
            let sees_move = !fog || viewer == Viewer::Seat(effects.mover);
            let mut exploded = Vec::new();
            if !fog && effects.explosion.is_some() {
                // The capturer dies on the captured square: name each square once.
                let cleared = effects.captured.iter().chain(effects.exploded.iter()).map(|&(sq, _)| sq);
                exploded = square_names(cleared.fold(Bitboard::EMPTY, |all, sq| all | sq));
            }
            let lost = match viewer {
                Viewer::Seat(color) if fog && color != effects.mover => {
                    let seen = after.visible_squares(color);
                    effects
                        .removed_pieces_of(color)
                        .filter(|&(sq, _)| !seen.contains(sq))
                        .map(|(sq, _)| sq.name().to_owned())
                        .collect()
                }
                _ => Vec::new(),
            };
            Kind::Move(MoveEvent {
                ply: *ply,
                uci: sees_move.then(|| uci.clone()),
                fen,
                visible,
                exploded,
                lost,
                clock: *clock,
                san: sees_move.then(|| san.clone()),
                legal: legal_for(live, after, viewer),
                first_move_in_ms: first_move_in_ms(live, now_ms, timeouts),
            })
        }
        Event::Ended { clock } => Kind::End(EndEvent {
            result: live.record.result.clone(),
            reason: live.record.reason,
            moves: live.record.moves.clone(),
            fen: live.fen(),
            clock: *clock,
        }),
        Event::Offer { takeback, action, by } => Kind::Offer(OfferEvent {
            kind: if *takeback { OfferKind::Takeback } else { OfferKind::Draw } as i32,
            action: *action as i32,
            by: wire(*by),
        }),
        Event::Seated { color } => Kind::Seat(SeatEvent {
            color: wire(*color),
            player: live.seat(*color).player.clone(),
            legal: legal_for(live, live.game.position(), viewer),
            first_move_in_ms: first_move_in_ms(live, now_ms, timeouts),
        }),
        Event::Presence { color, gone, claim_in_ms } => {
            Kind::Presence(PresenceEvent { color: wire(*color), gone: *gone, claim_in_ms: *claim_in_ms })
        }
        Event::Reset => Kind::State(state_for(live, version, viewer, now_ms, timeouts)),
        Event::Rematch { by, game_id } => {
            Kind::Rematch(RematchEvent { by: wire(*by), game_id: game_id.clone(), declined: false })
        }
        Event::Chat(line) => Kind::Chat(line.clone()),
        Event::Berserk { color, clock } => Kind::Berserk(BerserkEvent { color: wire(*color), clock: *clock }),
        Event::TimeGiven { by, clock } => Kind::TimeGiven(TimeGivenEvent { by: wire(*by), clock: *clock }),
        Event::RematchDeclined { by } => {
            Kind::Rematch(RematchEvent { by: wire(*by), game_id: String::new(), declined: true })
        }
    }
}
