//! Clock arithmetic, free of I/O so it can be checked exactly. Times come
//! from the store's clock only (one time source), as unix milliseconds.
//!
//! Lag compensation follows lichess: each player has a quota of time that
//! the server may hand back for network lag the gateway measured. Every
//! move refills the quota by a gain and spends what it compensates; the
//! quota is capped, so a player on a slow link is not robbed, while one who
//! claims lag they do not have gains at most the quota.

use fogblast_proto::game::ClockSettings;

/// No single move is compensated more than this, and the flag timer waits
/// at most this long past zero for a move that lag may still excuse.
pub const MAX_COMPENSATION_MS: u64 = 1_000;

/// A move's time on its way inside Fogblast (gateway queues, retries across
/// a failover) is handed back up to this: more than the gateway's own
/// routing deadline, which gives up on a move before then.
pub const MAX_DELIVERY_MS: u64 = 10_000;

/// The store time at which a move that reached the shard at `now_ms` after
/// `waited_ms` on its way was made, as far as the mover's clock goes.
pub fn moved_at_ms(now_ms: u64, waited_ms: u64) -> u64 {
    now_ms.saturating_sub(waited_ms.min(MAX_DELIVERY_MS))
}

/// How much lag a game's players may have compensated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LagPolicy {
    /// Added to the quota after every move.
    pub gain_ms: u64,
    /// The quota never grows past this.
    pub max_ms: u64,
    /// Each player's quota at the start.
    pub initial_ms: u64,
}

impl LagPolicy {
    /// Longer games get a larger gain, up to a second per move: the
    /// estimated game length is the initial time plus forty increments.
    pub fn for_clock(settings: &ClockSettings) -> LagPolicy {
        let estimated_s = (u64::from(settings.initial_ms) + 40 * u64::from(settings.increment_ms)) / 1000;
        let gain_ms = (estimated_s * 4 + 150).min(1_000);
        LagPolicy { gain_ms, max_ms: gain_ms * 7, initial_ms: gain_ms * 3 }
    }
}

/// What a move cost its player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveTime {
    /// Time taken off the clock.
    pub spent_ms: u64,
    /// Lag handed back out of the quota.
    pub compensated_ms: u64,
}

/// The time a move took: the time since the player's clock started, less
/// the lag compensated, which is at most the claimed lag, the quota, the
/// per-move cap and the elapsed time itself.
pub fn time_spent(elapsed_ms: u64, lag_ms: u64, quota_ms: u64) -> MoveTime {
    let compensated_ms = lag_ms.min(quota_ms).min(MAX_COMPENSATION_MS).min(elapsed_ms);
    MoveTime { spent_ms: elapsed_ms - compensated_ms, compensated_ms }
}

/// The quota after a move that compensated `compensated_ms`.
pub fn next_quota(policy: &LagPolicy, quota_ms: u64, compensated_ms: u64) -> u64 {
    (quota_ms.saturating_sub(compensated_ms) + policy.gain_ms).min(policy.max_ms)
}

/// When a player's flag falls: the clock's zero plus the lag the player
/// could still have had compensated, so the timer never flags a move that
/// is on its way and would have counted.
pub fn flag_at_ms(turn_started_ms: u64, remaining_ms: u64, quota_ms: u64) -> u64 {
    turn_started_ms + remaining_ms + quota_ms.min(MAX_COMPENSATION_MS)
}

/// Whether a player whose clock started at `turn_started_ms` with
/// `remaining_ms` left is out of time at `now_ms`.
pub fn is_flagged(now_ms: u64, turn_started_ms: u64, remaining_ms: u64, quota_ms: u64) -> bool {
    now_ms >= flag_at_ms(turn_started_ms, remaining_ms, quota_ms)
}

