//! Watch streams: every event of a game after a version, then each new one
//! as it is committed. The store's bounded history answers the catch-up;
//! the shard's in-memory broadcast carries the live part. A watcher that
//! falls behind the broadcast, or whose history has been trimmed, is caught
//! up again from the store or sent a snapshot, so it never misses or
//! repeats an event. The stream ends with `NOT_OWNER` when the game moves
//! to another shard; the gateway resumes there from its last version. For
//! two leases after a membership change, when a shard with an older view
//! may still write the game, the stream also reads the store every 250 ms
//! (on the shard's one signal, `Ownership::rechecks`, not a timer of each
//! stream's own). A stream quiet for a second sends a heartbeat, so its
//! watcher can tell a quiet game from a frozen shard or a connection cut
//! without a reset.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::{watch_event, EncodedWatchEvent, Heartbeat, Snapshot, WatchEvent};
use fogblast_proto::ids::GameId;
use fogblast_store::EventsAfter;
use futures::{Stream, StreamExt};
use prost::Message;
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;

use crate::audience;
use crate::shard::{unavailable, Committed, Shard};

/// The stream of encoded events, as the shard sends it.
pub type EncodedStream = ReceiverStream<Result<EncodedWatchEvent, Status>>;

/// The same events decoded, for callers of the plain `Watch`.
pub type WatchStream = Pin<Box<dyn Stream<Item = Result<WatchEvent, Status>> + Send>>;

/// A stream that sent nothing for this long sends a heartbeat.
pub const HEARTBEAT: Duration = Duration::from_secs(1);

/// The decoded form of [`watch_encoded`].
#[allow(clippy::result_large_err)] // the item type tonic gives every stream
pub fn watch(shard: Arc<Shard>, game: GameId, after_version: u64) -> Result<WatchStream, ServiceError> {
    let encoded = watch_encoded(shard, game, after_version)?;
    Ok(Box::pin(encoded.map(|event| {
        let event = event?;
        WatchEvent::decode(event.event).map_err(|e| Status::internal(format!("unreadable event: {e}")))
    })))
}

/// Every event of `game` after `after_version`, then each new one, each as
/// the bytes it was committed with.
pub fn watch_encoded(shard: Arc<Shard>, game: GameId, after_version: u64) -> Result<EncodedStream, ServiceError> {
    shard.ownership.check(&game)?;
    let (tx, rx) = mpsc::channel(64);
    // Subscribe before reading the history, so nothing falls in between.
    let live = shard.subscribe(&game);
    let changes = Changes { members: shard.ownership.changes(), rechecks: shard.ownership.rechecks() };
    tokio::spawn(async move {
        shard.metrics.watchers.inc();
        let end = follow(&shard, &game, after_version, live, changes, &tx).await;
        shard.metrics.watchers.dec();
        if let Err(error) = end {
            let _ = tx.send(Err(error.into_status())).await;
        }
    });
    Ok(ReceiverStream::new(rx))
}

type Sender = mpsc::Sender<Result<EncodedWatchEvent, Status>>;

fn encoded(event: &WatchEvent) -> EncodedWatchEvent {
    EncodedWatchEvent { event: Bytes::from(event.encode_to_vec()) }
}

/// What tells a stream to look at its game's ownership again.
struct Changes {
    members: tokio::sync::watch::Receiver<Arc<Vec<fogblast_store::Member>>>,
    /// A lease that runs out changes no membership this shard sees (it may
    /// be paused or cut off from the store): the shard signals it, so a
    /// shard that stopped serving does not keep a watcher waiting for
    /// events that now happen elsewhere.
    rechecks: tokio::sync::watch::Receiver<()>,
}

/// Ends with `Ok` when the watcher hung up.
async fn follow(
    shard: &Arc<Shard>,
    game: &GameId,
    after_version: u64,
    mut live: broadcast::Receiver<Committed>,
    mut changes: Changes,
    tx: &Sender,
) -> Result<(), ServiceError> {
    let mut last = after_version;
    if !catch_up(shard, game, &mut last, tx).await? {
        return Ok(());
    }
    let mut sent = last;
    let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            received = live.recv() => match received {
                Ok(event) if event.version <= last => {}
                Ok(event) if event.version == last + 1 => {
                    last = event.version;
                    if tx.send(Ok(EncodedWatchEvent { event: event.encoded })).await.is_err() {
                        return Ok(());
                    }
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {
                    if !catch_up(shard, game, &mut last, tx).await? {
                        return Ok(());
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return Ok(()),
            },
            changed = changes.members.changed() => {
                if changed.is_err() || !shard.ownership.owns(game) {
                    return Err(shard.ownership.check(game).err().unwrap_or_else(|| ServiceError::not_owner(None)));
                }
            }
            changed = changes.rechecks.changed() => {
                if changed.is_err() || !shard.ownership.owns(game) {
                    return Err(shard.ownership.check(game).err().unwrap_or_else(|| ServiceError::not_owner(None)));
                }
                // Right after a membership change a shard with an older view
                // may have written the game; the store has what the
                // broadcast lacks.
                if shard.ownership.unsettled() && !catch_up(shard, game, &mut last, tx).await? {
                    return Ok(());
                }
            }
            _ = heartbeat.tick() => {
                // A lease that ran out just before this stream subscribed to
                // the rechecks is caught here.
                if !shard.ownership.owns(game) {
                    return Err(shard.ownership.check(game).err().unwrap_or_else(|| ServiceError::not_owner(None)));
                }
                // Quiet since the last tick: say the stream is alive.
                if last == sent {
                    let beat = WatchEvent { version: last, kind: Some(watch_event::Kind::Heartbeat(Heartbeat {})) };
                    if tx.send(Ok(encoded(&beat))).await.is_err() {
                        return Ok(());
                    }
                }
                sent = last;
            }
            _ = tx.closed() => return Ok(()),
        }
    }
}

/// Sends what the store holds after `last`; `false` when the watcher hung up.
async fn catch_up(shard: &Arc<Shard>, game: &GameId, last: &mut u64, tx: &Sender) -> Result<bool, ServiceError> {
    let found = shard.store.events_after(game, *last).await.map_err(unavailable)?;
    // Only what is as durable as a commit is shown (see `Shard::current`).
    shard.store.confirm_durable(game).await.map_err(unavailable)?;
    match found {
        EventsAfter::NotFound => Err(ServiceError::new(ErrorCode::NotFound, format!("no game {game}"))),
        EventsAfter::Events { events, .. } => {
            for (version, bytes) in events {
                if version <= *last {
                    continue;
                }
                // Checked, then sent as stored.
                WatchEvent::decode(bytes.as_slice())
                    .map_err(|e| ServiceError::new(ErrorCode::Internal, format!("unreadable event {version}: {e}")))?;
                *last = version;
                if tx.send(Ok(EncodedWatchEvent { event: Bytes::from(bytes) })).await.is_err() {
                    return Ok(false);
                }
            }
            Ok(true)
        }
        EventsAfter::Gap { .. } => {
            let (live, version) = shard.current(game).await?;
            let now = shard.store.now_ms().await.map_err(unavailable)?;
            let [white, black, spectators] = audience::snapshot(&live, version, now, &shard.config.settings.timeouts);
            let snapshot = Snapshot { white: Some(white), black: Some(black), spectators: Some(spectators) };
            *last = version;
            let event = WatchEvent { version, kind: Some(watch_event::Kind::Snapshot(snapshot)) };
            Ok(tx.send(Ok(encoded(&event))).await.is_ok())
        }
    }
}
