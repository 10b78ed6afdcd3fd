//! The public stream's tournament events (`TournamentEvent`,
//! docs/events.md): their subjects and JSON rendering. The matchmaker
//! replica driving a tournament publishes each event twice, as protobuf
//! and as JSON, on parallel subjects `tournaments.public.<encoding>.<kind>`,
//! kind `created`, `started`, `standings` or `finished`.

use serde_json::{json, Map, Value};

use crate::events::tournament_event::Kind;
use crate::events::{TournamentEvent, TournamentInfo, TournamentStanding};
use crate::public_events::{variant_token, Encoding};

/// Every tournament subject starts with this.
pub const TOURNAMENT_PREFIX: &str = "tournaments.public";

/// The schema every payload follows, in the `Fogblast-Schema` header.
pub const SCHEMA: &str = "fogblast.events.v1.TournamentEvent";

/// The standings lines an event carries at most.
pub const TOP_LINES: usize = 10;

/// The subject token of an event's kind.
pub fn kind_token(kind: &Kind) -> &'static str {
    match kind {
        Kind::Created(_) => "created",
        Kind::Started(_) => "started",
        Kind::Standings(_) => "standings",
        Kind::Finished(_) => "finished",
    }
}

/// The subject an event travels on in `encoding`.
pub fn subject(event: &TournamentEvent, encoding: Encoding) -> String {
    let kind = event.kind.as_ref().map_or("unknown", kind_token);
    format!("{TOURNAMENT_PREFIX}.{}.{kind}", encoding.token())
}

/// The subject filter for every tournament event in `encoding`.
pub fn filter(encoding: Encoding) -> String {
    format!("{TOURNAMENT_PREFIX}.{}.*", encoding.token())
}

/// The stream's message id of an event in `encoding`.
pub fn message_id(event: &TournamentEvent, encoding: Encoding) -> String {
    format!("{}/{}", event.event_id, encoding.token())
}

/// The event as JSON, as the game events are rendered: protobuf field
/// names, enums as lowercase names, the body under its kind's field name.
pub fn to_json(event: &TournamentEvent) -> Value {
    let mut out = Map::new();
    out.insert("event_id".into(), json!(event.event_id));
    out.insert("tournament_id".into(), json!(event.tournament_id));
    out.insert("at_ms".into(), json!(event.at_ms));
    if let Some(info) = &event.info {
        out.insert("info".into(), info_json(info));
    }
    let Some(kind) = &event.kind else { return Value::Object(out) };
    out.insert("kind".into(), json!(kind_token(kind)));
    let (field, body) = match kind {
        Kind::Created(_) => ("created", json!({})),
        Kind::Started(started) => ("started", json!({ "players": started.players })),
        Kind::Standings(standings) => (
            "standings",
            json!({
                "players": standings.players,
                "top": standings.top.iter().map(standing_json).collect::<Vec<_>>(),
                "round": standings.round,
            }),
        ),
        Kind::Finished(finished) => (
            "finished",
            json!({
                "players": finished.players,
                "top": finished.top.iter().map(standing_json).collect::<Vec<_>>(),
            }),
        ),
    };
    out.insert(field.into(), body);
    Value::Object(out)
}

fn info_json(info: &TournamentInfo) -> Value {
    json!({
        "name": info.name,
        "system": info.system,
        "variant": variant_token(info.variant()),
        "chess960": info.chess960,
        "clock": info.clock.as_ref().map(|c| json!({ "initial_ms": c.initial_ms, "increment_ms": c.increment_ms })),
        "rated": info.rated,
        "starts_at_ms": info.starts_at_ms,
        "minutes": info.minutes,
        "rounds": info.rounds,
    })
}

fn standing_json(line: &TournamentStanding) -> Value {
    json!({
        "rank": line.rank,
        "player_id": line.player_id,
        "name": line.name,
        "rating": line.rating,
        "score": line.score,
        "games": line.games,
        "on_fire": line.on_fire,
        "withdrawn": line.withdrawn,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{TournamentFinished, TournamentStarted};
    use crate::game::{ClockSettings, Variant};

    fn event(kind: Kind) -> TournamentEvent {
        TournamentEvent {
            event_id: "t1/finished".into(),
            tournament_id: "t1".into(),
            at_ms: 1_796_300_000_000,
            info: Some(TournamentInfo {
                name: "Hourly atomic".into(),
                system: "arena".into(),
                variant: Variant::Atomic as i32,
                chess960: false,
                clock: Some(ClockSettings { initial_ms: 180_000, increment_ms: 0 }),
                rated: true,
                starts_at_ms: 1_796_296_400_000,
                minutes: 60,
                rounds: 0,
            }),
            kind: Some(kind),
        }
    }

    #[test]
    fn subjects_and_ids_name_the_kind_and_encoding() {
        let started = event(Kind::Started(TournamentStarted { players: 12 }));
        assert_eq!(subject(&started, Encoding::Json), "tournaments.public.json.started");
        assert_eq!(subject(&started, Encoding::Protobuf), "tournaments.public.pb.started");
        assert_eq!(message_id(&started, Encoding::Json), "t1/finished/json");
        assert_eq!(filter(Encoding::Protobuf), "tournaments.public.pb.*");
    }

    #[test]
    fn json_puts_the_body_under_its_kind_with_lowercase_enums() {
        let line = TournamentStanding {
            rank: 1,
            player_id: "p1".into(),
            name: "Ann".into(),
            rating: 1612,
            score: 14,
            games: 7,
            on_fire: true,
            withdrawn: false,
        };
        let finished = event(Kind::Finished(TournamentFinished { players: 12, top: vec![line] }));
        let value = to_json(&finished);
        assert_eq!(value["kind"], "finished");
        assert_eq!(value["info"]["variant"], "atomic");
        assert_eq!(value["info"]["clock"]["initial_ms"], 180_000);
        assert_eq!(value["finished"]["top"][0]["name"], "Ann");
        assert_eq!(value["finished"]["top"][0]["on_fire"], true);
        assert_eq!(value["finished"]["players"], 12);
    }
}
