//! Iterative-deepening principal variation search with a transposition
//! table, quiescence over captures (every atomic capture is an explosion),
//! null-move pruning, futility, late-move and history pruning, late-move
//! reductions, check and singular extensions, and a correction history of
//! the static evaluation by pawn structure. In atomic chess a node whose
//! side to move can blow up the enemy king is scored as that win at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use arrayvec::ArrayVec;
use fogblast_rules::{Move, MoveList, Position};

use crate::clock::Instant;
use crate::eval::{evaluate, explosion_threat};
use crate::nnue::{self, Accumulator, Network};
use crate::ordering::explosion_gain;
use crate::ordering::{order_moves, MoveOrder, Scores};
use crate::time::{Clock, TimeBudget, Unrest};
use crate::tt::{Bound, Entry, TranspositionTable};

/// A score this far from zero is a forced win or loss.
pub const MATE: i32 = 30_000;
const INFINITY: i32 = 32_000;
/// Scores beyond this are mates, measured in plies from the root.
const MATE_BOUND: i32 = MATE - 1_000;
const MAX_PLY: usize = 96;

/// When to stop searching. Unset limits do not apply; with none set the
/// search runs until `stop` is raised or depth 64 completes.
#[derive(Clone, Debug, Default)]
pub struct Limits {
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
    pub movetime: Option<Duration>,
    pub clock: Option<Clock>,
    /// Deliberate imprecision: each leaf evaluation moves by up to this many
    /// centipawns, the same for the same position and seed.
    pub eval_noise: i32,
    /// What the search pretends not to see: a newcomer's narrow attention.
    pub overlook: Overlook,
    pub seed: u64,
    /// Root moves left out of the search, as if they were not legal (UCI's
    /// MultiPV finds its second line with the first line's move left out).
    /// Empty (the default) searches every move.
    pub root_excluded: Vec<Move>,
    /// How many best root moves each iteration reports, each line searched
    /// with the better lines' first moves left out; 0 and 1 both mean only
    /// the best, the search as it is without this.
    pub multipv: usize,
}

/// Percent of moves the search does not look at, each chosen by position,
/// move and seed (so the same game and seed repeat): some of our captures
/// at the root, some of our moves there that win at once, and some of the
/// opponent's replies after our move. Other quiet moves at the root are
/// always seen. Zero everywhere (the default) looks at everything.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overlook {
    /// Our captures at the root that do not win at once.
    pub captures: u32,
    /// Our moves at the root that do: a king explosion or a mate.
    pub wins: u32,
    /// Every move of the opponent's right after ours.
    pub replies: u32,
}

impl Overlook {
    /// Sees everything.
    pub const NONE: Overlook = Overlook { captures: 0, wins: 0, replies: 0 };

    fn percent(&self, pos: &Position, ply: usize, m: Move) -> u32 {
        match ply {
            0 if wins_at_once(pos, m) => self.wins,
            0 if m.is_capture() => self.captures,
            0 => 0,
            1 => self.replies,
            _ => 0,
        }
    }

    fn is_none(&self) -> bool {
        *self == Overlook::NONE
    }
}

/// Whether `m` ends the game in our favour: the enemy king blown up, or
/// mated.
fn wins_at_once(pos: &Position, m: Move) -> bool {
    let mut child = *pos;
    child.play_unchecked(m);
    child.board().king_of(child.turn()).is_none() || (child.is_check() && child.legal_moves().is_empty())
}

/// The result of a search (or of one completed iteration).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchReport {
    pub best: Option<Move>,
    /// Centipawns for the side to move; `MATE - n` is a win in `n` plies.
    pub score: i32,
    pub depth: u32,
    pub nodes: u64,
    pub elapsed: Duration,
    pub pv: Vec<Move>,
    /// Which line this is when several are asked for ([`Limits::multipv`]):
    /// 1 for the best (and for every report of a one-line search).
    pub multipv: usize,
    /// Per mille of the transposition table this search has written.
    pub hashfull: usize,
}

impl SearchReport {
    /// Plies to a forced result, if the score is a mate score (negative
    /// when the side to move is the one losing).
    pub fn mate_in_plies(&self) -> Option<i32> {
        if self.score >= MATE_BOUND {
            Some(MATE - self.score)
        } else if self.score <= -MATE_BOUND {
            Some(-(MATE + self.score))
        } else {
            None
        }
    }
}

