//! Time management: how long to think about one move, given the clock.

use std::time::Duration;

/// A side's clock as a search sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    pub remaining: Duration,
    pub increment: Duration,
    /// Moves until the next time control, if the control has one.
    pub moves_to_go: Option<u32>,
}

/// How long a search may take: past `soft` no new iteration starts; at
/// `hard` the search stops at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeBudget {
    pub soft: Duration,
    pub hard: Duration,
}

/// What the finished iterations say about how settled the search is: a
/// best move that keeps changing, or a score that falls, asks for more of
/// the clock than a choice every iteration confirms.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Unrest {
    /// Changes of the best move from one iteration to the next, each
    /// weighing half as much with every later iteration: 0 after a long
    /// calm, near 2 when every iteration changes its mind.
    pub changes: f64,
    /// How far the score fell in the last iteration, in centipawns (0 when
    /// it held or rose).
    pub fall: i32,
}

impl Unrest {
    /// The unrest after one more finished iteration.
    pub fn after_iteration(self, best_changed: bool, previous_score: i32, score: i32) -> Unrest {
        Unrest {
            changes: self.changes / 2.0 + f64::from(u8::from(best_changed)),
            fall: previous_score.saturating_sub(score).max(0),
        }
    }
}

/// Time kept back for the move to reach the server.
const OVERHEAD: Duration = Duration::from_millis(30);

impl TimeBudget {
    /// Spends about a thirty-second of the remaining time (fewer moves
    /// assumed left as the game goes on, down to sixteen) plus most of the
    /// increment, and never more than a third of what is left.
    pub fn from_clock(clock: &Clock, ply: u32) -> TimeBudget {
        let available = clock.remaining.saturating_sub(OVERHEAD);
        let moves_left = clock.moves_to_go.unwrap_or_else(|| 32u32.saturating_sub(ply / 4).max(16)).max(1);
        let soft = available / moves_left + clock.increment * 3 / 4;
        let hard = (soft * 3).min(available / 3).max(Duration::from_millis(1));
        TimeBudget { soft: soft.min(hard), hard }
    }

    /// The planned time for a search in this state of unrest: `soft` when
    /// the best move has long stood and the score holds, half as much again
    /// for each recent change of the best move, and half as much again when
    /// the score falls by a pawn; at most twice `soft`, and never past
    /// `hard`.
    pub fn stretched(&self, unrest: Unrest) -> Duration {
        // Factors in thousandths, so equal unrest always gives equal time.
        let instability = 1000 + (500.0 * unrest.changes.clamp(0.0, 2.0)).round() as u32;
        let falling = 1000 + 5 * unrest.fall.clamp(0, 100).unsigned_abs();
        let factor = (instability * falling / 1000).min(2000);
        (self.soft * factor / 1000).min(self.hard)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_grow_with_time_and_stay_within_a_third() {
        let clock = |secs, inc_ms| Clock {
            remaining: Duration::from_secs(secs),
            increment: Duration::from_millis(inc_ms),
            moves_to_go: None,
        };
        let short = TimeBudget::from_clock(&clock(10, 0), 0);
        let long = TimeBudget::from_clock(&clock(300, 0), 0);
        assert!(short.soft < long.soft);
        assert!(long.hard <= Duration::from_secs(100));
        let with_increment = TimeBudget::from_clock(&clock(10, 2000), 0);
        assert!(with_increment.soft > short.soft + Duration::from_millis(1000));
        let nearly_out = TimeBudget::from_clock(&clock(0, 0), 0);
        assert!(nearly_out.hard <= Duration::from_millis(1));
        let last_move = TimeBudget::from_clock(
            &Clock { remaining: Duration::from_secs(6), increment: Duration::ZERO, moves_to_go: Some(1) },
            80,
        );
        assert!(last_move.hard <= Duration::from_secs(2));
    }

    #[test]
    fn unrest_counts_recent_best_move_changes_most_and_only_falls() {
        let unrest = Unrest::default().after_iteration(true, 50, 80);
        assert_eq!(unrest, Unrest { changes: 1.0, fall: 0 });
        let unrest = unrest.after_iteration(false, 80, 20);
        assert_eq!(unrest, Unrest { changes: 0.5, fall: 60 });
        let unrest = unrest.after_iteration(true, 20, 20);
        assert_eq!(unrest, Unrest { changes: 1.25, fall: 0 });
    }

    #[test]
    fn unrest_stretches_the_plan_within_the_hard_limit() {
        let budget = TimeBudget { soft: Duration::from_millis(1000), hard: Duration::from_millis(3000) };
        assert_eq!(budget.stretched(Unrest::default()), budget.soft);
        let wavering = budget.stretched(Unrest { changes: 0.5, fall: 0 });
        assert_eq!(wavering, Duration::from_millis(1250));
        let falling = budget.stretched(Unrest { changes: 0.0, fall: 60 });
        assert_eq!(falling, Duration::from_millis(1300));
        // A score that rises is no reason to stop sooner.
        assert_eq!(budget.stretched(Unrest::default().after_iteration(false, 0, 200)), budget.soft);
        // Both at once, or an extreme of either, stop at twice the plan.
        assert_eq!(budget.stretched(Unrest { changes: 1.0, fall: 100 }), Duration::from_millis(2000));
        assert_eq!(budget.stretched(Unrest { changes: 9.0, fall: 10_000 }), Duration::from_millis(2000));
        // The hard limit caps the stretch; a short one wins over the plan.
        let tight = TimeBudget { soft: Duration::from_millis(1000), hard: Duration::from_millis(1100) };
        assert_eq!(tight.stretched(Unrest { changes: 2.0, fall: 0 }), Duration::from_millis(1100));
    }
}
