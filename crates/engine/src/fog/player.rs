//! Move choice in fog of war by determinization: sample positions from the
//! belief, search each as if it were the whole truth (a small alpha-beta in
//! which taking a king wins at once), and play the move with the best
//! average over the samples. A move that loses the king in some of the
//! samples pays for it in proportion, which is the care an unseen attacker
//! calls for: a king can be taken without any warning. Hard samples on past
//! its count while more samples could still change the move and its time
//! allows, then spends the rest of its time searching the same samples
//! deeper; it counts the candidates in which the opponent's last move
//! attacks our king above the rest.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use fogblast_rules::{Bitboard, CastlingMode, Color, Move, MoveList, Position, Role, Uci};

use super::belief::{moves_position, Belief, BeliefError};
use super::observation::{FogObservation, ObservedPly, Sight};
use super::reach::EnemyReach;
use super::rng::Rng;
use crate::clock::Instant;
use crate::eval::{evaluate, piece_value};
use crate::level::Level;
use crate::search::splitmix;
use crate::time::{Clock, TimeBudget};
use fogblast_rules::attacks;

/// A king taken, in the fog search's own units.
const WIN: i32 = 20_000;
const INFINITY: i32 = 30_000;
/// Scores are capped before averaging so one sample cannot drown the rest:
/// losing the king counts as this much, winning one as much in favour.
const KING_STAKE: i32 = 3_000;
const SCORE_CAP: i32 = 2_000;
const MAX_PLY: usize = 32;

/// What one fog level may spend on a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FogSettings {
    /// Most candidate positions kept by the belief.
    pub belief_cap: usize,
    /// Positions sampled from the belief and searched (fewer only when
    /// time runs out).
    pub samples: usize,
    /// Most positions searched when time allows: past `samples`, sampling
    /// goes on until the best move is clear of the next (or the two are
    /// too close to matter), `time_share` of the move's time is spent, or
    /// the candidates run out.
    pub max_samples: usize,
    /// Percent of the move's time sampling may run into past `samples`;
    /// the rest is headroom under the cap.
    pub time_share: u32,
    /// Deepest search of one sample, in plies (captures are followed
    /// further).
    pub depth: u32,
    /// Most nodes spent on one sample past its first ply.
    pub nodes_per_sample: u64,
    /// Longest time for one move.
    pub max_time: Duration,
    /// Each move's averaged score is moved by up to this many centipawns.
    pub noise: i32,
    /// Percent of a king's worth charged for each move by the share of
    /// candidate positions in which it leaves our king open to capture.
    pub king_care: i32,
    /// Never play a move that puts or leaves our king where a piece the
    /// belief allows for (any candidate's piece on any fogged square, or a
    /// piece in sight) could take it, unless every move does.
    pub king_guard: bool,
    /// The belief keeps first the candidates in which the opponent's last
    /// move threatens our king (see [`Belief::track_with`]).
    pub keep_threats: bool,
    /// How many times a candidate in which our king stands attacked (the
    /// opponent's last, unseen move attacks it) counts against one in which
    /// it does not: in the share of candidates that take our king after a
    /// move, and in the odds of being drawn as a sample. An opponent who
    /// hunts kings plays such moves far more often than chance. 1 weighs
    /// every candidate alike.
    pub threat_weight: u32,
    /// Deepest search of a sample when time allows: once the samples are
    /// searched to `depth`, they are searched again a ply deeper (the moves
    /// still in contention only, within four times the node budget per
    /// extra ply), deeper and deeper up to this, until the move's time
    /// runs out; each sample counts at the deepest depth it completed.
    /// Only with a time limit; `depth` for none of it.
    pub max_depth: u32,
}

/// Fog of war Hard as it stood before it spent its time: a belief of 256,
/// 12 samples searched to depth 3 within 60,000 nodes each, king care by
/// the share of candidates, and the king guard. The yardstick its
/// successor is measured against (`fogblast-tools selfplay --variant fog
/// --second prior-hard`); no level plays it.
pub const PRIOR_HARD: FogSettings = FogSettings {
    belief_cap: 256,
    samples: 12,
    max_samples: 12,
    time_share: 100,
    depth: 3,
    nodes_per_sample: 60_000,
    max_time: Duration::from_secs(1),
    noise: 0,
    king_care: 100,
    king_guard: true,
    keep_threats: false,
    threat_weight: 1,
    max_depth: 3,
};

