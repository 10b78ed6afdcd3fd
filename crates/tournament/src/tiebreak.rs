//! Tie-breaks for equal scores, and the final standings they order.
//!
//! Buchholz and Sonneborn–Berger follow FIDE's rule for unplayed rounds
//! (Handbook C.02, the 2012 tie-break regulations): a player's own unplayed
//! round counts as a game against a virtual opponent who had the player's
//! score before that round, got the opposite result in it and drew every
//! later round; an opponent's unplayed rounds count as draws when that
//! opponent's score is summed. Scores are kept in half points (`_x2`), so
//! every value is an exact integer: Buchholz in half points,
//! Sonneborn–Berger in quarter points.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// What a player got in one round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum RoundResult {
    /// A game played over the board: 2 a win, 1 a draw, 0 a loss.
    Game { opponent: String, points_x2: u32 },
    /// A bye, a forfeit, a round missed: scored without playing.
    Unplayed { points_x2: u32 },
}

impl RoundResult {
    fn points_x2(&self) -> u32 {
        match self {
            RoundResult::Game { points_x2, .. } | RoundResult::Unplayed { points_x2 } => *points_x2,
        }
    }
}

/// A player's results, one per round of the event, the first round first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerRecord {
    pub id: String,
    pub rounds: Vec<RoundResult>,
}

impl PlayerRecord {
    pub fn points_x2(&self) -> u32 {
        self.rounds.iter().map(RoundResult::points_x2).sum()
    }
}

/// A tie-break, applied in the order the event lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TieBreak {
    /// Sum of the opponents' scores, in half points.
    Buchholz,
    /// Buchholz without the lowest opponent's score, in half points.
    BuchholzCut1,
    /// Sum of (points scored × opponent's score), in quarter points.
    SonnebornBerger,
    /// Rounds scored as a win, played or not.
    Wins,
    /// Games won over the board.
    GamesWon,
    /// Points scored against the other tied players, in half points, when
    /// they have all met one another; otherwise it separates nobody.
    DirectEncounter,
}

/// One line of the standings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Standing {
    /// Shared by players equal on score and every tie-break.
    pub rank: u32,
    pub id: String,
    pub points_x2: u32,
    /// One value per requested tie-break, in the units [`TieBreak`] gives.
    pub tiebreaks: Vec<u32>,
}

/// The records indexed by id, with every opponent's score as Buchholz
/// counts it.
struct Event<'a> {
    records: &'a [PlayerRecord],
    by_id: HashMap<&'a str, usize>,
    /// Score with unplayed rounds counted as draws.
    adjusted_x2: Vec<u32>,
}

