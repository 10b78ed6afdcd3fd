//! The pairing rules of one wave, with no I/O: given the seekers waiting in
//! a pool (rating, optional range, time waited, waves missed, recent
//! colours), which pairs to make and who plays white. Kept pure so the
//! rules are tested exhaustively here and the wave around them only moves
//! data in and out of Redis.
//!
//! The rules, as in lichess's pools:
//! - a seeker accepts an opponent whose rating is within its **window**,
//!   which widens with the time it has waited (`window_base +
//!   window_per_s × seconds`, capped at `window_max`), and inside its own
//!   rating range if it gave one; a pair needs both sides to accept, and
//!   two seeks of one player never pair;
//! - among acceptable pairs, lower **scores** go first: the rating gap
//!   less a **miss bonus** that grows with the waves a seeker has missed
//!   (`miss_bonus × misses`, capped at `miss_bonus_max`; a pair gets the
//!   larger of its two bonuses), so whoever has missed most waves is served
//!   first when several want the same opponent;
//! - the matching is greedy by score over each seeker's nearest rating
//!   neighbours, then completed so that it is **maximal**: after a wave no
//!   two unpaired seekers would accept each other;
//! - **colours** go against each player's recent history: the one who had
//!   white more often gets black; on a tie, the one who had white last;
//!   on a tie again, a coin.

use rand::Rng;

/// The tunable numbers of the rules (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// Rating window at no wait.
    pub window_base: u32,
    /// Window widening per second waited.
    pub window_per_s: u32,
    /// The widest window.
    pub window_max: u32,
    /// Score bonus per missed wave.
    pub miss_bonus: u32,
    /// The largest miss bonus.
    pub miss_bonus_max: u32,
    /// How many rating neighbours each seeker is scored against before the
    /// completion pass.
    pub neighbours: usize,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            window_base: 100,
            window_per_s: 20,
            window_max: 1000,
            miss_bonus: 30,
            miss_bonus_max: 300,
            neighbours: 8,
        }
    }
}

/// The colours a player had in recent games, newest first (`w`/`b`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ColorHistory(pub String);

impl ColorHistory {
    /// Whites minus blacks.
    pub fn balance(&self) -> i32 {
        self.0
            .chars()
            .map(|c| {
                if c == 'w' {
                    1
                } else if c == 'b' {
                    -1
                } else {
                    0
                }
            })
            .sum()
    }

    /// 1 if the last game was white, -1 if black, 0 with no history.
    fn last(&self) -> i32 {
        match self.0.chars().next() {
            Some('w') => 1,
            Some('b') => -1,
            _ => 0,
        }
    }

    /// The history after one more game, keeping at most `keep` games.
    pub fn with(&self, white: bool, keep: usize) -> ColorHistory {
        let mut text = String::with_capacity(keep);
        text.push(if white { 'w' } else { 'b' });
        text.extend(self.0.chars().filter(|c| matches!(c, 'w' | 'b')).take(keep.saturating_sub(1)));
        ColorHistory(text)
    }
}

/// One waiting seek as the rules see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seeker {
    pub player: String,
    pub rating: u32,
    /// Opponent ratings accepted, both ends included.
    pub range: Option<(u32, u32)>,
    pub waited_ms: u64,
    pub misses: u32,
    pub colors: ColorHistory,
}

/// A pair made by a wave: indices into the seekers given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pairing {
    pub white: usize,
    pub black: usize,
}

/// The rating window of a seeker that has waited `waited_ms`.
pub fn window(params: &Params, waited_ms: u64) -> u32 {
    let widened =
        u64::from(params.window_base).saturating_add(u64::from(params.window_per_s).saturating_mul(waited_ms) / 1000);
    widened.min(u64::from(params.window_max.max(params.window_base))) as u32
}