/// A searcher with its tables. One per thread; reuse it across moves of a
/// game so the transposition table keeps its knowledge.
#[derive(Debug)]
pub struct Searcher {
    tt: TranspositionTable,
    order: MoveOrder,
    /// Keys of the game's positions followed by the current search path.
    keys: Vec<u64>,
    nodes: u64,
    started: Instant,
    hard_deadline: Option<Instant>,
    node_limit: u64,
    aborted: bool,
    noise: i32,
    overlook: Overlook,
    seed: u64,
    /// The root move that last raised alpha in the current iteration.
    root_best: Option<Move>,
    /// Root moves the search leaves out (see [`Limits::root_excluded`]).
    root_excluded: Vec<Move>,
    /// Static evaluation by ply on the current path (`-INFINITY` in check).
    evals: [i32; MAX_PLY + 1],
    /// The move played at each ply of the current path (`None` for a null
    /// move).
    path: [Option<Move>; MAX_PLY + 1],
    /// Late-move reductions by depth and move index, in plies.
    reductions: Box<[[u8; 64]; 64]>,
    /// Whether the opponent threatens to blow up our king (atomic) in the
    /// position at each ply of the current path, when the move that led
    /// there already found out (`None` at the root and after a null move).
    threats: [Option<bool>; MAX_PLY + 1],
    /// Whether the side to move is in check in the position at each ply of
    /// the current path, when the move that led there already found out
    /// (`None` at the root, after a null move and in quiescence).
    checks: [Option<bool>; MAX_PLY + 1],
    /// The move left out at each ply by a singular-extension search.
    excluded: [Option<Move>; MAX_PLY + 1],
    /// How far searches found the static evaluation off, by side to move
    /// and pawn structure, in 1/[`CORRECTION_GRAIN`] centipawns.
    correction: Vec<i32>,
    /// The network that evaluates this search's positions, if one does.
    net: Option<&'static Network>,
    /// Whether the network's output weights allow its faster output layer
    /// ([`Network::products_fit`]).
    net_fits: bool,
    /// The network's sums for the position at each ply of the current path.
    sums: Box<[Accumulator]>,
}

impl Searcher {
    /// A searcher whose transposition table takes about `hash_mb` MiB.
    pub fn new(hash_mb: usize) -> Searcher {
        Searcher {
            tt: TranspositionTable::new(hash_mb),
            order: MoveOrder::new(),
            keys: Vec::with_capacity(512),
            nodes: 0,
            started: Instant::now(),
            hard_deadline: None,
            node_limit: u64::MAX,
            aborted: false,
            noise: 0,
            overlook: Overlook::default(),
            seed: 0,
            root_best: None,
            root_excluded: Vec::new(),
            evals: [0; MAX_PLY + 1],
            path: [None; MAX_PLY + 1],
            reductions: reduction_table(),
            threats: [None; MAX_PLY + 1],
            checks: [None; MAX_PLY + 1],
            excluded: [None; MAX_PLY + 1],
            correction: vec![0; 2 * CORRECTION_SIZE],
            net: None,
            net_fits: false,
            sums: vec![Accumulator::ZERO; MAX_PLY + 2].into_boxed_slice(),
        }
    }

    /// Forgets everything learned: for a new game.
    pub fn clear(&mut self) {
        self.tt.clear();
        self.order = MoveOrder::new();
        self.correction.iter_mut().for_each(|c| *c = 0);
    }

    /// Searches `root` and returns the best move found. `history` holds the
    /// Zobrist keys of the game's earlier positions (oldest first, `root`
    /// excluded) so repetitions count as draws. `on_iteration` sees each
    /// completed depth.
    pub fn search(
        &mut self,
        root: &Position,
        history: &[u64],
        limits: &Limits,
        stop: &AtomicBool,
        on_iteration: &mut dyn FnMut(&SearchReport),
    ) -> SearchReport {
        let (plan, root_key) = self.begin(root, history, limits);
        let mut unrest = Unrest::default();
        let mut root_moves = root.legal_moves();
        root_moves.retain(|m| !self.root_excluded.contains(m));
        let mut report = SearchReport {
            best: root_moves.first().copied(),
            score: 0,
            depth: 0,
            nodes: 0,
            elapsed: Duration::ZERO,
            pv: Vec::new(),
            multipv: 1,
            hashfull: 0,
        };
        if root_moves.len() <= 1 && limits.depth.is_none() && limits.nodes.is_none() {
            // Nothing to think about.
            report.elapsed = self.started.elapsed();
            return report;
        }
        let max_depth = limits.depth.unwrap_or(64).clamp(1, MAX_PLY as u32 - 4);
        for depth in 1..=max_depth {
            if depth > 1 && stop.load(Ordering::Relaxed) {
                break;
            }
            self.root_best = None;
            let score = self.aspiration(root, depth as i32, report.score, root_key, stop);
            if self.aborted && depth > 1 {
                // Out of time (not nodes, whose budget must repeat exactly):
                // a root move that beat the others in the unfinished
                // iteration, searched deeper than the last best, is the
                // better choice.
                if self.nodes < self.node_limit {
                    if let Some(m) = self.root_best.filter(|&m| Some(m) != report.best) {
                        report.best = Some(m);
                        report.pv = vec![m];
                    }
                }
                break;
            }
            let (best, pv) = self.iteration_result(root, root_key, report.best);
            if depth > 1 {
                unrest = unrest.after_iteration(best != report.best, report.score, score);
            }
            report = SearchReport {
                best,
                score,
                depth,
                nodes: self.nodes,
                elapsed: self.started.elapsed(),
                pv,
                multipv: 1,
                hashfull: self.tt.permille_full(),
            };
            on_iteration(&report);
            if limits.multipv > 1 {
                self.other_lines(root, &report, limits.multipv, stop, on_iteration);
            }
            if self.aborted || report.mate_in_plies().is_some_and(|n| n.unsigned_abs() <= depth) {
                break;
            }
            // Another iteration costs several times this one: do not start
            // what cannot finish.
            if plan.is_some_and(|plan| self.started.elapsed() * 2 > plan.stretched(unrest)) {
                break;
            }
        }
        report.nodes = self.nodes;
        report.elapsed = self.started.elapsed();
        report
    }

