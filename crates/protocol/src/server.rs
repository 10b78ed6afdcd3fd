//! The server's side of the protocol: every frame a client can receive,
//! from the gateway itself or forwarded from another service (`paired`,
//! `lobby`, `rating`). Which fields are left out and which are `null` is
//! part of the contract: an `Option` written as `null` is always present,
//! one marked `skip_serializing_if` is absent when empty, as
//! `docs/protocol.md` says for each.

use fogblast_proto::error::ErrorCode;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::id::Id;
use crate::vocab::{
    ChatRoom, Color, ColorChoice, DrawAction, EndReason, Level, RematchAction, Status, TakebackAction, TimeControl,
    Variant, Viewer,
};

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `{"white_ms", "black_ms", "running"}`: the clocks at the moment of the
/// frame; `running` is `null` while no clock runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clock {
    pub white_ms: u64,
    pub black_ms: u64,
    pub running: Option<Color>,
}

/// Who sits in a seat: a person `{"id","name","computer":false}` or the
/// computer `{"name","computer":true,"level"}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Player {
    Person { id: String, name: String },
    Computer { name: String, level: Option<Level> },
}

impl Serialize for Player {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Person<'a> {
            id: &'a str,
            name: &'a str,
            computer: bool,
        }
        #[derive(Serialize)]
        struct Computer<'a> {
            name: &'a str,
            computer: bool,
            level: Option<Level>,
        }
        match self {
            Player::Person { id, name } => Person { id, name, computer: false }.serialize(serializer),
            Player::Computer { name, level } => Computer { name, computer: true, level: *level }.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Player {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Player, D::Error> {
        #[derive(Deserialize)]
        struct Fields {
            id: Option<String>,
            name: String,
            computer: bool,
            #[serde(default)]
            level: Option<Level>,
        }
        let fields = Fields::deserialize(deserializer)?;
        match (fields.computer, fields.id) {
            (true, _) => Ok(Player::Computer { name: fields.name, level: fields.level }),
            (false, Some(id)) => Ok(Player::Person { id, name: fields.name }),
            (false, None) => Err(serde::de::Error::missing_field("id")),
        }
    }
}

/// Both seats, `null` while free.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Players {
    pub white: Option<Player>,
    pub black: Option<Player>,
}

/// `state`: the whole game as its receiver may see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateFrame {
    pub game: String,
    pub v: u64,
    pub variant: Variant,
    pub you: Viewer,
    pub fen: String,
    /// Fog of war while the game runs only; then present even when empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visible: Option<Vec<String>>,
    /// `null` for a move the receiver may not know.
    pub moves: Vec<Option<String>>,
    pub clock: Option<Clock>,
    pub status: Status,
    /// Only when ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// Only when ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<EndReason>,
    pub players: Players,
    pub initial_fen: String,
    pub chess960: bool,
    pub rated: bool,
    pub time_control: Option<TimeControl>,
    /// With `invite`, only for a seated player while the game waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invite: Option<String>,
    pub draw_offer: Option<Color>,
    pub takeback_offer: Option<Color>,
    pub rematch_offer: Option<Color>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rematch_game: Option<String>,
    /// With `claim_in_ms`, only while a seated player has no connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gone: Option<Color>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_in_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub legal: Vec<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub first_move_in_ms: u64,
    /// The last lines of the chat rooms the receiver reads, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chat: Vec<ChatLine>,
    /// The tournament the game is played in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tournament: Option<String>,
    /// The sides that went berserk, in a tournament game.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub berserk: Vec<Color>,
    /// When the state answers a request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Id>,
}

/// `move`: one move as its receiver may see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveFrame {
    pub game: String,
    pub v: u64,
    pub ply: u32,
    /// `null` when the move is hidden from the receiver.
    pub uci: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub san: Option<String>,
    pub fen: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub visible: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exploded: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<String>,
    pub clock: Option<Clock>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub legal: Vec<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub first_move_in_ms: u64,
}

/// `end`: the result, and the whole game for every receiver.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndFrame {
    pub game: String,
    pub v: u64,
    /// `1-0`, `0-1`, `1/2-1/2`, or `*` when aborted.
    pub result: String,
    pub reason: EndReason,
    pub moves: Vec<String>,
    pub fen: String,
    pub clock: Option<Clock>,
}

/// A line in a game's chat: in a `state`, and as the `chat` frame.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatLine {
    pub room: ChatRoom,
    /// Who wrote it: their id and display name.
    pub player: String,
    pub name: String,
    pub text: String,
}

/// The opponent named in `paired`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairedOpponent {
    pub id: String,
    pub name: String,
    pub rating: u32,
}

/// One open board in a `lobby` frame.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenBoard {
    pub game: String,
    pub code: String,
    pub variant: Variant,
    pub clock: Option<TimeControl>,
    /// The colour its creator asked for.
    pub color: ColorChoice,
    pub rating: u32,
    pub rated: bool,
    pub player: String,
    pub name: String,
}

/// `lobby`: every open board, newest first; `v` grows with every change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LobbyFrame {
    pub v: u64,
    pub open: Vec<OpenBoard>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Id>,
}

/// `lobby_update`: what changed in the lobby from version `from` to `v`:
/// boards added (newest first, to put before the rest) and the games of
/// boards removed. A client whose list is not at `from` asks for the lobby
/// again; the gateway itself sends a whole `lobby` to a socket it knows is
/// not there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LobbyUpdateFrame {
    pub v: u64,
    pub from: u64,
    pub added: Vec<OpenBoard>,
    pub removed: Vec<String>,
}

