//! What an analysis says about each move and each player, by lichess's
//! formulas (lila's `WinPercent`, `Advice` and `AccuracyPercent`): a
//! score becomes a winning percentage, a move that costs its side 10, 20
//! or 30 points of winning chances is an inaccuracy, a mistake or a
//! blunder, and each side's accuracy is the mean of its moves' accuracies,
//! weighted by how much the game swung around them, averaged with their
//! harmonic mean. No I/O: the archive keeps the evaluations and this works
//! out the rest when asked.

use fogblast_proto::engine::PositionEval;
use fogblast_proto::rating::{MoveClass, MoveJudgement};

/// Centipawns past which lichess counts every score the same (a mate too).
const CP_CEILING: i32 = 1_000;
/// Lichess's slope of the winning chances over centipawns.
const WIN_SLOPE: f64 = -0.003_682_08;

/// White's winning percentage, 0-100, in a position: from its score, or
/// from its result when the game ended there. `None` for a position with
/// neither (it was never searched).
pub fn white_win_percent(eval: &PositionEval) -> Option<f64> {
    let cp = match (eval.cp, eval.mate, eval.result.as_str()) {
        (_, Some(mate), _) => CP_CEILING * mate.signum(),
        (Some(cp), None, _) => cp.clamp(-CP_CEILING, CP_CEILING),
        (None, None, "1-0") => return Some(100.0),
        (None, None, "0-1") => return Some(0.0),
        (None, None, "1/2-1/2") => 0,
        (None, None, _) => return None,
    };
    Some(50.0 + 50.0 * winning_chances(cp))
}

/// Lichess's winning chances, -1 to 1, for the side the score favours.
fn winning_chances(cp: i32) -> f64 {
    (2.0 / (1.0 + (WIN_SLOPE * f64::from(cp)).exp()) - 1.0).clamp(-1.0, 1.0)
}

/// A move's class from its side's winning percentage before and after it.
pub fn classify(before: f64, after: f64) -> MoveClass {
    // Lichess compares winning chances (-1 to 1), twice the percentage points / 100.
    let lost = (before - after) / 50.0;
    if lost >= 0.3 {
        MoveClass::Blunder
    } else if lost >= 0.2 {
        MoveClass::Mistake
    } else if lost >= 0.1 {
        MoveClass::Inaccuracy
    } else {
        MoveClass::Sound
    }
}

/// A move's accuracy, 0-100, from its side's winning percentage before and after it.
pub fn move_accuracy(before: f64, after: f64) -> f64 {
    if after >= before {
        return 100.0;
    }
    let raw = 103.166_810_071_164_9 * (-0.043_544_153_867_539_51 * (before - after)).exp() - 3.166_924_740_191_411;
    // Lichess's bonus for the engine's own uncertainty.
    (raw + 1.0).clamp(0.0, 100.0)
}

/// Each move of a game judged, and each side's accuracy `[white, black]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Judged {
    pub moves: Vec<MoveJudgement>,
    pub accuracy: [Option<f64>; 2],
}

/// Judges the game whose positions (the start first, one more than the
/// moves) `positions` scores; `white_first` says who made the first move.
/// A position without a score counts as the one before it.
pub fn judge(positions: &[PositionEval], moves: &[String], white_first: bool) -> Judged {
    let mut wins = Vec::with_capacity(positions.len());
    for eval in positions {
        let last = wins.last().copied().unwrap_or(50.0);
        wins.push(white_win_percent(eval).unwrap_or(last));
    }
    let mut judged = Vec::with_capacity(moves.len());
    for (index, uci) in moves.iter().enumerate().take(wins.len().saturating_sub(1)) {
        let white = (index % 2 == 0) == white_first;
        let side = |w: f64| if white { w } else { 100.0 - w };
        let (before, after) = (side(wins[index]), side(wins[index + 1]));
        let class = classify(before, after);
        let best = &positions[index].best;
        let better = if class != MoveClass::Sound && best != uci { best.clone() } else { String::new() };
        judged.push(MoveJudgement {
            ply: u32::try_from(index + 1).unwrap_or(u32::MAX),
            uci: uci.clone(),
            class: class.into(),
            better,
            win_before: before,
            win_after: after,
            accuracy: move_accuracy(before, after),
        });
    }
    let accuracy = game_accuracy(&wins, white_first);
    Judged { moves: judged, accuracy }
}

