//! Pairing brackets the Dutch way: score groups from the top down, each
//! split into S1 and S2, candidates generated in the handbook's order
//! (which moved-down players are paired, then transpositions of S2, then
//! exchanges between S1 and S2 of the remainder), each candidate checked
//! against the absolute criteria, the completion criterion and the quality
//! criteria, and the first perfect one (or the best one seen) taken.
//!
//! The search is bounded by a node budget so a pathological bracket cannot
//! stall a round; when a bracket runs out of budget without any valid
//! candidate, the rest of the round is completed greedily by score order
//! under the same absolute criteria, which always succeeds because every
//! earlier bracket was only accepted if the rest could still be paired.

use super::colour::{self, Strength};
use super::field::Field;
use super::Float;
use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::HashMap;

pub(crate) type Pair = (usize, usize);

/// Above this many exchanges of one size the search stops widening and
/// relies on what it has found (or on the greedy completion).
const EXCHANGE_CAP: usize = 20_000;

/// Pairs `players` (an even number, everyone to be paired) bracket by
/// bracket; `None` only if no valid pairing exists at all.
pub(crate) fn pair_by_brackets(field: &Field, players: &[usize]) -> Option<Vec<Pair>> {
    let groups = score_groups(field, players);
    let mut pairs = Vec::new();
    let mut movers: Vec<usize> = Vec::new();
    for g in 0..groups.len() {
        let lower: Vec<usize> = groups[g + 1..].concat();
        if let Some(bracket) = pair_bracket(field, &movers, &groups[g], &lower) {
            pairs.extend(bracket.pairs);
            movers = bracket.floaters;
            continue;
        }
        let mut rest: Vec<usize> = movers.iter().chain(&groups[g]).chain(&lower).copied().collect();
        rest.sort_by(|&a, &b| field.rank_order(a, b));
        pairs.extend(complete_greedily(field, &rest)?);
        return Some(pairs);
    }
    movers.is_empty().then_some(pairs)
}

fn score_groups(field: &Field, players: &[usize]) -> Vec<Vec<usize>> {
    let mut sorted = players.to_vec();
    sorted.sort_by(|&a, &b| field.rank_order(a, b));
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for p in sorted {
        match groups.last_mut() {
            Some(group) if field.score(group[0]) == field.score(p) => group.push(p),
            _ => groups.push(vec![p]),
        }
    }
    groups
}

/// Pairs everyone in `rest` by rank, each player with the first later one
/// that leaves the others pairable; succeeds whenever `rest` is pairable.
pub(crate) fn complete_greedily(field: &Field, rest: &[usize]) -> Option<Vec<Pair>> {
    let mut left = rest.to_vec();
    let mut pairs = Vec::new();
    while !left.is_empty() {
        let a = left[0];
        let partner = (1..left.len()).find(|&j| {
            let others: Vec<usize> =
                left.iter().enumerate().filter(|&(k, _)| k != 0 && k != j).map(|(_, &p)| p).collect();
            field.compatible(a, left[j]) && field.pairable(&others)
        })?;
        pairs.push((a, left.remove(partner)));
        left.remove(0);
    }
    Some(pairs)
}

/// What pairing one bracket decided.
#[derive(Debug, Clone)]
struct BracketPairing {
    pairs: Vec<Pair>,
    /// Players moved down to the next bracket, in rank order.
    floaters: Vec<usize>,
}

/// The bracket of the moved-down players `movers` and the score group
/// `residents`; `lower` is everyone below, who must stay pairable (C4).
/// `None` when the bounded search found nothing valid.
fn pair_bracket(field: &Field, movers: &[usize], residents: &[usize], lower: &[usize]) -> Option<BracketPairing> {
    let n = movers.len() + residents.len();
    // The last bracket floats nobody: there is nowhere to float to.
    let min_pairs = if lower.is_empty() { n / 2 } else { 0 };
    let mut completion = Completion { field, lower, known: HashMap::new() };
    // C5 (most pairs), then C6 (pair as many and as high movers as possible).
    for pairs in (min_pairs..=n / 2).rev() {
        for paired_movers in (0..=pairs.min(movers.len()).min(residents.len())).rev() {
            if pairs - paired_movers > (residents.len() - paired_movers) / 2 {
                continue;
            }
            let shape = Shape { movers, residents, pairs, paired_movers };
            match search(field, &mut completion, &shape) {
                Outcome::Found(bracket) => return Some(bracket),
                Outcome::Exhausted => {}
                Outcome::OutOfBudget => return None,
            }
        }
    }
    None
}

