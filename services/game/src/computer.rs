//! The computer seat's moves, asked of the engine pool. Each call goes to
//! the next replica in turn; a replica that is down, overloaded or too slow
//! is skipped for the next one, so one engine failing never stalls a game.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use fogblast_proto::engine::engine_client::EngineClient;
use fogblast_proto::engine::{BestMoveRequest, Clock, Level as EngineLevel, Variant as EngineVariant};
use fogblast_proto::game::Level;
use fogblast_rules::{Color, Variant};
use tonic::transport::{Channel, Endpoint};
use tonic::Code;
use tracing::warn;

use crate::engine_view::fog_observation;
use crate::record::LiveGame;

/// Why no engine answered.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("no engine address is configured")]
    NoEngines,
    #[error("every engine replica failed; last: {0}")]
    AllFailed(String),
    #[error("the engine refused the position: {0}")]
    Refused(String),
}

#[derive(Debug)]
pub struct EnginePool {
    replicas: Vec<(String, Channel)>,
    next: AtomicUsize,
}

impl EnginePool {
    pub fn new(addrs: &[String]) -> Result<EnginePool, tonic::transport::Error> {
        let replicas = addrs
            .iter()
            .map(|addr| {
                let endpoint = Endpoint::from_shared(addr.clone())?.connect_timeout(Duration::from_secs(2));
                Ok((addr.clone(), endpoint.connect_lazy()))
            })
            .collect::<Result<_, tonic::transport::Error>>()?;
        Ok(EnginePool { replicas, next: AtomicUsize::new(0) })
    }

    /// The computer's move in `live`, which must be the computer's turn.
    pub async fn best_move(&self, live: &LiveGame, now_ms: u64) -> Result<String, EngineError> {
        if self.replicas.is_empty() {
            return Err(EngineError::NoEngines);
        }
        let request = request_for(live, now_ms);
        // The call may take the level's time plus the network; past that
        // the replica is treated as failed.
        let timeout = Duration::from_millis(u64::from(request.budget_ms.max(1_000)) + 5_000);
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let mut last = String::new();
        for i in 0..self.replicas.len() {
            let (addr, channel) = &self.replicas[(start + i) % self.replicas.len()];
            let mut call = tonic::Request::new(request.clone());
            call.set_timeout(timeout);
            fogblast_telemetry::inject_grpc(call.metadata_mut());
            match EngineClient::new(channel.clone()).best_move(call).await {
                Ok(response) => return Ok(response.into_inner().uci),
                Err(status) if status.code() == Code::InvalidArgument => {
                    return Err(EngineError::Refused(status.message().to_owned()));
                }
                Err(status) => {
                    warn!(engine = %addr, code = ?status.code(), message = status.message(), "engine replica failed");
                    last = format!("{addr}: {}", status.message());
                }
            }
        }
        Err(EngineError::AllFailed(last))
    }
}

fn request_for(live: &LiveGame, now_ms: u64) -> BestMoveRequest {
    let turn = live.game.position().turn();
    let player = live.seat(turn).player.clone().unwrap_or_default();
    let level = match Level::try_from(player.level) {
        Ok(Level::Easy) => EngineLevel::Easy,
        Ok(Level::Medium) => EngineLevel::Medium,
        _ => EngineLevel::Hard,
    };
    let variant = EngineVariant::from(live.variant());
    let clock = live.clock_at(now_ms).map(|state| {
        let remaining = if turn == Color::White { state.white_ms } else { state.black_ms };
        Clock {
            remaining_ms: u32::try_from(remaining).unwrap_or(u32::MAX),
            increment_ms: live.record.clock.map_or(0, |c| c.increment_ms),
        }
    });
    // With a clock, the computer spends about a thirtieth of what it has
    // left plus most of its increment, never more than 15 s on one move.
    let budget_ms = clock.map_or(0, |c| (c.remaining_ms / 30 + c.increment_ms * 3 / 4).clamp(50, 15_000));
    let seed = live.record.seed ^ live.ply() as u64;
    if live.variant() == Variant::Fog {
        // Fog of war: only what the computer's side has seen, never the
        // position or the opponent's moves.
        return BestMoveRequest {
            variant: variant as i32,
            initial_fen: String::new(),
            moves: Vec::new(),
            level: level as i32,
            budget_ms,
            clock,
            seed,
            fog: Some(fog_observation(&live.game, turn)),
        };
    }
    BestMoveRequest {
        variant: variant as i32,
        initial_fen: live.record.initial_fen.clone(),
        moves: live.record.moves.clone(),
        level: level as i32,
        budget_ms,
        clock,
        seed,
        fog: None,
    }
}
