//! The public game-event stream (`GameEvent`, docs/events.md): its subjects
//! and its JSON rendering. The game service publishes each event as
//! protobuf and as JSON (or in the one encoding an operator chose), on
//! parallel subjects; `fogblast events tail` and outside consumers read
//! either.
//!
//! Subjects are `games.public.<encoding>.<variant>.<kind>`, with encoding
//! `pb` or `json`, variant `standard`, `atomic` or `fog`, and kind
//! `created`, `started`, `move`, `takeback` or `finished`.

use serde_json::{json, Map, Value};

use crate::events::game_event::Kind;
use crate::events::{GameEvent, Moved, PublicPlayer};
use crate::game::{ClockSettings, ClockState, EndReason, Level, Variant};

/// Every public subject starts with this.
pub const PUBLIC_PREFIX: &str = "games.public";

/// The schema every payload follows, in the `Fogblast-Schema` header.
pub const SCHEMA: &str = "fogblast.events.v1.GameEvent";

/// The header naming the payload's encoding.
pub const CONTENT_TYPE_HEADER: &str = "Content-Type";

/// How a payload is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Protobuf,
    Json,
}

impl Encoding {
    pub const ALL: [Encoding; 2] = [Encoding::Protobuf, Encoding::Json];

    /// The subject token.
    pub fn token(self) -> &'static str {
        match self {
            Encoding::Protobuf => "pb",
            Encoding::Json => "json",
        }
    }

    /// The `Content-Type` header's value.
    pub fn content_type(self) -> &'static str {
        match self {
            Encoding::Protobuf => "application/protobuf",
            Encoding::Json => "application/json",
        }
    }
}

impl std::str::FromStr for Encoding {
    type Err = String;

    /// An encoding by its subject token, `pb` or `json`.
    fn from_str(token: &str) -> Result<Encoding, String> {
        Encoding::ALL
            .into_iter()
            .find(|e| e.token() == token)
            .ok_or_else(|| format!("{token:?} is no encoding of the public stream: pb or json"))
    }
}

/// The subject token of a variant: its name; an unspecified variant
/// travels as standard.
pub fn variant_token(variant: Variant) -> &'static str {
    fogblast_rules::Variant::try_from(variant).unwrap_or(fogblast_rules::Variant::Standard).name()
}

/// The subject token of an event's kind.
pub fn kind_token(kind: &Kind) -> &'static str {
    match kind {
        Kind::Created(_) => "created",
        Kind::Started(_) => "started",
        Kind::Moved(_) => "move",
        Kind::TakenBack(_) => "takeback",
        Kind::Finished(_) => "finished",
    }
}

/// The subject an event travels on in `encoding`.
pub fn subject(event: &GameEvent, encoding: Encoding) -> String {
    let kind = event.kind.as_ref().map_or("unknown", kind_token);
    format!("{PUBLIC_PREFIX}.{}.{}.{kind}", encoding.token(), variant_token(event.variant()))
}

/// The subject filter for events of `encoding`, of one variant or all.
pub fn filter(encoding: Encoding, variant: Option<Variant>) -> String {
    match variant {
        Some(variant) => format!("{PUBLIC_PREFIX}.{}.{}.*", encoding.token(), variant_token(variant)),
        None => format!("{PUBLIC_PREFIX}.{}.>", encoding.token()),
    }
}

/// The stream's message id of an event in `encoding` (ids are unique
/// across the stream, so the two encodings differ).
pub fn message_id(event: &GameEvent, encoding: Encoding) -> String {
    format!("{}/{}", event.event_id, encoding.token())
}

