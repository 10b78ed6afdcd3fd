//! The transposition table: search results kept by Zobrist key, so a
//! position reached again (by transposition or in the next iteration) is not
//! searched from scratch.

use fogblast_rules::Move;

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

/// A fixed-size, always-replace-if-deeper-or-older table.
#[derive(Debug)]
pub struct TranspositionTable {
    entries: Vec<Option<(Entry, u16)>>,
    generation: u16,
}

impl TranspositionTable {
    /// A table of about `megabytes` MiB (at least one entry).
    pub fn new(megabytes: usize) -> TranspositionTable {
        let entry_size = std::mem::size_of::<Option<(Entry, u16)>>();
        let count = (megabytes * 1024 * 1024 / entry_size).max(1).next_power_of_two() / 2;
        TranspositionTable { entries: vec![None; count.max(1)], generation: 0 }
    }

    /// Marks a new search: older entries become the first to replace.
    pub fn new_search(&mut self) {
        self.generation = self.generation.wrapping_add(1);
    }

    pub fn clear(&mut self) {
        self.entries.iter_mut().for_each(|e| *e = None);
        self.generation = 0;
    }

    #[inline]
    fn index(&self, key: u64) -> usize {
        (key as usize) & (self.entries.len() - 1)
    }

    #[inline]
    pub fn probe(&self, key: u64) -> Option<Entry> {
        match self.entries[self.index(key)] {
            Some((entry, _)) if entry.key == key => Some(entry),
            _ => None,
        }
    }

    #[inline]
    pub fn store(&mut self, entry: Entry) {
        let index = self.index(entry.key);
        let generation = self.generation;
        let slot = &mut self.entries[index];
        let replace = match slot {
            None => true,
            Some((old, old_generation)) => {
                old.key == entry.key || *old_generation != generation || old.depth <= entry.depth
            }
        };
        if replace {
            // Keep the old best move when the new result has none.
            let best = match (entry.best, *slot) {
                (None, Some((old, _))) if old.key == entry.key => old.best,
                (best, _) => best,
            };
            *slot = Some((Entry { best, ..entry }, generation));
        }
    }
}