/// Fog of war Hard before it weighed the threatening candidates and
/// searched deeper in its spare time: every candidate alike, depth 3 only.
/// The yardstick for those changes (`fogblast-tools fog-match
/// --opponent-level hard-before-deepening`); no level plays it.
pub const FORMER_HARD: FogSettings =
    FogSettings { threat_weight: 1, max_depth: Level::Hard.fog_settings().depth, ..Level::Hard.fog_settings() };

impl Level {
    /// This level's fog-of-war settings (calibrated in docs/engine.md).
    pub const fn fog_settings(self) -> FogSettings {
        match self {
            Level::Easy => FogSettings {
                belief_cap: 32,
                samples: 3,
                max_samples: 3,
                time_share: 100,
                depth: 1,
                nodes_per_sample: 2_000,
                max_time: Duration::from_millis(300),
                noise: 120,
                king_care: 0,
                king_guard: false,
                keep_threats: false,
                threat_weight: 1,
                max_depth: 1,
            },
            Level::Medium => FogSettings {
                belief_cap: 128,
                samples: 4,
                max_samples: 4,
                time_share: 100,
                depth: 2,
                nodes_per_sample: 20_000,
                max_time: Duration::from_millis(600),
                noise: 60,
                king_care: 0,
                king_guard: false,
                keep_threats: false,
                threat_weight: 1,
                max_depth: 2,
            },
            Level::Hard => FogSettings {
                belief_cap: 4_096,
                samples: 12,
                max_samples: 96,
                time_share: 50,
                depth: 3,
                nodes_per_sample: 60_000,
                max_time: Duration::from_secs(1),
                noise: 0,
                king_care: 100,
                king_guard: true,
                keep_threats: true,
                threat_weight: 10,
                max_depth: 6,
            },
        }
    }

    /// The fog limits for one move: the level's settings, the caller's
    /// time `budget`, the side's clock, and a seed for repeatable choices.
    pub fn fog_limits(self, clock: Option<Clock>, budget: Option<Duration>, seed: u64) -> FogLimits {
        let settings = self.fog_settings();
        let mut movetime = budget.map_or(settings.max_time, |b| b.min(settings.max_time));
        if let Some(clock) = clock {
            movetime = movetime.min(TimeBudget::from_clock(&clock, 0).hard);
        }
        FogLimits { settings, movetime: Some(movetime), seed }
    }
}

/// How one fog move is searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FogLimits {
    pub settings: FogSettings,
    /// Time for the whole move, belief tracking included; `None` for no
    /// limit but the settings' own (for calibration by nodes).
    pub movetime: Option<Duration>,
    pub seed: u64,
}

/// Why no move could be chosen.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FogError {
    #[error("it is not {0}'s turn in this observation")]
    NotOurTurn(Color),
    #[error(transparent)]
    Belief(#[from] BeliefError),
    #[error("the game is over: there is no move to find")]
    GameOver,
}

/// The move chosen and what it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FogReport {
    /// The move in UCI, castling as the king's two-square step.
    pub best: Uci,
    /// Average capped score of the move over the samples, in centipawns.
    pub score: i32,
    /// Samples searched.
    pub samples: usize,
    /// The shallowest depth every sample completed.
    pub depth: u32,
    pub nodes: u64,
    /// Candidate positions now, and after each ply of the game.
    pub belief_size: usize,
    pub belief_sizes: Vec<usize>,
    /// Times the belief lost every candidate and was rebuilt from sight.
    pub rebuilds: usize,
    pub elapsed: Duration,
}

