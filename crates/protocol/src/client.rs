//! The client's side of the protocol: each text frame is one JSON object
//! with a type `t`, the command's fields and, optionally, an `id` that the
//! answer echoes. Reading is strict about types and lenient about extra
//! fields, so newer clients keep working; every failure has a code and
//! says what was wrong in words a client author can act on.

use fogblast_proto::error::ErrorCode;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::id::{Id, ID_RULE};
use crate::vocab::{
    ChatRoom, ColorChoice, DrawAction, Level, Opponent, RatingRange, RematchAction, TakebackAction, TimeControl,
    Variant,
};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Create {
    pub variant: Variant,
    pub color: ColorChoice,
    /// `null` for a game without a clock.
    pub clock: Option<TimeControl>,
    pub opponent: Opponent,
    /// Read only against the computer; `hard` when left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rated: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chess960: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Join {
    pub code: String,
}

/// A command about one game and nothing else.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRef {
    pub game: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resume {
    pub game: String,
    pub v: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Move {
    pub game: String,
    pub uci: String,
    pub ply: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrawOffer {
    pub game: String,
    pub action: DrawAction,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TakebackOffer {
    pub game: String,
    pub action: TakebackAction,
}

/// `rematch`: offers (or agrees to) a rematch, or declines the opponent's
/// offer. Without `action` it is an offer, as it was before declines.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RematchRequest {
    pub game: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<RematchAction>,
}

/// `chat`: a line in one of the game's chat rooms.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub game: String,
    pub room: ChatRoom,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seek {
    pub variant: Variant,
    /// `null` for a pool without a clock.
    pub clock: Option<TimeControl>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rated: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<RatingRange>,
}

/// Declares [`ClientFrame`] from one list of `"t" => Variant(payload)`:
/// each `t` is the variant's serde tag, and `KINDS` and `kind()` are made
/// from the same list, so a new frame is one line here.
macro_rules! client_frames {
    ($($kind:literal => $variant:ident $(($payload:ty))?,)+) => {
        /// A command from a client, without its `id` (see [`Request`]).
        #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(tag = "t")]
        pub enum ClientFrame {
            $(
                #[serde(rename = $kind)]
                $variant $(($payload))?,
            )+
        }

        impl ClientFrame {
            /// Every `t` a client may send.
            pub const KINDS: &'static [&'static str] = &[$($kind),+];

            /// The frame's `t`.
            pub fn kind(&self) -> &'static str {
                match self {
                    $(client_frames!(@pattern $variant $(($payload))?) => $kind,)+
                }
            }
        }
    };
    (@pattern $variant:ident ($payload:ty)) => { ClientFrame::$variant(_) };
    (@pattern $variant:ident) => { ClientFrame::$variant };
}

client_frames! {
    "hello" => Hello(Hello),
    "create" => Create(Create),
    "join" => Join(Join),
    "watch" => Watch(GameRef),
    "resume" => Resume(Resume),
    "move" => Move(Move),
    "resign" => Resign(GameRef),
    "abort" => Abort(GameRef),
    "draw" => Draw(DrawOffer),
    "takeback" => Takeback(TakebackOffer),
    "claim_victory" => ClaimVictory(GameRef),
    "rematch" => Rematch(RematchRequest),
    "chat" => Chat(ChatMessage),
    "berserk" => Berserk(GameRef),
    "give_time" => GiveTime(GameRef),
    "seek" => Seek(Seek),
    "cancel_seek" => CancelSeek,
    "lobby" => Lobby,
    "ping" => Ping,
}

/// One text frame as a client sends it: the command and the `id` its
/// answer echoes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Request {
    #[serde(flatten)]
    pub frame: ClientFrame,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<Id>,
}

/// Reads the object in one pass: `id` must be a valid id when present (even
/// `null` is refused, as it always was), `t` must be a string, and the rest
/// is the command. A key given twice counts once, the last time.
impl<'de> Deserialize<'de> for Request {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Request, D::Error> {
        struct Object;

        impl<'de> Visitor<'de> for Object {
            type Value = Request;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a frame: one JSON object with a string field t")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Request, A::Error> {
                let mut id = None;
                let mut fields = Map::new();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "id" => id = Some(map.next_value::<Id>()?),
                        "t" => {
                            fields.insert(key, Value::String(map.next_value::<String>()?));
                        }
                        _ => {
                            fields.insert(key, map.next_value::<Value>()?);
                        }
                    }
                }
                let frame = ClientFrame::deserialize(Value::Object(fields)).map_err(de::Error::custom)?;
                Ok(Request { frame, id })
            }
        }

        deserializer.deserialize_map(Object)
    }
}

