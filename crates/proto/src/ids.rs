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
/// Game ids are drawn from lowercase letters and digits that read apart.
const GAME_ID_ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";
/// 32^12 = 2^60 ids.
const GAME_ID_LEN: usize = 12;

impl GameId {
    /// A fresh id, drawn at random.
    pub fn random(rng: &mut impl rand::Rng) -> GameId {
        let text = (0..GAME_ID_LEN)
            .map(|_| char::from(GAME_ID_ALPHABET[rng.random_range(0..GAME_ID_ALPHABET.len())]))
            .collect();
        GameId(text)
    }

    /// The id fixed by `seed`: whoever derives it from the same seed gets
    /// the same game (a rematch from its game, a pairing's game from the
    /// pairing), so a create sent again names the game the first one made.
    pub fn derived(seed: &str) -> GameId {
        // FNV-1a over the seed, then a splitmix-style stream for the letters.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in seed.as_bytes() {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        let mut text = String::with_capacity(GAME_ID_LEN);
        for _ in 0..GAME_ID_LEN {
            hash ^= hash >> 29;
            hash = hash.wrapping_mul(0xbf58_476d_1ce4_e5b9);
            text.push(char::from(GAME_ID_ALPHABET[(hash >> 59) as usize % GAME_ID_ALPHABET.len()]));
        }
        GameId(text)
    }
}

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
    fn game_ids_drawn_or_derived_are_valid_and_derived_ones_are_fixed_by_their_seed() {
        let mut rng = rand::rng();
        let drawn = GameId::random(&mut rng);
        assert_eq!(GameId::parse(drawn.as_str()), Ok(drawn.clone()));
        assert_ne!(drawn, GameId::random(&mut rng));
        let derived = GameId::derived("pairing:p1");
        assert_eq!(GameId::parse(derived.as_str()), Ok(derived.clone()));
        assert_eq!(derived, GameId::derived("pairing:p1"));
        assert_ne!(derived, GameId::derived("pairing:p2"));
        assert_eq!(derived.as_str().len(), GAME_ID_LEN);
    }

    #[test]
    fn accepts_plain_ids_and_refuses_the_rest() {
        assert_eq!(GameId::parse("ab-12_Z").unwrap().as_str(), "ab-12_Z");
        for bad in ["", "a b", "a/b", "é", "{x}", &"a".repeat(MAX_ID_LEN + 1)] {
            assert_eq!(PlayerId::parse(bad), Err(InvalidId { kind: "a player id" }), "{bad:?}");
        }
        assert!(ShardId::parse(&"s".repeat(MAX_ID_LEN)).is_ok());
    }
}