    /// Readies the searcher for a new search of `root`: its limits, the
    /// table's and the ordering's generation, the network's sums and the
    /// keys of the game so far. Returns the clock's plan, if any, and the
    /// root's key.
    fn begin(&mut self, root: &Position, history: &[u64], limits: &Limits) -> (Option<TimeBudget>, u64) {
        self.started = Instant::now();
        self.nodes = 0;
        self.aborted = false;
        self.noise = limits.eval_noise.max(0);
        self.seed = limits.seed;
        self.overlook = limits.overlook;
        self.node_limit = limits.nodes.unwrap_or(u64::MAX);
        self.root_excluded.clone_from(&limits.root_excluded);
        self.tt.new_search();
        self.order.new_search();
        // The network plays full-strength atomic chess; the weaker levels'
        // noise and overlooking were calibrated on the hand-written
        // evaluation.
        self.net = (root.variant() == fogblast_rules::Variant::Atomic && self.noise == 0 && self.overlook.is_none())
            .then(nnue::atomic);
        if let Some(net) = self.net {
            self.sums[0] = Accumulator::new(net, root.board());
            self.net_fits = net.products_fit();
        }
        let (soft, hard) = time_limits(limits, root.ply());
        self.hard_deadline = hard.map(|d| self.started + d);
        // With a clock the plan stretches while the search is unsettled.
        let plan = soft.zip(hard).map(|(soft, hard)| TimeBudget { soft, hard });
        self.keys.clear();
        self.keys.extend_from_slice(history);
        let root_key = root.zobrist_hash();
        self.keys.push(root_key);
        self.threats[0] = None;
        self.checks[0] = None;
        (plan, root_key)
    }

    /// The best move and principal variation of a completed iteration: the
    /// root's table entry, unless root moves were left out (then the root
    /// result is not stored, and the move that last raised alpha is best).
    fn iteration_result(&self, root: &Position, root_key: u64, last: Option<Move>) -> (Option<Move>, Vec<Move>) {
        if self.root_excluded.is_empty() {
            let best = self.tt.probe(root_key).and_then(|e| e.best).or(last);
            (best, self.principal_variation(root))
        } else {
            let best = self.root_best.or(last);
            (best, best.map(|m| self.line(root, m)).unwrap_or_default())
        }
    }

    /// MultiPV: after the best line of an iteration, the next best lines at
    /// the same depth, each a full-window search of the root with the first
    /// moves of the lines before it left out. Stops early when time runs
    /// out (the iteration's best line stands) or no root move is left.
    fn other_lines(
        &mut self,
        root: &Position,
        first: &SearchReport,
        count: usize,
        stop: &AtomicBool,
        on_line: &mut dyn FnMut(&SearchReport),
    ) {
        let Some(best) = first.best else { return };
        let root_key = root.zobrist_hash();
        let excluded_before = self.root_excluded.len();
        let available = root.legal_moves().iter().filter(|m| !self.root_excluded.contains(m)).count();
        self.root_excluded.push(best);
        for multipv in 2..=count.min(available) {
            self.root_best = None;
            let score = self.negamax(root, first.depth as i32, 0, -INFINITY, INFINITY, root_key, stop);
            let Some(m) = self.root_best.filter(|_| !self.aborted) else { break };
            let report = SearchReport {
                best: Some(m),
                score,
                depth: first.depth,
                nodes: self.nodes,
                elapsed: self.started.elapsed(),
                pv: self.line(root, m),
                multipv,
                hashfull: self.tt.permille_full(),
            };
            on_line(&report);
            self.root_excluded.push(m);
        }
        self.root_excluded.truncate(excluded_before);
    }

    /// `first` followed by the table's principal variation after it.
    fn line(&self, root: &Position, first: Move) -> Vec<Move> {
        let mut child = *root;
        child.play_unchecked(first);
        let mut pv = vec![first];
        pv.extend(self.principal_variation(&child).into_iter().take(31));
        pv
    }

    /// Searches the root in a narrow window around the last score, widening
    /// it whenever the result falls outside.
    fn aspiration(&mut self, root: &Position, depth: i32, guess: i32, key: u64, stop: &AtomicBool) -> i32 {
        if depth < 5 || guess.abs() >= MATE_BOUND {
            return self.negamax(root, depth, 0, -INFINITY, INFINITY, key, stop);
        }
        let mut window = 40;
        loop {
            let (alpha, beta) = ((guess - window).max(-INFINITY), (guess + window).min(INFINITY));
            let score = self.negamax(root, depth, 0, alpha, beta, key, stop);
            if self.aborted || (score > alpha && score < beta) || window > 1000 {
                return score;
            }
            window *= 4;
        }
    }