/// The fog-of-war entry point: the move for the side of `obs`, which must
/// be to move. It sees only `obs`, never a position of the game.
pub fn best_fog_move(obs: &FogObservation, limits: &FogLimits, stop: &AtomicBool) -> Result<FogReport, FogError> {
    let started = Instant::now();
    let color = obs.color();
    if obs.turn() != color {
        return Err(FogError::NotOurTurn(color));
    }
    let settings = limits.settings;
    let belief = Belief::track_with(obs, settings.belief_cap, limits.seed, settings.keep_threats)?;
    let (live, weights, samples) = candidates(&belief, &settings, limits.seed)?;

    // Our moves come from what we see, not from a guess about the fog.
    let sight = match obs.plies().last() {
        Some(ObservedPly::Own { after, .. } | ObservedPly::Opponent { after, .. }) => Some(after),
        None => None,
    };
    let mover = match sight {
        Some(sight) => moves_position(sight, color, &samples[0]),
        None => Some(Position::new(fogblast_rules::Variant::Fog)),
    };
    let root_moves: Vec<(Uci, Move)> =
        mover.unwrap_or(samples[0]).legal_moves().into_iter().map(|m| (uci_of(m), m)).collect();
    if root_moves.is_empty() {
        return Err(FogError::GameOver);
    }
    let deadline = limits.movetime.map(|t| started + t);
    let mut searcher = Determinized { nodes: 0, limit: u64::MAX, deadline, stop, aborted: false };
    // A king in sight is taken at once, whatever the samples say.
    if let Some(&(uci, _)) = root_moves.iter().find(|(_, m)| m.capture() == Some(Role::King)) {
        return Ok(report(uci, KING_STAKE, 0, 1, 0, &belief, started));
    }

    let exposed = exposure(&live, &weights, &root_moves, color);
    let total_weight: i64 = weights.iter().map(|&w| i64::from(w)).sum();
    let risk: Vec<i64> = exposed.iter().map(|&n| n * i64::from(KING_STAKE) / total_weight).collect();
    let danger: Vec<u32> = if settings.king_guard {
        let threats = FogThreats::new(sight, &live, color, EnemyReach::track(obs).squares);
        danger_ranks(&threats, &mover.unwrap_or(samples[0]), &root_moves, &exposed)
    } else {
        vec![0; root_moves.len()]
    };
    let least_danger = danger.iter().copied().min().unwrap_or(0);
    // What each move is charged on top of its average: the share of
    // candidates that take our king after it.
    let charge: Vec<i64> = risk.iter().map(|r| r * i64::from(settings.king_care) / 100).collect();
    let contenders: Vec<usize> = (0..root_moves.len()).filter(|&i| danger[i] == least_danger).collect();
    let soft_deadline = limits.movetime.map(|t| started + t * settings.time_share.min(100) / 100);
    let mut searched = search_samples(&mut searcher, &samples, &root_moves, &settings, |per_sample| {
        contenders.len() < 2
            || soft_deadline.is_some_and(|d| Instant::now() >= d)
            || settled(per_sample, &contenders, &charge)
    });
    if contenders.len() > 1 && limits.movetime.is_some() {
        deepen(&mut searcher, &samples, &root_moves, &settings, &contenders, &mut searched);
    }
    let allowed: Vec<bool> = danger.iter().map(|&d| d <= least_danger).collect();
    let samples_searched = searched.per_sample.len();
    let (score, i) = choose(
        &searched.totals(root_moves.len()),
        samples_searched,
        &allowed,
        &charge,
        &root_moves,
        &settings,
        limits.seed,
    );
    Ok(report(
        root_moves[i].0,
        score.clamp(-i64::from(KING_STAKE), i64::from(KING_STAKE)) as i32,
        samples_searched,
        searched.depth(),
        searcher.nodes,
        &belief,
        started,
    ))
}

/// The belief's candidates with both kings on the board, each one's weight
/// (see [`FogSettings::threat_weight`]), and the ones to search (at most
/// the settings' most samples), drawn at random in proportion to their
/// weights.
type Candidates = (Vec<Position>, Vec<u32>, Vec<Position>);

fn candidates(belief: &Belief, settings: &FogSettings, seed: u64) -> Result<Candidates, FogError> {
    let mut rng = Rng::new(seed ^ 0xf09_5ea7c4);
    let live: Vec<Position> = belief
        .particles()
        .iter()
        .copied()
        .filter(|p| p.board().king_of(Color::White).is_some() && p.board().king_of(Color::Black).is_some())
        .collect();
    if live.is_empty() {
        return Err(FogError::GameOver);
    }
    let color = belief.color();
    let weights: Vec<u32> = live.iter().map(|p| candidate_weight(p, color, settings.threat_weight)).collect();
    let order: Vec<usize> = if weights.iter().all(|&w| w == 1) {
        let mut order: Vec<usize> = (0..live.len()).collect();
        rng.shuffle(&mut order);
        order
    } else {
        weighted_order(&weights, &mut rng)
    };
    let most = settings.max_samples.max(settings.samples).max(1);
    let samples: Vec<Position> = order.iter().take(most).map(|&i| live[i]).collect();
    Ok((live, weights, samples))
}

