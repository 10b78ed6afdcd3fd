//! The shard's end of `ExecuteStream`: one caller's commands over one
//! stream. Each call runs as a unary `Execute` would and is answered under
//! its call id as soon as it is done. The calls of one game run one after
//! another in the order they arrived (a lane per game, gone once empty);
//! calls of different games run at once, at most [`MAX_IN_FLIGHT`] per
//! stream, past which the stream is not read, so a caller that sends
//! faster than the shard commits waits on HTTP/2 flow control. A call that
//! waited here past its caller's budget is answered unavailable, unapplied:
//! its caller has given up on it and sends it again.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::command_answer::Outcome;
use fogblast_proto::game::{Command, CommandAnswer, CommandCall, CommandResult};
use futures::{Stream, StreamExt};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;

/// What runs each call: the game service, or a stand-in in tests.
pub trait Commands: Clone + Send + Sync + 'static {
    fn run(
        &self,
        command: Command,
        trace: HashMap<String, String>,
    ) -> impl Future<Output = Result<CommandResult, ServiceError>> + Send;
}

/// Calls of one stream being run or waiting for their game's lane.
pub const MAX_IN_FLIGHT: usize = 1024;

/// The answers, as the stream sends them.
pub type AnswerStream = ReceiverStream<Result<CommandAnswer, Status>>;

type Answers = mpsc::Sender<Result<CommandAnswer, Status>>;

/// Each game's lane while a call of it runs: the calls waiting behind
/// that one, in arrival order.
type Lanes = Arc<Mutex<HashMap<String, VecDeque<Arrived>>>>;

/// A call read off the stream, holding its place among those in flight.
struct Arrived {
    call: CommandCall,
    at: Instant,
    _in_flight: OwnedSemaphorePermit,
}

/// Starts reading `calls`; the answers come on the stream returned.
pub fn serve<C, S>(commands: C, calls: S) -> AnswerStream
where
    C: Commands,
    S: Stream<Item = Result<CommandCall, Status>> + Send + Unpin + 'static,
{
    let (answers, stream) = mpsc::channel(MAX_IN_FLIGHT);
    tokio::spawn(read_calls(commands, calls, answers));
    ReceiverStream::new(stream)
}

async fn read_calls<C: Commands>(
    commands: C,
    mut calls: impl Stream<Item = Result<CommandCall, Status>> + Unpin,
    answers: Answers,
) {
    let in_flight = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    let lanes = Lanes::default();
    loop {
        let permit = tokio::select! {
            permit = in_flight.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
            () = answers.closed() => return,
        };
        let call = match calls.next().await {
            Some(Ok(call)) => call,
            // The caller closed its side, or the connection went: the calls
            // already read still run, and their answers go while anyone reads.
            None | Some(Err(_)) => return,
        };
        queue(&commands, &lanes, &answers, Arrived { call, at: Instant::now(), _in_flight: permit });
    }
}

/// Puts `arrived` at the end of its game's lane, opening the lane (and
/// starting its runner) if the game has none.
fn queue<C: Commands>(commands: &C, lanes: &Lanes, answers: &Answers, arrived: Arrived) {
    let game = arrived.call.command.as_ref().map(|c| c.game_id.clone()).unwrap_or_default();
    let mut open = lanes.lock().expect("lanes lock");
    // A lane in the map has its runner: it leaves the map, under this lock,
    // only once its queue is empty.
    if let Some(lane) = open.get_mut(&game) {
        lane.push_back(arrived);
        return;
    }
    open.insert(game.clone(), VecDeque::new());
    tokio::spawn(run_lane(commands.clone(), lanes.clone(), game, arrived, answers.clone()));
}

async fn run_lane<C: Commands>(commands: C, lanes: Lanes, game: String, first: Arrived, answers: Answers) {
    let mut next = first;
    loop {
        let answer = answer(&commands, next).await;
        // A caller gone meanwhile reads no answers; the calls it sent
        // still run, as unary calls would have once received.
        let _ = answers.send(Ok(answer)).await;
        let mut open = lanes.lock().expect("lanes lock");
        match open.get_mut(&game).and_then(VecDeque::pop_front) {
            Some(waiting) => next = waiting,
            None => {
                open.remove(&game);
                return;
            }
        }
    }
}