/// A frame that could not be read, with the `id` it carried if that was
/// readable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct BadFrame {
    pub code: ErrorCode,
    pub message: String,
    pub id: Option<Id>,
}

/// Reads one text frame.
pub fn parse(text: &str) -> Result<Request, BadFrame> {
    // A frame that does not read says why only on a second look, which
    // also finds the id to echo: refusals are rare, frames are not.
    serde_json::from_str(text).or_else(|_| explain(text))
}

/// Why `text` is not a frame, in the order a client author would check.
fn explain(text: &str) -> Result<Request, BadFrame> {
    let bad = |code, message: String, id| BadFrame { code, message, id };
    let value: Value = serde_json::from_str(text)
        .map_err(|e| bad(ErrorCode::BadRequest, format!("the frame is not JSON: {e}"), None))?;
    let Value::Object(mut object) = value else {
        return Err(bad(ErrorCode::BadRequest, "a frame is one JSON object".into(), None));
    };
    let id = match object.remove("id") {
        None => None,
        Some(value) => Some(Id::from_value(value).ok_or_else(|| bad(ErrorCode::BadRequest, ID_RULE.into(), None))?),
    };
    let kind = match object.get("t") {
        Some(Value::String(kind)) => kind.clone(),
        _ => return Err(bad(ErrorCode::BadRequest, "every frame needs a string field t".into(), id)),
    };
    if !ClientFrame::KINDS.contains(&kind.as_str()) {
        let shown: String = kind.chars().take(32).collect();
        return Err(bad(ErrorCode::UnknownType, format!("unknown message type {shown:?}"), id));
    }
    match serde_json::from_value(Value::Object(object)) {
        Ok(frame) => Ok(Request { frame, id }),
        Err(e) => Err(bad(ErrorCode::BadRequest, format!("{kind}: {e}"), id)),
    }
}

