//! The server's side of the WebSocket protocol: game states and events
//! from the game service, turned into the JSON frames of
//! `docs/protocol.md`. Event frames are rendered once per audience and the
//! same bytes go to every socket of that audience.

use axum::extract::ws::Utf8Bytes;
use fogblast_proto::game::event_payload::Kind;
use fogblast_proto::game::offer_event::Kind as OfferKind;
use fogblast_proto::game::{
    Audience, AudienceEvent, ClockState, Color, EndReason, EventPayload, GameState, Level, OfferAction, Player, Status,
    Variant,
};
use serde_json::{json, Map, Value};

pub fn text(value: &Value) -> Utf8Bytes {
    Utf8Bytes::from(value.to_string())
}

pub fn variant_name(variant: Variant) -> &'static str {
    match variant {
        Variant::Standard => "standard",
        Variant::Atomic => "atomic",
        Variant::Fog => "fog",
        Variant::Unspecified => "unknown",
    }
}

pub fn color_name(color: Color) -> Option<&'static str> {
    match color {
        Color::White => Some("white"),
        Color::Black => Some("black"),
        Color::Unspecified => None,
    }
}

fn color_value(color: i32) -> Value {
    Color::try_from(color).ok().and_then(color_name).map_or(Value::Null, Value::from)
}

pub fn level_name(level: Level) -> Option<&'static str> {
    match level {
        Level::Easy => Some("easy"),
        Level::Medium => Some("medium"),
        Level::Hard => Some("hard"),
        Level::Unspecified => None,
    }
}

pub fn reason_name(reason: EndReason) -> &'static str {
    match reason {
        EndReason::Explosion => "explosion",
        EndReason::Checkmate => "checkmate",
        EndReason::KingCaptured => "king_captured",
        EndReason::Stalemate | EndReason::NoMoves => "stalemate",
        EndReason::Threefold => "threefold",
        EndReason::FiftyMoves => "fifty_moves",
        EndReason::InsufficientMaterial => "insufficient_material",
        EndReason::Timeout => "timeout",
        EndReason::Resign => "resign",
        EndReason::Agreement => "agreement",
        EndReason::Abandoned => "abandoned",
        EndReason::Aborted => "aborted",
        EndReason::Unspecified => "unknown",
    }
}

fn status_name(status: Status) -> &'static str {
    match status {
        Status::Waiting => "waiting",
        Status::Playing => "playing",
        Status::Ended => "ended",
        Status::Unspecified => "unknown",
    }
}

fn you(audience: Audience) -> &'static str {
    match audience {
        Audience::WhiteSeat => "white",
        Audience::BlackSeat => "black",
        _ => "spectator",
    }
}

pub fn clock_value(clock: Option<&ClockState>) -> Value {
    match clock {
        Some(clock) => json!({
            "white_ms": clock.white_ms,
            "black_ms": clock.black_ms,
            "running": color_value(clock.running),
        }),
        None => Value::Null,
    }
}

fn player_value(player: Option<&Player>) -> Value {
    match player {
        Some(player) if player.computer => json!({
            "name": player.name,
            "computer": true,
            "level": Level::try_from(player.level).ok().and_then(level_name),
        }),
        Some(player) if !player.id.is_empty() => json!({ "id": player.id, "name": player.name, "computer": false }),
        _ => Value::Null,
    }
}

/// A `state` frame: the whole game as its receiver may see it.
pub fn state(state: &GameState) -> Value {
    let fog_playing = state.variant() == Variant::Fog && state.status() != Status::Ended;
    let mut frame = Map::new();
    frame.insert("t".into(), "state".into());
    frame.insert("game".into(), state.game_id.clone().into());
    frame.insert("v".into(), state.version.into());
    frame.insert("variant".into(), variant_name(state.variant()).into());
    frame.insert("you".into(), you(state.audience()).into());
    frame.insert("fen".into(), state.fen.clone().into());
    if fog_playing {
        frame.insert("visible".into(), state.visible.clone().into());
    }
    let moves: Vec<Value> = state.moves.iter().map(|m| m.uci.clone().map_or(Value::Null, Value::from)).collect();
    frame.insert("moves".into(), moves.into());
    frame.insert("clock".into(), clock_value(state.clock.as_ref()));
    frame.insert("status".into(), status_name(state.status()).into());
    if state.status() == Status::Ended {
        frame.insert("result".into(), state.result.clone().into());
        frame.insert("reason".into(), reason_name(state.reason()).into());
    }
    frame.insert(
        "players".into(),
        json!({ "white": player_value(state.white.as_ref()), "black": player_value(state.black.as_ref()) }),
    );
    frame.insert("initial_fen".into(), state.initial_fen.clone().into());
    frame.insert("chess960".into(), state.chess960.into());
    frame.insert("rated".into(), state.rated.into());
    frame.insert(
        "time_control".into(),
        state
            .clock_settings
            .map_or(Value::Null, |c| json!({ "initial_ms": c.initial_ms, "increment_ms": c.increment_ms })),
    );
    if !state.code.is_empty() {
        frame.insert("code".into(), state.code.clone().into());
        frame.insert("invite".into(), format!("/g/{}", state.code).into());
    }
    frame.insert("draw_offer".into(), color_value(state.draw_offer));
    frame.insert("takeback_offer".into(), color_value(state.takeback_offer));
    frame.insert("rematch_offer".into(), color_value(state.rematch_offer));
    if !state.rematch_game_id.is_empty() {
        frame.insert("rematch_game".into(), state.rematch_game_id.clone().into());
    }
    if state.gone != 0 {
        frame.insert("gone".into(), color_value(state.gone));
        frame.insert("claim_in_ms".into(), state.claim_in_ms.into());
    }
    if !state.legal.is_empty() {
        frame.insert("legal".into(), state.legal.clone().into());
    }
    if state.first_move_in_ms != 0 {
        frame.insert("first_move_in_ms".into(), state.first_move_in_ms.into());
    }
    Value::Object(frame)
}

