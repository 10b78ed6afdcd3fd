//! One long-lived `ExecuteStream` per shard, carrying every command this
//! process sends there: each call is a message on the stream rather than a
//! call of its own, and its answer comes back under its call id. A call
//! waits for its answer at most as long as its attempt may take; when the
//! stream breaks (the shard died, its connection was dropped) every call
//! still waiting is answered `UNAVAILABLE`, so the router retries it, and
//! the next call opens a new stream. A shard of a release without the
//! stream says so once: that call is answered unavailable (and retried),
//! and the shard's commands go as unary calls from then on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::command_answer::Outcome;
use fogblast_proto::game::game_client::GameClient;
use fogblast_proto::game::{Command, CommandAnswer, CommandCall, CommandResult};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;

/// Calls queued for the stream before the sender waits: past this, a
/// shard that reads slowly holds its callers back.
const QUEUED_CALLS: usize = 1024;

type Answer = Result<CommandResult, ServiceError>;

/// The caller's handle on one shard's stream.
#[derive(Clone, Debug)]
pub(crate) struct CommandStream {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    calls: mpsc::Sender<CommandCall>,
    /// Calls waiting for their answer by id; `None` once the stream ended.
    waiting: Mutex<Option<HashMap<u64, oneshot::Sender<Answer>>>>,
    next_call: AtomicU64,
    unsupported: AtomicBool,
}

impl CommandStream {
    /// Opens the stream to `addr` through `client`; calls may be sent at
    /// once (they wait in the queue until the shard answers the opening).
    pub(crate) fn open(client: GameClient<Channel>, addr: &str) -> CommandStream {
        let (calls, queued) = mpsc::channel(QUEUED_CALLS);
        let shared = Arc::new(Shared {
            calls,
            waiting: Mutex::new(Some(HashMap::new())),
            next_call: AtomicU64::new(1),
            unsupported: AtomicBool::new(false),
        });
        tokio::spawn(read_answers(client, ReceiverStream::new(queued), Arc::downgrade(&shared), addr.to_owned()));
        CommandStream { shared }
    }

    /// Whether calls may still be sent on it.
    pub(crate) fn is_open(&self) -> bool {
        self.shared.waiting.lock().expect("waiting lock").is_some()
    }

    /// Whether the shard said it has no such stream.
    pub(crate) fn is_unsupported(&self) -> bool {
        self.shared.unsupported.load(Ordering::Acquire)
    }

    /// Sends `command` and waits for its answer; the shard gives up on it
    /// unapplied if it reaches it only after `budget`.
    pub(crate) async fn call(&self, command: Command, budget: Duration) -> Answer {
        let call_id = self.shared.next_call.fetch_add(1, Ordering::Relaxed);
        let (answer, answered) = oneshot::channel();
        match self.shared.waiting.lock().expect("waiting lock").as_mut() {
            Some(waiting) => waiting.insert(call_id, answer),
            None => return Err(ended("the stream to the shard had ended")),
        };
        // The entry goes when the call does, answered or given up.
        let _forget = Forget { shared: &self.shared, call_id };
        let call = CommandCall {
            call_id,
            command: Some(command),
            budget_ms: u32::try_from(budget.as_millis()).unwrap_or(u32::MAX),
            trace_context: fogblast_telemetry::call_context(),
        };
        if self.shared.calls.send(call).await.is_err() {
            return Err(ended("the stream to the shard had ended"));
        }
        answered.await.unwrap_or_else(|_| Err(ended("the stream to the shard ended before the answer")))
    }
}

struct Forget<'a> {
    shared: &'a Shared,
    call_id: u64,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        if let Some(waiting) = self.shared.waiting.lock().expect("waiting lock").as_mut() {
            waiting.remove(&self.call_id);
        }
    }
}

fn ended(detail: impl Into<String>) -> ServiceError {
    ServiceError::failure(ErrorCode::Unavailable, "the game service is unavailable right now", detail)
}

/// Opens the stream, hands each answer to its call, and when the stream
/// ends, answers every call still waiting as unavailable.
async fn read_answers(
    mut client: GameClient<Channel>,
    calls: ReceiverStream<CommandCall>,
    shared: Weak<Shared>,
    addr: String,
) {
    let why = match client.execute_stream(calls).await {
        Ok(response) => {
            let mut answers = response.into_inner();
            loop {
                match answers.message().await {
                    Ok(Some(answer)) => {
                        let Some(shared) = shared.upgrade() else { return };
                        deliver(&shared, answer);
                    }
                    Ok(None) => break format!("shard {addr} ended the command stream"),
                    Err(status) => break format!("the command stream to shard {addr} broke: {status}"),
                }
            }
        }
        Err(status) if status.code() == tonic::Code::Unimplemented => {
            if let Some(shared) = shared.upgrade() {
                shared.unsupported.store(true, Ordering::Release);
            }
            format!("shard {addr} has no command stream")
        }
        Err(status) => format!("could not open a command stream to shard {addr}: {status}"),
    };
    let Some(shared) = shared.upgrade() else { return };
    let waiting = shared.waiting.lock().expect("waiting lock").take().unwrap_or_default();
    for (_, answer) in waiting {
        let _ = answer.send(Err(ended(why.clone())));
    }
}

fn deliver(shared: &Shared, answer: CommandAnswer) {
    let waiting = shared.waiting.lock().expect("waiting lock").as_mut().and_then(|w| w.remove(&answer.call_id));
    // A call given up on meanwhile has no one waiting.
    let Some(waiting) = waiting else { return };
    let answer = match answer.outcome {
        Some(Outcome::Result(result)) => Ok(result),
        Some(Outcome::Refusal(refusal)) => Err(ServiceError::from_refusal(refusal)),
        None => Err(ServiceError::new(ErrorCode::Internal, "the shard sent an answer without an outcome")),
    };
    let _ = waiting.send(answer);
}