    fn principal_variation(&self, root: &Position) -> Vec<Move> {
        let mut pv = Vec::new();
        let mut pos = *root;
        let mut seen = Vec::new();
        while pv.len() < 32 {
            let key = pos.zobrist_hash();
            if seen.contains(&key) {
                break;
            }
            seen.push(key);
            let Some(m) = self.tt.probe(key).and_then(|e| e.best) else { break };
            if !pos.is_legal(m) {
                break;
            }
            pos.play_unchecked(m);
            pv.push(m);
        }
        pv
    }

    #[inline]
    fn out_of_time(&mut self, stop: &AtomicBool) -> bool {
        if self.aborted {
            return true;
        }
        if self.nodes >= self.node_limit {
            self.aborted = true;
        } else if self.nodes.is_multiple_of(1024) {
            let late = self.hard_deadline.is_some_and(|d| Instant::now() >= d);
            if late || stop.load(Ordering::Relaxed) {
                self.aborted = true;
            }
        }
        self.aborted
    }

    /// Whether the position with `key` (the last on the path) already
    /// occurred since the last irreversible move.
    fn is_repetition(&self, halfmoves: u32) -> bool {
        let len = self.keys.len();
        let key = self.keys[len - 1];
        let window = (halfmoves as usize).min(len - 1);
        (2..=window).step_by(2).any(|back| self.keys[len - 1 - back] == key)
    }

    /// Whether the search pretends not to see `m` at `ply` (see
    /// [`Limits::overlook`]).
    fn overlooks(&self, pos: &Position, ply: usize, key: u64, m: Move) -> bool {
        let percent = self.overlook.percent(pos, ply, m);
        if percent == 0 {
            return false;
        }
        let bits = (m.from().index() as u64) << 8
            | m.to().index() as u64
            | (m.promotion().map_or(0, |r| r.index() as u64 + 1) << 16);
        splitmix(key ^ self.seed.rotate_left(17) ^ bits << 40) % 100 < u64::from(percent)
    }

    /// Whether to skip overlooked moves here: never when that would leave
    /// nothing, since a position with moves is not a mate.
    fn filters(&self, pos: &Position, ply: usize, key: u64, moves: &MoveList) -> bool {
        ply <= 1 && !self.overlook.is_none() && moves.iter().any(|&m| !self.overlooks(pos, ply, key, m))
    }

    /// Whether the side to move can blow up the enemy king at once (atomic),
    /// asked only at full strength (no evaluation noise, nothing overlooked:
    /// Hard and UCI), so Easy and Medium search exactly as they were
    /// calibrated.
    #[inline]
    fn can_explode_king(&self, pos: &Position) -> bool {
        self.noise == 0
            && self.overlook.is_none()
            && pos.variant() == fogblast_rules::Variant::Atomic
            && explosion_threat(pos.board(), pos.turn())
    }

    /// Whether the opponent could blow up our king in `pos`, the position at
    /// `ply` of the current path (atomic, not in check): the parent's answer
    /// when it had one.
    #[inline]
    fn threatened(&self, pos: &Position, ply: usize) -> bool {
        match self.threats.get(ply).copied().flatten() {
            Some(threatened) => {
                debug_assert_eq!(threatened, explosion_threat(pos.board(), !pos.turn()));
                threatened
            }
            None => explosion_threat(pos.board(), !pos.turn()),
        }
    }

    /// Whether the side to move is in check in `pos`, the position at `ply`
    /// of the current path: the parent's answer when it had one.
    #[inline]
    fn in_check(&self, pos: &Position, ply: usize) -> bool {
        match self.checks.get(ply).copied().flatten() {
            Some(in_check) => {
                debug_assert_eq!(in_check, pos.is_check());
                in_check
            }
            None => pos.is_check(),
        }
    }

    /// Brings the network's sums from `pos` at `ply` to its `child`.
    #[inline]
    fn follow(&mut self, ply: usize, pos: &Position, child: &Position) {
        if let Some(net) = self.net {
            let (path, next) = self.sums.split_at_mut(ply + 1);
            next[0].update_from(&path[ply], net, pos.board(), child.board());
        }
    }

    fn leaf_eval(&self, pos: &Position, ply: usize, key: u64) -> i32 {
        let eval = match self.net {
            Some(net) => {
                let output = if self.net_fits {
                    net.evaluate_fitting(&self.sums[ply], pos.turn())
                } else {
                    net.evaluate(&self.sums[ply], pos.turn())
                };
                if net.residual {
                    evaluate(pos) + output
                } else {
                    output
                }
            }
            None => evaluate(pos),
        };
        if self.noise == 0 {
            return eval;
        }
        let spread = 2 * self.noise as u64 + 1;
        eval + (splitmix(key ^ self.seed) % spread) as i32 - self.noise
    }