/// The event as JSON: the protobuf fields under their names, enums as
/// lowercase names, absent optional fields left out.
pub fn to_json(event: &GameEvent) -> Value {
    let mut out = Map::new();
    out.insert("event_id".into(), json!(event.event_id));
    out.insert("game_id".into(), json!(event.game_id));
    out.insert("version".into(), json!(event.version));
    out.insert("at_ms".into(), json!(event.at_ms));
    out.insert("variant".into(), json!(variant_token(event.variant())));
    let Some(kind) = &event.kind else { return Value::Object(out) };
    out.insert("kind".into(), json!(kind_token(kind)));
    let body = match kind {
        Kind::Created(created) => json!({
            "chess960": created.chess960,
            "initial_fen": created.initial_fen,
            "rated": created.rated,
            "clock": created.clock.as_ref().map(clock_settings),
            "white": created.white.as_ref().map(player),
            "black": created.black.as_ref().map(player),
        }),
        Kind::Started(started) => json!({
            "white": started.white.as_ref().map(player),
            "black": started.black.as_ref().map(player),
        }),
        // Borrowed strings and numbers always make a value.
        Kind::Moved(moved) => serde_json::to_value(moved_body(moved)).unwrap_or_default(),
        Kind::TakenBack(taken) => json!({ "ply": taken.ply, "fen": taken.fen }),
        Kind::Finished(finished) => json!({
            "result": finished.result,
            "reason": reason_name(finished.reason()),
            "moves": finished.moves,
            "final_fen": finished.final_fen,
            "clock": finished.clock.as_ref().map(clock_state),
        }),
    };
    let mut body = body;
    if let Value::Object(fields) = &mut body {
        fields.retain(|_, value| !value.is_null());
    }
    out.insert(kind_field(kind).into(), body);
    Value::Object(out)
}

/// [`to_json`] as the stream's bytes, written straight into them: through
/// `Display` (`to_string`) the same text costs about twice as much, every
/// write going through the formatting machinery. A move, nearly every
/// event, is written from borrowed fields without building a `Value`.
pub fn to_json_bytes(event: &GameEvent) -> Vec<u8> {
    if let Some(Kind::Moved(moved)) = &event.kind {
        let json = MovedJson {
            at_ms: event.at_ms,
            event_id: &event.event_id,
            game_id: &event.game_id,
            kind: "move",
            moved: moved_body(moved),
            variant: variant_token(event.variant()),
            version: event.version,
        };
        // Plain strings and numbers always serialise.
        if let Ok(bytes) = serde_json::to_vec(&json) {
            return bytes;
        }
    }
    let value = to_json(event);
    // A `Value` always serialises: its keys are strings.
    serde_json::to_vec(&value).unwrap_or_else(|_| value.to_string().into_bytes())
}

// A move as [`to_json`] writes it: the fields in the order of its
// (alphabetical) map, the absent ones left out.
#[derive(serde::Serialize)]
struct MovedJson<'a> {
    at_ms: u64,
    event_id: &'a str,
    game_id: &'a str,
    kind: &'static str,
    moved: MovedBody<'a>,
    variant: &'static str,
    version: u64,
}

#[derive(serde::Serialize)]
struct MovedBody<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    clock: Option<ClockJson>,
    exploded: &'a [String],
    fen: &'a str,
    ply: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    san: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    uci: Option<&'a str>,
}

#[derive(serde::Serialize)]
struct ClockJson {
    black_ms: u64,
    white_ms: u64,
}

/// A move's body, the one description of its JSON fields.
fn moved_body(moved: &Moved) -> MovedBody<'_> {
    MovedBody {
        clock: moved.clock.as_ref().map(|c| ClockJson { black_ms: c.black_ms, white_ms: c.white_ms }),
        exploded: &moved.exploded,
        fen: &moved.fen,
        ply: moved.ply,
        san: moved.san.as_deref(),
        uci: moved.uci.as_deref(),
    }
}

/// The JSON field holding the event's body: the oneof's field name.
fn kind_field(kind: &Kind) -> &'static str {
    match kind {
        Kind::Created(_) => "created",
        Kind::Started(_) => "started",
        Kind::Moved(_) => "moved",
        Kind::TakenBack(_) => "taken_back",
        Kind::Finished(_) => "finished",
    }
}

fn player(player: &PublicPlayer) -> Value {
    let mut out = json!({ "id": player.id, "name": player.name, "computer": player.computer });
    if player.computer {
        let level = match player.level() {
            Level::Easy => "easy",
            Level::Medium => "medium",
            Level::Hard => "hard",
            Level::Unspecified => "unspecified",
        };
        out["level"] = json!(level);
    }
    out
}

fn clock_settings(clock: &ClockSettings) -> Value {
    json!({ "initial_ms": clock.initial_ms, "increment_ms": clock.increment_ms })
}

fn clock_state(clock: &ClockState) -> Value {
    json!({ "white_ms": clock.white_ms, "black_ms": clock.black_ms })
}

