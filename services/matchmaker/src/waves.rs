//! One pairing wave of one pool, and the making of each pairing's game.
//!
//! A wave runs only under the pool's lease. It reads the pool atomically
//! (and counts itself) with the lease check, lets the pure rules in
//! `pairing.rs` choose the pairs, then commits each pair in three steps:
//!
//! 1. **lock** both players, each only while their pointer still names the
//!    seek being paired (a replaced or cancelled seek is never paired);
//! 2. **commit** in the pool, one Lua script: only if the lease token is
//!    still this holder's (fencing) and both seeks are still in the pool,
//!    remove both and record the pairing as pending;
//! 3. **unlock** both players, dropping their pointers to the used seeks.
//!
//! A cancel racing a wave either removes the seek first (the commit finds
//! it gone and nothing is paired) or finds it gone (it answers "too late"
//! and the player is paired). Then the game is made from the pending
//! record: white creates it, black joins by code, both are told on
//! `player.<id>`, and the record goes. Every step updates the record under
//! the lease, so whichever replica holds the pool next finishes what a dead
//! one left, and a replica that lost the lease stops (aborting a game it
//! made but could not record).

use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use fogblast_proto::error::ErrorCode;
use fogblast_proto::game::{ColorChoice, CreateGameRequest, JoinGameRequest};
use fogblast_proto::ids::GameId;
use futures::StreamExt;
use tracing::{debug, info, warn};

use crate::core::{random_id, Matchmaker};
use crate::notices;
use crate::pairing::{self, ColorHistory, Seeker};
use crate::pool::PoolKey;
use crate::store::{Cleared, Fenced, Lock, PendingPairing, SeatPlan, Seek, Stage, StoreError};

/// How many pairs of one wave are committed at once.
const CONCURRENT_COMMITS: usize = 256;

/// What one wave did.
#[derive(Clone, Debug)]
pub struct WaveReport {
    pub pool: String,
    pub wave: u64,
    /// Store time at the start of the wave.
    pub now_ms: u64,
    /// The seeks the rules saw (expired ones left out).
    pub seeks: Vec<Seek>,
    /// The same seeks as the rules saw them (wait, misses), index by index.
    pub seekers: Vec<Seeker>,
    /// The pairs committed.
    pub paired: Vec<PendingPairing>,
    /// Pairs chosen but not committed (a player busy, a seek cancelled or replaced).
    pub skipped: usize,
    /// Time spent in the pure rules.
    pub matching: Duration,
    /// Time of the whole wave: read, rules, commits.
    pub elapsed: Duration,
}