/// How much the candidate `pos` counts: `threat_weight` (at least 1) when
/// `color`'s king stands attacked in it, else 1.
fn candidate_weight(pos: &Position, color: Color, threat_weight: u32) -> u32 {
    let board = pos.board();
    let attacked = board.king_of(color).is_some_and(|king| board.attackers(king, !color, board.occupied()).any());
    if attacked {
        threat_weight.max(1)
    } else {
        1
    }
}

/// Indices in a random order in which each comes early in proportion to
/// its weight: a draw without replacement, each index keyed by
/// `ln(u) / weight` for a uniform `u` and taken largest key first
/// (Efraimidis and Spirakis).
fn weighted_order(weights: &[u32], rng: &mut Rng) -> Vec<usize> {
    let mut keyed: Vec<(f64, usize)> = weights
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let u = ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            (u.ln() / f64::from(w.max(1)), i)
        })
        .collect();
    keyed.sort_by(|a, b| b.0.total_cmp(&a.0));
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// The plainest danger, over every candidate rather than the samples
/// alone: for each root move, the total weight of the candidates that
/// leave our king where an enemy piece can take it next.
fn exposure(live: &[Position], weights: &[u32], root_moves: &[(Uci, Move)], color: Color) -> Vec<i64> {
    let mut exposed = vec![0i64; root_moves.len()];
    let index_of: HashMap<Uci, usize> = root_moves.iter().enumerate().map(|(i, &(uci, _))| (uci, i)).collect();
    for (pos, &weight) in live.iter().zip(weights) {
        for m in pos.legal_moves() {
            let Some(&i) = index_of.get(&uci_of(m)) else { continue };
            let mut child = *pos;
            child.play_unchecked(m);
            let board = child.board();
            if board.king_of(color).is_some_and(|king| board.attackers(king, !color, board.occupied()).any()) {
                exposed[i] += i64::from(weight);
            }
        }
    }
    exposed
}

/// The king guard's rank of each root move, least dangerous first: 3 when
/// some candidate has our king taken after it; 2 when no candidate does but
/// a piece the belief allows for somewhere in the fog could take it; 1 when
/// only a piece the enemy's reach allows for could ([`EnemyReach`]: a bound
/// that holds the real position even when the belief's sample has lost it);
/// 0 when safe. Within ranks 1 and 2 the fewer the placements of an enemy
/// piece that could take the king, the less dangerous (the least likely).
/// Only the least dangerous rank present is played.
fn danger_ranks(threats: &FogThreats, mover: &Position, root_moves: &[(Uci, Move)], exposed: &[i64]) -> Vec<u32> {
    root_moves
        .iter()
        .zip(exposed)
        .map(|(&(_, m), &n)| {
            if n > 0 {
                return 3 << 16;
            }
            let (sampled, reachable) = threats.exposes(mover, m);
            if sampled > 0 {
                (2 << 16) | sampled.min(0xffff)
            } else if reachable > 0 && m.role() == Role::King {
                (1 << 16) | reachable.min(0xffff)
            } else {
                0
            }
        })
        .collect()
}

/// The root moves' scores in each sample searched, and the depth each
/// sample's scores come from.
struct Searched {
    per_sample: Vec<Vec<i32>>,
    depths: Vec<u32>,
}

impl Searched {
    /// Each root move's scores summed over the samples.
    fn totals(&self, moves: usize) -> Vec<i64> {
        let mut totals = vec![0i64; moves];
        for scores in &self.per_sample {
            for (total, &score) in totals.iter_mut().zip(scores) {
                *total += i64::from(score);
            }
        }
        totals
    }

    /// The shallowest depth every sample completed (1 when none did).
    fn depth(&self) -> u32 {
        self.depths.iter().copied().min().unwrap_or(1)
    }
}