    #[allow(clippy::too_many_arguments)]
    fn negamax(
        &mut self,
        pos: &Position,
        depth: i32,
        ply: usize,
        mut alpha: i32,
        beta: i32,
        key: u64,
        stop: &AtomicBool,
    ) -> i32 {
        if self.aborted {
            return 0;
        }
        // Keys are worked out from the parent's (`zobrist_hash_from`).
        debug_assert_eq!(key, pos.zobrist_hash());
        self.nodes += 1;
        if self.out_of_time(stop) {
            return 0;
        }
        if pos.board().king_of(pos.turn()).is_none() {
            return -MATE + ply as i32;
        }
        if ply > 0 && (pos.halfmoves() >= 100 || self.is_repetition(pos.halfmoves())) {
            return 0;
        }
        // Atomic: a capture that blows up the enemy king is always legal and
        // wins, so the node is decided without generating a move. Most such
        // nodes answer a move that left an explosion threat standing.
        if ply > 0 && self.can_explode_king(pos) {
            return MATE - ply as i32 - 1;
        }
        let in_check = self.in_check(pos, ply);
        if depth <= 0 && !in_check || ply >= MAX_PLY - 1 {
            return self.quiesce(pos, ply, 0, alpha, beta, key, stop);
        }
        let depth = depth.max(1);
        let pv_node = beta - alpha > 1;

        let excluded = self.excluded[ply];
        let tt_entry = self.tt.probe(key);
        if let Some(entry) = tt_entry.filter(|_| excluded.is_none()) {
            // An overlooking search stores scores of partial move lists,
            // which are no bound a later search can trust.
            if ply > 0 && !pv_node && entry.depth >= depth && self.overlook.is_none() {
                let score = score_from_tt(entry.score, ply);
                let usable = match entry.bound {
                    Bound::Exact => true,
                    Bound::Lower => score >= beta,
                    Bound::Upper => score <= alpha,
                };
                if usable {
                    return score;
                }
            }
        }

        // An explosion threat at our king (atomic) is treated like a check
        // by the pruning: a static score means nothing while it stands.
        let atomic = pos.variant() == fogblast_rules::Variant::Atomic;
        let threatened = atomic && !in_check && self.threatened(pos, ply);
        let urgent = in_check || threatened;
        let correction_slot = correction_index(pos);
        let raw_eval = if in_check { -INFINITY } else { self.leaf_eval(pos, ply, key) };
        let static_eval = if in_check {
            -INFINITY
        } else {
            (raw_eval + self.correction[correction_slot] / CORRECTION_GRAIN).clamp(-MATE_BOUND + 1, MATE_BOUND - 1)
        };
        self.evals[ply] = static_eval;
        // Improving: our static score is better than two plies ago, so
        // pruning can be bolder and reductions smaller.
        let improving = !in_check && ply >= 2 && static_eval > self.evals[ply - 2];
        let previous = if ply > 0 { self.path[ply - 1] } else { None };
        // Reverse futility: far above beta near the leaves, a quiet reply
        // will not bring the score back down.
        if !pv_node && !urgent && excluded.is_none() && depth <= RFP_DEPTH && ply > 0 && static_eval.abs() < MATE_BOUND
        {
            let margin = RFP_MARGIN * (depth - i32::from(improving));
            if static_eval - margin >= beta {
                return static_eval - margin;
            }
        }
        // Moves are generated only for a node reverse futility did not
        // settle: there a stalemate counts no more than in the quiescence
        // search, where standing pat stands in for it. The null move below
        // needs a side that has a move to pass with.
        let mut moves = MoveList::new();
        pos.generate_legal_moves(&mut moves);
        if moves.is_empty() {
            return if in_check { -MATE + ply as i32 } else { 0 };
        }
        // Null move: if passing still fails high, a real move will too.
        if !pv_node
            && !urgent
            && depth >= 3
            && ply > 0
            && has_pieces(pos)
            && static_eval >= beta
            && previous.is_some()
            && excluded.is_none()
        {
            let mut passed = *pos;
            if passed.play_null() {
                let passed_key = passed.zobrist_hash_from(pos, key);
                self.keys.push(passed_key);
                self.path[ply] = None;
                self.threats[ply + 1] = None;
                self.checks[ply + 1] = None;
                if self.net.is_some() {
                    self.sums[ply + 1] = self.sums[ply];
                }
                let reduction = 3 + depth / 4 + ((static_eval - beta) / 200).min(2);
                let score = -self.negamax(&passed, depth - 1 - reduction, ply + 1, -beta, -beta + 1, passed_key, stop);
                self.keys.pop();
                if self.aborted {
                    return 0;
                }
                if score >= beta && score < MATE_BOUND {
                    return beta;
                }
            }
        }

        let tt_move = tt_entry.and_then(|e| e.best);
        let filter = self.filters(pos, ply, key, &moves);
        let mut scores = Scores::new();
        let mut scored = order_moves(pos, &mut moves, &mut scores, tt_move, &self.order, ply, previous);
        let original_alpha = alpha;
        let mut best_score = -INFINITY;
        let mut best_move = None;
        let mut index = 0;
        let mut quiets_tried: ArrayVec<Move, 64> = ArrayVec::new();
        let us = pos.turn();
        for pick in 0..scored.len() {
            let m = scored.pick(pick);
            if (filter && self.overlooks(pos, ply, key, m))
                || Some(m) == excluded
                || (ply == 0 && self.root_excluded.contains(&m))
            {
                continue;
            }
            // Singular extension: when the hash move is far better than
            // every other move (a search without it fails low), it is
            // searched one ply deeper. When even without it the node fails
            // high, the node is cut at once.
            let mut singular = 0;
            if let Some(entry) = tt_entry {
                if ply > 0
                    && depth >= SINGULAR_DEPTH
                    && Some(m) == tt_move
                    && excluded.is_none()
                    && self.overlook.is_none()
                    && entry.depth >= depth - 3
                    && entry.bound != Bound::Upper
                    && entry.score.abs() < MATE_BOUND
                {
                    let singular_beta = entry.score - 2 * depth;
                    self.excluded[ply] = Some(m);
                    let score = self.negamax(pos, (depth - 1) / 2, ply, singular_beta - 1, singular_beta, key, stop);
                    self.excluded[ply] = None;
                    if self.aborted {
                        return 0;
                    }
                    if score < singular_beta {
                        singular = 1;
                    } else if singular_beta >= beta {
                        return singular_beta;
                    }
                }
            }
            index += 1;
            let index = index - 1;
            let mut child = *pos;
            child.play_unchecked(m);
            let gives_check = child.is_check();
            let extension = i32::from(gives_check).max(singular);
            // A move that threatens to blow up the enemy king is nearly as
            // forcing as a check: never pruned, and reduced a ply less than
            // other quiet moves (checks are not reduced at all).
            let threatens = atomic && !gives_check && explosion_threat(child.board(), us);
            // The child's own tests for a check and a threat at its king,
            // done here.
            if ply < MAX_PLY {
                self.threats[ply + 1] = (atomic && !gives_check).then_some(threatens);
                self.checks[ply + 1] = Some(gives_check);
            }
            let forcing = gives_check || threatens;
            let quiet = !m.is_capture() && m.promotion().is_none();
            // Under an explosion threat the moves that leave it standing
            // lose at once (the child sees the blast without a search), so
            // once one move has kept the king the rest are pruned as at any
            // node; only a check keeps every move.
            let prunable = !pv_node && !in_check && !forcing && index > 0 && best_score > -MATE_BOUND;
            let history = if quiet { self.order.quiet_score(us, m, previous) } else { 0 };
            if prunable && quiet {
                // Futility: a quiet move at the frontier cannot lift a
                // hopeless static score to alpha.
                if depth <= FUTILITY_DEPTH
                    && static_eval + FUTILITY_BASE + FUTILITY_MARGIN * depth <= alpha
                    && alpha.abs() < MATE_BOUND
                {
                    continue;
                }
                // Late-move pruning: near the leaves, quiet moves this far
                // down the ordering almost never matter.
                let late = (5 + depth * depth) as usize / if improving { 2 } else { 3 };
                if depth <= LMP_DEPTH && index >= late {
                    continue;
                }
                // History pruning: quiet moves that keep failing here.
                if depth <= 3 && history < -HISTORY_PRUNE * depth {
                    continue;
                }
            }
            // Captures whose blast costs us far more than it takes.
            if prunable
                && m.is_capture()
                && depth <= 4
                && atomic
                && explosion_gain(pos, m) < -BAD_CAPTURE_MARGIN * depth
            {
                continue;
            }
            // The key only for a move that is searched, from the parent's.
            let child_key = child.zobrist_hash_from(pos, key);
            self.keys.push(child_key);
            self.path[ply] = Some(m);
            self.follow(ply, pos, &child);
            let new_depth = depth - 1 + extension;
            let score = if index == 0 {
                -self.negamax(&child, new_depth, ply + 1, -beta, -alpha, child_key, stop)
            } else {
                let reduction = if depth >= 3 && index >= 2 && quiet && !in_check && !gives_check {
                    let mut r = i32::from(self.reductions[depth.min(63) as usize][index.min(63)]);
                    r += i32::from(!pv_node) + i32::from(!improving) - 1 - i32::from(threatens) - i32::from(threatened);
                    if self.order.is_killer(ply, m) {
                        r -= 1;
                    }
                    r -= history / HISTORY_REDUCTION;
                    r.clamp(0, new_depth - 1)
                } else {
                    0
                };
                let mut score =
                    -self.negamax(&child, new_depth - reduction, ply + 1, -alpha - 1, -alpha, child_key, stop);
                if score > alpha && reduction > 0 {
                    score = -self.negamax(&child, new_depth, ply + 1, -alpha - 1, -alpha, child_key, stop);
                }
                if score > alpha && score < beta {
                    score = -self.negamax(&child, new_depth, ply + 1, -beta, -alpha, child_key, stop);
                }
                score
            };
            self.keys.pop();
            if self.aborted {
                return 0;
            }
            if score > best_score {
                best_score = score;
                best_move = Some(m);
                if score > alpha {
                    alpha = score;
                    if ply == 0 {
                        self.root_best = Some(m);
                    }
                    if alpha >= beta {
                        if quiet {
                            self.order.reward(us, m, previous, &quiets_tried, ply, depth);
                        }
                        break;
                    }
                }
            }
            if quiet && !quiets_tried.is_full() {
                quiets_tried.push(m);
            }
        }

        let bound = if best_score >= beta {
            Bound::Lower
        } else if best_score > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        // With root moves left out the root's result is not its value.
        if excluded.is_none() && (ply > 0 || self.root_excluded.is_empty()) {
            self.tt.store(Entry { key, best: best_move, score: score_to_tt(best_score, ply), depth, bound });
            // Correction history: a quiet result that disagrees with the
            // static score teaches how far off that score runs here.
            let quiet_best = best_move.is_none_or(|m| !m.is_capture() && m.promotion().is_none());
            if !urgent
                && quiet_best
                && best_score.abs() < MATE_BOUND
                && !(bound == Bound::Lower && best_score <= static_eval)
                && !(bound == Bound::Upper && best_score >= static_eval)
            {
                let target = (best_score - raw_eval) * CORRECTION_GRAIN;
                let weight = (depth + 1).min(16);
                let entry = &mut self.correction[correction_slot];
                *entry = ((*entry * (256 - weight) + target * weight) / 256)
                    .clamp(-CORRECTION_LIMIT * CORRECTION_GRAIN, CORRECTION_LIMIT * CORRECTION_GRAIN);
            }
        }
        best_score
    }

