//! The public stream's events (`fogblast.events.v1.GameEvent`,
//! docs/events.md), cut from what spectators are sent: each committed
//! event's spectator payload is the only input, so the stream can tell an
//! outside service nothing a spectator could not see. In fog of war that
//! means a move without squares until the end, which lifts the fog.

use fogblast_proto::events::game_event::Kind;
use fogblast_proto::events::{Created, Finished, GameEvent, Moved, PublicPlayer, Started, TakenBack};
use fogblast_proto::game::event_payload::Kind as Payload;
use fogblast_proto::game::{watch_event, Player, Variant, WatchEvent};
use fogblast_proto::public_events::kind_token;

use fogblast_proto::record::GameRecord;

/// The public events of a commit's watch events, in order. `game` is the
/// game's record after the commit (its id, variant and seats, which never
/// change once set; its moves are not read), `at_ms` the commit's time.
pub fn public_events(game: &GameRecord, events: &[WatchEvent], at_ms: u64) -> Vec<GameEvent> {
    let mut out = Vec::new();
    for event in events {
        let Some(watch_event::Kind::Event(audience)) = &event.kind else { continue };
        let Some(payload) = audience.spectators.as_ref().and_then(|p| p.kind.as_ref()) else { continue };
        for kind in kinds(game, event.version, payload) {
            out.push(GameEvent {
                event_id: format!("{}/{}/{}", game.game_id, event.version, kind_token(&kind)),
                game_id: game.game_id.clone(),
                version: event.version,
                at_ms,
                variant: game.variant,
                kind: Some(kind),
            });
        }
    }
    out
}

fn kinds(game: &GameRecord, version: u64, payload: &Payload) -> Vec<Kind> {
    match payload {
        // The game's first event is its whole state.
        Payload::State(state) if version == 1 => {
            let created = Kind::Created(Created {
                chess960: state.chess960,
                initial_fen: state.initial_fen.clone(),
                rated: state.rated,
                clock: state.clock_settings,
                white: seated(state.white.as_ref()),
                black: seated(state.black.as_ref()),
            });
            if seated(state.white.as_ref()).is_some() && seated(state.black.as_ref()).is_some() {
                let started = Started { white: seated(state.white.as_ref()), black: seated(state.black.as_ref()) };
                vec![created, Kind::Started(started)]
            } else {
                vec![created]
            }
        }
        Payload::State(state) => {
            let fen = if game.variant == Variant::Fog as i32 { String::new() } else { state.fen.clone() };
            let ply = u32::try_from(state.moves.len()).unwrap_or(u32::MAX);
            vec![Kind::TakenBack(TakenBack { ply, fen })]
        }
        Payload::Seat(_) => {
            let white = seated(game.white.as_ref().and_then(|s| s.player.as_ref()));
            let black = seated(game.black.as_ref().and_then(|s| s.player.as_ref()));
            if white.is_some() && black.is_some() {
                vec![Kind::Started(Started { white, black })]
            } else {
                Vec::new()
            }
        }
        Payload::Move(moved) => vec![Kind::Moved(Moved {
            ply: moved.ply,
            uci: moved.uci.clone(),
            san: moved.san.clone(),
            // A spectator's fog board is empty; the stream leaves it out.
            fen: if moved.uci.is_some() { moved.fen.clone() } else { String::new() },
            exploded: moved.exploded.clone(),
            clock: moved.clock,
        })],
        Payload::End(end) => vec![Kind::Finished(Finished {
            result: end.result.clone(),
            reason: end.reason,
            moves: end.moves.clone(),
            final_fen: end.fen.clone(),
            clock: end.clock,
        })],
        // Chat is for those following the game, not the site's stream.
        Payload::Offer(_)
        | Payload::Presence(_)
        | Payload::Rematch(_)
        | Payload::Chat(_)
        | Payload::Berserk(_)
        | Payload::TimeGiven(_) => Vec::new(),
    }
}

/// A seat's player, or `None` while the seat is free.
fn seated(player: Option<&Player>) -> Option<PublicPlayer> {
    let player = player?;
    (!player.id.is_empty() || player.computer).then(|| PublicPlayer {
        id: player.id.clone(),
        name: player.name.clone(),
        computer: player.computer,
        level: player.level,
    })
}

#[cfg(test)]
mod tests {
    use fogblast_proto::game::{AudienceEvent, ClockState, EventPayload, GameState, TimeGivenEvent};

    use super::*;

    fn watch_event(version: u64, kind: Payload) -> WatchEvent {
        let payload = EventPayload { kind: Some(kind) };
        let event = AudienceEvent { white: None, black: None, spectators: Some(payload) };
        WatchEvent { version, kind: Some(watch_event::Kind::Event(event)) }
    }

    /// Time given is for those in the game: the site's stream hears
    /// nothing of it, where a state after the first would be a takeback.
    #[test]
    fn time_given_is_not_on_the_public_stream_and_a_later_state_is_a_takeback() {
        let game = GameRecord { game_id: "g1".into(), ..Default::default() };
        let clock = ClockState { white_ms: 75_000, black_ms: 60_000, running: 0 };
        let given = watch_event(5, Payload::TimeGiven(TimeGivenEvent { by: 2, clock: Some(clock) }));
        assert!(public_events(&game, &[given], 0).is_empty());
        let state = watch_event(5, Payload::State(GameState::default()));
        let taken_back = public_events(&game, &[state], 0);
        assert!(matches!(taken_back.as_slice(), [GameEvent { kind: Some(Kind::TakenBack(_)), .. }]), "{taken_back:?}");
    }
}