/// Searches the samples in turn until time runs out or, past the level's
/// own number of samples, `enough` says more cannot change the choice.
fn search_samples(
    searcher: &mut Determinized<'_>,
    samples: &[Position],
    root_moves: &[(Uci, Move)],
    settings: &FogSettings,
    enough: impl Fn(&[Vec<i32>]) -> bool,
) -> Searched {
    let mut per_sample: Vec<Vec<i32>> = Vec::with_capacity(samples.len());
    let mut depths = Vec::with_capacity(samples.len());
    for (index, sample) in samples.iter().enumerate() {
        if index > 0 && searcher.out_of_time() {
            break;
        }
        if index >= settings.samples.max(1) && enough(&per_sample) {
            break;
        }
        let Some((depth, scores)) = searcher.root(sample, root_moves, *settings) else { break };
        per_sample.push(scores);
        depths.push(depth);
    }
    Searched { per_sample, depths }
}

/// Spends the rest of the move's time on the samples already searched: a
/// ply deeper for each in turn (the `contenders` only, the other moves keep
/// their scores, which the guard has ruled out anyway), then deeper again,
/// up to the settings' `max_depth`, until time runs out. A sample that
/// runs out of nodes or time keeps its scores from the depth it completed.
fn deepen(
    searcher: &mut Determinized<'_>,
    samples: &[Position],
    root_moves: &[(Uci, Move)],
    settings: &FogSettings,
    contenders: &[usize],
    searched: &mut Searched,
) {
    let mut only = vec![false; root_moves.len()];
    for &i in contenders {
        only[i] = true;
    }
    let base = settings.depth.max(1);
    for depth in base + 1..=settings.max_depth {
        let nodes = settings.nodes_per_sample.saturating_mul(4u64.saturating_pow(depth - base));
        for (k, sample) in samples.iter().enumerate().take(searched.per_sample.len()) {
            if searcher.out_of_time() {
                return;
            }
            if searched.depths[k] + 1 != depth {
                continue;
            }
            let Some(scores) = searcher.deeper(sample, root_moves, depth, nodes, &only) else { continue };
            for &i in contenders {
                searched.per_sample[k][i] = scores[i];
            }
            searched.depths[k] = depth;
        }
    }
}

/// The allowed move with the best average less its charge (plus the
/// level's noise): its score and index.
fn choose(
    totals: &[i64],
    searched: usize,
    allowed: &[bool],
    charge: &[i64],
    root_moves: &[(Uci, Move)],
    settings: &FogSettings,
    seed: u64,
) -> (i64, usize) {
    let searched_n = searched.max(1) as i64;
    let mut best = (i64::MIN, 0usize);
    for (i, total) in totals.iter().enumerate() {
        if !allowed[i] {
            continue;
        }
        let mut score = total / searched_n - charge[i];
        if settings.noise > 0 {
            let spread = 2 * settings.noise as u64 + 1;
            let key = seed ^ (u64::from(root_moves[i].0.from.index() as u8) << 8) ^ root_moves[i].0.to.index() as u64;
            score += (splitmix(key) % spread) as i64 - i64::from(settings.noise);
        }
        if score > best.0 {
            best = (score, i);
        }
    }
    best
}

/// Every enemy piece our belief allows for: the ones in sight, and on each
/// fogged square whatever any candidate puts there; and, wider still, every
/// piece the enemy's reach allows for. Wider than any one candidate, so a
/// belief that has lost the real position (sampling keeps some thousands of
/// many) still warns of what the fog might hide.
struct FogThreats {
    /// Squares we see; what stands on them after our move is known.
    visible: Bitboard,
    /// By role, the fogged squares some candidate puts an enemy piece on.
    fogged: [Bitboard; 6],
    /// By role, the fogged squares an enemy piece could have reached.
    reachable: [Bitboard; 6],
    color: Color,
}

impl FogThreats {
    fn new(sight: Option<&Sight>, live: &[Position], color: Color, reach: [Bitboard; 6]) -> FogThreats {
        // Before any ply the whole start position is known.
        let visible = sight.map_or(Bitboard::FULL, Sight::visible);
        let mut fogged = [Bitboard::EMPTY; 6];
        for pos in live {
            for role in Role::ALL {
                fogged[role.index()] |= pos.board().by_piece(role.of(!color)) - visible;
            }
        }
        let reachable = reach.map(|squares| squares - visible);
        FogThreats { visible, fogged, reachable, color }
    }