    #[allow(clippy::too_many_arguments)]
    fn quiesce(
        &mut self,
        pos: &Position,
        ply: usize,
        qply: usize,
        mut alpha: i32,
        beta: i32,
        key: u64,
        stop: &AtomicBool,
    ) -> i32 {
        if self.aborted {
            return 0;
        }
        // Keys are worked out from the parent's (`zobrist_hash_from`).
        debug_assert_eq!(key, pos.zobrist_hash());
        self.nodes += 1;
        if self.out_of_time(stop) {
            return 0;
        }
        if pos.board().king_of(pos.turn()).is_none() {
            return -MATE + ply as i32;
        }
        if self.can_explode_king(pos) {
            return MATE - ply as i32 - 1;
        }
        let in_check = self.in_check(pos, ply);
        // In atomic chess an explosion threat at our king is as urgent as a
        // check: standing pat would let the blast happen. At the first
        // quiescence ply every move is searched, as for a check.
        let atomic = pos.variant() == fogblast_rules::Variant::Atomic;
        let threatened = !in_check && atomic && qply == 0 && ply < MAX_PLY - 1 && self.threatened(pos, ply);
        let mut moves = MoveList::new();
        let mut best = -INFINITY;
        if in_check || threatened {
            // Every evasion, and mate when there is none.
            pos.generate_legal_moves(&mut moves);
            if moves.is_empty() {
                return if in_check { -MATE + ply as i32 } else { 0 };
            }
        } else {
            // Standing pat stands in for the quiet moves (and for stalemate,
            // which the main search finds).
            let stand_pat = self.leaf_eval(pos, ply, key);
            if stand_pat >= beta || ply >= MAX_PLY - 1 {
                return stand_pat;
            }
            alpha = alpha.max(stand_pat);
            best = stand_pat;
            pos.generate_legal_captures(&mut moves);
        }
        let filter = self.filters(pos, ply, key, &moves);
        let previous = if ply > 0 { self.path[ply - 1] } else { None };
        let mut scores = Scores::new();
        let mut scored = order_moves(pos, &mut moves, &mut scores, None, &self.order, ply, previous);
        for index in 0..scored.len() {
            let m = scored.pick(index);
            if filter && self.overlooks(pos, ply, key, m) {
                continue;
            }
            // A capture that destroys more of ours than of theirs is left
            // out (it cannot be a king explosion, which gains most). With no
            // hash move here, an atomic capture's ordering score is below
            // zero exactly when its explosion loses material.
            debug_assert!(
                !atomic
                    || !m.is_capture()
                    || in_check
                    || threatened
                    || (scored.score(index) < 0) == (explosion_gain(pos, m) < 0)
            );
            if atomic && !in_check && !threatened && m.is_capture() && scored.score(index) < 0 {
                continue;
            }
            let mut child = *pos;
            child.play_unchecked(m);
            let child_key = child.zobrist_hash_from(pos, key);
            self.path[ply] = Some(m);
            if let Some(check) = self.checks.get_mut(ply + 1) {
                *check = None;
            }
            self.follow(ply, pos, &child);
            let score = -self.quiesce(&child, ply + 1, qply + 1, -beta, -alpha, child_key, stop);
            if self.aborted {
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    alpha = score;
                    if alpha >= beta {
                        break;
                    }
                }
            }
        }
        best
    }
}