/// Whether `seeker` accepts an opponent rated `rating`.
pub fn accepts(params: &Params, seeker: &Seeker, rating: u32) -> bool {
    let in_range = seeker.range.is_none_or(|(min, max)| (min..=max).contains(&rating));
    in_range && seeker.rating.abs_diff(rating) <= window(params, seeker.waited_ms)
}

/// Whether two seekers may be paired: different players who accept each other.
pub fn compatible(params: &Params, a: &Seeker, b: &Seeker) -> bool {
    a.player != b.player && accepts(params, a, b.rating) && accepts(params, b, a.rating)
}

pub fn miss_bonus(params: &Params, seeker: &Seeker) -> u32 {
    seeker.misses.saturating_mul(params.miss_bonus).min(params.miss_bonus_max)
}

/// Lower pairs first: the rating gap less the larger miss bonus of the two.
pub fn score(params: &Params, a: &Seeker, b: &Seeker) -> i64 {
    i64::from(a.rating.abs_diff(b.rating)) - i64::from(miss_bonus(params, a).max(miss_bonus(params, b)))
}

/// Whether `a` should play white against `b`; `coin` settles a full tie.
pub fn a_plays_white(a: &ColorHistory, b: &ColorHistory, coin: bool) -> bool {
    match a.balance().cmp(&b.balance()) {
        std::cmp::Ordering::Less => true,
        std::cmp::Ordering::Greater => false,
        std::cmp::Ordering::Equal => match a.last().cmp(&b.last()) {
            std::cmp::Ordering::Less => true,
            std::cmp::Ordering::Greater => false,
            std::cmp::Ordering::Equal => coin,
        },
    }
}

