//! The protocol's vocabulary: the enums and small values frames are made
//! of, each spelled on the wire exactly as `docs/protocol.md` writes it.
//! A member marked "written only" is never read from a client: it stands
//! for a value the game service left unset, which the gateway has always
//! written as `"unknown"`.

use std::str::FromStr;

use serde::de::value::Error as ValueError;
use serde::de::IntoDeserializer;
use serde::{Deserialize, Serialize};

/// Reads a name the way a frame would, so that a name outside frames (a
/// URL path, a command-line flag) has the same spelling.
macro_rules! from_wire_name {
    ($($name:ident),+) => {$(
        impl FromStr for $name {
            type Err = ValueError;

            fn from_str(name: &str) -> Result<$name, ValueError> {
                $name::deserialize(name.into_deserializer())
            }
        }
    )+};
}

from_wire_name!(
    Variant,
    Color,
    ColorChoice,
    Viewer,
    Opponent,
    Level,
    DrawAction,
    TakebackAction,
    RematchAction,
    Status,
    EndReason
);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    Standard,
    Atomic,
    Fog,
    /// Written only.
    #[serde(skip_deserializing)]
    Unknown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Color {
    White,
    Black,
}

/// The colour a game's creator asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ColorChoice {
    White,
    Black,
    Random,
}

/// Whose view a `state` is (`state.you`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Viewer {
    White,
    Black,
    Spectator,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Opponent {
    Human,
    Computer,
}

/// The computer's strength.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Easy,
    Medium,
    Hard,
}

/// What a `draw` frame does, from the client or as the event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DrawAction {
    Offer,
    Accept,
    Decline,
}

/// What a `takeback` frame does: a takeback is requested, not offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TakebackAction {
    Request,
    Accept,
    Decline,
}

/// What a `rematch` frame does: an offer (which agrees to the opponent's
/// standing offer) or the decline of the opponent's offer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RematchAction {
    #[default]
    Offer,
    Decline,
}

/// A game's chat rooms: the two players', and the spectators' (which the
/// players read too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChatRoom {
    Players,
    Spectators,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Waiting,
    Playing,
    Ended,
    /// Written only.
    #[serde(skip_deserializing)]
    Unknown,
}

/// Why a game ended (`end.reason`, `state.reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    Explosion,
    Checkmate,
    KingCaptured,
    /// Also fog of war's "no legal move at all".
    Stalemate,
    Threefold,
    FiftyMoves,
    InsufficientMaterial,
    Timeout,
    Resign,
    Agreement,
    Abandoned,
    Aborted,
    /// Written only.
    #[serde(skip_deserializing)]
    Unknown,
}

/// A clock's settings: `{"initial_ms", "increment_ms"}`; a client may leave
/// the increment out (0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TimeControl {
    pub initial_ms: u32,
    #[serde(default)]
    pub increment_ms: u32,
}

/// The ratings a `seek` accepts an opponent within.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RatingRange {
    pub min: u32,
    pub max: u32,
}
