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

/// Time kept back for the move to reach the server.
const OVERHEAD: Duration = Duration::from_millis(30);

impl TimeBudget {
    /// Spends about a thirtieth of the remaining time (fewer moves assumed
    /// left as the game goes on) plus most of the increment, and never more
    /// than a third of what is left.
    pub fn from_clock(clock: &Clock, ply: u32) -> TimeBudget {
        let available = clock.remaining.saturating_sub(OVERHEAD);
        let moves_left = clock.moves_to_go.unwrap_or_else(|| 40u32.saturating_sub(ply / 4).max(20)).max(1);
        let soft = available / moves_left + clock.increment * 3 / 4;
        let hard = (soft * 3).min(available / 3).max(Duration::from_millis(1));
        TimeBudget { soft: soft.min(hard), hard }
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
}