/// An end reason's JSON name (the enum's name in lowercase).
pub fn reason_name(reason: EndReason) -> String {
    reason.as_str_name().to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{Finished, Moved};

    #[test]
    fn a_variant_travels_under_its_name_and_an_unspecified_one_as_standard() {
        let tokens = [Variant::Unspecified, Variant::Standard, Variant::Atomic, Variant::Fog].map(variant_token);
        assert_eq!(tokens, ["standard", "standard", "atomic", "fog"]);
        assert_eq!(filter(Encoding::Json, Some(Variant::Fog)), format!("{PUBLIC_PREFIX}.json.fog.*"));
    }

    #[test]
    fn an_event_has_a_subject_per_encoding_and_a_message_id_per_encoding() {
        let event = GameEvent {
            event_id: "g1/7/move".into(),
            game_id: "g1".into(),
            version: 7,
            variant: Variant::Atomic as i32,
            kind: Some(Kind::Moved(Moved { ply: 3, uci: Some("e2e4".into()), ..Default::default() })),
            ..Default::default()
        };
        assert_eq!(subject(&event, Encoding::Protobuf), "games.public.pb.atomic.move");
        assert_eq!(subject(&event, Encoding::Json), "games.public.json.atomic.move");
        assert_ne!(message_id(&event, Encoding::Protobuf), message_id(&event, Encoding::Json));
        assert_eq!(filter(Encoding::Json, Some(Variant::Fog)), "games.public.json.fog.*");
        assert_eq!(filter(Encoding::Protobuf, None), "games.public.pb.>");
    }

    #[test]
    fn json_leaves_out_what_is_absent_and_names_enums() {
        let hidden = GameEvent {
            event_id: "g2/4/move".into(),
            variant: Variant::Fog as i32,
            kind: Some(Kind::Moved(Moved { ply: 2, ..Default::default() })),
            ..Default::default()
        };
        let json = to_json(&hidden);
        assert_eq!(json["kind"], "move");
        assert_eq!(json["variant"], "fog");
        assert!(json["moved"].get("uci").is_none() && json["moved"].get("san").is_none(), "{json}");
        let finished = GameEvent {
            kind: Some(Kind::Finished(Finished {
                result: "1-0".into(),
                reason: EndReason::Explosion as i32,
                ..Default::default()
            })),
            ..Default::default()
        };
        assert_eq!(to_json(&finished)["finished"]["reason"], "explosion");
        let seen = GameEvent {
            event_id: "g3/9/move".into(),
            game_id: "g3".into(),
            version: 9,
            at_ms: 1_700_000_000_123,
            variant: Variant::Atomic as i32,
            kind: Some(Kind::Moved(Moved {
                ply: 7,
                uci: Some("d5e6".into()),
                san: Some("dxe6".into()),
                fen: "rnbqkbnr/ppp2ppp/8/8/8/8/PPPP1PPP/RNBQKBNR w KQkq - 0 5".into(),
                exploded: vec!["d5".into(), "e6".into(), "\"odd\"".into()],
                clock: Some(ClockState { white_ms: 59_000, black_ms: 61_500, running: 1 }),
            })),
        };
        let unclocked = GameEvent {
            kind: Some(Kind::Moved(Moved { ply: 0, uci: Some("e2e4".into()), ..Default::default() })),
            ..Default::default()
        };
        let expected = concat!(
            r#"{"at_ms":1700000000123,"event_id":"g3/9/move","game_id":"g3","kind":"move","moved":{"#,
            r#""clock":{"black_ms":61500,"white_ms":59000},"exploded":["d5","e6","\"odd\""],"#,
            r#""fen":"rnbqkbnr/ppp2ppp/8/8/8/8/PPPP1PPP/RNBQKBNR w KQkq - 0 5","ply":7,"san":"dxe6","uci":"d5e6"},"#,
            r#""variant":"atomic","version":9}"#
        );
        assert_eq!(String::from_utf8(to_json_bytes(&seen)).unwrap(), expected);
        for event in [&hidden, &finished, &seen, &unclocked] {
            assert_eq!(String::from_utf8(to_json_bytes(event)).unwrap(), to_json(event).to_string());
        }
    }
}