/// C4 answered once per set of downfloaters.
struct Completion<'a> {
    field: &'a Field,
    lower: &'a [usize],
    known: HashMap<Vec<usize>, bool>,
}

impl Completion<'_> {
    fn completes(&mut self, floaters: &[usize]) -> bool {
        let mut key = floaters.to_vec();
        key.sort_unstable();
        if let Some(&known) = self.known.get(&key) {
            return known;
        }
        let set: Vec<usize> = key.iter().chain(self.lower).copied().collect();
        let answer = self.field.pairable(&set);
        self.known.insert(key, answer);
        answer
    }
}

/// How many pairs a bracket makes, and how many of them involve movers.
struct Shape<'a> {
    movers: &'a [usize],
    residents: &'a [usize],
    pairs: usize,
    paired_movers: usize,
}

enum Outcome {
    Found(BracketPairing),
    Exhausted,
    OutOfBudget,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    Stop,
}

/// The search's spending: nodes left, and whether any part of the
/// candidate space was skipped (so "nothing found" is not a proof).
pub(crate) struct Limits {
    nodes: Cell<usize>,
    incomplete: Cell<bool>,
}

impl Limits {
    pub(crate) fn new(nodes: usize) -> Limits {
        Limits { nodes: Cell::new(nodes), incomplete: Cell::new(false) }
    }

    fn spend(&self) -> bool {
        match self.nodes.get() {
            0 => {
                self.incomplete.set(true);
                false
            }
            n => {
                self.nodes.set(n - 1);
                true
            }
        }
    }
}

/// The quality criteria of one candidate, smaller is better, compared in
/// the handbook's order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Quality {
    /// C6: score differences of pairs and downfloaters, largest first.
    psd: Vec<u32>,
    /// C8–C9: topscorers (or their opponents) pushed past the colour limits.
    colour_limits: u32,
    /// C10: players not getting their colour preference.
    unmet_preferences: u32,
    /// C11: players not getting a strong (or absolute) preference.
    unmet_strong: u32,
    /// C12–C15: repeated downfloat/upfloat of the last round, then of two
    /// rounds before.
    repeated_floats: [u32; 4],
}

fn search<'f>(field: &'f Field, completion: &mut Completion<'f>, shape: &Shape<'_>) -> Outcome {
    let limits = Limits::new(field.budget);
    let compatible = |a: usize, b: usize| field.compatible(a, b);
    let mut best: Option<(Quality, BracketPairing)> = None;
    let mut ideal_psd: Option<Vec<u32>> = None;
    let remainder_pairs = shape.pairs - shape.paired_movers;
    for chosen in combinations(shape.movers.len(), shape.paired_movers) {
        let s1: Vec<usize> = chosen.iter().map(|&i| shape.movers[i]).collect();
        let limbo: Vec<usize> = shape.movers.iter().filter(|m| !s1.contains(m)).copied().collect();
        let psd = score_differences(field, shape, &s1, &limbo);
        let ideal = ideal_psd.get_or_insert_with(|| psd.clone()).clone();
        let mut judge = Judge { field, completion: &mut *completion, best: &mut best, ideal, psd };
        let flow = transpose(&compatible, &s1, shape.residents, &limits, &mut |mover_pairs, remainder| {
            homogeneous(&compatible, remainder, remainder_pairs, &limits, &mut |pairs, unpaired| {
                judge.consider(mover_pairs, pairs, &limbo, unpaired)
            })
        });
        if flow == Flow::Stop {
            break;
        }
    }
    match best {
        Some((_, bracket)) => Outcome::Found(bracket),
        None if limits.incomplete.get() => Outcome::OutOfBudget,
        None => Outcome::Exhausted,
    }
}