/// How long a search may go on: past the first no new iteration starts;
/// at the second it stops. A fixed time a move (no clock) is there to be
/// spent: iterations go on until the deadline, and an unfinished one
/// still counts when a root move beat the previous best in it. With a
/// clock, no new iteration starts past half the planned time, stretched
/// while the search is unsettled ([`TimeBudget::stretched`]).
fn time_limits(limits: &Limits, ply: u32) -> (Option<Duration>, Option<Duration>) {
    let budget = limits.clock.map(|clock| TimeBudget::from_clock(&clock, ply));
    let movetime = limits.movetime;
    let soft = match (budget, movetime) {
        (Some(b), Some(t)) => Some(b.soft.min(t)),
        (Some(b), None) => Some(b.soft),
        (None, _) => None,
    };
    let hard = match (budget, movetime) {
        (Some(b), Some(t)) => Some(b.hard.min(t)),
        (Some(b), None) => Some(b.hard),
        (None, t) => t,
    };
    (soft, hard)
}

const SINGULAR_DEPTH: i32 = 7;
const CORRECTION_SIZE: usize = 16_384;
const CORRECTION_GRAIN: i32 = 256;
/// The most a correction moves the static score, in centipawns.
const CORRECTION_LIMIT: i32 = 300;
const RFP_DEPTH: i32 = 6;
const RFP_MARGIN: i32 = 100;
const FUTILITY_DEPTH: i32 = 4;
const FUTILITY_BASE: i32 = 80;
const FUTILITY_MARGIN: i32 = 110;
const LMP_DEPTH: i32 = 6;
const HISTORY_PRUNE: i32 = 3_000;
const HISTORY_REDUCTION: i32 = 6_000;
const BAD_CAPTURE_MARGIN: i32 = 200;