/// A frame from the server. `id` is present only on a request's direct
/// reply or its error; events never carry one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum ServerFrame {
    Welcome {
        player: String,
        token: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<Id>,
    },
    Pong {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<Id>,
    },
    Created {
        game: String,
        /// `null`, with `invite`, against the computer.
        code: Option<String>,
        invite: Option<String>,
        color: Option<Color>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<Id>,
    },
    Joined {
        game: String,
        color: Option<Color>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<Id>,
    },
    State(Box<StateFrame>),
    Move(Box<MoveFrame>),
    End(Box<EndFrame>),
    Draw {
        game: String,
        v: u64,
        action: DrawAction,
        by: Option<Color>,
    },
    Takeback {
        game: String,
        v: u64,
        action: TakebackAction,
        by: Option<Color>,
    },
    Seated {
        game: String,
        v: u64,
        color: Option<Color>,
        player: Option<Player>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        legal: Vec<String>,
        #[serde(default, skip_serializing_if = "is_zero")]
        first_move_in_ms: u64,
    },
    OpponentGone {
        game: String,
        v: u64,
        claim_in_ms: u64,
    },
    OpponentBack {
        game: String,
        v: u64,
    },
    Rematch {
        game: String,
        v: u64,
        by: Option<Color>,
        /// Once both sides agreed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        new_game: Option<String>,
        /// `decline` when `by` declined the opponent's offer; absent for an
        /// offer or an agreement.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        action: Option<RematchAction>,
    },
    Chat {
        game: String,
        v: u64,
        #[serde(flatten)]
        line: ChatLine,
    },
    Berserk {
        game: String,
        v: u64,
        color: Option<Color>,
        clock: Option<Clock>,
    },
    /// `by` gave the opponent 15 seconds.
    TimeGiven {
        game: String,
        v: u64,
        by: Option<Color>,
        clock: Option<Clock>,
    },
    Reconnect {
        reason: String,
    },
    Error {
        #[serde(with = "ws_code")]
        code: ErrorCode,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<Id>,
    },
    Seeking {
        seek: String,
        pool: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<Id>,
    },
    /// From the gateway, `cancelled` answers `cancel_seek`; from the
    /// matchmaker, `reason` says why a seek went without a pairing.
    SeekCancelled {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cancelled: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<Id>,
    },
    Paired {
        game: String,
        color: Color,
        variant: Variant,
        clock: Option<TimeControl>,
        rated: bool,
        rating: u32,
        opponent: PairedOpponent,
        /// The tournament that paired the game, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tournament: Option<String>,
    },
    Lobby(LobbyFrame),
    LobbyUpdate(LobbyUpdateFrame),
    Rating {
        variant: Variant,
        rating: i64,
        deviation: i64,
        provisional: bool,
        diff: i64,
        game: String,
    },
}

impl ServerFrame {
    /// An `error` frame.
    pub fn error(code: ErrorCode, message: impl Into<String>, id: Option<Id>) -> ServerFrame {
        ServerFrame::Error { code, message: message.into(), id }
    }
}

/// The error code as the protocol spells it (`ErrorCode::as_ws_code`).
mod ws_code {
    use fogblast_proto::error::ErrorCode;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(code: &ErrorCode, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(code.as_ws_code())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ErrorCode, D::Error> {
        let name = String::deserialize(deserializer)?;
        ErrorCode::from_ws_code(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("{name:?} is not an error code of the protocol")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_fields_are_left_out_and_unknown_ones_are_null() {
        let frame = ServerFrame::Move(Box::new(MoveFrame {
            game: "g".into(),
            v: 3,
            ply: 0,
            uci: None,
            san: None,
            fen: "8/8/8/8/8/8/8/8 b - - 0 1".into(),
            visible: vec![],
            exploded: vec![],
            lost: vec![],
            clock: None,
            legal: vec![],
            first_move_in_ms: 0,
        }));
        let written = serde_json::to_value(&frame).unwrap();
        let expected = json!({"t": "move", "game": "g", "v": 3, "ply": 0, "uci": null,
                              "fen": "8/8/8/8/8/8/8/8 b - - 0 1", "clock": null});
        assert_eq!(written, expected);
    }

    #[test]
    fn players_and_errors_read_back_as_written() {
        let players = Players {
            white: Some(Player::Computer { name: "Computer (easy)".into(), level: Some(Level::Easy) }),
            black: Some(Player::Person { id: "p".into(), name: "bob".into() }),
        };
        let written = serde_json::to_value(&players).unwrap();
        assert_eq!(
            written,
            json!({"white": {"name": "Computer (easy)", "computer": true, "level": "easy"},
                   "black": {"id": "p", "name": "bob", "computer": false}})
        );
        assert_eq!(serde_json::from_value::<Players>(written).unwrap(), players);
        let error = ServerFrame::error(ErrorCode::UnknownType, "unknown message type \"fly\"", Some(Id::from(3)));
        let text = serde_json::to_string(&error).unwrap();
        assert_eq!(text, r#"{"t":"error","code":"unknown_type","message":"unknown message type \"fly\"","id":3}"#);
        assert_eq!(serde_json::from_str::<ServerFrame>(&text).unwrap(), error);
    }
}