enum Committed {
    Paired(Box<PendingPairing>),
    Skipped(&'static str),
    Fenced,
}

fn seeker(seek: &Seek, wave: u64, now_ms: u64) -> Seeker {
    Seeker {
        player: seek.entry.player.clone(),
        rating: seek.entry.rating,
        range: seek.entry.range,
        waited_ms: now_ms.saturating_sub(seek.created_ms),
        // This wave is the seek's (wave - joined)th; all before it were misses.
        misses: wave.saturating_sub(seek.joined_wave).saturating_sub(1).min(u64::from(u32::MAX)) as u32,
        colors: ColorHistory(seek.entry.colors.clone()),
    }
}

fn seat(seek: &Seek, now_ms: u64) -> SeatPlan {
    SeatPlan {
        seek: seek.id.clone(),
        player: seek.entry.player.clone(),
        name: seek.entry.name.clone(),
        rating: seek.entry.rating,
        waited_ms: now_ms.saturating_sub(seek.created_ms),
    }
}

impl Matchmaker {
    /// Runs one wave of `pool` under the lease `token`; `None` when the
    /// lease turned out to be lost.
    pub async fn run_wave(self: &Arc<Self>, pool: &PoolKey, token: &str) -> Result<Option<WaveReport>, StoreError> {
        let started = Instant::now();
        let name = pool.name();
        let Some(snapshot) = self.store.begin_wave(&name, token).await? else {
            self.metrics.pool_waiting(&name, None);
            return Ok(None);
        };
        for id in &snapshot.unreadable {
            warn!(pool = %name, id = %id, "dropping an entry that does not read");
            self.store.remove_seek(&name, id).await?;
        }
        for pending in snapshot.pending {
            self.start_completion(pool, token, pending, true);
        }

        let max_age = self.config.settings.seek_max_age_ms;
        let (expired, seeks): (Vec<Seek>, Vec<Seek>) =
            snapshot.seeks.into_iter().partition(|s| snapshot.now_ms.saturating_sub(s.created_ms) > max_age);
        for seek in expired {
            // Only a seek whose player still points at it and is not being
            // paired goes; the player is told.
            match self.store.clear_player_seek(&seek.entry.player, Some(&seek.id)).await? {
                Cleared::Seek { .. } => {
                    self.store.remove_seek(&name, &seek.id).await?;
                    self.tell(&seek.entry.player, notices::seek_cancelled("expired")).await;
                }
                // Its player moved on: it could never be paired anyway.
                Cleared::Nothing => drop(self.store.remove_seek(&name, &seek.id).await?),
                // Being paired right now: the next wave looks again.
                Cleared::Busy => {}
            }
        }

        let matching_started = Instant::now();
        let seekers: Vec<Seeker> = seeks.iter().map(|s| seeker(s, snapshot.wave, snapshot.now_ms)).collect();
        let pairs = pairing::pair_wave(&self.params, &seekers, &mut rand::rng());
        let matching = matching_started.elapsed();

        let now_ms = snapshot.now_ms;
        let outcomes: Vec<Result<Committed, StoreError>> = futures::stream::iter(pairs)
            .map(|pair| self.commit_pair(&name, token, &seeks[pair.white], &seeks[pair.black], now_ms))
            .buffer_unordered(CONCURRENT_COMMITS)
            .collect()
            .await;
        let mut paired = Vec::new();
        let mut skipped = 0;
        let mut fenced = false;
        let mut failure = None;
        for outcome in outcomes {
            match outcome {
                Ok(Committed::Paired(pairing)) => paired.push(*pairing),
                Ok(Committed::Skipped(reason)) => {
                    skipped += 1;
                    self.metrics.pairs_skipped.with_label_values(&[reason]).inc();
                }
                Ok(Committed::Fenced) => fenced = true,
                Err(error) => failure = Some(error),
            }
        }
        for pairing in &paired {
            self.metrics.pairings.inc();
            self.metrics.wait_seconds.observe(pairing.white.waited_ms as f64 / 1000.0);
            self.metrics.wait_seconds.observe(pairing.black.waited_ms as f64 / 1000.0);
            self.metrics.rating_gap.observe(f64::from(pairing.white.rating.abs_diff(pairing.black.rating)));
            self.start_completion(pool, token, pairing.clone(), false);
        }
        let elapsed = started.elapsed();
        self.metrics.pool_waiting(&name, Some(seeks.len().saturating_sub(2 * paired.len())));
        self.metrics.waves.inc();
        self.metrics.wave_seconds.observe(elapsed.as_secs_f64());
        if !paired.is_empty() || skipped > 0 {
            debug!(pool = %name, wave = snapshot.wave, seeks = seeks.len(), paired = paired.len(), skipped, "wave");
        }
        if let Some(error) = failure {
            return Err(error);
        }
        if fenced && paired.is_empty() {
            return Ok(None);
        }
        Ok(Some(WaveReport {
            pool: name,
            wave: snapshot.wave,
            now_ms,
            seeks,
            seekers,
            paired,
            skipped,
            matching,
            elapsed,
        }))
    }

