//! The server's side of the WebSocket protocol: game states and events
//! from the game service, turned into the typed frames of
//! `fogblast-protocol` (`docs/protocol.md`). Event frames are rendered once
//! per audience and the same bytes go to every socket of that audience.

use axum::extract::ws::Utf8Bytes;
use fogblast_proto::game::event_payload::Kind;
use fogblast_proto::game::offer_event::Kind as OfferKind;
use fogblast_proto::game::{self as proto, Audience, AudienceEvent, EventPayload, GameState, Status, Variant};
use fogblast_protocol::convert::{color, level};
use fogblast_protocol::{
    Clock, EndFrame, MoveFrame, Player, Players, RematchAction, ServerFrame, StateFrame, TimeControl,
};

/// A frame as the text a socket sends.
pub fn text(frame: &ServerFrame) -> Utf8Bytes {
    Utf8Bytes::from(serde_json::to_string(frame).expect("a frame is always JSON"))
}

fn clock(clock: Option<&proto::ClockState>) -> Option<Clock> {
    clock.map(Clock::from)
}

/// A seat's player; an empty seat, or one without an id, is free.
pub fn player(player: Option<&proto::Player>) -> Option<Player> {
    match player {
        Some(player) if player.computer => {
            Some(Player::Computer { name: player.name.clone(), level: level(player.level()) })
        }
        Some(player) if !player.id.is_empty() => {
            Some(Player::Person { id: player.id.clone(), name: player.name.clone() })
        }
        _ => None,
    }
}

/// A `state` frame: the whole game as its receiver may see it.
pub fn state(state: &GameState) -> StateFrame {
    let ended = state.status() == Status::Ended;
    let fog_playing = state.variant() == Variant::Fog && !ended;
    let has_code = !state.code.is_empty();
    StateFrame {
        game: state.game_id.clone(),
        v: state.version,
        variant: state.variant().into(),
        you: state.audience().into(),
        fen: state.fen.clone(),
        visible: fog_playing.then(|| state.visible.clone()),
        moves: state.moves.iter().map(|m| m.uci.clone()).collect(),
        clock: clock(state.clock.as_ref()),
        status: state.status().into(),
        result: ended.then(|| state.result.clone()),
        reason: ended.then(|| state.reason().into()),
        players: Players { white: player(state.white.as_ref()), black: player(state.black.as_ref()) },
        initial_fen: state.initial_fen.clone(),
        chess960: state.chess960,
        rated: state.rated,
        time_control: state.clock_settings.map(TimeControl::from),
        code: has_code.then(|| state.code.clone()),
        invite: has_code.then(|| format!("/g/{}", state.code)),
        draw_offer: color(state.draw_offer()),
        takeback_offer: color(state.takeback_offer()),
        rematch_offer: color(state.rematch_offer()),
        rematch_game: Some(state.rematch_game_id.clone()).filter(|id| !id.is_empty()),
        gone: color(state.gone()),
        claim_in_ms: (state.gone != 0).then_some(state.claim_in_ms),
        legal: state.legal.clone(),
        first_move_in_ms: state.first_move_in_ms,
        chat: state.chat.iter().filter_map(fogblast_protocol::convert::chat_line).collect(),
        tournament: Some(state.tournament_id.clone()).filter(|id| !id.is_empty()),
        berserk: [
            (state.white_berserk, fogblast_protocol::Color::White),
            (state.black_berserk, fogblast_protocol::Color::Black),
        ]
        .into_iter()
        .filter_map(|(berserk, color)| berserk.then_some(color))
        .collect(),
        id: None,
    }
}

/// The frames one event makes for white, black and spectators; `None` for
/// an audience the event says nothing to.
pub fn event(game: &str, version: u64, event: AudienceEvent) -> [Option<Utf8Bytes>; 3] {
    let seats = [Audience::WhiteSeat, Audience::BlackSeat, Audience::Spectators];
    let payloads = [event.white, event.black, event.spectators];
    // Equal payloads render to equal bytes: render once.
    let same_as: [Option<usize>; 3] =
        std::array::from_fn(|i| (0..i).find(|&j| payloads[j] == payloads[i] && !is_presence(&payloads[i])));
    let mut frames: [Option<Utf8Bytes>; 3] = [None, None, None];
    for (i, (audience, payload)) in seats.into_iter().zip(payloads).enumerate() {
        frames[i] = match same_as[i] {
            Some(j) => frames[j].clone(),
            None => payload_frame(game, version, payload, audience).map(|frame| text(&frame)),
        };
    }
    frames
}