/// The pairs of one wave. Every seeker is in at most one pair, both sides
/// of each pair accept each other, and no two seekers left over would.
pub fn pair_wave(params: &Params, seekers: &[Seeker], rng: &mut impl Rng) -> Vec<Pairing> {
    let n = seekers.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (seekers[i].rating, i));

    // Candidate edges between rating neighbours, best score first.
    let mut edges: Vec<(i64, u64, usize, usize)> = Vec::with_capacity(n * params.neighbours.max(1));
    for (pos, &a) in order.iter().enumerate() {
        for &b in order.iter().skip(pos + 1).take(params.neighbours.max(1)) {
            if compatible(params, &seekers[a], &seekers[b]) {
                // On equal scores, the pair that waited longer goes first.
                let waited = u64::MAX - seekers[a].waited_ms.max(seekers[b].waited_ms);
                edges.push((score(params, &seekers[a], &seekers[b]), waited, a, b));
            }
        }
    }
    edges.sort_unstable();
    let mut taken = vec![false; n];
    let mut pairs: Vec<(usize, usize)> = Vec::with_capacity(n / 2);
    for &(_, _, a, b) in &edges {
        if !taken[a] && !taken[b] {
            taken[a] = true;
            taken[b] = true;
            pairs.push((a, b));
        }
    }

    // Completion: pair any two leftovers that accept each other, so the
    // matching is maximal. Scanning upwards in rating from each leftover
    // as far as its own window reaches covers every partner it accepts.
    let rest: Vec<usize> = order.iter().copied().filter(|&i| !taken[i]).collect();
    for (pos, &a) in rest.iter().enumerate() {
        if taken[a] {
            continue;
        }
        let reach = window(params, seekers[a].waited_ms);
        for &b in &rest[pos + 1..] {
            if seekers[b].rating - seekers[a].rating > reach {
                break;
            }
            if !taken[b] && compatible(params, &seekers[a], &seekers[b]) {
                taken[a] = true;
                taken[b] = true;
                pairs.push((a, b));
                break;
            }
        }
    }

    pairs
        .into_iter()
        .map(|(a, b)| {
            if a_plays_white(&seekers[a].colors, &seekers[b].colors, rng.random_bool(0.5)) {
                Pairing { white: a, black: b }
            } else {
                Pairing { white: b, black: a }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    fn seeker(player: &str, rating: u32, waited_ms: u64) -> Seeker {
        Seeker { player: player.to_owned(), rating, range: None, waited_ms, misses: 0, colors: ColorHistory::default() }
    }

    fn rng() -> StdRng {
        StdRng::seed_from_u64(7)
    }

    fn check_invariants(params: &Params, seekers: &[Seeker], pairs: &[Pairing]) {
        let mut used = vec![false; seekers.len()];
        for pair in pairs {
            for side in [pair.white, pair.black] {
                assert!(!used[side], "seeker {side} paired twice");
                used[side] = true;
            }
            let (a, b) = (&seekers[pair.white], &seekers[pair.black]);
            assert_ne!(a.player, b.player, "a player paired with themself");
            assert!(compatible(params, a, b), "an unacceptable pair: {a:?} {b:?}");
        }
        for i in 0..seekers.len() {
            for j in i + 1..seekers.len() {
                if !used[i] && !used[j] {
                    assert!(!compatible(params, &seekers[i], &seekers[j]), "left over yet compatible: {i} {j}");
                }
            }
        }
    }

    #[test]
    fn the_window_widens_with_waiting_and_stops_at_its_cap() {
        let params = Params::default();
        assert_eq!(window(&params, 0), 100);
        assert_eq!(window(&params, 10_000), 300);
        assert_eq!(window(&params, 10_999), 319);
        assert_eq!(window(&params, 3_600_000), 1000);
        assert_eq!(window(&params, u64::MAX), 1000);
    }

    #[test]
    fn close_ratings_pair_at_once_and_distant_ones_only_after_waiting() {
        let params = Params::default();
        let fresh = [seeker("a", 1500, 0), seeker("b", 1750, 0)];
        assert!(pair_wave(&params, &fresh, &mut rng()).is_empty());
        let waited = [seeker("a", 1500, 8_000), seeker("b", 1750, 8_000)];
        assert_eq!(pair_wave(&params, &waited, &mut rng()).len(), 1);
        // Both must accept: one long waiter is not enough.
        let one = [seeker("a", 1500, 60_000), seeker("b", 1750, 0)];
        assert!(pair_wave(&params, &one, &mut rng()).is_empty());
    }

    #[test]
    fn two_seeks_of_one_player_never_pair() {
        let params = Params::default();
        let seekers = [seeker("a", 1500, 0), seeker("a", 1500, 0)];
        assert!(pair_wave(&params, &seekers, &mut rng()).is_empty());
        let seekers = [seeker("a", 1500, 0), seeker("a", 1501, 0), seeker("b", 1502, 0)];
        let pairs = pair_wave(&params, &seekers, &mut rng());
        assert_eq!(pairs.len(), 1);
        check_invariants(&params, &seekers, &pairs);
    }

    #[test]
    fn a_rating_range_is_respected_both_ways() {
        let params = Params::default();
        let mut picky = seeker("a", 1500, 60_000);
        picky.range = Some((1600, 1700));
        let seekers = [picky.clone(), seeker("b", 1550, 60_000)];
        assert!(pair_wave(&params, &seekers, &mut rng()).is_empty());
        let seekers = [picky, seeker("b", 1650, 60_000)];
        assert_eq!(pair_wave(&params, &seekers, &mut rng()).len(), 1);
    }

    #[test]
    fn the_longest_waiter_wins_a_contested_opponent() {
        let params = Params::default();
        // b sits between a and c, 20 points from each; c has missed waves.
        let mut c = seeker("c", 1540, 4_000);
        c.misses = 3;
        let seekers = [seeker("a", 1500, 4_000), seeker("b", 1520, 4_000), c];
        let pairs = pair_wave(&params, &seekers, &mut rng());
        assert_eq!(pairs.len(), 1);
        let mut pair = [pairs[0].white, pairs[0].black];
        pair.sort_unstable();
        assert_eq!(pair, [1, 2]);
    }

    #[test]
    fn the_closest_ratings_pair_together() {
        let params = Params { window_max: 2000, ..Params::default() };
        let seekers = [
            seeker("a", 1000, 60_000),
            seeker("b", 1010, 60_000),
            seeker("c", 1900, 60_000),
            seeker("d", 1905, 60_000),
        ];
        let pairs = pair_wave(&params, &seekers, &mut rng());
        let mut sets: Vec<[usize; 2]> = pairs
            .iter()
            .map(|p| {
                let mut s = [p.white, p.black];
                s.sort_unstable();
                s
            })
            .collect();
        sets.sort_unstable();
        assert_eq!(sets, vec![[0, 1], [2, 3]]);
    }

    #[test]
    fn random_waves_keep_every_invariant() {
        let mut rng = StdRng::seed_from_u64(42);
        for _ in 0..300 {
            let params = Params {
                window_base: rng.random_range(0..200),
                window_per_s: rng.random_range(0..100),
                window_max: rng.random_range(0..1500),
                miss_bonus: rng.random_range(0..60),
                miss_bonus_max: rng.random_range(0..400),
                neighbours: rng.random_range(1..6),
            };
            let n = rng.random_range(0..60);
            let players = rng.random_range(1..=n.max(1));
            let seekers: Vec<Seeker> = (0..n)
                .map(|_| {
                    let mut s = seeker(
                        &format!("p{}", rng.random_range(0..players)),
                        rng.random_range(800..2800),
                        rng.random_range(0..30_000),
                    );
                    s.misses = rng.random_range(0..10);
                    if rng.random_bool(0.2) {
                        let min = rng.random_range(800..2000);
                        s.range = Some((min, min + rng.random_range(0..800)));
                    }
                    s
                })
                .collect();
            let pairs = pair_wave(&params, &seekers, &mut rng);
            check_invariants(&params, &seekers, &pairs);
        }
    }

    #[test]
    fn everyone_pairs_once_windows_are_wide() {
        let params = Params::default();
        let mut rng = StdRng::seed_from_u64(1);
        let seekers: Vec<Seeker> =
            (0..1000).map(|i| seeker(&format!("p{i}"), rng.random_range(800..2800), 600_000)).collect();
        let pairs = pair_wave(&params, &seekers, &mut rng);
        assert_eq!(pairs.len(), 500);
        check_invariants(&params, &seekers, &pairs);
    }

    #[test]
    fn colours_go_against_recent_history() {
        let white_heavy = ColorHistory("wwb".into());
        let black_heavy = ColorHistory("bbw".into());
        assert!(!a_plays_white(&white_heavy, &black_heavy, true));
        assert!(a_plays_white(&black_heavy, &white_heavy, false));
        // Balanced histories: whoever had white last gets black.
        assert!(!a_plays_white(&ColorHistory("wb".into()), &ColorHistory("bw".into()), true));
        // No history at all: the coin.
        assert!(a_plays_white(&ColorHistory::default(), &ColorHistory::default(), true));
        assert!(!a_plays_white(&ColorHistory::default(), &ColorHistory::default(), false));
    }

    #[test]
    fn a_wave_gives_white_to_the_player_who_had_black() {
        let params = Params::default();
        let mut a = seeker("a", 1500, 0);
        a.colors = ColorHistory("www".into());
        let b = seeker("b", 1500, 0);
        let pairs = pair_wave(&params, &[a, b], &mut rng());
        assert_eq!(pairs, vec![Pairing { white: 1, black: 0 }]);
    }

    #[test]
    fn histories_keep_only_the_latest_games() {
        let history = ColorHistory("bbbb".into()).with(true, 3);
        assert_eq!(history.0, "wbb");
        assert_eq!(ColorHistory("x?".into()).with(false, 3).0, "b");
        assert_eq!(history.balance(), -1);
    }
}
