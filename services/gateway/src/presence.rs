//! Presence by lease: every seated player on this gateway is reported
//! present with a lease, renewed here a few times per lease for as long as
//! they stay. A gateway killed outright sends no "gone", so without leases
//! its players would stay present for good: the opponent could never claim
//! victory and a game both players left would never be abandoned. With
//! them, the game service counts a seat as gone from when its lease lapsed.
//!
//! One call per seat per renewal, a few at a time: with the default 20 s
//! lease renewed every 6.7 s, a gateway with 3,000 seated players makes
//! about 450 calls a second, each a small write of the game's record.

use std::sync::Weak;
use std::time::Duration;

use fogblast_proto::game::PresenceRequest;
use futures::StreamExt;
use tokio::time::MissedTickBehavior;
use tracing::debug;

use crate::feeds::Feeds;

/// Renewals sent at once, so a gateway with many players spreads them
/// rather than bursting at the shards.
const AT_ONCE: usize = 16;

/// Renews the leases of the players seated here every third of `lease`,
/// until the feeds go. A lease of zero renews nothing (presence then lasts
/// until reported gone, as before leases).
pub fn renew(feeds: Weak<Feeds>, router: std::sync::Arc<fogblast_routing::Router>, lease: Duration) {
    if lease.is_zero() {
        return;
    }
    let every = lease / 3;
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(every);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let Some(seats) = feeds.upgrade().map(|f| f.seats()) else { return };
            futures::stream::iter(seats)
                .for_each_concurrent(AT_ONCE, |(game, player)| {
                    let (feeds, router) = (feeds.clone(), router.clone());
                    async move {
                        // A player who left since the list was made has had
                        // their "gone" reported; a renewal now would undo it.
                        if !feeds.upgrade().is_some_and(|f| f.seated_here(&game, &player)) {
                            return;
                        }
                        let request = PresenceRequest {
                            game_id: game.to_string(),
                            player_id: player.to_string(),
                            connected: true,
                            lease_ms: lease.as_millis() as u64,
                        };
                        // A renewal that does not arrive in time is as good
                        // as lost: the next one goes a third of a lease later.
                        match tokio::time::timeout(every, router.report_presence(request)).await {
                            Ok(Ok(_)) => {}
                            Ok(Err(error)) => debug!(game = %game, %error, "presence lease not renewed"),
                            Err(_) => debug!(game = %game, "presence lease renewal timed out"),
                        }
                        // The player left while the renewal was on its way,
                        // and it may have landed after their "gone": say it
                        // again, so the last word the game hears is true.
                        if let Some(feeds) = feeds.upgrade() {
                            if !feeds.seated_here(&game, &player) {
                                feeds.report_presence(&game, &player, false);
                            }
                        }
                    }
                })
                .await;
        }
    });
}