    /// After `m` in `mover` (our moves, from what we see), how many
    /// placements of an enemy piece could take our king: among the pieces
    /// in sight and the belief's, and among those and the reachable ones.
    /// Fogged squares count as empty, so a line through the fog is open: the
    /// careful reading.
    fn exposes(&self, mover: &Position, m: Move) -> (u32, u32) {
        let mut after = *mover;
        after.play_unchecked(m);
        let board = after.board();
        let Some(king) = board.king_of(self.color) else { return (1, 1) };
        let occupied = board.occupied();
        let ours = board.by_color(self.color);
        let (mut sampled, mut reachable) = (0, 0);
        for role in Role::ALL {
            let reach = attacks::attacks(role, self.color, king, occupied);
            let in_sight = board.by_piece(role.of(!self.color)) & self.visible;
            let believed = in_sight | (self.fogged[role.index()] - ours);
            sampled += (reach & believed).count() as u32;
            reachable += (reach & (believed | (self.reachable[role.index()] - ours))).count() as u32;
        }
        (sampled, reachable)
    }
}

/// Whether the samples so far have made the choice among `contenders`
/// (with their `charge`s): the leader is ahead of the next best by more than
/// twice the standard error of their paired difference, or that difference
/// is known to within a few centipawns either way.
fn settled(per_sample: &[Vec<i32>], contenders: &[usize], charge: &[i64]) -> bool {
    let n = per_sample.len();
    if n < 2 || contenders.len() < 2 {
        return true;
    }
    let mean = |i: usize| per_sample.iter().map(|s| i64::from(s[i])).sum::<i64>() as f64 / n as f64 - charge[i] as f64;
    let mut ranked: Vec<(f64, usize)> = contenders.iter().map(|&i| (mean(i), i)).collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    let ((lead, first), (_, second)) = (ranked[0], ranked[1]);
    let gap = lead - ranked[1].0;
    let diffs: Vec<f64> = per_sample.iter().map(|s| f64::from(s[first] - s[second])).collect();
    let mean_diff = diffs.iter().sum::<f64>() / n as f64;
    let var = diffs.iter().map(|d| (d - mean_diff).powi(2)).sum::<f64>() / (n - 1) as f64;
    let se = (var / n as f64).sqrt();
    gap > 2.0 * se || se < 10.0
}

fn report(
    best: Uci,
    score: i32,
    samples: usize,
    depth: u32,
    nodes: u64,
    belief: &Belief,
    started: Instant,
) -> FogReport {
    FogReport {
        best,
        score,
        samples,
        depth,
        nodes,
        belief_size: belief.len(),
        belief_sizes: belief.sizes.clone(),
        rebuilds: belief.rebuilds,
        elapsed: started.elapsed(),
    }
}

fn uci_of(m: Move) -> Uci {
    m.to_uci(CastlingMode::Standard)
}

/// Each root move as `pos` has it.
fn moves_in(pos: &Position, roots: &[(Uci, Move)]) -> Vec<Option<Move>> {
    let here = pos.legal_moves();
    roots.iter().map(|(uci, _)| here.iter().copied().find(|&m| uci_of(m) == *uci)).collect()
}

/// A plain alpha-beta over one sampled position.
struct Determinized<'a> {
    nodes: u64,
    limit: u64,
    deadline: Option<Instant>,
    stop: &'a AtomicBool,
    aborted: bool,
}

