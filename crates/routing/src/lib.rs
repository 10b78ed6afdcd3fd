//! Calling the game shards, each game at the shard that owns it: the same
//! rendezvous hash over the same membership the shards use, read again
//! periodically. Gateways and the matchmaker both call the game service
//! through it. A `NOT_OWNER` answer names the owner, and the call goes
//! there; while a shard fails over (its lease has yet to run out) calls are
//! retried until the route timeout, so players see a pause rather than an
//! error. [`games`] has one typed method per call of the game service.

mod command_stream;
pub mod games;
pub mod membership;
pub mod placement;

pub use membership::{Member, Membership, StoreError};

use command_stream::CommandStream;

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
    /// Commands that change a game. Every attempt carries the same request
    /// id, which the shard records with the commit, so an attempt whose
    /// answer was lost after it was applied is answered from the record
    /// when sent again: they are retried on the same failures as reads, and
    /// a player sees a pause, not an error, while a shard fails over
    /// (docs/game-service.md, "Routing and retries").
    Command,
}

impl Retry {
    /// A failure that may pass: the shard is not the owner, or did not answer.
    fn retries(self, code: ErrorCode) -> bool {
        matches!(code, ErrorCode::NotOwner | ErrorCode::Unavailable)
    }
}

/// How long one attempt of a call may take before it is given up and tried
/// again: a shard that froze keeps its sockets open and would otherwise
/// hold the call until the whole route timeout.
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_millis(500);

/// The longest pause between attempts. Short, because the shard that will
/// answer is usually known within a few milliseconds of the failure.
const MAX_BACKOFF: Duration = Duration::from_millis(100);

/// Membership read again on a failure is not read again sooner than this,
/// so many calls failing at once cost the store one read.
const REFRESH_DEBOUNCE: Duration = Duration::from_millis(20);

#[derive(Debug)]
pub struct Router {
    membership: Arc<dyn Membership>,
    members: RwLock<Arc<Vec<Member>>>,
    clients: Mutex<HashMap<String, GameClient<Channel>>>,
    /// One command stream per shard address, opened on first use and
    /// opened again after it ends.
    streams: Mutex<HashMap<String, CommandStream>>,
    timeout: Duration,
    attempt_timeout: Duration,
    /// When membership was last read, for [`REFRESH_DEBOUNCE`].
    refreshed: Mutex<Option<Instant>>,
    /// Told whenever a read of membership finds it changed.
    membership_changed: tokio::sync::watch::Sender<()>,
}

impl Router {
    /// A router that has read membership once.
    pub async fn new(membership: Arc<dyn Membership>, timeout: Duration) -> Router {
        let router = Router {
            membership,
            members: RwLock::default(),
            clients: Mutex::default(),
            streams: Mutex::default(),
            timeout,
            attempt_timeout: ATTEMPT_TIMEOUT.min(timeout),
            refreshed: Mutex::default(),
            membership_changed: tokio::sync::watch::Sender::new(()),
        };
        router.refresh().await;
        router
    }

    /// Gives up each attempt after `attempt_timeout` (at most the route timeout).
    pub fn with_attempt_timeout(mut self, attempt_timeout: Duration) -> Router {
        self.attempt_timeout = attempt_timeout.min(self.timeout);
        self
    }

    /// Reads membership again after a failure, unless it was just read.
    async fn refresh_soon(&self) {
        {
            let mut refreshed = self.refreshed.lock().expect("refreshed lock");
            if refreshed.is_some_and(|at| at.elapsed() < REFRESH_DEBOUNCE) {
                return;
            }
            *refreshed = Some(Instant::now());
        }
        self.refresh().await;
    }

