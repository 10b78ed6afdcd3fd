//! The Swiss system's pairings, after FIDE's Dutch system (Handbook C.04.3,
//! the text approved in 2016 and in force from 2017 until January 2026;
//! rule numbers below are that text's), as a pure function from the players'
//! records to the next round's boards.
//!
//! # What is implemented
//!
//! * **Ranking.** Pairing numbers come from the initial ranking list:
//!   rating (the rating at registration, so numbers never change mid-event)
//!   descending, then id. Within a round players are ordered by score, then
//!   pairing number.
//! * **Brackets.** Score groups are paired from the top down. A bracket is
//!   its score group (the residents) plus the players moved down from above
//!   (MDPs). In a heterogeneous bracket S1 holds the paired MDPs, S2 the
//!   residents, and the residents left over form the remainder, paired as a
//!   homogeneous bracket (S1 the first half, S2 the rest). Candidates are
//!   generated in the handbook's order: which MDPs are paired (highest
//!   first), transpositions of S2 (lexicographic on the first N1 sequence
//!   numbers, rule D.1), exchanges between S1 and S2 of the remainder
//!   (rule D.2's order: fewest players exchanged, smallest difference
//!   of the sums of sequence numbers, highest moved out of S1, lowest moved
//!   out of S2). Unpaired players float down to the next bracket.
//! * **Absolute criteria.** C1 no rematch; C2 no second pairing-allocated
//!   bye; C3 two non-topscorers with the same absolute colour preference
//!   never meet, which is what keeps everyone within a colour difference of
//!   ±2 and away from a third colour in a row. Topscorers (more than half
//!   the possible points) are exempt in the last round, as the rules allow
//!   ([`SwissSettings::topscorer_exception`]).
//! * **Completion (C4).** A bracket's candidate is only accepted if the
//!   downfloaters and every lower player can still all be paired, decided
//!   exactly by a maximum matching (Edmonds' blossom algorithm), so a
//!   bracket is never paired in a way that strands the rest of the round.
//! * **Quality criteria**, in order: C5 most pairs, C6 smallest pairing
//!   score difference (pair as many and as high MDPs as possible), C8–C9
//!   topscorers past the colour limits, C10 unmet colour preferences, C11
//!   unmet strong preferences, C12–C15 repeated downfloats and upfloats of
//!   the previous round and the round before. The first candidate that
//!   reaches the best value possible for it is taken, else the best seen.
//! * **Bye.** With an odd number of players, the bye goes to the
//!   lowest-ranked player of the lowest score who has not had one and whose
//!   absence leaves the others pairable; among those, one who has missed
//!   fewer rounds goes first (a refinement taken from the 2025 text's C9,
//!   so a late joiner or a returning absentee is not sent away again). It scores
//!   [`SwissSettings::bye_points_x2`]. As in the 2017 text (A.4.b), any
//!   player who does not play a round (bye, absence, late entry) receives a
//!   downfloat.
//! * **Colours** (section E): grant both preferences; else the stronger one
//!   (absolute > strong > mild), or the wider colour difference when both
//!   are absolute; else alternate from the last round the two had different
//!   colours; else the higher-ranked player's preference; with no
//!   preference on either side (round 1), the higher-ranked player gets the
//!   initial colour if their pairing number is odd. Round 1 therefore pairs
//!   the top half against the bottom half, 1–(n/2+1) with player 1 on
//!   [`SwissSettings::initial_color`], alternating down the boards.
//! * **Late joining and absence.** A player who joins late is entered with
//!   [`SwissPlayer::late_joiner`]: one unplayed round per round missed, each
//!   worth [`SwissSettings::late_join_points_x2`] (zero by default). A
//!   withdrawn (or absent) player is not paired and [`record_round`] gives
//!   them an unplayed, pointless round.
//! * **Round-pairing outlook (A.9).** Instead of pairing brackets freely
//!   and, on reaching a dead end, re-pairing the penultimate bracket and
//!   collapsing everything below into one last bracket, every bracket
//!   applies the completion criterion itself: its downfloaters together
//!   with everyone below must be pairable. The pairings are the same
//!   whenever no dead end arises; when one would, lower score groups stay
//!   separate brackets rather than collapsing into one.
//!
//! # What is simplified
//!
//! * C7 (choosing downfloaters so the *next* bracket pairs best) is not
//!   looked ahead for; only completion (C4) constrains the downfloaters.
//! * C16–C19 (score differences of repeated floaters) are not scored.
//! * The bye is chosen before the brackets are paired rather than as the
//!   player left over by the last bracket; in ordinary cases both give the
//!   same player.
//! * The candidate search is bounded ([`SwissSettings::search_budget`]
//!   nodes per bracket shape, and exchanges are only tried while there are
//!   at most 20,000 of one size). If the bound is reached before any valid
//!   candidate is found, the rest of the round is paired greedily by rank
//!   under the absolute criteria: still valid, less polished. Ordinary
//!   brackets never come near the bound; when a perfect candidate is not
//!   found within it, the best one seen is taken.
//! * Forfeits are the caller's to record: a forfeit win counts as a
//!   [`ColorPlayed::Bye`] (scored without playing, so no further bye), a
//!   forfeit loss as [`ColorPlayed::Absent`].
//! * Accelerated pairings (Baku) and the arbiter's manual overrides are not
//!   offered.
//!
//! Everything is deterministic: the same records give the same pairing.