impl<'a> Event<'a> {
    fn new(records: &'a [PlayerRecord]) -> Event<'a> {
        let by_id = records.iter().enumerate().map(|(i, r)| (r.id.as_str(), i)).collect();
        let adjusted_x2 = records
            .iter()
            .map(|r| {
                r.rounds
                    .iter()
                    .map(|round| match round {
                        RoundResult::Game { points_x2, .. } => *points_x2,
                        RoundResult::Unplayed { .. } => 1,
                    })
                    .sum()
            })
            .collect();
        Event { records, by_id, adjusted_x2 }
    }

    /// Each round's (points scored, opponent's score) for player `i`, the
    /// virtual opponent standing in for unplayed rounds.
    fn opposition(&self, i: usize) -> Vec<(u32, u32)> {
        let rounds = &self.records[i].rounds;
        let n = rounds.len() as u32;
        let mut before_x2 = 0;
        let mut out = Vec::with_capacity(rounds.len());
        for (r, round) in rounds.iter().enumerate() {
            let scored = round.points_x2();
            let opponent = match round {
                RoundResult::Game { opponent, .. } => {
                    self.by_id.get(opponent.as_str()).map_or(0, |&j| self.adjusted_x2[j])
                }
                RoundResult::Unplayed { .. } => before_x2 + (2 - scored.min(2)) + (n - r as u32 - 1),
            };
            out.push((scored, opponent));
            before_x2 += scored;
        }
        out
    }

    fn value(&self, tiebreak: TieBreak, i: usize) -> u32 {
        let rounds = &self.records[i].rounds;
        match tiebreak {
            TieBreak::Buchholz => self.opposition(i).iter().map(|&(_, o)| o).sum(),
            TieBreak::BuchholzCut1 => {
                let opposition = self.opposition(i);
                let lowest = opposition.iter().map(|&(_, o)| o).min().unwrap_or(0);
                opposition.iter().map(|&(_, o)| o).sum::<u32>() - lowest
            }
            TieBreak::SonnebornBerger => self.opposition(i).iter().map(|&(s, o)| s * o).sum(),
            TieBreak::Wins => rounds.iter().filter(|r| r.points_x2() >= 2).count() as u32,
            TieBreak::GamesWon => {
                rounds.iter().filter(|r| matches!(r, RoundResult::Game { points_x2: 2.., .. })).count() as u32
            }
            TieBreak::DirectEncounter => 0,
        }
    }

    /// Direct encounter inside `group`, or all zeros when some of the group
    /// never met.
    fn direct_encounter(&self, group: &[usize]) -> Vec<u32> {
        let ids: Vec<&str> = group.iter().map(|&i| self.records[i].id.as_str()).collect();
        let mut scores = vec![0; group.len()];
        for (k, &i) in group.iter().enumerate() {
            let mut met = vec![false; group.len()];
            for round in &self.records[i].rounds {
                if let RoundResult::Game { opponent, points_x2 } = round {
                    if let Some(m) = ids.iter().position(|id| id == opponent) {
                        met[m] = true;
                        scores[k] += points_x2;
                    }
                }
            }
            if met.iter().enumerate().any(|(m, &seen)| m != k && !seen) {
                return vec![0; group.len()];
            }
        }
        scores
    }
}

/// Orders the event's players by score, then by each tie-break in turn;
/// players still equal share a rank and are listed by id.
pub fn standings(records: &[PlayerRecord], tiebreaks: &[TieBreak]) -> Vec<Standing> {
    let event = Event::new(records);
    let mut values: Vec<Vec<u32>> =
        (0..records.len()).map(|i| tiebreaks.iter().map(|&t| event.value(t, i)).collect()).collect();
    let mut order: Vec<usize> = (0..records.len()).collect();
    order.sort_by(|&a, &b| records[b].points_x2().cmp(&records[a].points_x2()).then(records[a].id.cmp(&records[b].id)));
    let mut groups = split(order, |i| records[i].points_x2());
    for (k, &tiebreak) in tiebreaks.iter().enumerate() {
        let mut refined = Vec::new();
        for mut group in groups {
            if tiebreak == TieBreak::DirectEncounter && group.len() > 1 {
                for (&i, v) in group.iter().zip(event.direct_encounter(&group)) {
                    values[i][k] = v;
                }
            }
            group.sort_by(|&a, &b| values[b][k].cmp(&values[a][k]).then(records[a].id.cmp(&records[b].id)));
            refined.extend(split(group, |i| values[i][k]));
        }
        groups = refined;
    }
    let mut out = Vec::with_capacity(records.len());
    for group in groups {
        let rank = out.len() as u32 + 1;
        for i in group {
            let tiebreaks = values[i].clone();
            out.push(Standing { rank, id: records[i].id.clone(), points_x2: records[i].points_x2(), tiebreaks });
        }
    }
    out
}

/// Splits an ordered list into runs of equal `key`.
fn split(order: Vec<usize>, key: impl Fn(usize) -> u32) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in order {
        match groups.last_mut() {
            Some(g) if key(g[0]) == key(i) => g.push(i),
            _ => groups.push(vec![i]),
        }
    }
    groups
}