    pub async fn refresh(&self) {
        *self.refreshed.lock().expect("refreshed lock") = Some(Instant::now());
        match self.membership.members().await {
            Ok(mut members) => {
                members.sort_by(|a, b| a.shard.cmp(&b.shard));
                let mut current = self.members.write().expect("members lock");
                if **current != members {
                    *current = Arc::new(members);
                    drop(current);
                    self.membership_changed.send_replace(());
                }
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

    /// Told whenever membership is read and found changed, so that
    /// whoever follows a game at its owner looks again at who owns it.
    pub fn membership_changes(&self) -> tokio::sync::watch::Receiver<()> {
        self.membership_changed.subscribe()
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
            .map_err(|e| {
                ServiceError::failure(
                    ErrorCode::Internal,
                    "internal server error",
                    format!("bad shard address {addr}: {e}"),
                )
            })?
            .connect_timeout(Duration::from_secs(2))
            .tcp_nodelay(true)
            // A connection whose shard stops answering pings (frozen, or cut
            // off without a reset) is dropped within 4 s, so calls and
            // Watch streams opened again get a fresh one.
            .http2_keep_alive_interval(Duration::from_secs(1))
            .keep_alive_timeout(Duration::from_secs(3))
            .keep_alive_while_idle(true);
        let client = GameClient::new(endpoint.connect_lazy());
        clients.insert(addr.to_owned(), client.clone());
        Ok(client)
    }

    /// The command stream to `addr`: the open one, or a new one.
    fn command_stream(&self, addr: &str, client: GameClient<Channel>) -> CommandStream {
        let mut streams = self.streams.lock().expect("streams lock");
        match streams.get(addr) {
            Some(stream) if stream.is_open() || stream.is_unsupported() => stream.clone(),
            _ => {
                let stream = CommandStream::open(client, addr);
                streams.insert(addr.to_owned(), stream.clone());
                stream
            }
        }
    }

    /// The address of the shard that owns `game` by this router's view of
    /// membership, which callers holding a stream to it compare over time.
    pub fn owner_addr(&self, game: &GameId) -> Option<String> {
        self.owner(game)
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
        self.attempts(game, retry, |_, client| {
            let answer = call(client);
            async move { answer.await.map(tonic::Response::into_inner).map_err(|s| ServiceError::from_status(&s)) }
        })
        .await
    }

    /// Runs `call` on the owner of `game` (`None`: any shard), at the
    /// shard's address with its client, until it is answered, its failure
    /// is final, or the route timeout passes.
    async fn attempts<T, F, Fut>(&self, game: Option<&GameId>, retry: Retry, mut call: F) -> Result<T, ServiceError>
    where
        F: FnMut(&str, GameClient<Channel>) -> Fut,
        Fut: Future<Output = Result<T, ServiceError>>,
    {
        let deadline = Instant::now() + self.timeout;
        let mut redirect: Option<String> = None;
        // The last address that did not answer: a redirect naming it is
        // stale (the shard that sent it has yet to see the death).
        let mut silent: Option<String> = None;
        let mut backoff = Duration::from_millis(5);
        loop {
            let target = redirect.take().or_else(|| match game {
                Some(game) => self.owner(game),
                None => self.any_shard(),
            });
            let result = match target.as_deref() {
                Some(addr) => match self.client(addr) {
                    Ok(client) => {
                        let budget = deadline.saturating_duration_since(Instant::now()).min(self.attempt_timeout);
                        match tokio::time::timeout(budget, call(addr, client)).await {
                            Ok(answer) => answer,
                            Err(_) => Err(ServiceError::failure(
                                ErrorCode::Unavailable,
                                "the game service did not answer in time",
                                format!("shard {addr} did not answer within {} ms", budget.as_millis()),
                            )),
                        }
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
                return Err(ServiceError::failure(
                    ErrorCode::Unavailable,
                    "the game is unavailable right now: try again shortly",
                    error.for_log(),
                ));
            }
            if error.code == ErrorCode::Unavailable {
                silent.clone_from(&target);
            }
            match error.owner.filter(|owner| Some(owner) != target.as_ref() && Some(owner) != silent.as_ref()) {
                Some(owner) => redirect = Some(owner),
                None => {
                    // Membership first: after a shard died or left, the
                    // next read usually names the new owner already.
                    self.refresh_soon().await;
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_trait::async_trait;
    use fogblast_proto::ids::ShardId;

    /// Membership as a list the test sets.
    #[derive(Debug, Default)]
    struct Listed(Mutex<Vec<Member>>);

    #[async_trait]
    impl Membership for Listed {
        async fn register(&self, _: &ShardId, _: &str, _: Duration) -> Result<u64, StoreError> {
            unreachable!("the router registers nobody")
        }
        async fn renew(&self, _: &ShardId, _: u64, _: Duration) -> Result<bool, StoreError> {
            unreachable!("the router renews nothing")
        }
        async fn deregister(&self, _: &ShardId, _: u64) -> Result<(), StoreError> {
            unreachable!("the router deregisters nobody")
        }
        async fn members(&self) -> Result<Vec<Member>, StoreError> {
            Ok(self.0.lock().unwrap().clone())
        }
    }

    fn member(name: &str, epoch: u64) -> Member {
        Member { shard: ShardId::parse(name).unwrap(), addr: format!("http://{name}:1"), epoch }
    }

    #[tokio::test]
    async fn followers_are_told_when_membership_changes_and_only_then() {
        let listed = Arc::new(Listed::default());
        listed.0.lock().unwrap().push(member("a", 1));
        let router = Router::new(listed.clone(), Duration::from_secs(1)).await;
        let mut changes = router.membership_changes();

        router.refresh().await;
        assert!(!changes.has_changed().unwrap(), "the same members read again is no change");

        // The same shards listed in another order are the same membership.
        listed.0.lock().unwrap().insert(0, member("b", 1));
        router.refresh().await;
        assert!(changes.has_changed().unwrap(), "a shard joined");
        changes.mark_unchanged();
        listed.0.lock().unwrap().reverse();
        router.refresh().await;
        assert!(!changes.has_changed().unwrap(), "the order of the list is not a change");

        // A shard that registered again has a new epoch: a change.
        listed.0.lock().unwrap()[0] = member("a", 2);
        router.refresh().await;
        assert!(changes.has_changed().unwrap(), "a shard came back with a new epoch");
    }

    #[test]
    fn only_failures_that_may_pass_are_retried() {
        for retry in [Retry::Read, Retry::Command] {
            assert!(retry.retries(ErrorCode::NotOwner));
            assert!(retry.retries(ErrorCode::Unavailable));
            for code in [ErrorCode::IllegalMove, ErrorCode::Conflict, ErrorCode::GameOver, ErrorCode::NotFound] {
                assert!(!retry.retries(code), "{code:?} is an answer, not a failure");
            }
        }
    }
}
