//! Calling the game shards, each game at the shard that owns it: the same
//! rendezvous hash over the same membership the shards use, read again
//! periodically. Gateways and the matchmaker both call the game service
//! through it. A `NOT_OWNER` answer names the owner, and the call goes
//! there; while a shard fails over (its lease has yet to run out) calls are
//! retried until the route timeout, so players see a pause rather than an
//! error. [`games`] has one typed method per call of the game service.

pub mod games;
pub mod membership;
pub mod placement;

pub use membership::{Member, Membership, StoreError};

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::game_client::GameClient;
use fogblast_proto::ids::GameId;
use rand::Rng;
use tokio::time::Instant;
use tonic::transport::{Channel, Endpoint};
use tracing::warn;

/// Which failures a call is sent again after, until the route timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retry {
    /// Reads, watches and reports that say the same thing again: sending
    /// them twice changes nothing, so any failure that may pass (the shard
    /// is not the owner, or did not answer) is retried.
    Read,
    /// Commands that change a game. They are retried on the same failures
    /// as reads, because a player must not see an error while a shard fails
    /// over; an answer lost after the command was applied therefore sends
    /// it again (docs/game-service.md, "Routing and retries").
    Command,
}

impl Retry {
    pub const READ: Retry = Retry::Read;
    pub const COMMAND: Retry = Retry::Command;

    fn retries(self, code: ErrorCode) -> bool {
        match self {
            Retry::Read | Retry::Command => matches!(code, ErrorCode::NotOwner | ErrorCode::Unavailable),
        }
    }
}

#[derive(Debug)]
pub struct Router {
    membership: Arc<dyn Membership>,
    members: RwLock<Arc<Vec<Member>>>,
    clients: Mutex<HashMap<String, GameClient<Channel>>>,
    timeout: Duration,
}

impl Router {
    /// A router that has read membership once.
    pub async fn new(membership: Arc<dyn Membership>, timeout: Duration) -> Router {
        let router = Router { membership, members: RwLock::default(), clients: Mutex::default(), timeout };
        router.refresh().await;
        router
    }

    pub async fn refresh(&self) {
        match self.membership.members().await {
            Ok(mut members) => {
                members.sort_by(|a, b| a.shard.cmp(&b.shard));
                *self.members.write().expect("members lock") = Arc::new(members);
            }
            Err(error) => warn!(%error, "could not read shard membership"),
        }
    }

    /// Reads membership every `period` for as long as the router lives.
    pub fn keep_fresh(self: &Arc<Self>, period: Duration) {
        let router = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(period).await;
                let Some(router) = router.upgrade() else { return };
                router.refresh().await;
            }
        });
    }

    pub fn live_shards(&self) -> usize {
        self.members.read().expect("members lock").len()
    }

    fn client(&self, addr: &str) -> Result<GameClient<Channel>, ServiceError> {
        let mut clients = self.clients.lock().expect("clients lock");
        if let Some(client) = clients.get(addr) {
            return Ok(client.clone());
        }
        let endpoint = Endpoint::from_shared(addr.to_owned())
            .map_err(|e| ServiceError::new(ErrorCode::Internal, format!("bad shard address {addr}: {e}")))?
            .connect_timeout(Duration::from_secs(2))
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(10))
            .keep_alive_while_idle(true);
        let client = GameClient::new(endpoint.connect_lazy());
        clients.insert(addr.to_owned(), client.clone());
        Ok(client)
    }

    fn owner(&self, game: &GameId) -> Option<String> {
        let members = self.members.read().expect("members lock").clone();
        placement::owner(game, &members).map(|m| m.addr.clone())
    }

    fn any_shard(&self) -> Option<String> {
        let members = self.members.read().expect("members lock").clone();
        (!members.is_empty()).then(|| members[rand::rng().random_range(0..members.len())].addr.clone())
    }

    /// Calls the owner of `game`; `game` `None` lets any shard answer
    /// first (creating a game, finding one by code) and follows its redirect.
    async fn call_with<T, F, Fut>(&self, game: Option<&GameId>, retry: Retry, mut call: F) -> Result<T, ServiceError>
    where
        F: FnMut(GameClient<Channel>) -> Fut,
        Fut: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let deadline = Instant::now() + self.timeout;
        let mut redirect: Option<String> = None;
        let mut backoff = Duration::from_millis(25);
        loop {
            let target = redirect.take().or_else(|| match game {
                Some(game) => self.owner(game),
                None => self.any_shard(),
            });
            let result = match target.as_deref() {
                Some(addr) => match self.client(addr) {
                    Ok(client) => {
                        call(client).await.map(tonic::Response::into_inner).map_err(|s| ServiceError::from_status(&s))
                    }
                    Err(error) => Err(error),
                },
                None => Err(ServiceError::new(ErrorCode::Unavailable, "no game shard is running")),
            };
            let error = match result {
                Ok(answer) => return Ok(answer),
                Err(error) if retry.retries(error.code) => error,
                Err(error) => return Err(error),
            };
            if Instant::now() + backoff > deadline {
                return Err(ServiceError::new(
                    ErrorCode::Unavailable,
                    format!("the game is unavailable: {}", error.message),
                ));
            }
            match error.owner.filter(|owner| Some(owner) != target.as_ref()) {
                Some(owner) => redirect = Some(owner),
                None => {
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_millis(500));
                    self.refresh().await;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_failures_that_may_pass_are_retried() {
        for retry in [Retry::READ, Retry::COMMAND] {
            assert!(retry.retries(ErrorCode::NotOwner));
            assert!(retry.retries(ErrorCode::Unavailable));
            for code in [ErrorCode::IllegalMove, ErrorCode::Conflict, ErrorCode::GameOver, ErrorCode::NotFound] {
                assert!(!retry.retries(code), "{code:?} is an answer, not a failure");
            }
        }
    }
}