impl Determinized<'_> {
    fn out_of_time(&mut self) -> bool {
        if !self.aborted {
            let late = self.deadline.is_some_and(|d| Instant::now() >= d);
            self.aborted = late || self.stop.load(Ordering::Relaxed);
        }
        self.aborted
    }

    /// Capped scores of every root move in `pos`, from the deepest
    /// iteration that completed, and that depth. `None` when not even the
    /// first ply could be searched in time.
    fn root(&mut self, pos: &Position, roots: &[(Uci, Move)], settings: FogSettings) -> Option<(u32, Vec<i32>)> {
        let moves = moves_in(pos, roots);
        let mut best = None;
        let start_nodes = self.nodes;
        for depth in 1..=settings.depth.max(1) {
            // The first ply always completes unless time is up; deeper
            // ones stop at the node budget.
            self.limit = if depth == 1 { u64::MAX } else { start_nodes + settings.nodes_per_sample };
            let Some(scores) = self.pass(pos, &moves, depth, None) else { break };
            best = Some((depth, scores));
        }
        self.end_sample();
        best
    }

    /// Capped scores at `depth` alone of the root moves `only` marks (the
    /// others score 0) in `pos`, within `nodes`; `None` when stopped.
    fn deeper(
        &mut self,
        pos: &Position,
        roots: &[(Uci, Move)],
        depth: u32,
        nodes: u64,
        only: &[bool],
    ) -> Option<Vec<i32>> {
        let moves = moves_in(pos, roots);
        self.limit = self.nodes.saturating_add(nodes);
        let scores = self.pass(pos, &moves, depth, Some(only));
        self.end_sample();
        scores
    }

    /// One iteration over the root moves at `depth`; `None` when stopped.
    fn pass(&mut self, pos: &Position, moves: &[Option<Move>], depth: u32, only: Option<&[bool]>) -> Option<Vec<i32>> {
        self.aborted = false;
        let mut scores = Vec::with_capacity(moves.len());
        for (i, m) in moves.iter().enumerate() {
            let score = match m {
                _ if only.is_some_and(|only| !only[i]) => 0,
                // Our moves depend only on what we see, so every sample
                // has them all; this guards the impossible case.
                None => -SCORE_CAP,
                Some(m) => {
                    let mut child = *pos;
                    child.play_unchecked(*m);
                    cap(-self.negamax(&child, depth as i32 - 1, 1, -INFINITY, INFINITY))
                }
            };
            if self.aborted {
                return None;
            }
            scores.push(score);
        }
        Some(scores)
    }

    /// A stop by nodes ends this sample only; by time, the whole move.
    fn end_sample(&mut self) {
        if self.nodes >= self.limit {
            self.aborted = false;
        }
        self.limit = u64::MAX;
    }

    fn tick(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes >= self.limit {
            self.aborted = true;
        } else if self.nodes.is_multiple_of(512) {
            self.out_of_time();
        }
        self.aborted
    }

    fn negamax(&mut self, pos: &Position, depth: i32, ply: usize, mut alpha: i32, beta: i32) -> i32 {
        if self.tick() {
            return 0;
        }
        let us = pos.turn();
        let board = pos.board();
        let Some(our_king) = board.king_of(us) else { return -WIN + ply as i32 };
        let Some(their_king) = board.king_of(!us) else { return WIN - ply as i32 };
        if board.attackers(their_king, us, board.occupied()).any() {
            return WIN - ply as i32;
        }
        if pos.halfmoves() >= 100 {
            return 0;
        }
        let threatened = board.attackers(our_king, !us, board.occupied()).any();
        if depth <= 0 || ply >= MAX_PLY {
            return self.quiesce(pos, ply, 0, alpha, beta);
        }
        let mut moves = MoveList::new();
        pos.generate_legal_moves(&mut moves);
        if moves.is_empty() {
            return 0;
        }
        order(pos, &mut moves);
        let mut best = -INFINITY;
        for m in moves {
            let mut child = *pos;
            child.play_unchecked(m);
            // An attacked king looks one ply further: its escape matters.
            let extension = i32::from(threatened && ply < 6);
            let score = -self.negamax(&child, depth - 1 + extension, ply + 1, -beta, -alpha);
            if self.aborted {
                return 0;
            }
            if score > best {
                best = score;
                alpha = alpha.max(score);
                if alpha >= beta {
                    break;
                }
            }
        }
        best
    }

    fn quiesce(&mut self, pos: &Position, ply: usize, qply: usize, mut alpha: i32, beta: i32) -> i32 {
        if self.tick() {
            return 0;
        }
        let us = pos.turn();
        let board = pos.board();
        let Some(our_king) = board.king_of(us) else { return -WIN + ply as i32 };
        let Some(their_king) = board.king_of(!us) else { return WIN - ply as i32 };
        if board.attackers(their_king, us, board.occupied()).any() {
            return WIN - ply as i32;
        }
        let threatened = board.attackers(our_king, !us, board.occupied()).any();
        let mut moves = MoveList::new();
        let mut best;
        if threatened && qply < 2 {
            // Standing still would lose the king: every move is searched.
            pos.generate_legal_moves(&mut moves);
            best = -WIN + ply as i32 + 1;
        } else {
            let mut stand = fog_evaluate(pos);
            if threatened {
                stand -= 600;
            }
            if stand >= beta || ply >= MAX_PLY {
                return stand;
            }
            alpha = alpha.max(stand);
            best = stand;
            pos.generate_legal_captures(&mut moves);
        }
        order(pos, &mut moves);
        for m in moves {
            let mut child = *pos;
            child.play_unchecked(m);
            let score = -self.quiesce(&child, ply + 1, qply + 1, -beta, -alpha);
            if self.aborted {
                return 0;
            }
            if score > best {
                best = score;
                alpha = alpha.max(score);
                if alpha >= beta {
                    break;
                }
            }
        }
        best
    }
}