/// The allowed clock settings: 1 to 60 minutes, an increment up to 180 s.
pub fn validate(settings: &ClockSettings) -> Result<(), String> {
    if !(60_000..=3_600_000).contains(&settings.initial_ms) {
        return Err(format!("initial time must be 1 to 60 minutes, not {} ms", settings.initial_ms));
    }
    if settings.increment_ms > 180_000 {
        return Err(format!("increment must be at most 180 s, not {} ms", settings.increment_ms));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blitz() -> LagPolicy {
        LagPolicy::for_clock(&ClockSettings { initial_ms: 180_000, increment_ms: 2_000 })
    }

    #[test]
    fn longer_games_get_more_compensation_up_to_a_second() {
        // 180 s + 40 * 2 s = 260 s estimated: 260 * 4 + 150 = 1190, capped.
        assert_eq!(blitz().gain_ms, 1_000);
        let bullet = LagPolicy::for_clock(&ClockSettings { initial_ms: 60_000, increment_ms: 0 });
        assert_eq!(bullet, LagPolicy { gain_ms: 390, max_ms: 2_730, initial_ms: 1_170 });
    }

    #[test]
    fn compensation_is_bounded_by_lag_quota_cap_and_elapsed_time() {
        assert_eq!(time_spent(5_000, 200, 3_000), MoveTime { spent_ms: 4_800, compensated_ms: 200 });
        assert_eq!(time_spent(5_000, 2_500, 300), MoveTime { spent_ms: 4_700, compensated_ms: 300 });
        assert_eq!(time_spent(5_000, 9_000, 9_000), MoveTime { spent_ms: 4_000, compensated_ms: 1_000 });
        assert_eq!(time_spent(100, 400, 3_000), MoveTime { spent_ms: 0, compensated_ms: 100 });
    }

    #[test]
    fn a_player_claiming_constant_lag_cannot_gain_more_than_the_quota_allows() {
        let policy = LagPolicy::for_clock(&ClockSettings { initial_ms: 60_000, increment_ms: 0 });
        let mut quota = policy.initial_ms;
        let mut handed_back = 0;
        for _ in 0..100 {
            let time = time_spent(2_000, 1_000, quota);
            handed_back += time.compensated_ms;
            quota = next_quota(&policy, quota, time.compensated_ms);
        }
        // At most the initial quota plus one gain per move.
        assert!(handed_back <= policy.initial_ms + 100 * policy.gain_ms);
        assert!(handed_back < 100 * 1_000, "a fake 1 s lag was fully refunded");
        assert_eq!(quota, policy.gain_ms, "a constant claimer spends the whole gain each move");
    }

    #[test]
    fn the_flag_waits_for_the_lag_that_could_still_count() {
        assert_eq!(flag_at_ms(10_000, 5_000, 300), 15_300);
        assert_eq!(flag_at_ms(10_000, 5_000, 5_000), 16_000);
        assert!(!is_flagged(15_299, 10_000, 5_000, 300));
        assert!(is_flagged(15_300, 10_000, 5_000, 300));
        // A move at the last instant the timer allows is still in time.
        let time = time_spent(5_299, 1_000, 300);
        assert!(time.spent_ms < 5_000);
    }

    #[test]
    fn a_move_s_time_on_its_way_is_not_the_player_s_up_to_the_cap() {
        assert_eq!(moved_at_ms(50_000, 1_700), 48_300);
        assert_eq!(moved_at_ms(50_000, 0), 50_000);
        assert_eq!(moved_at_ms(50_000, 3_600_000), 50_000 - MAX_DELIVERY_MS);
        assert_eq!(moved_at_ms(500, 1_700), 0);
    }

    #[test]
    fn clock_settings_are_one_to_sixty_minutes() {
        assert!(validate(&ClockSettings { initial_ms: 60_000, increment_ms: 0 }).is_ok());
        assert!(validate(&ClockSettings { initial_ms: 3_600_000, increment_ms: 180_000 }).is_ok());
        assert!(validate(&ClockSettings { initial_ms: 59_999, increment_ms: 0 }).is_err());
        assert!(validate(&ClockSettings { initial_ms: 3_600_001, increment_ms: 0 }).is_err());
        assert!(validate(&ClockSettings { initial_ms: 60_000, increment_ms: 180_001 }).is_err());
    }
}