/// The `id` of a frame refused unread (over the connection's credits), so
/// that the refusal still echoes it and the client knows which request to
/// send again.
pub fn id_of(text: &str) -> Option<Id> {
    #[derive(Deserialize)]
    struct IdOnly {
        id: Option<Value>,
    }
    Id::from_value(serde_json::from_str::<IdOnly>(text).ok()?.id?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_message_and_its_id() {
        let request = parse(r#"{"t":"move","game":"g1","uci":"e2e4","ply":0,"id":7}"#).unwrap();
        assert_eq!(request.frame, ClientFrame::Move(Move { game: "g1".into(), uci: "e2e4".into(), ply: 0 }));
        assert_eq!(request.id, Some(Id::from(7)));
        let request =
            parse(r#"{"t":"create","variant":"atomic","color":"random","clock":null,"opponent":"human"}"#).unwrap();
        assert!(matches!(request.frame, ClientFrame::Create(Create { clock: None, variant: Variant::Atomic, .. })));
        assert_eq!(parse(r#"{"t":"ping","extra":1}"#).unwrap().frame, ClientFrame::Ping);
        assert_eq!(parse(r#"{"id":"x","t":"lobby"}"#).unwrap().id, Some(Id::from("x")));
    }

    #[test]
    fn a_rematch_is_an_offer_unless_it_declines() {
        let rematch = |text| match parse(text).unwrap().frame {
            ClientFrame::Rematch(r) => r.action.unwrap_or_default(),
            other => panic!("{other:?}"),
        };
        assert_eq!(rematch(r#"{"t":"rematch","game":"g"}"#), RematchAction::Offer);
        assert_eq!(rematch(r#"{"t":"rematch","game":"g","action":"offer"}"#), RematchAction::Offer);
        assert_eq!(rematch(r#"{"t":"rematch","game":"g","action":"decline"}"#), RematchAction::Decline);
    }

    #[test]
    fn a_key_given_twice_counts_the_last_time() {
        let request = parse(r#"{"t":"fly","t":"resume","game":"g","v":1,"v":2,"id":1,"id":"b"}"#).unwrap();
        assert_eq!(request.frame, ClientFrame::Resume(Resume { game: "g".into(), v: 2 }));
        assert_eq!(request.id, Some(Id::from("b")));
    }

    #[test]
    fn a_refused_frame_still_has_its_id() {
        assert_eq!(id_of(r#"{"t":"move","id":"m1","ply":0}"#), Some(Id::from("m1")));
        assert_eq!(id_of(r#"{"t":"ping","id":7}"#), Some(Id::from(7)));
        assert_eq!(id_of(r#"{"t":"ping"}"#), None);
        assert_eq!(id_of(r#"{"t":"ping","id":{"a":1}}"#), None);
        assert_eq!(id_of(&format!(r#"{{"t":"ping","id":"{}"}}"#, "x".repeat(65))), None);
        assert_eq!(id_of("not json"), None);
    }

    #[test]
    fn every_bad_frame_gets_a_code_and_keeps_its_id() {
        use ErrorCode::{BadRequest, UnknownType};
        let long = format!(r#"{{"t":"ping","id":"{}"}}"#, "x".repeat(65));
        let cases = [
            ("not json", BadRequest, None),
            ("[1,2]", BadRequest, None),
            ("null", BadRequest, None),
            (r#"{"id":"x"}"#, BadRequest, Some(Id::from("x"))),
            (r#"{"t":7,"id":"x"}"#, BadRequest, Some(Id::from("x"))),
            (r#"{"t":0}"#, BadRequest, None),
            (r#"{"t":"fly","id":3}"#, UnknownType, Some(Id::from(3))),
            (r#"{"t":""}"#, UnknownType, None),
            (r#"{"t":"move","game":"g","uci":"e2e4","id":4}"#, BadRequest, Some(Id::from(4))),
            (r#"{"t":"move","game":"g","uci":"e2e4","ply":-1}"#, BadRequest, None),
            (r#"{"t":"move","game":"g","uci":"e2e4","ply":1.5}"#, BadRequest, None),
            (r#"{"t":"join","code":7}"#, BadRequest, None),
            (r#"{"t":"draw","game":"g","action":"request","id":5}"#, BadRequest, Some(Id::from(5))),
            (r#"{"t":"takeback","game":"g","action":"offer"}"#, BadRequest, None),
            (r#"{"t":"rematch","game":"g","action":"accept"}"#, BadRequest, None),
            (r#"{"t":"create","variant":"unknown","color":"white","clock":null,"opponent":"human"}"#, BadRequest, None),
            (r#"{"t":"create","variant":"fog","color":"green","clock":null,"opponent":"human"}"#, BadRequest, None),
            (r#"{"t":"ping","id":{"a":1}}"#, BadRequest, None),
            (r#"{"t":"ping","id":null}"#, BadRequest, None),
            (&long, BadRequest, None),
        ];
        for (text, code, id) in cases {
            let error = parse(text).unwrap_err();
            assert_eq!((error.code, error.id), (code, id), "{text}");
            assert!(!error.message.is_empty());
        }
    }

    #[test]
    fn the_messages_name_what_is_wrong() {
        let message = |text| parse(text).unwrap_err().message;
        assert_eq!(message(r#"{"t":"move","game":"g","uci":"e2e4"}"#), "move: missing field `ply`");
        assert_eq!(message(r#"{"t":"fly"}"#), r#"unknown message type "fly""#);
        assert_eq!(message(r#"{"id":1}"#), "every frame needs a string field t");
        assert_eq!(message("[]"), "a frame is one JSON object");
        assert_eq!(message(r#"{"t":"ping","id":[]}"#), ID_RULE);
        assert!(message("{").starts_with("the frame is not JSON: "));
        // As docs/protocol.md quotes it.
        assert_eq!(
            message(r#"{"t":"draw","game":"g","action":"request"}"#),
            "draw: unknown variant `request`, expected one of `offer`, `accept`, `decline`"
        );
    }

    #[test]
    fn every_kind_is_known_and_named_as_written() {
        for kind in ClientFrame::KINDS {
            let error = parse(&format!(r#"{{"t":"{kind}"}}"#)).err();
            assert!(error.is_none_or(|e| e.code == ErrorCode::BadRequest), "{kind}");
        }
        let frames = [
            ClientFrame::Ping,
            ClientFrame::Lobby,
            ClientFrame::CancelSeek,
            ClientFrame::ClaimVictory(GameRef { game: "g".into() }),
        ];
        for frame in frames {
            let written = serde_json::to_value(&frame).unwrap();
            assert_eq!(written["t"], frame.kind());
        }
    }
}
