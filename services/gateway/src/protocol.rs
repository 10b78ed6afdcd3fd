//! The client's side of the WebSocket protocol (`docs/protocol.md`): each
//! text frame is one JSON object with a type `t` and, optionally, an `id`
//! the answer echoes. Parsing is strict about types and lenient about
//! extra fields, so newer clients keep working; every failure says what
//! was wrong in words a client author can act on.

use serde::Deserialize;
use serde_json::Value;

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ClockJson {
    pub initial_ms: u32,
    #[serde(default)]
    pub increment_ms: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Hello {
    pub token: Option<String>,
    pub name: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Create {
    pub variant: String,
    pub color: String,
    pub clock: Option<ClockJson>,
    pub opponent: String,
    pub level: Option<String>,
    pub rated: Option<bool>,
    pub chess960: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Code {
    pub code: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct GameRef {
    pub game: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Resume {
    pub game: String,
    pub v: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Move {
    pub game: String,
    pub uci: String,
    pub ply: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Offer {
    pub game: String,
    pub action: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Range {
    pub min: u32,
    pub max: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Seek {
    pub variant: String,
    pub clock: Option<ClockJson>,
    pub rated: Option<bool>,
    pub range: Option<Range>,
}

/// A message from a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientMessage {
    Hello(Hello),
    Create(Create),
    Join(Code),
    Watch(GameRef),
    Resume(Resume),
    Move(Move),
    Resign(GameRef),
    Abort(GameRef),
    Draw(Offer),
    Takeback(Offer),
    ClaimVictory(GameRef),
    Rematch(GameRef),
    Seek(Seek),
    CancelSeek,
    Lobby,
    Ping,
}

/// A frame that could not be read, with the `id` it carried if any.
#[derive(Clone, Debug, PartialEq)]
pub struct BadFrame {
    pub code: &'static str,
    pub message: String,
    pub id: Option<Value>,
}

fn id_fits(id: &Value) -> bool {
    match id {
        Value::String(s) => s.len() <= 64,
        Value::Number(_) => true,
        _ => false,
    }
}

/// The `id` of a frame refused unread (over the connection's credits), so
/// that the refusal still echoes it and the client knows which request to
/// send again.
pub fn id_of(text: &str) -> Option<Value> {
    #[derive(Deserialize)]
    struct Id {
        id: Option<Value>,
    }
    serde_json::from_str::<Id>(text).ok()?.id.filter(id_fits)
}

/// Reads one text frame.
pub fn parse(text: &str) -> Result<(ClientMessage, Option<Value>), BadFrame> {
    let bad = |code, message: String, id| BadFrame { code, message, id };
    let value: Value =
        serde_json::from_str(text).map_err(|e| bad("bad_request", format!("the frame is not JSON: {e}"), None))?;
    let Value::Object(mut object) = value else {
        return Err(bad("bad_request", "a frame is one JSON object".into(), None));
    };
    let id = object.remove("id");
    if id.as_ref().is_some_and(|id| !id_fits(id)) {
        return Err(bad("bad_request", "id must be a number or a string of at most 64 bytes".into(), None));
    }
    let Some(Value::String(kind)) = object.remove("t") else {
        return Err(bad("bad_request", "every frame needs a string field t".into(), id));
    };
    let fields = Value::Object(object);
    fn read<T: for<'de> Deserialize<'de>>(kind: &str, fields: Value) -> Result<T, String> {
        serde_json::from_value(fields).map_err(|e| format!("{kind}: {e}"))
    }
    let message = match kind.as_str() {
        "hello" => read(&kind, fields).map(ClientMessage::Hello),
        "create" => read(&kind, fields).map(ClientMessage::Create),
        "join" => read(&kind, fields).map(ClientMessage::Join),
        "watch" => read(&kind, fields).map(ClientMessage::Watch),
        "resume" => read(&kind, fields).map(ClientMessage::Resume),
        "move" => read(&kind, fields).map(ClientMessage::Move),
        "resign" => read(&kind, fields).map(ClientMessage::Resign),
        "abort" => read(&kind, fields).map(ClientMessage::Abort),
        "draw" => read(&kind, fields).map(ClientMessage::Draw),
        "takeback" => read(&kind, fields).map(ClientMessage::Takeback),
        "claim_victory" => read(&kind, fields).map(ClientMessage::ClaimVictory),
        "rematch" => read(&kind, fields).map(ClientMessage::Rematch),
        "seek" => read(&kind, fields).map(ClientMessage::Seek),
        "cancel_seek" => Ok(ClientMessage::CancelSeek),
        "lobby" => Ok(ClientMessage::Lobby),
        "ping" => Ok(ClientMessage::Ping),
        _ => {
            let shown: String = kind.chars().take(32).collect();
            return Err(bad("unknown_type", format!("unknown message type {shown:?}"), id));
        }
    };
    message.map(|m| (m, id.clone())).map_err(|e| bad("bad_request", e, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_message_and_its_id() {
        let (message, id) = parse(r#"{"t":"move","game":"g1","uci":"e2e4","ply":0,"id":7}"#).unwrap();
        assert_eq!(message, ClientMessage::Move(Move { game: "g1".into(), uci: "e2e4".into(), ply: 0 }));
        assert_eq!(id, Some(Value::from(7)));
        let (message, _) =
            parse(r#"{"t":"create","variant":"atomic","color":"random","clock":null,"opponent":"human"}"#).unwrap();
        assert!(matches!(message, ClientMessage::Create(Create { clock: None, .. })));
        assert_eq!(parse(r#"{"t":"ping","extra":1}"#).unwrap().0, ClientMessage::Ping);
    }

    #[test]
    fn a_refused_frame_still_has_its_id() {
        assert_eq!(id_of(r#"{"t":"move","id":"m1","ply":0}"#), Some(Value::from("m1")));
        assert_eq!(id_of(r#"{"t":"ping","id":7}"#), Some(Value::from(7)));
        assert_eq!(id_of(r#"{"t":"ping"}"#), None);
        assert_eq!(id_of(r#"{"t":"ping","id":{"a":1}}"#), None);
        assert_eq!(id_of("not json"), None);
    }

    #[test]
    fn every_bad_frame_gets_a_code_and_keeps_its_id() {
        let cases = [
            ("not json", "bad_request", None),
            ("[1,2]", "bad_request", None),
            (r#"{"id":"x"}"#, "bad_request", Some(Value::from("x"))),
            (r#"{"t":"fly","id":3}"#, "unknown_type", Some(Value::from(3))),
            (r#"{"t":"move","game":"g","uci":"e2e4","id":4}"#, "bad_request", Some(Value::from(4))),
            (r#"{"t":"move","game":"g","uci":"e2e4","ply":-1}"#, "bad_request", None),
            (r#"{"t":"join","code":7}"#, "bad_request", None),
            (r#"{"t":"ping","id":{"a":1}}"#, "bad_request", None),
        ];
        for (text, code, id) in cases {
            let error = parse(text).unwrap_err();
            assert_eq!((error.code, error.id), (code, id), "{text}");
            assert!(!error.message.is_empty());
        }
    }
}