/// The frames one event makes for white, black and spectators; `None` for
/// an audience the event says nothing to.
pub fn event(game: &str, version: u64, event: &AudienceEvent) -> [Option<Utf8Bytes>; 3] {
    let seats = [Audience::WhiteSeat, Audience::BlackSeat, Audience::Spectators];
    let payloads = [&event.white, &event.black, &event.spectators];
    let mut frames: [Option<Utf8Bytes>; 3] = [None, None, None];
    for (i, (audience, payload)) in seats.into_iter().zip(payloads).enumerate() {
        // Equal payloads render to equal bytes: render once.
        if let Some(j) = (0..i).find(|&j| payloads[j] == payload && !is_presence(payload)) {
            frames[i] = frames[j].clone();
            continue;
        }
        frames[i] = payload_frame(game, version, payload.as_ref(), audience).map(|v| text(&v));
    }
    frames
}

fn is_presence(payload: &Option<EventPayload>) -> bool {
    matches!(payload.as_ref().and_then(|p| p.kind.as_ref()), Some(Kind::Presence(_)))
}

fn payload_frame(game: &str, version: u64, payload: Option<&EventPayload>, audience: Audience) -> Option<Value> {
    let kind = payload?.kind.as_ref()?;
    Some(match kind {
        Kind::Move(m) => {
            let mut frame = json!({
                "t": "move", "game": game, "v": version, "ply": m.ply,
                "uci": m.uci, "fen": m.fen, "clock": clock_value(m.clock.as_ref()),
            });
            let object = frame.as_object_mut().expect("an object");
            if let Some(san) = &m.san {
                object.insert("san".into(), san.clone().into());
            }
            if !m.visible.is_empty() {
                object.insert("visible".into(), m.visible.clone().into());
            }
            if !m.exploded.is_empty() {
                object.insert("exploded".into(), m.exploded.clone().into());
            }
            if !m.lost.is_empty() {
                object.insert("lost".into(), m.lost.clone().into());
            }
            if !m.legal.is_empty() {
                object.insert("legal".into(), m.legal.clone().into());
            }
            if m.first_move_in_ms != 0 {
                object.insert("first_move_in_ms".into(), m.first_move_in_ms.into());
            }
            frame
        }
        Kind::End(end) => json!({
            "t": "end", "game": game, "v": version, "result": end.result,
            "reason": reason_name(end.reason()), "moves": end.moves, "fen": end.fen,
            "clock": clock_value(end.clock.as_ref()),
        }),
        Kind::Offer(offer) => {
            let takeback = offer.kind() == OfferKind::Takeback;
            let action = match (offer.action(), takeback) {
                (OfferAction::Offer, true) => "request",
                (OfferAction::Offer, false) => "offer",
                (OfferAction::Accept, _) => "accept",
                _ => "decline",
            };
            json!({
                "t": if takeback { "takeback" } else { "draw" }, "game": game, "v": version,
                "action": action, "by": color_value(offer.by),
            })
        }
        Kind::Seat(seat) => {
            let mut frame = json!({
                "t": "seated", "game": game, "v": version, "color": color_value(seat.color),
                "player": player_value(seat.player.as_ref()),
            });
            let object = frame.as_object_mut().expect("an object");
            if !seat.legal.is_empty() {
                object.insert("legal".into(), seat.legal.clone().into());
            }
            if seat.first_move_in_ms != 0 {
                object.insert("first_move_in_ms".into(), seat.first_move_in_ms.into());
            }
            frame
        }
        Kind::Presence(presence) => {
            // Told to the other seat only: it is the one who may claim.
            let other = match Color::try_from(presence.color) {
                Ok(Color::White) => Audience::BlackSeat,
                Ok(Color::Black) => Audience::WhiteSeat,
                _ => return None,
            };
            if audience != other {
                return None;
            }
            if presence.gone {
                json!({ "t": "opponent_gone", "game": game, "v": version, "claim_in_ms": presence.claim_in_ms })
            } else {
                json!({ "t": "opponent_back", "game": game, "v": version })
            }
        }
        Kind::State(game_state) => state(game_state),
        Kind::Rematch(rematch) => {
            let mut frame = json!({ "t": "rematch", "game": game, "v": version, "by": color_value(rematch.by) });
            if !rematch.game_id.is_empty() {
                frame.as_object_mut().expect("an object").insert("new_game".into(), rematch.game_id.clone().into());
            }
            frame
        }
    })
}

/// An `error` frame.
pub fn error(code: &str, message: &str, id: Option<&Value>) -> Value {
    let mut frame = json!({ "t": "error", "code": code, "message": message });
    if let Some(id) = id {
        frame.as_object_mut().expect("an object").insert("id".into(), id.clone());
    }
    frame
}