/// C6's pairing score difference, which only depends on which movers are
/// paired: residents all share one score.
fn score_differences(field: &Field, shape: &Shape<'_>, s1: &[usize], limbo: &[usize]) -> Vec<u32> {
    let resident = field.score(shape.residents[0]);
    let paired_residents = shape.paired_movers + 2 * (shape.pairs - shape.paired_movers);
    // A downfloater counts its distance to one point below the bracket.
    let mut psd: Vec<u32> = s1.iter().map(|&m| field.score(m) - resident).collect();
    psd.extend(limbo.iter().map(|&m| field.score(m) + 2 - resident));
    psd.extend(std::iter::repeat_n(2, shape.residents.len() - paired_residents));
    psd.sort_unstable_by(|a, b| b.cmp(a));
    psd
}

/// Keeps the best candidate seen and says when one cannot be beaten.
struct Judge<'j, 'f> {
    field: &'f Field,
    completion: &'j mut Completion<'f>,
    best: &'j mut Option<(Quality, BracketPairing)>,
    ideal: Vec<u32>,
    psd: Vec<u32>,
}

impl Judge<'_, '_> {
    fn consider(&mut self, mover_pairs: &[Pair], pairs: &[Pair], limbo: &[usize], unpaired: &[usize]) -> Flow {
        let all_pairs: Vec<Pair> = mover_pairs.iter().chain(pairs).copied().collect();
        let floaters: Vec<usize> = limbo.iter().chain(unpaired).copied().collect();
        let (quality, floor) = self.quality(mover_pairs, &all_pairs, &floaters);
        if self.best.as_ref().is_some_and(|(best, _)| quality >= *best) {
            return Flow::Continue;
        }
        if !self.completion.completes(&floaters) {
            return Flow::Continue;
        }
        let perfect = quality == floor;
        let mut floaters = floaters;
        floaters.sort_by(|&a, &b| self.field.rank_order(a, b));
        *self.best = Some((quality, BracketPairing { pairs: all_pairs, floaters }));
        if perfect {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }

    /// The candidate's quality and the best quality a candidate pairing the
    /// same players could possibly reach (its "perfect" mark).
    fn quality(&self, mover_pairs: &[Pair], pairs: &[Pair], floaters: &[usize]) -> (Quality, Quality) {
        let field = self.field;
        let mut q = Quality {
            psd: self.psd.clone(),
            colour_limits: 0,
            unmet_preferences: 0,
            unmet_strong: 0,
            repeated_floats: [0; 4],
        };
        let mut wants = [[0u32; 2]; 2];
        for &(a, b) in pairs {
            let colour_a = field.colour_of(a, b);
            for (player, got) in [(a, colour_a), (b, colour_a.opposite())] {
                let e = &field.entrants[player];
                if colour::breaks_colour_limits(&e.played, got) {
                    q.colour_limits += 1;
                }
                let Some(wanted) = e.preference.color else { continue };
                let strong = e.preference.strength >= Strength::Strong;
                wants[usize::from(strong)][wanted as usize] += 1;
                if wanted != got {
                    q.unmet_preferences += 1;
                    q.unmet_strong += u32::from(strong);
                }
            }
        }
        for &(mover, resident) in mover_pairs {
            count_float(&mut q.repeated_floats, field, mover, Float::Down);
            count_float(&mut q.repeated_floats, field, resident, Float::Up);
        }
        for &f in floaters {
            count_float(&mut q.repeated_floats, field, f, Float::Down);
        }
        let n = pairs.len() as u32;
        let excess = |w: u32, b: u32| w.saturating_sub(n) + b.saturating_sub(n);
        let floor = Quality {
            psd: self.ideal.clone(),
            colour_limits: 0,
            unmet_preferences: excess(wants[0][0] + wants[1][0], wants[0][1] + wants[1][1]),
            unmet_strong: excess(wants[1][0], wants[1][1]),
            repeated_floats: [0; 4],
        };
        (q, floor)
    }
}

fn count_float(counts: &mut [u32; 4], field: &Field, player: usize, float: Float) {
    let e = &field.entrants[player];
    let offset = usize::from(float == Float::Up);
    counts[offset] += u32::from(e.last_float == float);
    counts[2 + offset] += u32::from(e.float_before == float);
}

/// The `k`-subsets of `0..n` in lexicographic order (the order in which
/// the highest-ranked movers are preferred for S1), produced one at a time
/// since there can be far too many to hold.
pub(crate) fn combinations(n: usize, k: usize) -> impl Iterator<Item = Vec<usize>> {
    let mut next = (k <= n).then(|| (0..k).collect::<Vec<usize>>());
    std::iter::from_fn(move || {
        let current = next.take()?;
        if let Some(i) = (0..k).rev().find(|&i| current[i] < n - k + i) {
            let mut following = current.clone();
            following[i] += 1;
            for j in i + 1..k {
                following[j] = following[j - 1] + 1;
            }
            next = Some(following);
        }
        Some(current)
    })
}

/// n choose k, saturating.
fn binomial(n: usize, k: usize) -> usize {
    if k > n {
        return 0;
    }
    let mut acc: u128 = 1;
    for i in 0..k.min(n - k) {
        // Exact at every step: a product of i + 1 consecutive integers is
        // divisible by (i + 1)!.
        acc = acc * (n - i) as u128 / (i as u128 + 1);
        if acc > usize::MAX as u128 {
            return usize::MAX;
        }
    }
    acc as usize
}

type Compatible<'a> = &'a dyn Fn(usize, usize) -> bool;
type Visit<'a> = &'a mut dyn FnMut(&[Pair], &[usize]) -> Flow;

/// Pairs each of `s1`, in order, with a distinct member of `s2`, visiting
/// the ways in the lexicographic order of S2's sequence (the Dutch
/// transpositions, rule D.1), and never descending past a prefix
/// that breaks an absolute criterion. The visitor also gets the members of
/// S2 left over, in order.
pub(crate) fn transpose(
    compatible: Compatible<'_>,
    s1: &[usize],
    s2: &[usize],
    limits: &Limits,
    visit: Visit<'_>,
) -> Flow {
    let mut walk = Transposition { compatible, s1, s2, limits, used: vec![false; s2.len()], pairs: Vec::new() };
    walk.descend(visit)
}

struct Transposition<'a> {
    compatible: Compatible<'a>,
    s1: &'a [usize],
    s2: &'a [usize],
    limits: &'a Limits,
    used: Vec<bool>,
    pairs: Vec<Pair>,
}

