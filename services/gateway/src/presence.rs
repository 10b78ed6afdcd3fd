//! Presence by lease: every seated player on this gateway is reported
//! present with a lease, renewed here a few times per lease for as long as
//! they stay. A gateway killed outright sends no "gone", so without leases
//! its players would stay present for good: the opponent could never claim
//! victory and a game both players left would never be abandoned. With
//! them, the game service counts a seat as gone from when its lease lapsed.
//!
//! One call per seat per renewal, spread evenly over the renewal period
//! rather than sent in a burst, each on a task of its own with a deadline
//! of one period: a frozen shard holds up only the renewals of its own
//! games, never those of players on healthy shards. With the default 20 s
//! lease renewed every 6.7 s, a gateway with 3,000 seated players makes
//! about 450 calls a second, each a small write of the game's record.
//!
//! The calls go out in shares every [`TICK`], each share what the period
//! has come to by then, so a round ends within its period however many
//! seats there are and however late a busy machine wakes the loop: a sleep
//! per seat would round each gap up to the timer's millisecond, and with
//! thousands of seats a round would outlast the lease.

use std::sync::{Arc, Weak};
use std::time::Duration;

use fogblast_proto::game::command::Action;
use fogblast_proto::game::Command;
use fogblast_proto::ids::{GameId, PlayerId};
use tokio::time::Instant;
use tracing::debug;

use crate::feeds::Feeds;

/// Renews the leases of the players seated here every third of `lease`,
/// until the feeds go. A lease of zero renews nothing (presence then lasts
/// until reported gone, as before leases).
pub fn renew(feeds: Weak<Feeds>, router: Arc<fogblast_routing::Router>, lease: Duration) {
    if lease.is_zero() {
        return;
    }
    let every = lease / 3;
    tokio::spawn(async move {
        loop {
            let round = Instant::now() + every;
            let Some(seats) = feeds.upgrade().map(|f| f.seats()) else { return };
            spread(seats, every, |(game, player)| {
                tokio::spawn(renew_one(feeds.clone(), router.clone(), game, player, lease, every));
            })
            .await;
            tokio::time::sleep_until(round).await;
        }
    });
}

/// How often a round hands out its next share of renewals.
const TICK: Duration = Duration::from_millis(50);

/// Hands each of `items` to `each`, in order, spread evenly over `period`:
/// every [`TICK`] as many as the period has come to by the end of that
/// tick. Returns once all are handed out, within `period` unless the
/// machine is too busy to run the loop at all.
async fn spread<T>(items: Vec<T>, period: Duration, mut each: impl FnMut(T)) {
    let total = items.len();
    let start = Instant::now();
    let mut items = items.into_iter();
    let mut handed = 0;
    let mut ticks = tokio::time::interval(TICK);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while handed < total {
        ticks.tick().await;
        let reached = (start.elapsed() + TICK).as_secs_f64() / period.as_secs_f64().max(f64::EPSILON);
        let due = ((total as f64 * reached).ceil() as usize).min(total);
        for item in items.by_ref().take(due.saturating_sub(handed)) {
            each(item);
            handed += 1;
        }
    }
}

async fn renew_one(
    feeds: Weak<Feeds>,
    router: Arc<fogblast_routing::Router>,
    game: GameId,
    player: PlayerId,
    lease: Duration,
    deadline: Duration,
) {
    // A player who left since the list was made has had their "gone"
    // reported; a renewal now would undo it.
    if !feeds.upgrade().is_some_and(|f| f.seated_here(&game, &player)) {
        return;
    }
    let request = Command::new(game.to_string(), player.to_string(), Action::presence(true, lease.as_millis() as u64));
    // A renewal that does not arrive in time is as good as lost: the next
    // one goes a period later.
    match tokio::time::timeout(deadline, router.command(request)).await {
        Ok(Ok(_)) => {}
        Ok(Err(error)) => debug!(game = %game, %error, "presence lease not renewed"),
        Err(_) => debug!(game = %game, "presence lease renewal timed out"),
    }
    // The player left while the renewal was on its way, and it may have
    // landed after their "gone": say it again, so the last word the game
    // hears is true.
    if let Some(feeds) = feeds.upgrade() {
        if !feeds.seated_here(&game, &player) {
            feeds.report_presence(&game, &player, false);
        }
    }
}

/// A seated player heard from by a request rather than a followed game (a
/// bot that plays by HTTP without its game stream open): reported present
/// for one lease, so recent requests keep its seat as a connection would,
/// and a bot that stops making them lapses to gone like a dead gateway's
/// players. A player a socket here follows the game for is already kept
/// present by the renewals.
pub fn heard_from(
    feeds: &Feeds,
    router: &Arc<fogblast_routing::Router>,
    game: &GameId,
    player: &PlayerId,
    lease: Duration,
) {
    if lease.is_zero() || feeds.seated_here(game, player) {
        return;
    }
    let request = Command::new(game.to_string(), player.to_string(), Action::presence(true, lease.as_millis() as u64));
    let (router, game) = (router.clone(), game.clone());
    tokio::spawn(async move {
        if let Err(error) = router.command(request).await {
            debug!(game = %game, %error, "presence of a request not reported");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Thousands of seats are all renewed within the period, a share at a
    /// time rather than in one burst.
    #[tokio::test(start_paused = true)]
    async fn a_round_of_thousands_of_seats_ends_within_its_period_and_is_spread_over_it() {
        let period = Duration::from_secs(2);
        let start = Instant::now();
        let mut handed_at = Vec::new();
        spread((0..20_000).collect(), period, |seat: usize| handed_at.push((seat, start.elapsed()))).await;
        assert_eq!(handed_at.len(), 20_000);
        assert!(handed_at.iter().enumerate().all(|(i, (seat, _))| i == *seat), "handed out in order");
        let last = handed_at.last().map(|(_, at)| *at).unwrap();
        assert!(last <= period, "the last seat renewed {last:?} into a {period:?} round");
        let first_half = handed_at.iter().filter(|(_, at)| *at < period / 2).count();
        assert!((8_000..=12_000).contains(&first_half), "{first_half} of 20,000 in the first half of the round");
    }

    #[tokio::test(start_paused = true)]
    async fn an_empty_round_hands_out_nothing_and_returns() {
        let mut handed = 0;
        spread(Vec::<()>::new(), Duration::from_secs(2), |()| handed += 1).await;
        assert_eq!(handed, 0);
    }
}