/// Lichess's game accuracy for each side from white's winning percentage
/// in every position.
fn game_accuracy(wins: &[f64], white_first: bool) -> [Option<f64>; 2] {
    if wins.len() < 2 {
        return [None, None];
    }
    let window = (wins.len() / 10).clamp(2, 8);
    let mut windows: Vec<&[f64]> = Vec::with_capacity(wins.len());
    for _ in 0..window.min(wins.len()).saturating_sub(2) {
        windows.push(&wins[..window.min(wins.len())]);
    }
    windows.extend(wins.windows(window.min(wins.len())));
    let weights = windows.iter().map(|xs| standard_deviation(xs).clamp(0.5, 12.0));
    let mut sides: [Vec<(f64, f64)>; 2] = [Vec::new(), Vec::new()];
    for (index, (pair, weight)) in wins.windows(2).zip(weights).enumerate() {
        let white = (index % 2 == 0) == white_first;
        let (before, after) = if white { (pair[0], pair[1]) } else { (pair[1], pair[0]) };
        sides[usize::from(!white)].push((move_accuracy(before, after), weight));
    }
    sides.map(|moves| {
        if moves.is_empty() {
            return None;
        }
        let weighted = moves.iter().map(|(a, w)| a * w).sum::<f64>() / moves.iter().map(|(_, w)| w).sum::<f64>();
        let harmonic = moves.len() as f64 / moves.iter().map(|(a, _)| 1.0 / a).sum::<f64>();
        Some((weighted + harmonic) / 2.0)
    })
}

fn standard_deviation(xs: &[f64]) -> f64 {
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cp(cp: i32, best: &str) -> PositionEval {
        PositionEval { cp: Some(cp), best: best.into(), ..Default::default() }
    }

    #[test]
    fn winning_percentages_follow_lichess() {
        assert!((white_win_percent(&cp(0, "")).unwrap() - 50.0).abs() < 1e-9);
        // lila: 100 cp is about 59.1% (50 + 50 * 0.1820).
        assert!((white_win_percent(&cp(100, "")).unwrap() - 59.10).abs() < 0.01);
        let mate = PositionEval { mate: Some(-3), ..Default::default() };
        assert_eq!(white_win_percent(&mate), white_win_percent(&cp(-5_000, "")));
        let exploded = PositionEval { result: "0-1".into(), ..Default::default() };
        assert_eq!(white_win_percent(&exploded), Some(0.0));
        assert_eq!(white_win_percent(&PositionEval::default()), None);
    }

    #[test]
    fn moves_are_classed_by_the_winning_chances_they_lose() {
        assert_eq!(classify(50.0, 46.0), MoveClass::Sound);
        assert_eq!(classify(50.0, 45.0), MoveClass::Inaccuracy);
        assert_eq!(classify(50.0, 40.0), MoveClass::Mistake);
        assert_eq!(classify(50.0, 35.0), MoveClass::Blunder);
        assert_eq!(classify(20.0, 90.0), MoveClass::Sound);
        assert_eq!(move_accuracy(40.0, 45.0), 100.0);
        assert!(move_accuracy(50.0, 20.0) < 30.0);
    }

    #[test]
    fn a_blunder_names_the_better_move_and_costs_its_side_accuracy() {
        let positions = [cp(20, "e2e4"), cp(30, "g1f3"), cp(25, "d2d4"), cp(-600, "d8h4"), PositionEval::default()];
        let moves = ["e2e4", "e7e5", "f2f3", "g7g5"].map(String::from);
        let judged = judge(&positions, &moves, true);
        assert_eq!(judged.moves.len(), 4);
        assert_eq!(judged.moves[2].class(), MoveClass::Blunder);
        assert_eq!(judged.moves[2].better, "d2d4");
        assert_eq!(judged.moves[0].class(), MoveClass::Sound);
        assert_eq!(judged.moves[0].better, "");
        // The unsearched last position counts as the one before: g5 loses nothing.
        assert_eq!(judged.moves[3].class(), MoveClass::Sound);
        let [white, black] = judged.accuracy.map(Option::unwrap);
        assert!(white < black, "white {white}, black {black}");
        assert!((0.0..=100.0).contains(&white) && (0.0..=100.0).contains(&black));
    }

    #[test]
    fn the_move_that_explodes_the_king_wins_everything() {
        let positions = [cp(0, "g1f3"), PositionEval { result: "1-0".into(), ..Default::default() }];
        let judged = judge(&positions, &["g1f3".to_owned()], true);
        assert_eq!(judged.moves[0].class(), MoveClass::Sound);
        assert_eq!(judged.moves[0].win_after, 100.0);
        assert_eq!(judged.accuracy, [Some(100.0), None]);
    }
}