mod bracket;
mod colour;
mod field;
mod matching;

pub use colour::Color;

use field::Field;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::HashSet;

/// What a player did in one round, for colour history and byes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ColorPlayed {
    White,
    Black,
    /// The pairing-allocated bye (or a forfeit win): scored without playing.
    Bye,
    /// Not paired: joined later, withdrawn, absent, or lost by forfeit.
    Absent,
}

/// The float a player received in a round (A.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Float {
    #[default]
    None,
    /// Played someone with a lower score, or did not play.
    Down,
    /// Played someone with a higher score.
    Up,
}

/// A player's record before the round to be paired; `colors` and `floats`
/// hold one entry per round already paired (the oldest first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwissPlayer {
    pub id: String,
    /// The rating at registration: it fixes the pairing number.
    pub rating: u32,
    /// The score in half points.
    pub points_x2: u32,
    pub colors: Vec<ColorPlayed>,
    pub opponents: Vec<String>,
    pub floats: Vec<Float>,
    /// Not to be paired (withdrawn, or absent for this round).
    pub withdrawn: bool,
}

impl SwissPlayer {
    /// A player registered before round 1.
    pub fn new(id: impl Into<String>, rating: u32) -> SwissPlayer {
        SwissPlayer {
            id: id.into(),
            rating,
            points_x2: 0,
            colors: Vec::new(),
            opponents: Vec::new(),
            floats: Vec::new(),
            withdrawn: false,
        }
    }

    /// A player joining before `round`: an unplayed round (the "late join"
    /// bye, scored per the settings) for each round already paired.
    pub fn late_joiner(id: impl Into<String>, rating: u32, round: u32, settings: &SwissSettings) -> SwissPlayer {
        let missed = round.saturating_sub(1);
        SwissPlayer {
            points_x2: missed * settings.late_join_points_x2,
            colors: vec![ColorPlayed::Absent; missed as usize],
            // Not playing a round counts as a downfloat (A.4.b).
            floats: vec![Float::Down; missed as usize],
            ..SwissPlayer::new(id, rating)
        }
    }
}

/// The tournament's choices the rules leave open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwissSettings {
    /// The colour pairing number 1 gets in round 1 (drawn by lot, or fixed
    /// by the organiser).
    pub initial_color: Color,
    /// What the pairing-allocated bye scores, in half points (2: a win).
    pub bye_points_x2: u32,
    /// What each round missed before joining scores, in half points.
    pub late_join_points_x2: u32,
    /// Let topscorers meet despite equal absolute colour preferences in the
    /// last round, as the Dutch rules do.
    pub topscorer_exception: bool,
    /// Search nodes per bracket shape before settling for the best found.
    pub search_budget: usize,
}

