//! The `id` a client may put on any request and the server echoes on the
//! request's direct reply or its error: a JSON number, or a string of at
//! most [`MAX_ID_BYTES`] bytes. Anything else is refused, so a client never
//! gets back an id it could not have meant.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Number, Value};

/// The longest string `id`, in bytes.
pub const MAX_ID_BYTES: usize = 64;

/// A request's `id`, echoed exactly as it was read.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum Id {
    Number(Number),
    Text(String),
}

impl Id {
    /// The id a JSON value makes, if it may be one.
    pub fn from_value(value: Value) -> Option<Id> {
        match value {
            Value::Number(number) => Some(Id::Number(number)),
            Value::String(text) if text.len() <= MAX_ID_BYTES => Some(Id::Text(text)),
            _ => None,
        }
    }
}

impl From<u64> for Id {
    fn from(number: u64) -> Id {
        Id::Number(number.into())
    }
}

impl From<&str> for Id {
    fn from(text: &str) -> Id {
        Id::Text(text.to_owned())
    }
}

pub(crate) const ID_RULE: &str = "id must be a number or a string of at most 64 bytes";

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Id, D::Error> {
        Id::from_value(Value::deserialize(deserializer)?).ok_or_else(|| serde::de::Error::custom(ID_RULE))
    }
}
