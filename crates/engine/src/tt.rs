//! The transposition table: search results kept by Zobrist key, so a
//! position reached again (by transposition or in the next iteration) is not
//! searched from scratch.

use fogblast_rules::{Move, Role, Square};

/// How a stored score relates to the true value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Exact,
    /// The true value is at least the score (a beta cut-off).
    Lower,
    /// The true value is at most the score (no move reached alpha).
    Upper,
}

#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub key: u64,
    pub best: Option<Move>,
    pub score: i32,
    pub depth: i32,
    pub bound: Bound,
}

/// Entries kept together in one cache line: a position's result goes to
/// the slot of its own key or, failing that, displaces the bucket's least
/// valuable entry (the shallowest, older searches' first).
const SLOTS: usize = 4;

/// How much one search of age counts against an entry's depth when a
/// bucket chooses which entry to give up.
const AGE_WEIGHT: i32 = 8;

/// One stored result in 16 bytes: the whole key, so a hit is never
/// another position's; the move packed by [`pack`]; the score and depth
/// narrowed to what a search can reach; the bound and the search's
/// generation in one byte (a bound of zero marks an empty slot).
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    key: u64,
    best: u32,
    score: i16,
    depth: i8,
    meta: u8,
}

const GENERATION_BITS: u32 = 6;
const GENERATIONS: u8 = 1 << GENERATION_BITS;

impl Slot {
    fn is_empty(self) -> bool {
        self.meta & 3 == 0
    }

    fn generation(self) -> u8 {
        self.meta >> 2
    }

    /// How many searches ago the slot was written, modulo the 64
    /// generations its six bits count.
    fn age(self, generation: u8) -> i32 {
        i32::from(generation.wrapping_sub(self.generation()) % GENERATIONS)
    }

    fn entry(self) -> Entry {
        let bound = match self.meta & 3 {
            1 => Bound::Exact,
            2 => Bound::Lower,
            _ => Bound::Upper,
        };
        Entry { key: self.key, best: unpack(self.best), score: self.score.into(), depth: self.depth.into(), bound }
    }

