//! Which shard owns a game: the rendezvous (highest random weight) hash of
//! the game id over the live shards. Every process that sees the same
//! membership computes the same owner, and when a shard leaves only its own
//! games move. The hash is written out here rather than taken from the
//! standard library, whose hasher may change between Rust releases while
//! gateways and shards of different builds run side by side.

use fogblast_proto::ids::GameId;

use crate::membership::Member;

/// The live shard that owns `game`, if any shard is live.
pub fn owner<'a>(game: &GameId, members: &'a [Member]) -> Option<&'a Member> {
    owner_among(game, members)
}

/// [`owner`] over any set of members, such as membership less one shard.
pub fn owner_among<'a>(game: &GameId, members: impl IntoIterator<Item = &'a Member>) -> Option<&'a Member> {
    members.into_iter().max_by_key(|member| (weight(game.as_str(), member.shard.as_str()), member.shard.as_str()))
}

/// The weight of one (game, shard) pair: FNV-1a over both names, finished
/// with a 64-bit mixer so that similar names spread evenly.
fn weight(game: &str, shard: &str) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    for byte in game.bytes().chain([0xff]).chain(shard.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(PRIME);
    }
    mix(hash)
}

/// The splitmix64 finaliser.
fn mix(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fogblast_proto::ids::ShardId;

    fn members(names: &[&str]) -> Vec<Member> {
        names
            .iter()
            .enumerate()
            .map(|(i, name)| Member { shard: ShardId::parse(name).unwrap(), addr: format!("10.0.0.{i}:1"), epoch: 1 })
            .collect()
    }

    fn game(i: usize) -> GameId {
        GameId::parse(&format!("game{i}")).unwrap()
    }

    #[test]
    fn no_members_no_owner() {
        assert_eq!(owner(&game(1), &[]), None);
    }

    #[test]
    fn the_owner_does_not_depend_on_membership_order() {
        let forward = members(&["a", "b", "c"]);
        let mut backward = forward.clone();
        backward.reverse();
        for i in 0..200 {
            assert_eq!(owner(&game(i), &forward).unwrap().shard, owner(&game(i), &backward).unwrap().shard);
        }
    }

    #[test]
    fn games_spread_evenly_and_only_a_leaving_shards_games_move() {
        let three = members(&["shard-0", "shard-1", "shard-2"]);
        let two = members(&["shard-0", "shard-2"]);
        let mut counts = [0usize; 3];
        for i in 0..3000 {
            let before = owner(&game(i), &three).unwrap();
            let index = three.iter().position(|m| m == before).unwrap();
            counts[index] += 1;
            let after = owner(&game(i), &two).unwrap();
            if before.shard.as_str() != "shard-1" {
                assert_eq!(before.shard, after.shard, "game{i} moved although its shard stayed");
            }
        }
        for count in counts {
            assert!((800..1200).contains(&count), "uneven spread: {counts:?}");
        }
    }
}
