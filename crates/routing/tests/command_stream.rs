//! Commands over one long-lived stream per shard, against a stand-in shard
//! on a real socket: many commands share the stream and each gets its own
//! answer; a stream that breaks is opened again and its waiting commands
//! retried; a shard without the stream gets its commands as unary calls.

mod support;

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fogblast_proto::game::command::Action;
use fogblast_proto::game::command_answer::Outcome;
use fogblast_proto::game::game_server::{Game, GameServer};
use fogblast_proto::game::{
    Command, CommandAnswer, CommandCall, CommandResult, CreateGameRequest, CreateGameResponse, EncodedWatchEvent,
    GameState, GamesInPlay, GetStateRequest, JoinGameRequest, JoinGameResponse, ListGamesInPlayRequest,
    ListSeatsRequest, ListSeatsResponse, Resign, WatchEvent, WatchRequest,
};
use fogblast_routing::Router;
use futures::{Stream, StreamExt};
use support::Members;
use tonic::{Request, Response, Status, Streaming};

/// How the stand-in treats its command streams.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Streams {
    /// Answers each call with the number its request id holds, later calls
    /// sooner than earlier ones.
    Answer,
    /// The first stream breaks on its first call; later ones answer.
    BreakFirst,
    /// A shard of a release without the stream.
    Missing,
}

#[derive(Clone)]
struct StandIn {
    streams: Streams,
    opened: Arc<AtomicUsize>,
    unary: Arc<AtomicUsize>,
    /// Request ids of the calls the streams received, in order.
    received: Arc<Mutex<Vec<String>>>,
}

fn answer_to(call: &CommandCall) -> CommandAnswer {
    let request = &call.command.as_ref().unwrap().request_id;
    let version = request.parse().unwrap_or(0);
    CommandAnswer {
        call_id: call.call_id,
        outcome: Some(Outcome::Result(CommandResult { version, new_game_id: String::new() })),
    }
}

type Answers = Pin<Box<dyn Stream<Item = Result<CommandAnswer, Status>> + Send>>;

#[allow(clippy::result_large_err)] // the signature tonic gives every call
fn no<T>() -> Result<Response<T>, Status> {
    Err(Status::unimplemented("not in this test"))
}

#[tonic::async_trait]
impl Game for StandIn {
    async fn create_game(&self, _: Request<CreateGameRequest>) -> Result<Response<CreateGameResponse>, Status> {
        no()
    }
    async fn join_game(&self, _: Request<JoinGameRequest>) -> Result<Response<JoinGameResponse>, Status> {
        no()
    }
    async fn execute(&self, request: Request<Command>) -> Result<Response<CommandResult>, Status> {
        self.unary.fetch_add(1, Ordering::SeqCst);
        let version = request.into_inner().request_id.parse().unwrap_or(0);
        Ok(Response::new(CommandResult { version, new_game_id: String::new() }))
    }
    type ExecuteStreamStream = Answers;
    async fn execute_stream(&self, calls: Request<Streaming<CommandCall>>) -> Result<Response<Answers>, Status> {
        let nth = self.opened.fetch_add(1, Ordering::SeqCst);
        if self.streams == Streams::Missing {
            return no();
        }
        let received = self.received.clone();
        let breaks = self.streams == Streams::BreakFirst && nth == 0;
        let answers = calls.into_inner().map(move |call| {
            let received = received.clone();
            async move {
                let call = call.ok()?;
                received.lock().unwrap().push(call.command.as_ref().unwrap().request_id.clone());
                if breaks {
                    return Some(Err(Status::internal("connection reset")));
                }
                // Earlier calls are answered later.
                let n: u64 = call.command.as_ref().unwrap().request_id.parse().unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(50u64.saturating_sub(n))).await;
                Some(Ok(answer_to(&call)))
            }
        });
        // Answers go out as each is ready, not in the calls' order.
        let answers = answers.buffer_unordered(64).filter_map(futures::future::ready);
        Ok(Response::new(Box::pin(answers)))
    }
    async fn get_state(&self, _: Request<GetStateRequest>) -> Result<Response<GameState>, Status> {
        no()
    }
    async fn list_seats(&self, _: Request<ListSeatsRequest>) -> Result<Response<ListSeatsResponse>, Status> {
        no()
    }
    async fn list_games_in_play(&self, _: Request<ListGamesInPlayRequest>) -> Result<Response<GamesInPlay>, Status> {
        no()
    }
    type WatchStream = futures::stream::Pending<Result<WatchEvent, Status>>;
    async fn watch(&self, _: Request<WatchRequest>) -> Result<Response<Self::WatchStream>, Status> {
        no()
    }
    type WatchEncodedStream = futures::stream::Pending<Result<EncodedWatchEvent, Status>>;
    async fn watch_encoded(&self, _: Request<WatchRequest>) -> Result<Response<Self::WatchEncodedStream>, Status> {
        no()
    }
}

impl StandIn {
    fn new(streams: Streams) -> StandIn {
        StandIn { streams, opened: Arc::default(), unary: Arc::default(), received: Arc::default() }
    }

    /// Serves on loopback; a router whose one shard it is.
    async fn serve(&self) -> Router {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(GameServer::new(self.clone()))
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
        );
        let members = Members::default();
        members.set(&[&addr]);
        Router::new(Arc::new(members), Duration::from_secs(10)).await
    }
}

/// A resignation in game `g-1` whose request id is `n`.
fn command(n: u64) -> Command {
    Command {
        game_id: "g-1".into(),
        player_id: "p".into(),
        request_id: n.to_string(),
        action: Some(Action::Resign(Resign {})),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_commands_share_one_stream_and_each_gets_its_own_answer() {
    let shard = StandIn::new(Streams::Answer);
    let router = Arc::new(shard.serve().await);
    let calls = (1..=40u64).map(|n| {
        let router = router.clone();
        tokio::spawn(async move { (n, router.command(command(n)).await) })
    });
    for call in futures::future::join_all(calls).await {
        let (n, answer) = call.unwrap();
        assert_eq!(answer.expect("answered").version, n, "command {n} got another's answer");
    }
    assert_eq!(shard.opened.load(Ordering::SeqCst), 1, "one stream carried them all");
    assert_eq!(shard.unary.load(Ordering::SeqCst), 0);
    assert_eq!(shard.received.lock().unwrap().len(), 40, "each command was sent once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_on_a_stream_that_broke_is_sent_again_on_a_new_one() {
    let shard = StandIn::new(Streams::BreakFirst);
    let router = shard.serve().await;
    assert_eq!(router.command(command(7)).await.expect("answered on the second stream").version, 7);
    assert_eq!(shard.opened.load(Ordering::SeqCst), 2, "the broken stream was replaced");
    assert_eq!(*shard.received.lock().unwrap(), ["7", "7"], "sent again under the same request id");
    assert_eq!(router.command(command(8)).await.expect("answered").version, 8);
    assert_eq!(shard.opened.load(Ordering::SeqCst), 2, "the new stream stays open");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shard_without_the_stream_gets_unary_calls_and_is_asked_once() {
    let shard = StandIn::new(Streams::Missing);
    let router = shard.serve().await;
    for n in 1..=3 {
        assert_eq!(router.command(command(n)).await.expect("answered by a unary call").version, n);
    }
    assert_eq!(shard.unary.load(Ordering::SeqCst), 3);
    assert_eq!(shard.opened.load(Ordering::SeqCst), 1, "the missing stream was asked for once");
}