    fn new(entry: Entry, best: u32, generation: u8) -> Slot {
        let bound = match entry.bound {
            Bound::Exact => 1,
            Bound::Lower => 2,
            Bound::Upper => 3,
        };
        Slot {
            key: entry.key,
            best,
            score: entry.score.clamp(i16::MIN.into(), i16::MAX.into()) as i16,
            depth: entry.depth.clamp(i8::MIN.into(), i8::MAX.into()) as i8,
            meta: (generation << 2) | bound,
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
struct Bucket {
    slots: [Slot; SLOTS],
}

/// A fixed-size table of four-entry buckets, one cache line each.
#[derive(Debug)]
pub struct TranspositionTable {
    buckets: Vec<Bucket>,
    generation: u8,
}

impl TranspositionTable {
    /// A table of at most `megabytes` MiB: the largest power of two of
    /// buckets that fits (at least one bucket).
    pub fn new(megabytes: usize) -> TranspositionTable {
        let fits = (megabytes * 1024 * 1024 / std::mem::size_of::<Bucket>()).max(1);
        let count = if fits.is_power_of_two() { fits } else { fits.next_power_of_two() / 2 };
        TranspositionTable { buckets: vec![Bucket::default(); count], generation: 0 }
    }

    /// How many results the table can hold.
    #[cfg(test)]
    fn capacity(&self) -> usize {
        self.buckets.len() * SLOTS
    }

    /// Marks a new search: older entries become the first to replace.
    pub fn new_search(&mut self) {
        self.generation = (self.generation + 1) % GENERATIONS;
    }

    pub fn clear(&mut self) {
        self.buckets.iter_mut().for_each(|b| *b = Bucket::default());
        self.generation = 0;
    }

    /// Per mille of a sample of slots written by the current search (the
    /// UCI `hashfull`).
    pub fn permille_full(&self) -> usize {
        let sample = &self.buckets[..self.buckets.len().min(1000_usize.div_ceil(SLOTS))];
        let slots = sample.iter().flat_map(|b| b.slots);
        let current = slots.filter(|s| !s.is_empty() && s.generation() == self.generation).count();
        current * 1000 / (sample.len() * SLOTS)
    }

    #[inline]
    fn index(&self, key: u64) -> usize {
        (key as usize) & (self.buckets.len() - 1)
    }

    #[inline]
    pub fn probe(&self, key: u64) -> Option<Entry> {
        let bucket = &self.buckets[self.index(key)];
        bucket.slots.iter().find(|s| s.key == key && !s.is_empty()).map(|s| s.entry())
    }

    #[inline]
    pub fn store(&mut self, entry: Entry) {
        let generation = self.generation;
        let index = self.index(entry.key);
        let bucket = &mut self.buckets[index].slots;
        let own = bucket.iter().position(|s| s.key == entry.key && !s.is_empty());
        let slot = match own {
            Some(i) => i,
            None => (0..SLOTS)
                .min_by_key(|&i| {
                    let s = bucket[i];
                    if s.is_empty() {
                        i32::MIN
                    } else {
                        i32::from(s.depth) - AGE_WEIGHT * s.age(generation)
                    }
                })
                .unwrap_or(0),
        };
        let old = bucket[slot];
        // Keep the old best move when the new result has none.
        let best = match entry.best {
            Some(m) => pack(m),
            None if own.is_some() => old.best,
            None => 0,
        };
        bucket[slot] = Slot::new(entry, best, generation);
    }
}

const NONE: u32 = 7;

/// A move in 23 bits: the kind (0 for none), the two squares, and for a
/// normal move its role, capture and promotion (7 for none).
fn pack(m: Move) -> u32 {
    let role = |r: Option<Role>| r.map_or(NONE, |r| r as u32);
    let squares = |from: Square, to: Square| (from.index() as u32) << 2 | (to.index() as u32) << 8;
    match m {
        Move::Normal { role: moving, from, capture, to, promotion } => {
            1 | squares(from, to) | (moving as u32) << 14 | role(capture) << 17 | role(promotion) << 20
        }
        Move::EnPassant { from, to } => 2 | squares(from, to),
        Move::Castle { king, rook } => 3 | squares(king, rook),
    }
}

fn unpack(bits: u32) -> Option<Move> {
    let square = |shift: u32| Square::new(((bits >> shift) & 63) as u8);
    let role = |shift: u32| Role::ALL.get(((bits >> shift) & 7) as usize).copied();
    let (from, to) = (square(2)?, square(8)?);
    match bits & 3 {
        1 => Some(Move::Normal { role: role(14)?, from, capture: role(17), to, promotion: role(20) }),
        2 => Some(Move::EnPassant { from, to }),
        3 => Some(Move::Castle { king: from, rook: to }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fogblast_rules::{Position, Variant};

    fn entry(key: u64, depth: i32) -> Entry {
        Entry { key, best: None, score: depth * 10, depth, bound: Bound::Lower }
    }

    #[test]
    fn every_legal_move_of_a_position_survives_packing() {
        let fens = [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2P5/8/3pP3/8/8/8/k6K w - d6 0 1",
            "rnbqkbnr/pp1ppppp/8/8/2pPP3/8/PPP2PPP/RNBQKBNR b KQkq d3 0 3",
        ];
        for fen in fens {
            for variant in [Variant::Standard, Variant::Atomic] {
                let pos = Position::from_fen(fen, variant).unwrap();
                for m in pos.legal_moves() {
                    assert_eq!(unpack(pack(m)), Some(m), "{fen}");
                }
            }
        }
        assert_eq!(unpack(0), None);
    }

    #[test]
    fn a_megabyte_holds_sixty_five_thousand_results_and_sizes_round_down() {
        assert_eq!(std::mem::size_of::<Bucket>(), 64);
        assert_eq!(TranspositionTable::new(1).capacity(), 65_536);
        assert_eq!(TranspositionTable::new(16).capacity(), 1_048_576);
        assert_eq!(TranspositionTable::new(24).capacity(), 1_048_576);
        assert_eq!(TranspositionTable::new(0).capacity(), SLOTS);
    }

    #[test]
    fn four_positions_of_one_bucket_are_all_kept_and_the_shallowest_gives_way() {
        let mut table = TranspositionTable::new(0);
        for (key, depth) in [(1, 5), (2, 3), (3, 9), (4, 7)] {
            table.store(entry(key, depth));
        }
        for key in 1..=4 {
            assert_eq!(table.probe(key).map(|e| e.key), Some(key));
        }
        table.store(entry(5, 1));
        assert!(table.probe(2).is_none(), "the shallowest entry gives way");
        assert_eq!(table.probe(5).map(|e| e.depth), Some(1));
        assert!([1, 3, 4].iter().all(|&k| table.probe(k).is_some()));
    }

    #[test]
    fn an_older_search_gives_way_before_a_shallower_current_one() {
        let mut table = TranspositionTable::new(0);
        table.store(entry(1, 20));
        table.new_search();
        table.new_search();
        table.new_search();
        for (key, depth) in [(2, 2), (3, 2), (4, 2)] {
            table.store(entry(key, depth));
        }
        table.store(entry(5, 3));
        assert!(table.probe(1).is_none(), "depth 20 three searches old counts as -4");
        assert!((2..=5).all(|k| table.probe(k).is_some()));
    }

    #[test]
    fn a_result_without_a_move_keeps_the_move_its_position_had() {
        let pos = Position::from_fen(fogblast_rules::STARTING_FEN, Variant::Atomic).unwrap();
        let m = pos.legal_moves()[0];
        let mut table = TranspositionTable::new(0);
        table.store(Entry { best: Some(m), ..entry(9, 4) });
        table.store(Entry { bound: Bound::Upper, ..entry(9, 6) });
        let kept = table.probe(9).unwrap();
        assert_eq!((kept.best, kept.depth, kept.bound), (Some(m), 6, Bound::Upper));
        assert_eq!(table.permille_full(), 250);
        table.clear();
        assert!(table.probe(9).is_none());
    }
}