impl Default for SwissSettings {
    fn default() -> Self {
        SwissSettings {
            initial_color: Color::White,
            bye_points_x2: 2,
            late_join_points_x2: 0,
            topscorer_exception: true,
            search_budget: 20_000,
        }
    }
}

/// One game of the round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Board {
    pub white: String,
    pub black: String,
}

/// The pairing of one round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundPairing {
    pub round: u32,
    /// Board 1 first: by the higher score on the board, then the sum of
    /// scores, then the better pairing number.
    pub boards: Vec<Board>,
    /// The player who gets the pairing-allocated bye, if the count is odd.
    pub bye: Option<String>,
    /// What the bye scores, in half points.
    pub bye_points_x2: u32,
    /// Withdrawn or absent players, not paired this round.
    pub not_paired: Vec<String>,
    /// The float each player receives this round, to store in their record
    /// (the bye and players not paired receive a downfloat, as the rules
    /// say of anyone who does not play); players not listed receive
    /// [`Float::None`].
    pub floats: Vec<(String, Float)>,
}

/// Why a round could not be paired.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PairingError {
    #[error("round {round} cannot be paired without a rematch or a colour rule broken")]
    Impossible { round: u32 },
    #[error("round {round} is outside 1..={rounds_total}")]
    RoundOutOfRange { round: u32, rounds_total: u32 },
    #[error("player {0} appears twice")]
    DuplicatePlayer(String),
    #[error("player {id} has {found} rounds of history before round {round}")]
    HistoryLength { id: String, round: u32, found: usize },
    #[error("{0} results for {1} boards")]
    ResultCount(usize, usize),
}

/// The result of one board, from White's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GameResult {
    WhiteWins,
    Draw,
    BlackWins,
}

/// Pairs `round` (1-based) of a `rounds_total`-round event.
pub fn pair_round(
    players: &[SwissPlayer],
    round: u32,
    rounds_total: u32,
    settings: &SwissSettings,
) -> Result<RoundPairing, PairingError> {
    validate(players, round, rounds_total)?;
    let field = Field::new(players, round, rounds_total, settings);
    let active: Vec<usize> = (0..field.entrants.len()).filter(|&i| field.entrants[i].active).collect();
    let impossible = PairingError::Impossible { round };
    let bye = choose_bye(&field, &active).ok_or(impossible.clone())?;
    let to_pair: Vec<usize> = active.iter().copied().filter(|&i| Some(i) != bye).collect();
    let pairs = bracket::pair_by_brackets(&field, &to_pair).ok_or(impossible)?;
    Ok(round_pairing(&field, round, &pairs, bye, settings))
}

fn validate(players: &[SwissPlayer], round: u32, rounds_total: u32) -> Result<(), PairingError> {
    if round == 0 || round > rounds_total {
        return Err(PairingError::RoundOutOfRange { round, rounds_total });
    }
    let mut seen = HashSet::new();
    for p in players {
        if !seen.insert(p.id.as_str()) {
            return Err(PairingError::DuplicatePlayer(p.id.clone()));
        }
        if p.colors.len() != round as usize - 1 {
            return Err(PairingError::HistoryLength { id: p.id.clone(), round, found: p.colors.len() });
        }
    }
    Ok(())
}