/// Plies to cut from a late quiet move: grows with depth and with how late
/// the move comes in the ordering.
fn reduction_table() -> Box<[[u8; 64]; 64]> {
    let mut table = Box::new([[0u8; 64]; 64]);
    for (depth, row) in table.iter_mut().enumerate().skip(1) {
        for (index, r) in row.iter_mut().enumerate().skip(1) {
            *r = (0.75 + (depth as f64).ln() * (index as f64).ln() / 2.25) as u8;
        }
    }
    table
}

/// The correction-history slot of the position: side to move and pawns.
fn correction_index(pos: &Position) -> usize {
    let board = pos.board();
    let pawns = board.pawns();
    let white = (pawns & board.by_color(fogblast_rules::Color::White)).0;
    let black = (pawns & board.by_color(fogblast_rules::Color::Black)).0;
    let hash = splitmix(white ^ splitmix(black));
    pos.turn().index() * CORRECTION_SIZE + (hash as usize & (CORRECTION_SIZE - 1))
}

/// Whether the side to move has a piece besides pawns and king (null moves
/// are unsafe in pawn endings, where passing may be the only good move).
fn has_pieces(pos: &Position) -> bool {
    let board = pos.board();
    (board.by_color(pos.turn()) - board.pawns() - board.kings()).any()
}

/// Mate scores are stored relative to the node, not the root.
fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score + ply as i32
    } else if score <= -MATE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

fn score_from_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score - ply as i32
    } else if score <= -MATE_BOUND {
        score + ply as i32
    } else {
        score
    }
}

/// SplitMix64: a fast, well-mixed hash for deterministic evaluation noise.
pub(crate) fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use fogblast_rules::Variant;

    use super::*;

    fn searched(variant: Variant, eval_noise: i32) -> Searcher {
        let mut searcher = Searcher::new(1);
        let limits = Limits { depth: Some(2), eval_noise, ..Limits::default() };
        searcher.search(&Position::new(variant), &[], &limits, &AtomicBool::new(false), &mut |_| {});
        searcher
    }

    #[test]
    fn only_full_strength_atomic_searches_use_the_network() {
        assert!(searched(Variant::Atomic, 0).net.is_some());
        assert!(searched(Variant::Atomic, 40).net.is_none());
        assert!(searched(Variant::Standard, 0).net.is_none());
    }

    #[test]
    fn leaf_evaluations_along_a_path_use_that_paths_sums() {
        let mut searcher = searched(Variant::Atomic, 0);
        let net = nnue::atomic();
        let mut seed = 5;
        for _ in 0..10 {
            let mut pos = Position::new(Variant::Atomic);
            searcher.sums[0] = Accumulator::new(net, pos.board());
            for ply in 0..MAX_PLY {
                let moves = pos.legal_moves();
                if moves.is_empty() || pos.outcome().is_some() {
                    break;
                }
                seed = splitmix(seed);
                let mut child = pos;
                child.play_unchecked(moves[(seed % moves.len() as u64) as usize]);
                searcher.follow(ply, &pos, &child);
                let scratch = Accumulator::new(net, child.board());
                assert_eq!(searcher.sums[ply + 1], scratch);
                let hand_written = if net.residual { evaluate(&child) } else { 0 };
                let expected = hand_written + net.evaluate(&scratch, child.turn());
                assert_eq!(searcher.leaf_eval(&child, ply + 1, child.zobrist_hash()), expected);
                pos = child;
            }
        }
    }
}