impl Transposition<'_> {
    fn descend(&mut self, visit: Visit<'_>) -> Flow {
        if !self.limits.spend() {
            return Flow::Stop;
        }
        let depth = self.pairs.len();
        if depth == self.s1.len() {
            let rest: Vec<usize> = self.s2.iter().zip(&self.used).filter(|(_, &u)| !u).map(|(&p, _)| p).collect();
            return visit(&self.pairs, &rest);
        }
        let a = self.s1[depth];
        for j in 0..self.s2.len() {
            if self.used[j] || !(self.compatible)(a, self.s2[j]) {
                continue;
            }
            self.used[j] = true;
            self.pairs.push((a, self.s2[j]));
            let flow = self.descend(visit);
            self.pairs.pop();
            self.used[j] = false;
            if flow == Flow::Stop {
                return Flow::Stop;
            }
        }
        Flow::Continue
    }
}

/// Pairs `pairs` pairs among `players` (all of one score, in pairing-number
/// order): S1 is the first `pairs` players, S2 the rest; every
/// transposition of S2, then every exchange between S1 and S2 in the
/// handbook's order, each with its transpositions.
pub(crate) fn homogeneous(
    compatible: Compatible<'_>,
    players: &[usize],
    pairs: usize,
    limits: &Limits,
    visit: Visit<'_>,
) -> Flow {
    let n2 = players.len() - pairs;
    for size in 0..=pairs.min(n2) {
        let Some(exchanges) = exchanges_of_size(pairs, n2, size) else {
            limits.incomplete.set(true);
            return Flow::Continue;
        };
        for exchange in exchanges {
            let (s1, s2) = exchange.apply(players, pairs);
            if transpose(compatible, &s1, &s2, limits, visit) == Flow::Stop {
                return Flow::Stop;
            }
        }
    }
    Flow::Continue
}

