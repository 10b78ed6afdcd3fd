//! Maximum-cardinality matching on a general graph (Edmonds' blossom
//! algorithm). The Swiss pairing asks one question of it again and again:
//! "can these players still all be paired without breaking an absolute
//! rule?" A greedy or backtracking answer can be wrong or exponential; the
//! blossom algorithm answers exactly in O(V³), which is what lets a bracket
//! be paired without ever leaving the rest of the round unpairable.

use std::collections::VecDeque;

const NONE: usize = usize::MAX;

/// A maximum matching of the graph on `n` vertices whose edges are given by
/// `adjacent(a, b)`; `mate[v]` is `v`'s partner, if any.
pub(crate) fn maximum_matching(n: usize, adjacent: &dyn Fn(usize, usize) -> bool) -> Vec<Option<usize>> {
    let neighbours: Vec<Vec<usize>> = (0..n).map(|a| (0..n).filter(|&b| a != b && adjacent(a, b)).collect()).collect();
    let mut search = Blossom::new(&neighbours);
    search.greedy_start();
    for root in 0..n {
        if search.mate[root] == NONE {
            if let Some(end) = search.augmenting_path_end(root) {
                search.augment(end);
            }
        }
    }
    search.mate.iter().map(|&m| (m != NONE).then_some(m)).collect()
}

/// Whether every one of the `n` vertices can be matched.
pub(crate) fn has_perfect_matching(n: usize, adjacent: &dyn Fn(usize, usize) -> bool) -> bool {
    n.is_multiple_of(2) && maximum_matching(n, adjacent).iter().all(Option::is_some)
}

struct Blossom<'a> {
    neighbours: &'a [Vec<usize>],
    mate: Vec<usize>,
    parent: Vec<usize>,
    base: Vec<usize>,
    in_tree: Vec<bool>,
    in_blossom: Vec<bool>,
    queue: VecDeque<usize>,
}

impl<'a> Blossom<'a> {
    fn new(neighbours: &'a [Vec<usize>]) -> Self {
        let n = neighbours.len();
        Blossom {
            neighbours,
            mate: vec![NONE; n],
            parent: vec![NONE; n],
            base: (0..n).collect(),
            in_tree: vec![false; n],
            in_blossom: vec![false; n],
            queue: VecDeque::new(),
        }
    }

    /// A cheap first matching, so the exact search has few augmentations left.
    fn greedy_start(&mut self) {
        for v in 0..self.mate.len() {
            if self.mate[v] != NONE {
                continue;
            }
            if let Some(&w) = self.neighbours[v].iter().find(|&&w| self.mate[w] == NONE) {
                self.mate[v] = w;
                self.mate[w] = v;
            }
        }
    }

    fn lowest_common_ancestor(&self, mut a: usize, mut b: usize) -> usize {
        let mut seen = vec![false; self.mate.len()];
        loop {
            a = self.base[a];
            seen[a] = true;
            if self.mate[a] == NONE {
                break;
            }
            a = self.parent[self.mate[a]];
        }
        loop {
            b = self.base[b];
            if seen[b] {
                return b;
            }
            b = self.parent[self.mate[b]];
        }
    }

    fn mark_path(&mut self, mut v: usize, base: usize, mut child: usize) {
        while self.base[v] != base {
            self.in_blossom[self.base[v]] = true;
            self.in_blossom[self.base[self.mate[v]]] = true;
            self.parent[v] = child;
            child = self.mate[v];
            v = self.parent[self.mate[v]];
        }
    }

    fn contract(&mut self, v: usize, to: usize) {
        let base = self.lowest_common_ancestor(v, to);
        self.in_blossom.iter_mut().for_each(|b| *b = false);
        self.mark_path(v, base, to);
        self.mark_path(to, base, v);
        for i in 0..self.mate.len() {
            if self.in_blossom[self.base[i]] {
                self.base[i] = base;
                if !self.in_tree[i] {
                    self.in_tree[i] = true;
                    self.queue.push_back(i);
                }
            }
        }
    }

    /// Grows an alternating tree from `root`; returns the free vertex an
    /// augmenting path ends at, if there is one.
    fn augmenting_path_end(&mut self, root: usize) -> Option<usize> {
        let n = self.mate.len();
        self.in_tree.iter_mut().for_each(|u| *u = false);
        self.parent.iter_mut().for_each(|p| *p = NONE);
        for i in 0..n {
            self.base[i] = i;
        }
        self.in_tree[root] = true;
        self.queue.clear();
        self.queue.push_back(root);
        while let Some(v) = self.queue.pop_front() {
            for &to in &self.neighbours[v] {
                if self.base[v] == self.base[to] || self.mate[v] == to {
                    continue;
                }
                if to == root || (self.mate[to] != NONE && self.parent[self.mate[to]] != NONE) {
                    self.contract(v, to);
                } else if self.parent[to] == NONE {
                    self.parent[to] = v;
                    if self.mate[to] == NONE {
                        return Some(to);
                    }
                    let next = self.mate[to];
                    self.in_tree[next] = true;
                    self.queue.push_back(next);
                }
            }
        }
        None
    }

    fn augment(&mut self, mut v: usize) {
        while v != NONE {
            let pv = self.parent[v];
            let next = self.mate[pv];
            self.mate[v] = pv;
            self.mate[pv] = v;
            v = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_perfect_matching_through_a_triangle() {
        // The greedy start pairs 0-1 and 2-3 and strands 4 and 5; only the
        // path 4-0-1-2-3-5 through the odd cycle 0-1-2 repairs it.
        let edges = [(0, 1), (1, 2), (2, 0), (2, 3), (0, 4), (3, 5)];
        let adjacent = |a: usize, b: usize| edges.contains(&(a, b)) || edges.contains(&(b, a));
        let mate = maximum_matching(6, &adjacent);
        assert!(mate.iter().all(Option::is_some), "{mate:?}");
        for (v, m) in mate.iter().enumerate() {
            assert_eq!(mate[m.unwrap()], Some(v));
            assert!(adjacent(v, m.unwrap()));
        }
    }

    #[test]
    fn no_perfect_matching_in_a_star() {
        let adjacent = |a: usize, b: usize| a == 0 || b == 0;
        assert!(!has_perfect_matching(4, &adjacent));
        assert!(has_perfect_matching(2, &adjacent));
        assert!(has_perfect_matching(0, &adjacent));
    }
}
