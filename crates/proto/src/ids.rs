//! Identifiers as newtypes, so a game id is never passed where a player id
//! belongs. Ids arrive from clients and other services as strings; `parse`
//! is the one place that decides what a well-formed id is.

use std::fmt;

/// Why a string is not a valid id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind} must be 1 to {MAX_ID_LEN} characters of A-Z, a-z, 0-9, '-' or '_'")]
pub struct InvalidId {
    pub kind: &'static str,
}

/// The longest id accepted.
pub const MAX_ID_LEN: usize = 64;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $kind:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            pub fn parse(text: &str) -> Result<$name, InvalidId> {
                let valid = !text.is_empty()
                    && text.len() <= MAX_ID_LEN
                    && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
                if valid {
                    Ok($name(text.to_owned()))
                } else {
                    Err(InvalidId { kind: $kind })
                }
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::str::FromStr for $name {
            type Err = InvalidId;
            fn from_str(text: &str) -> Result<$name, InvalidId> {
                $name::parse(text)
            }
        }
    };
}

id_type!(
    /// A game, unique across the cluster.
    GameId,
    "a game id"
);
id_type!(
    /// A player, as the gateway identifies it (anonymous players included).
    PlayerId,
    "a player id"
);
id_type!(
    /// A game shard, stable across its restarts.
    ShardId,
    "a shard id"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_plain_ids_and_refuses_the_rest() {
        assert_eq!(GameId::parse("ab-12_Z").unwrap().as_str(), "ab-12_Z");
        for bad in ["", "a b", "a/b", "é", "{x}", &"a".repeat(MAX_ID_LEN + 1)] {
            assert_eq!(PlayerId::parse(bad), Err(InvalidId { kind: "a player id" }), "{bad:?}");
        }
        assert!(ShardId::parse(&"s".repeat(MAX_ID_LEN)).is_ok());
    }
}