/// Positions (0-based bracket sequence numbers) swapped between S1 and S2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Exchange {
    pub from_s1: Vec<usize>,
    pub from_s2: Vec<usize>,
}

impl Exchange {
    fn apply(&self, players: &[usize], n1: usize) -> (Vec<usize>, Vec<usize>) {
        let in_s1 = |pos: usize| (pos < n1 && !self.from_s1.contains(&pos)) || self.from_s2.contains(&pos);
        let s1 = (0..players.len()).filter(|&p| in_s1(p)).map(|p| players[p]).collect();
        let s2 = (0..players.len()).filter(|&p| !in_s1(p)).map(|p| players[p]).collect();
        (s1, s2)
    }
}

/// Every exchange of `size` players between an S1 of `n1` and an S2 of
/// `n2`, in the order of rule D.2: smallest difference
/// between the sums of the sequence numbers moved, then the highest moved
/// out of S1, then the lowest moved out of S2. `None` past the cap.
pub(crate) fn exchanges_of_size(n1: usize, n2: usize, size: usize) -> Option<Vec<Exchange>> {
    if binomial(n1, size).saturating_mul(binomial(n2, size)) > EXCHANGE_CAP {
        return None;
    }
    let out_of_s2: Vec<Vec<usize>> = combinations(n2, size).collect();
    let mut all: Vec<Exchange> = Vec::new();
    for a in combinations(n1, size) {
        for b in &out_of_s2 {
            all.push(Exchange { from_s1: a.clone(), from_s2: b.iter().map(|&p| p + n1).collect() });
        }
    }
    all.sort_by_key(|e| {
        let gap = e.from_s2.iter().sum::<usize>() - e.from_s1.iter().sum::<usize>();
        let s1_high_first: Vec<usize> = e.from_s1.iter().rev().copied().collect();
        (gap, Reverse(s1_high_first), e.from_s2.clone())
    });
    Some(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_transpositions(s1: &[usize], s2: &[usize]) -> Vec<Vec<usize>> {
        let limits = Limits::new(usize::MAX);
        let mut seen = Vec::new();
        transpose(&|_, _| true, s1, s2, &limits, &mut |pairs, _| {
            seen.push(pairs.iter().map(|&(_, b)| b).collect());
            Flow::Continue
        });
        seen
    }

    /// FIDE Handbook C.04.3 (version of 2016/2017, effective until
    /// 2026), D.1's example: "in a 11-player homogeneous bracket, it is
    /// 6-7-8-9-10, 6-7-8-9-11, 6-7-8-10-11, ..., 6-11-10-9-8, 7-6-8-9-10,
    /// ..., 11-10-9-8-7 (720 transpositions)". The third item printed is a
    /// slip: lexicographic order, which the same sentence prescribes, and
    /// the count of 720 both put 6-7-8-10-9 third.
    #[test]
    fn handbook_transpositions_of_a_homogeneous_bracket() {
        let seen = all_transpositions(&[1, 2, 3, 4, 5], &[6, 7, 8, 9, 10, 11]);
        assert_eq!(seen.len(), 720);
        assert_eq!(seen[0], [6, 7, 8, 9, 10]);
        assert_eq!(seen[1], [6, 7, 8, 9, 11]);
        assert_eq!(seen[2], [6, 7, 8, 10, 9]);
        let last_from_6 = seen.iter().position(|t| *t == [6, 11, 10, 9, 8]).unwrap();
        assert_eq!(last_from_6, 119);
        assert_eq!(seen[120], [7, 6, 8, 9, 10]);
        assert_eq!(seen[719], [11, 10, 9, 8, 7]);
    }

    /// The same rule's heterogeneous example: two MDPs in an 11-player
    /// bracket give 72 transpositions, 3-4, 3-5, 3-6, ..., 3-11, 4-3, 4-5,
    /// ..., 11-10.
    #[test]
    fn handbook_transpositions_with_two_moved_down_players() {
        let seen = all_transpositions(&[1, 2], &[3, 4, 5, 6, 7, 8, 9, 10, 11]);
        assert_eq!(seen.len(), 72);
        assert_eq!(seen[0], [3, 4]);
        assert_eq!(seen[1], [3, 5]);
        assert_eq!(seen[7], [3, 11]);
        assert_eq!(seen[8], [4, 3]);
        assert_eq!(seen[9], [4, 5]);
        assert_eq!(seen[71], [11, 10]);
    }

    /// Where an exchange (given in 1-based sequence numbers, S1 = 1..=5,
    /// S2 = 6..=11) sits in the order of D.2.
    fn position(from_s1: &[usize], from_s2: &[usize]) -> usize {
        let size = from_s1.len();
        let wanted = Exchange {
            from_s1: from_s1.iter().map(|b| b - 1).collect::<Vec<_>>(),
            from_s2: from_s2.iter().map(|b| b - 1).collect::<Vec<_>>(),
        };
        let mut sorted = wanted.clone();
        sorted.from_s1.sort_unstable();
        sorted.from_s2.sort_unstable();
        exchanges_of_size(5, 6, size).unwrap().iter().position(|e| *e == sorted).unwrap()
    }

    /// D.2's examples (b, c, d), for a bracket of eleven players, quoted
    /// from the handbook: "exchanging 6 with 4 is better than exchanging 8
    /// with 5; similarly exchanging 8+6 with 4+3 is better than exchanging
    /// 9+8 with 5+4"; "moving 5 from S1 to S2 is better than moving 4;
    /// similarly, 5-2 is better than 4-3; 5-4-1 is better than 5-3-2";
    /// "moving 6 from S2 to S1 is better than moving 7; similarly, 6-9 is
    /// better than 7-8; 6-7-10 is better than 6-8-9".
    #[test]
    fn handbook_exchange_order() {
        // Smallest difference of the sums moved.
        assert!(position(&[4], &[6]) < position(&[5], &[8]));
        assert!(position(&[4, 3], &[8, 6]) < position(&[5, 4], &[9, 8]));
        // Then the highest players moved out of S1.
        assert!(position(&[5], &[7]) < position(&[4], &[6]));
        assert!(position(&[5, 2], &[6, 7]) < position(&[4, 3], &[6, 7]));
        assert!(position(&[5, 4, 1], &[6, 7, 8]) < position(&[5, 3, 2], &[6, 7, 8]));
        // Then the lowest players moved out of S2.
        assert!(position(&[5], &[6]) < position(&[5], &[7]));
        assert!(position(&[5, 4], &[6, 9]) < position(&[5, 4], &[7, 8]));
        assert!(position(&[5, 4, 3], &[6, 7, 10]) < position(&[5, 4, 3], &[6, 8, 9]));
        // The very first exchange swaps the last of S1 with the first of S2.
        assert_eq!(position(&[5], &[6]), 0);
    }

    #[test]
    fn exchanges_apply_and_keep_sequence_order() {
        let players = [10, 11, 12, 13, 14, 15];
        let exchange = Exchange { from_s1: vec![2], from_s2: vec![3] };
        assert_eq!(exchange.apply(&players, 3), (vec![10, 11, 13], vec![12, 14, 15]));
    }

    #[test]
    fn combinations_are_lexicographic() {
        let all = |n, k| combinations(n, k).collect::<Vec<_>>();
        assert_eq!(all(4, 2), [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]);
        assert_eq!(all(3, 0), [Vec::<usize>::new()]);
        assert!(all(2, 3).is_empty());
        assert_eq!(combinations(60, 30).take(2).count(), 2);
        assert_eq!((binomial(11, 5), binomial(5, 0), binomial(3, 5)), (462, 1, 0));
        assert_eq!(binomial(200, 100), usize::MAX);
    }
}