/// One tie-break of one player, for display.
pub fn tiebreak_value(records: &[PlayerRecord], id: &str, tiebreak: TieBreak) -> Option<u32> {
    let event = Event::new(records);
    let i = *event.by_id.get(id)?;
    Some(match tiebreak {
        TieBreak::DirectEncounter => 0,
        other => event.value(other, i),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(opponent: &str, points_x2: u32) -> RoundResult {
        RoundResult::Game { opponent: opponent.to_string(), points_x2 }
    }

    fn record(id: &str, rounds: Vec<RoundResult>) -> PlayerRecord {
        PlayerRecord { id: id.to_string(), rounds }
    }

    /// Three rounds, four players: A beats B, C draws D; A draws C, B
    /// beats D; D beats A, B beats C. Scores: B 2, A 1.5, D 1.5, C 1.
    fn small_event() -> Vec<PlayerRecord> {
        vec![
            record("A", vec![game("B", 2), game("C", 1), game("D", 0)]),
            record("B", vec![game("A", 0), game("D", 2), game("C", 2)]),
            record("C", vec![game("D", 1), game("A", 1), game("B", 0)]),
            record("D", vec![game("C", 1), game("B", 0), game("A", 2)]),
        ]
    }

    #[test]
    fn hand_computed_values() {
        let event = small_event();
        let value = |id: &str, t| tiebreak_value(&event, id, t).unwrap();
        // A: B 2 + C 1 + D 1.5 = 4.5; D: C 1 + B 2 + A 1.5 = 4.5.
        assert_eq!(value("A", TieBreak::Buchholz), 9);
        assert_eq!(value("D", TieBreak::Buchholz), 9);
        assert_eq!(value("B", TieBreak::Buchholz), 8);
        assert_eq!(value("C", TieBreak::Buchholz), 10);
        // Without the weakest opponent (C, 1 point): 3.5 each.
        assert_eq!(value("A", TieBreak::BuchholzCut1), 7);
        assert_eq!(value("D", TieBreak::BuchholzCut1), 7);
        // A: 1×2 + ½×1 + 0×1.5 = 2.5; D: ½×1 + 0×2 + 1×1.5 = 2.
        assert_eq!(value("A", TieBreak::SonnebornBerger), 10);
        assert_eq!(value("D", TieBreak::SonnebornBerger), 8);
        assert_eq!(value("B", TieBreak::Wins), 2);
        assert_eq!(value("C", TieBreak::Wins), 0);
    }

    #[test]
    fn standings_follow_the_tiebreak_list() {
        let event = small_event();
        let ids = |s: &[Standing]| s.iter().map(|l| l.id.clone()).collect::<Vec<_>>();
        let by_sb = standings(&event, &[TieBreak::Buchholz, TieBreak::SonnebornBerger]);
        assert_eq!(ids(&by_sb), ["B", "A", "D", "C"]);
        assert_eq!(by_sb[1].tiebreaks, [9, 10]);
        // D won their game against A.
        let by_encounter = standings(&event, &[TieBreak::DirectEncounter]);
        assert_eq!(ids(&by_encounter), ["B", "D", "A", "C"]);
        assert_eq!(by_encounter[1].tiebreaks, [2]);
        // Buchholz alone leaves A and D equal: they share second place.
        let shared = standings(&event, &[TieBreak::Buchholz]);
        assert_eq!(shared.iter().map(|l| l.rank).collect::<Vec<_>>(), [1, 2, 2, 4]);
    }

    /// P wins round 1, has a full-point bye in round 2 and draws B in
    /// round 3 of a three-round event. The virtual opponent of round 2 had
    /// P's 1 point, lost the round and drew the last one: 1.5. A missed
    /// round 3 and B had a bye in round 1: both count as draws for them.
    #[test]
    fn unplayed_rounds_use_the_virtual_opponent() {
        let event = vec![
            record("P", vec![game("A", 2), RoundResult::Unplayed { points_x2: 2 }, game("B", 1)]),
            record("A", vec![game("P", 0), game("B", 2), RoundResult::Unplayed { points_x2: 0 }]),
            record("B", vec![RoundResult::Unplayed { points_x2: 2 }, game("A", 0), game("P", 1)]),
        ];
        let value = |t| tiebreak_value(&event, "P", t).unwrap();
        // A 0 + 1 + ½ = 1.5, virtual 1.5, B ½ + 0 + ½ = 1: 4 points.
        assert_eq!(value(TieBreak::Buchholz), 8);
        assert_eq!(value(TieBreak::BuchholzCut1), 6);
        // 1×1.5 + 1×1.5 + ½×1 = 3.5.
        assert_eq!(value(TieBreak::SonnebornBerger), 14);
        assert_eq!(value(TieBreak::Wins), 2);
        assert_eq!(value(TieBreak::GamesWon), 1);
    }

    #[test]
    fn direct_encounter_needs_everyone_to_have_met() {
        let event = vec![
            record("A", vec![game("B", 2), game("X", 0)]),
            record("B", vec![game("A", 0), game("Y", 2)]),
            record("C", vec![game("X", 2), game("Y", 0)]),
            record("X", vec![game("C", 0), game("A", 2)]),
            record("Y", vec![game("B", 0), game("C", 2)]),
        ];
        // All five end on 1 point, and most of them never met one another.
        let lines = standings(&event, &[TieBreak::DirectEncounter]);
        let tied: Vec<_> = lines.iter().filter(|l| l.points_x2 == 2).map(|l| (l.rank, l.tiebreaks[0])).collect();
        assert!(tied.iter().all(|&(rank, value)| rank == tied[0].0 && value == 0), "{tied:?}");
    }
}