async fn answer<C: Commands>(commands: &C, arrived: Arrived) -> CommandAnswer {
    let Arrived { call, at, _in_flight } = arrived;
    let budget = Duration::from_millis(call.budget_ms.into());
    let outcome = match call.command {
        _ if call.budget_ms > 0 && at.elapsed() > budget => Err(ServiceError::new(
            ErrorCode::Unavailable,
            format!("the command waited past its caller's {} ms", call.budget_ms),
        )),
        None => Err(ServiceError::new(ErrorCode::BadRequest, "a call carries a command")),
        Some(mut command) => {
            // Waiting here for the game's earlier calls is not the mover's time.
            if let Some(fogblast_proto::game::command::Action::Move(m)) = &mut command.action {
                let here = u32::try_from(at.elapsed().as_millis()).unwrap_or(u32::MAX);
                m.waited_ms = m.waited_ms.saturating_add(here);
            }
            commands.run(command, call.trace_context).await
        }
    };
    let outcome = match outcome {
        Ok(result) => Outcome::Result(result),
        Err(error) => Outcome::Refusal(error.into_refusal()),
    };
    CommandAnswer { call_id: call.call_id, outcome: Some(outcome) }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::sync::Notify;

    use super::*;

    /// Records each call it runs, per game, after a pause of its own, and
    /// counts how many run at once.
    #[derive(Clone, Default)]
    struct Recorder {
        ran: Arc<Mutex<HashMap<String, Vec<String>>>>,
        running: Arc<AtomicUsize>,
        most_at_once: Arc<AtomicUsize>,
        /// Calls of games named "held..." wait for this.
        release: Arc<Notify>,
        /// The `waited_ms` of each move it ran.
        move_waits: Arc<Mutex<Vec<u32>>>,
    }

    impl Commands for Recorder {
        async fn run(&self, command: Command, _: HashMap<String, String>) -> Result<CommandResult, ServiceError> {
            if let Some(fogblast_proto::game::command::Action::Move(m)) = &command.action {
                self.move_waits.lock().unwrap().push(m.waited_ms);
            }
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.most_at_once.fetch_max(now, Ordering::SeqCst);
            if command.game_id.starts_with("held") {
                self.release.notified().await;
            } else {
                // Later calls of a game tend to finish sooner: only the
                // lanes keep them in order.
                let n: u64 = command.request_id.parse().unwrap_or(0);
                tokio::time::sleep(Duration::from_micros((40 - n % 40) * 50)).await;
            }
            self.ran.lock().unwrap().entry(command.game_id.clone()).or_default().push(command.request_id.clone());
            self.running.fetch_sub(1, Ordering::SeqCst);
            Ok(CommandResult { version: command.request_id.parse().unwrap_or(0), new_game_id: String::new() })
        }
    }

    fn call(call_id: u64, game: &str, budget_ms: u32) -> CommandCall {
        let command = Command { game_id: game.to_owned(), request_id: call_id.to_string(), ..Default::default() };
        CommandCall { call_id, command: Some(command), budget_ms, trace_context: HashMap::new() }
    }

    /// A stream on `commands` and the sender of its calls.
    fn open(commands: Recorder) -> (mpsc::UnboundedSender<Result<CommandCall, Status>>, AnswerStream) {
        let (calls, incoming) = mpsc::unbounded_channel();
        let answers = serve(commands, tokio_stream::wrappers::UnboundedReceiverStream::new(incoming));
        (calls, answers)
    }

    async fn next_answer(answers: &mut AnswerStream) -> CommandAnswer {
        let next = tokio::time::timeout(Duration::from_secs(30), answers.next()).await;
        next.expect("an answer comes").expect("the stream is open").expect("an answer, not a status")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_move_waiting_behind_its_games_earlier_call_counts_the_wait_as_not_the_movers() {
        let recorder = Recorder::default();
        let (calls, mut answers) = open(recorder.clone());
        calls.send(Ok(call(1, "held-game", 0))).unwrap();
        let mut waiting_move = call(2, "held-game", 0);
        let action = fogblast_proto::game::Move { uci: "e2e4".into(), waited_ms: 7, ..Default::default() };
        waiting_move.command.as_mut().unwrap().action = Some(fogblast_proto::game::command::Action::Move(action));
        calls.send(Ok(waiting_move)).unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        // One release for the earlier call, one for the move once it runs.
        recorder.release.notify_one();
        next_answer(&mut answers).await;
        recorder.release.notify_one();
        next_answer(&mut answers).await;
        let waits = recorder.move_waits.lock().unwrap().clone();
        assert_eq!(waits.len(), 1, "{waits:?}");
        assert!(waits[0] >= 7 + 300, "the move carried its 7 ms and the 300 ms it waited here: {waits:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn each_games_calls_run_in_arrival_order_and_games_run_at_once() {
        let recorder = Recorder::default();
        let (calls, mut answers) = open(recorder.clone());
        let games = ["a", "b", "c", "d"];
        for n in 0..160u64 {
            calls.send(Ok(call(n, games[(n % 4) as usize], 0))).unwrap();
        }
        let mut answered = Vec::new();
        for _ in 0..160 {
            let answer = next_answer(&mut answers).await;
            let Some(Outcome::Result(result)) = answer.outcome else { panic!("{answer:?} is not a result") };
            assert_eq!(result.version, answer.call_id, "each answer is its own call's");
            answered.push(answer.call_id);
        }
        answered.sort_unstable();
        assert_eq!(answered, (0..160).collect::<Vec<_>>(), "every call is answered once");
        let ran = recorder.ran.lock().unwrap().clone();
        for (i, game) in games.iter().enumerate() {
            let expected: Vec<String> = (0..160u64).filter(|n| *n as usize % 4 == i).map(|n| n.to_string()).collect();
            assert_eq!(ran[*game], expected, "game {game}'s calls ran in the order they came");
        }
        assert!(recorder.most_at_once.load(Ordering::SeqCst) > 1, "different games ran at once");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_that_waited_past_its_budget_is_answered_unavailable_and_not_run() {
        let recorder = Recorder::default();
        let (calls, mut answers) = open(recorder.clone());
        calls.send(Ok(call(1, "held", 0))).unwrap();
        calls.send(Ok(call(2, "held", 20))).unwrap();
        // The second call waits behind the first far longer than 20 ms.
        while recorder.running.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        recorder.release.notify_one();
        let first = next_answer(&mut answers).await;
        assert!(matches!(first.outcome, Some(Outcome::Result(_))), "{first:?}");
        let second = next_answer(&mut answers).await;
        let Some(Outcome::Refusal(refusal)) = second.outcome else { panic!("{second:?} was run") };
        assert_eq!(ServiceError::from_refusal(refusal).code, ErrorCode::Unavailable);
        assert_eq!(recorder.ran.lock().unwrap()["held"], ["1"], "the late call never ran");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stream_runs_at_most_its_bound_of_calls_and_reads_on_as_they_finish() {
        let recorder = Recorder::default();
        let (calls, mut answers) = open(recorder.clone());
        let sent = MAX_IN_FLIGHT + 10;
        // Each of its own game, so no lane holds any back: only the bound.
        for n in 0..sent as u64 {
            calls.send(Ok(call(n, &format!("held-{n}"), 0))).unwrap();
        }
        while recorder.running.load(Ordering::SeqCst) < MAX_IN_FLIGHT {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(recorder.running.load(Ordering::SeqCst), MAX_IN_FLIGHT, "no more run at once than the bound");
        for _ in 0..sent {
            recorder.release.notify_one();
            let answer = next_answer(&mut answers).await;
            assert!(matches!(answer.outcome, Some(Outcome::Result(_))), "{answer:?}");
        }
        assert_eq!(recorder.ran.lock().unwrap().len(), sent, "every call ran in the end");
        assert_eq!(recorder.most_at_once.load(Ordering::SeqCst), MAX_IN_FLIGHT);
    }
}