fn is_presence(payload: &Option<EventPayload>) -> bool {
    matches!(payload.as_ref().and_then(|p| p.kind.as_ref()), Some(Kind::Presence(_)))
}

fn payload_frame(game: &str, version: u64, payload: Option<EventPayload>, audience: Audience) -> Option<ServerFrame> {
    let kind = payload?.kind?;
    let game = game.to_owned();
    let v = version;
    Some(match kind {
        Kind::Move(m) => ServerFrame::Move(Box::new(MoveFrame {
            game,
            v,
            ply: m.ply,
            clock: clock(m.clock.as_ref()),
            uci: m.uci,
            san: m.san,
            fen: m.fen,
            visible: m.visible,
            exploded: m.exploded,
            lost: m.lost,
            legal: m.legal,
            first_move_in_ms: m.first_move_in_ms,
        })),
        Kind::End(end) => ServerFrame::End(Box::new(EndFrame {
            game,
            v,
            reason: end.reason().into(),
            result: end.result,
            moves: end.moves,
            fen: end.fen,
            clock: clock(end.clock.as_ref()),
        })),
        Kind::Offer(offer) => {
            let by = color(offer.by());
            if offer.kind() == OfferKind::Takeback {
                ServerFrame::Takeback { game, v, action: offer.action().into(), by }
            } else {
                ServerFrame::Draw { game, v, action: offer.action().into(), by }
            }
        }
        Kind::Seat(seat) => ServerFrame::Seated {
            game,
            v,
            color: color(seat.color()),
            player: player(seat.player.as_ref()),
            legal: seat.legal,
            first_move_in_ms: seat.first_move_in_ms,
        },
        Kind::Presence(presence) => {
            // Told to the other seat only: it is the one who may claim.
            let other = match presence.color() {
                proto::Color::White => Audience::BlackSeat,
                proto::Color::Black => Audience::WhiteSeat,
                proto::Color::Unspecified => return None,
            };
            if audience != other {
                return None;
            }
            if presence.gone {
                ServerFrame::OpponentGone { game, v, claim_in_ms: presence.claim_in_ms }
            } else {
                ServerFrame::OpponentBack { game, v }
            }
        }
        Kind::State(game_state) => ServerFrame::State(Box::new(state(&game_state))),
        Kind::Chat(line) => ServerFrame::Chat { game, v, line: fogblast_protocol::convert::chat_line(&line)? },
        Kind::Berserk(berserk) => {
            ServerFrame::Berserk { game, v, color: color(berserk.color()), clock: clock(berserk.clock.as_ref()) }
        }
        Kind::TimeGiven(given) => {
            ServerFrame::TimeGiven { game, v, by: color(given.by()), clock: clock(given.clock.as_ref()) }
        }
        Kind::Rematch(rematch) => ServerFrame::Rematch {
            game,
            v,
            by: color(rematch.by()),
            new_game: Some(rematch.game_id).filter(|id| !id.is_empty()),
            action: rematch.declined.then_some(RematchAction::Decline),
        },
    })
}

#[cfg(test)]
mod tests {
    use fogblast_proto::game::{
        ClockSettings, ClockState, Color, EndReason, MoveEvent, MoveView, PresenceEvent, RematchEvent,
    };
    use serde_json::{json, Value};

    use super::*;

    fn written(frame: &ServerFrame) -> Value {
        serde_json::to_value(frame).unwrap()
    }

    fn waiting_game() -> GameState {
        GameState {
            game_id: "g1".into(),
            version: 1,
            variant: Variant::Standard as i32,
            audience: Audience::WhiteSeat as i32,
            initial_fen: "start".into(),
            fen: "start".into(),
            clock_settings: Some(ClockSettings { initial_ms: 60_000, increment_ms: 0 }),
            clock: Some(ClockState { white_ms: 60_000, black_ms: 60_000, running: 0 }),
            status: Status::Waiting as i32,
            white: Some(proto::Player { id: "p1".into(), name: "alice".into(), computer: false, level: 0 }),
            code: "ABCDEFGH".into(),
            ..GameState::default()
        }
    }

    #[test]
    fn a_state_leaves_out_what_does_not_apply_and_writes_null_for_what_is_unset() {
        let frame = ServerFrame::State(Box::new(state(&waiting_game())));
        let expected = json!({
            "t": "state", "game": "g1", "v": 1, "variant": "standard", "you": "white", "fen": "start",
            "moves": [], "clock": {"white_ms": 60000, "black_ms": 60000, "running": null}, "status": "waiting",
            "players": {"white": {"id": "p1", "name": "alice", "computer": false}, "black": null},
            "initial_fen": "start", "chess960": false, "rated": false,
            "time_control": {"initial_ms": 60000, "increment_ms": 0},
            "code": "ABCDEFGH", "invite": "/g/ABCDEFGH",
            "draw_offer": null, "takeback_offer": null, "rematch_offer": null,
        });
        assert_eq!(written(&frame), expected);
    }