/// `Ok(None)` with an even count; the bye's index with an odd one; the
/// outer `None` when nobody's bye leaves the rest pairable.
fn choose_bye(field: &Field, active: &[usize]) -> Option<Option<usize>> {
    if active.len().is_multiple_of(2) {
        return field.pairable(active).then_some(None);
    }
    let mut order = active.to_vec();
    // Those without a bye yet before those with one (C2 is absolute only
    // while it can be kept); then the lowest score; then the fewest rounds
    // already unplayed (the 2025 text's C9, so a late joiner is not sent
    // away again); then the lowest ranked.
    order.sort_by(|&a, &b| {
        let (ea, eb) = (&field.entrants[a], &field.entrants[b]);
        let key = |e: &field::Entrant| (e.byes, e.score, e.unplayed);
        key(ea).cmp(&key(eb)).then(b.cmp(&a))
    });
    order.into_iter().find_map(|candidate| {
        let rest: Vec<usize> = active.iter().copied().filter(|&i| i != candidate).collect();
        field.pairable(&rest).then_some(Some(candidate))
    })
}

fn round_pairing(
    field: &Field,
    round: u32,
    pairs: &[(usize, usize)],
    bye: Option<usize>,
    settings: &SwissSettings,
) -> RoundPairing {
    let mut ordered: Vec<(usize, usize)> =
        pairs.iter().map(|&(a, b)| if field.rank_order(a, b) == Ordering::Greater { (b, a) } else { (a, b) }).collect();
    ordered.sort_by(|&(a1, b1), &(a2, b2)| {
        let key = |a: usize, b: usize| (field.score(a).max(field.score(b)), field.score(a) + field.score(b));
        key(a2, b2).cmp(&key(a1, b1)).then(a1.cmp(&a2))
    });
    let id = |i: usize| field.entrants[i].id.clone();
    let mut floats = Vec::new();
    let boards = ordered
        .iter()
        .map(|&(high, low)| {
            if field.score(high) > field.score(low) {
                floats.push((id(high), Float::Down));
                floats.push((id(low), Float::Up));
            }
            let (white, black) = if field.colour_of(high, low) == Color::White { (high, low) } else { (low, high) };
            Board { white: id(white), black: id(black) }
        })
        .collect();
    // A player who does not play in a round receives a downfloat (A.4.b).
    if let Some(b) = bye {
        floats.push((id(b), Float::Down));
    }
    let not_paired: Vec<String> = field.entrants.iter().filter(|e| !e.active).map(|e| e.id.clone()).collect();
    floats.extend(not_paired.iter().map(|p| (p.clone(), Float::Down)));
    RoundPairing { round, boards, bye: bye.map(id), bye_points_x2: settings.bye_points_x2, not_paired, floats }
}

/// Writes a finished round into the players' records: colours, opponents,
/// scores and floats; the bye and unpaired players get their unplayed
/// round. `results` follows `pairing.boards`.
pub fn record_round(
    players: &mut [SwissPlayer],
    pairing: &RoundPairing,
    results: &[GameResult],
) -> Result<(), PairingError> {
    if results.len() != pairing.boards.len() {
        return Err(PairingError::ResultCount(results.len(), pairing.boards.len()));
    }
    for p in players.iter_mut() {
        let float = pairing.floats.iter().find(|(id, _)| *id == p.id).map_or(Float::None, |(_, f)| *f);
        p.floats.push(float);
        if pairing.bye.as_deref() == Some(p.id.as_str()) {
            p.colors.push(ColorPlayed::Bye);
            p.points_x2 += pairing.bye_points_x2;
            continue;
        }
        let board = pairing.boards.iter().zip(results).find(|(b, _)| b.white == p.id || b.black == p.id);
        let Some((board, result)) = board else {
            p.colors.push(ColorPlayed::Absent);
            continue;
        };
        let white = board.white == p.id;
        p.colors.push(if white { ColorPlayed::White } else { ColorPlayed::Black });
        p.opponents.push(if white { board.black.clone() } else { board.white.clone() });
        p.points_x2 += match (result, white) {
            (GameResult::Draw, _) => 1,
            (GameResult::WhiteWins, true) | (GameResult::BlackWins, false) => 2,
            _ => 0,
        };
    }
    Ok(())
}