/// Scores mean what they say up to the caps: a king won or lost is one
/// stake, anything else at most the cap.
fn cap(score: i32) -> i32 {
    if score >= WIN - 100 {
        KING_STAKE
    } else if score <= -WIN + 100 {
        -KING_STAKE
    } else {
        score.clamp(-SCORE_CAP, SCORE_CAP)
    }
}

/// Captures first, the most valuable victim by the least valuable piece.
fn order(pos: &Position, moves: &mut MoveList) {
    let variant = pos.variant();
    let key = |m: &Move| -> i32 {
        match m.capture() {
            Some(Role::King) => -100_000,
            Some(victim) => -(piece_value(variant, victim) * 10 - piece_value(variant, m.role()) / 10),
            None => match m.promotion() {
                Some(_) => -5_000,
                None => 0,
            },
        }
    };
    moves.sort_by_key(key);
}

/// The static evaluation for the side to move, with the fog's king terms:
/// a king is lost the moment an enemy piece reaches it, so cover around it
/// counts and enemy pieces bearing on its neighbourhood cost.
pub fn fog_evaluate(pos: &Position) -> i32 {
    let us = pos.turn();
    evaluate(pos) + king_terms(pos, us) - king_terms(pos, !us)
}

fn king_terms(pos: &Position, color: Color) -> i32 {
    let board = pos.board();
    let Some(king) = board.king_of(color) else { return 0 };
    let zone = attacks::king_attacks(king);
    let cover = (zone & board.by_color(color)).count() as i32;
    let occupied = board.occupied();
    let mut pressure = 0;
    for sq in zone.with(king) {
        pressure += board.attackers(sq, !color, occupied).count() as i32;
    }
    cover * 6 - pressure * 12
}

#[cfg(test)]
mod tests {
    use super::{settled, weighted_order, Rng};

    #[test]
    fn a_weighted_draw_puts_the_heavy_candidates_first_in_proportion() {
        // One candidate of weight 10 among 20 of weight 1: it leads the
        // draw about 10 times in 30, not 1 in 21.
        let mut weights = vec![1u32; 21];
        weights[7] = 10;
        let mut rng = Rng::new(3);
        let first = (0..3_000).filter(|_| weighted_order(&weights, &mut rng)[0] == 7).count();
        assert!((800..1_200).contains(&first), "{first} of 3000");
        // Every index once.
        let mut order = weighted_order(&weights, &mut rng);
        order.sort_unstable();
        assert_eq!(order, (0..21).collect::<Vec<_>>());
    }

    #[test]
    fn sampling_settles_on_a_clear_lead_or_a_gap_too_small_to_matter() {
        // Move 0 leads move 1 by about 300 cp in every sample.
        let clear: Vec<Vec<i32>> = (0..12).map(|k| vec![300 + k * 7 % 40, k * 11 % 30, -500]).collect();
        assert!(settled(&clear, &[0, 1, 2], &[0, 0, 0]));
        // Scores that swing from sample to sample around a small gap:
        // still open.
        let noisy: Vec<Vec<i32>> =
            (0..12).map(|k| vec![if k % 2 == 0 { 600 } else { -400 }, if k % 3 == 0 { 500 } else { -300 }]).collect();
        assert!(!settled(&noisy, &[0, 1], &[0, 0]));
        // Two moves that score alike in every sample: nothing to learn.
        let alike: Vec<Vec<i32>> = (0..12).map(|k| vec![k * 50, k * 50 + 1]).collect();
        assert!(settled(&alike, &[0, 1], &[0, 0]));
        // One move allowed: nothing to choose.
        assert!(settled(&noisy, &[1], &[0, 0]));
    }
}