    #[test]
    fn a_fog_spectator_sees_an_empty_visible_list_and_an_ended_game_its_result() {
        let fog = GameState {
            variant: Variant::Fog as i32,
            audience: Audience::Spectators as i32,
            status: Status::Playing as i32,
            code: String::new(),
            moves: vec![MoveView { uci: None }],
            gone: Color::Black as i32,
            claim_in_ms: 1787,
            first_move_in_ms: 20_000,
            ..waiting_game()
        };
        let frame = written(&ServerFrame::State(Box::new(state(&fog))));
        assert_eq!(
            (&frame["you"], &frame["visible"], &frame["moves"]),
            (&json!("spectator"), &json!([]), &json!([null]))
        );
        assert_eq!(
            (&frame["gone"], &frame["claim_in_ms"], &frame["first_move_in_ms"]),
            (&json!("black"), &json!(1787), &json!(20000))
        );
        assert!(frame.get("code").is_none() && frame.get("invite").is_none() && frame.get("result").is_none());

        let ended = GameState {
            status: Status::Ended as i32,
            result: "1-0".into(),
            reason: EndReason::NoMoves as i32,
            gone: 0,
            ..fog
        };
        let frame = written(&ServerFrame::State(Box::new(state(&ended))));
        assert_eq!((&frame["result"], &frame["reason"]), (&json!("1-0"), &json!("stalemate")));
        assert!(frame.get("visible").is_none() && frame.get("gone").is_none() && frame.get("claim_in_ms").is_none());
    }

    #[test]
    fn events_go_to_the_audiences_they_concern() {
        let payload = |kind| Some(EventPayload { kind: Some(kind) });
        let hidden = MoveEvent { ply: 2, uci: None, fen: "f".into(), ..MoveEvent::default() };
        let seen = MoveEvent { uci: Some("e4f5".into()), san: Some("exf5".into()), lost: vec![], ..hidden.clone() };
        let moved = AudienceEvent {
            white: payload(Kind::Move(seen)),
            black: payload(Kind::Move(MoveEvent { lost: vec!["f5".into()], ..hidden.clone() })),
            spectators: payload(Kind::Move(hidden)),
        };
        let [white, black, spectators] =
            event("g1", 5, moved.clone()).map(|f| serde_json::from_str::<Value>(&f.unwrap()).unwrap());
        assert_eq!(
            white,
            json!({"t": "move", "game": "g1", "v": 5, "ply": 2, "uci": "e4f5", "san": "exf5", "fen": "f", "clock": null})
        );
        assert_eq!(
            black,
            json!({"t": "move", "game": "g1", "v": 5, "ply": 2, "uci": null, "fen": "f", "lost": ["f5"], "clock": null})
        );
        assert_eq!(
            spectators,
            json!({"t": "move", "game": "g1", "v": 5, "ply": 2, "uci": null, "fen": "f", "clock": null})
        );

        let gone =
            payload(Kind::Presence(PresenceEvent { color: Color::White as i32, gone: true, claim_in_ms: 30_000 }));
        let presence = AudienceEvent { white: gone.clone(), black: gone.clone(), spectators: gone };
        let frames = event("g1", 6, presence.clone());
        assert!(frames[0].is_none() && frames[2].is_none());
        assert_eq!(frames[1].as_deref(), Some(r#"{"t":"opponent_gone","game":"g1","v":6,"claim_in_ms":30000}"#));

        let offered =
            payload(Kind::Rematch(RematchEvent { by: Color::Black as i32, game_id: String::new(), declined: false }));
        let rematch = AudienceEvent { white: offered.clone(), black: offered.clone(), spectators: offered };
        let frames = event("g1", 7, rematch.clone());
        assert_eq!(frames[2].as_deref(), Some(r#"{"t":"rematch","game":"g1","v":7,"by":"black"}"#));
        let declined =
            payload(Kind::Rematch(RematchEvent { by: Color::White as i32, game_id: String::new(), declined: true }));
        let rematch = AudienceEvent { white: declined.clone(), black: declined.clone(), spectators: declined };
        let frames = event("g1", 8, rematch.clone());
        assert_eq!(frames[1].as_deref(), Some(r#"{"t":"rematch","game":"g1","v":8,"by":"white","action":"decline"}"#));
    }
}