    async fn commit_pair(
        &self,
        pool: &str,
        token: &str,
        white: &Seek,
        black: &Seek,
        now_ms: u64,
    ) -> Result<Committed, StoreError> {
        let id = random_id(16);
        // Long enough for the next holder to recover the pairing (and
        // unlock its players) if this replica dies between commit and unlock.
        let ttl = (self.config.settings.lease() * 4).max(Duration::from_secs(10));
        let first = self.store.lock_player(&white.entry.player, &white.id, &id, ttl).await?;
        if first != Lock::Ok {
            return self.skip(pool, white, first).await;
        }
        let second = self.store.lock_player(&black.entry.player, &black.id, &id, ttl).await?;
        if second != Lock::Ok {
            self.store.unlock_player(&white.entry.player, &id, None).await?;
            return self.skip(pool, black, second).await;
        }
        let pairing = PendingPairing {
            id: id.clone(),
            white: seat(white, now_ms),
            black: seat(black, now_ms),
            paired_ms: now_ms,
            stage: Stage::New,
            game: String::new(),
            code: String::new(),
        };
        let committed = self.store.commit_pair(pool, token, &pairing).await;
        let consumed = matches!(committed, Ok(Fenced::Ok));
        let (white_seek, black_seek) =
            if consumed { (Some(white.id.as_str()), Some(black.id.as_str())) } else { (None, None) };
        self.store.unlock_player(&white.entry.player, &id, white_seek).await?;
        self.store.unlock_player(&black.entry.player, &id, black_seek).await?;
        Ok(match committed? {
            Fenced::Ok => Committed::Paired(Box::new(pairing)),
            Fenced::Gone => Committed::Skipped("gone"),
            Fenced::Fenced => Committed::Fenced,
        })
    }

    /// A pair that could not lock: a stale seek (its player moved on) leaves the pool.
    async fn skip(&self, pool: &str, seek: &Seek, lock: Lock) -> Result<Committed, StoreError> {
        if lock == Lock::Stale {
            self.store.remove_seek(pool, &seek.id).await?;
            return Ok(Committed::Skipped("stale"));
        }
        Ok(Committed::Skipped("busy"))
    }

    /// Makes the pairing's game in the background, unless this replica is
    /// already at it. A `recovered` pairing (found pending by a wave) may
    /// have lost its wave's last step with a crash: its players are
    /// unlocked first, which is a no-op when that step happened.
    fn start_completion(self: &Arc<Self>, pool: &PoolKey, token: &str, pairing: PendingPairing, recovered: bool) {
        {
            let mut inflight = self.inflight.lock().unwrap_or_else(PoisonError::into_inner);
            if inflight.contains_key(&pairing.id) {
                return;
            }
            inflight.insert(pairing.id.clone(), pool.name());
        }
        let matchmaker = self.clone();
        let pool = *pool;
        let token = token.to_owned();
        // One trace per pairing: its game's creation and seating on the shard.
        let span = tracing::info_span!("matchmaker.pairing", pool = %pool.name(), pairing = %pairing.id, recovered);
        let completion = async move {
            let id = pairing.id.clone();
            let permit = matchmaker.completions.clone().acquire_owned().await;
            // Read it again: a wave's snapshot may predate the end of an
            // earlier completion of the same pairing on this replica.
            let fresh = match matchmaker.store.pending(&pool.name(), &pairing.id).await {
                Ok(fresh) => fresh,
                Err(error) => {
                    warn!(pool = %pool.name(), pairing = %id, %error, "could not read a pairing");
                    None
                }
            };
            if let Some(pairing) = fresh {
                if recovered {
                    for seat in [&pairing.white, &pairing.black] {
                        if let Err(error) =
                            matchmaker.store.unlock_player(&seat.player, &pairing.id, Some(&seat.seek)).await
                        {
                            warn!(pool = %pool.name(), pairing = %id, %error, "could not unlock a player");
                        }
                    }
                }
                if let Err(error) = matchmaker.complete(&pool, &token, pairing).await {
                    warn!(pool = %pool.name(), pairing = %id, %error, "pairing left for a later wave");
                }
            }
            drop(permit);
            matchmaker.inflight.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
        };
        tokio::spawn(tracing::Instrument::instrument(completion, span));
    }

