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
            let gap = every / u32::try_from(seats.len()).unwrap_or(u32::MAX).max(1);
            for (game, player) in seats {
                tokio::spawn(renew_one(feeds.clone(), router.clone(), game, player, lease, every));
                tokio::time::sleep(gap).await;
            }
            tokio::time::sleep_until(round).await;
        }
    });
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