    /// Takes a pairing as far as it goes: game made, both seated, both told.
    async fn complete(&self, pool: &PoolKey, token: &str, mut pairing: PendingPairing) -> Result<(), StoreError> {
        let name = pool.name();
        loop {
            match pairing.stage {
                Stage::New => {
                    // The pairing fixes its game's id and the requests'
                    // ids, so a create or join sent again by a later wave
                    // (or another replica) after a lost answer names the
                    // same game and is answered as the first time.
                    let request = CreateGameRequest {
                        game_id: pairing_game(&pairing.id).into_string(),
                        request_id: format!("create-{}", pairing.id),
                        player_id: pairing.white.player.clone(),
                        player_name: pairing.white.name.clone(),
                        variant: pool.variant as i32,
                        color: ColorChoice::ChooseWhite as i32,
                        clock: pool.clock_settings(),
                        rated: pool.rated,
                        ..Default::default()
                    };
                    match self.games.create(request).await {
                        Ok(created) => {
                            pairing.game = created.game_id;
                            pairing.code = created.code;
                            pairing.stage = Stage::Created;
                            if self.store.update_pending(&name, token, &pairing.id, Some(&pairing)).await? != Fenced::Ok
                            {
                                // Another holder owns this pairing now; it
                                // makes the same game, so this one is its.
                                warn!(pool = %name, pairing = %pairing.id, game = %pairing.game, "lease lost; leaving the game to the new holder");
                                return Ok(());
                            }
                        }
                        Err(error) => return self.retry_or_give_up(pool, token, &pairing, error).await,
                    }
                }
                Stage::Created => {
                    let request = JoinGameRequest {
                        player_id: pairing.black.player.clone(),
                        player_name: pairing.black.name.clone(),
                        code: pairing.code.clone(),
                        request_id: format!("join-{}", pairing.id),
                    };
                    match self.games.join(request).await {
                        Ok(_) => {}
                        Err(error) if matches!(error.code, ErrorCode::NotFound | ErrorCode::Conflict) => {
                            // A join that went through before a crash or a lost reply.
                            let seated = self
                                .games
                                .state(&pairing.game, &pairing.black.player)
                                .await
                                .ok()
                                .and_then(|state| state.black)
                                .is_some_and(|black| black.id == pairing.black.player);
                            if !seated {
                                return self.retry_or_give_up(pool, token, &pairing, error).await;
                            }
                        }
                        Err(error) => return self.retry_or_give_up(pool, token, &pairing, error).await,
                    }
                    pairing.stage = Stage::Joined;
                    if self.store.update_pending(&name, token, &pairing.id, Some(&pairing)).await? != Fenced::Ok {
                        return Ok(());
                    }
                }
                Stage::Joined => {
                    let keep = self.config.settings.color_history;
                    self.store.push_color(&pairing.white.player, true, keep).await?;
                    self.store.push_color(&pairing.black.player, false, keep).await?;
                    self.tell(&pairing.white.player, notices::paired(&pairing, pool, true)).await;
                    self.tell(&pairing.black.player, notices::paired(&pairing, pool, false)).await;
                    self.store.update_pending(&name, token, &pairing.id, None).await?;
                    self.metrics.games_created.inc();
                    info!(pool = %name, game = %pairing.game, white = %pairing.white.player, black = %pairing.black.player, "paired");
                    return Ok(());
                }
            }
        }
    }

    /// A game-service failure: unavailability is retried by later waves
    /// until the pairing is too old; anything else ends the pairing.
    async fn retry_or_give_up(
        &self,
        pool: &PoolKey,
        token: &str,
        pairing: &PendingPairing,
        error: fogblast_proto::error::ServiceError,
    ) -> Result<(), StoreError> {
        let now = self.store.now_ms().await?;
        let too_old = now.saturating_sub(pairing.paired_ms) > self.config.settings.pairing_give_up_ms;
        if error.code == ErrorCode::Unavailable && !too_old {
            return Err(StoreError::Games(error));
        }
        warn!(pool = %pool.name(), pairing = %pairing.id, %error, "giving up a pairing");
        if self.store.update_pending(&pool.name(), token, &pairing.id, None).await? != Fenced::Ok {
            return Ok(());
        }
        self.metrics.pairings_failed.inc();
        let notice =
            notices::pairing_failed(ErrorCode::Unavailable, "the paired game could not be started: seek again");
        self.tell(&pairing.white.player, notice.clone()).await;
        self.tell(&pairing.black.player, notice).await;
        // A create whose answer was lost may have made the game all the
        // same: it has the pairing's id. Last, as the shards may be down.
        let game = if pairing.game.is_empty() { pairing_game(&pairing.id).into_string() } else { pairing.game.clone() };
        let _ = self.games.abort(&game, &pairing.white.player).await;
        Ok(())
    }
}

/// The game a pairing makes.
fn pairing_game(pairing: &str) -> GameId {
    GameId::derived(&format!("pairing:{pairing}"))
}
