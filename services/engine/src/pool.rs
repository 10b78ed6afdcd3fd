//! The search threads. Searching is long, CPU-bound work, so it never runs
//! on the async runtime: handlers hand jobs to a fixed set of OS threads,
//! each with its own `Searcher`, through a bounded queue that refuses work
//! at once when full rather than letting callers wait behind it.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender, TrySendError};
use fogblast_engine::fog::FogError;
use fogblast_engine::{best_fog_move, SearchReport, Searcher};
use fogblast_rules::CastlingMode;
use prometheus::IntGauge;
use tokio::sync::oneshot;

use crate::deadline;
use crate::metrics::{Metrics, SkipReason};
use crate::request::{SearchTask, Subject};

/// One request waiting for, or being searched by, a thread.
#[derive(Debug)]
pub(crate) struct Job {
    pub task: SearchTask,
    /// When the answer is due, if the caller set a deadline.
    pub answer_by: Option<Instant>,
    /// Raised when the caller stops waiting; a running search stops soon after.
    pub cancel: Arc<AtomicBool>,
    pub reply: oneshot::Sender<JobResult>,
    pub enqueued: Instant,
}

/// A search's answer, whichever variant it was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Answer {
    /// UCI, castling as the king's two-square step.
    pub uci: String,
    pub score: i32,
    pub mate_in: Option<i32>,
    pub depth: u32,
    pub nodes: u64,
    pub elapsed: std::time::Duration,
}

impl Answer {
    fn from_report(report: &SearchReport) -> Option<Answer> {
        Some(Answer {
            uci: report.best?.to_uci(CastlingMode::Standard).to_string(),
            score: report.score,
            mate_in: report.mate_in_plies(),
            depth: report.depth,
            nodes: report.nodes,
            elapsed: report.elapsed,
        })
    }
}

#[derive(Debug)]
pub(crate) enum JobResult {
    Searched(Answer),
    /// The request could not be searched (a fog observation that no game
    /// fits); the reason goes back as `INVALID_ARGUMENT`.
    Refused(String),
    /// The deadline passed before a thread was free; nothing was searched.
    Expired,
    /// The pool stopped before searching it.
    ShuttingDown,
    /// The search panicked; the thread carries on with a fresh searcher.
    Failed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SubmitError {
    QueueFull,
    Closed,
}

/// What the threads and the handlers share.
#[derive(Debug)]
struct Shared {
    /// The only sender: taking it out closes the queue, so workers end once
    /// they have emptied it.
    queue: Mutex<Option<Sender<Job>>>,
    /// Set when the drain time has run out: queued jobs are refused and
    /// running searches stopped.
    aborting: AtomicBool,
    /// Each thread's running job's cancel flag, so an abort reaches it.
    running: Vec<Mutex<Option<Arc<AtomicBool>>>>,
    metrics: Arc<Metrics>,
}

/// The threads themselves; owned by `run`.
#[derive(Debug)]
pub(crate) struct Pool {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

/// A handle the gRPC handlers submit jobs through.
#[derive(Clone, Debug)]
pub(crate) struct Submitter {
    shared: Arc<Shared>,
}

impl Pool {
    pub fn start(workers: u32, queue: u32, hash_mb: u32, metrics: Arc<Metrics>) -> std::io::Result<Pool> {
        let (sender, receiver) = crossbeam_channel::bounded(queue as usize);
        let shared = Arc::new(Shared {
            queue: Mutex::new(Some(sender)),
            aborting: AtomicBool::new(false),
            running: (0..workers).map(|_| Mutex::new(None)).collect(),
            metrics,
        });
        let mut pool = Pool { shared: shared.clone(), threads: Vec::with_capacity(workers as usize) };
        for id in 0..workers as usize {
            let (shared, receiver) = (shared.clone(), receiver.clone());
            let thread = std::thread::Builder::new()
                .name(format!("engine-worker-{id}"))
                .spawn(move || work(id, &receiver, &shared, hash_mb as usize));
            match thread {
                Ok(thread) => pool.threads.push(thread),
                Err(err) => {
                    pool.close();
                    pool.join();
                    return Err(err);
                }
            }
        }
        Ok(pool)
    }

    pub fn submitter(&self) -> Submitter {
        Submitter { shared: self.shared.clone() }
    }

    /// Stops taking jobs; the threads finish what is queued and end.
    pub fn close(&self) {
        lock(&self.shared.queue).take();
    }

    /// Gives up on everything: queued jobs are answered `ShuttingDown`
    /// unsearched and running searches stop at their next check.
    pub fn abort(&self) {
        self.shared.aborting.store(true, Ordering::SeqCst);
        for slot in &self.shared.running {
            if let Some(cancel) = lock(slot).as_ref() {
                cancel.store(true, Ordering::SeqCst);
            }
        }
    }

    /// Waits for every thread to end; call after `close`.
    pub fn join(self) {
        for thread in self.threads {
            if thread.join().is_err() {
                tracing::error!("a search thread panicked");
            }
        }
    }
}

impl Submitter {
    pub fn submit(&self, job: Job) -> Result<(), SubmitError> {
        let queue = lock(&self.shared.queue);
        let sender = queue.as_ref().ok_or(SubmitError::Closed)?;
        match sender.try_send(job) {
            Ok(()) => {
                self.shared.metrics.queue_depth.set(sender.len() as i64);
                Ok(())
            }
            Err(TrySendError::Full(_)) => Err(SubmitError::QueueFull),
            Err(TrySendError::Disconnected(_)) => Err(SubmitError::Closed),
        }
    }
}

fn work(id: usize, jobs: &Receiver<Job>, shared: &Shared, hash_mb: usize) {
    let metrics = &shared.metrics;
    let mut searcher = Searcher::new(hash_mb);
    for job in jobs.iter() {
        metrics.queue_depth.set(jobs.len() as i64);
        metrics.queue_wait_seconds.observe(job.enqueued.elapsed().as_secs_f64());
        let now = Instant::now();
        let skip = if shared.aborting.load(Ordering::SeqCst) {
            Some((SkipReason::Shutdown, JobResult::ShuttingDown))
        } else if job.answer_by.is_some_and(|due| due <= now) {
            Some((SkipReason::Expired, JobResult::Expired))
        } else if job.cancel.load(Ordering::SeqCst) || job.reply.is_closed() {
            Some((SkipReason::Cancelled, JobResult::ShuttingDown))
        } else {
            None
        };
        if let Some((reason, result)) = skip {
            tracing::debug!(worker = id, reason = ?reason, "job skipped unsearched");
            metrics.skipped(reason);
            let _ = job.reply.send(result);
            continue;
        }
        // Publish the cancel flag before looking at `aborting` again, so an
        // abort either sees the flag or is seen here.
        *lock(&shared.running[id]) = Some(job.cancel.clone());
        if shared.aborting.load(Ordering::SeqCst) {
            job.cancel.store(true, Ordering::SeqCst);
        }
        let searched = panic::catch_unwind(AssertUnwindSafe(|| search(&mut searcher, &job, metrics)));
        *lock(&shared.running[id]) = None;
        let Ok(result) = searched else {
            tracing::error!(worker = id, task = %job.task.describe(), "search panicked");
            searcher = Searcher::new(hash_mb);
            let _ = job.reply.send(JobResult::Failed);
            continue;
        };
        if let JobResult::Searched(answer) = &result {
            tracing::debug!(
                worker = id,
                depth = answer.depth,
                nodes = answer.nodes,
                elapsed_ms = answer.elapsed.as_millis() as u64,
                "searched"
            );
        }
        let _ = job.reply.send(result);
    }
}

fn search(searcher: &mut Searcher, job: &Job, metrics: &Metrics) -> JobResult {
    let task = &job.task;
    let time_left = job.answer_by.map(|due| deadline::search_time(due, Instant::now()));
    let busy = Busy::start(&metrics.busy_workers);
    let started = Instant::now();
    let result = match &task.subject {
        Subject::Position { position, history } => {
            // A fresh table for every request: the same request, seed
            // included, then gets the same answer from whichever thread
            // takes it.
            searcher.clear();
            let limits = task.limits(time_left);
            let report = searcher.search(position, history, &limits, &job.cancel, &mut |_| {});
            match Answer::from_report(&report) {
                Some(answer) => JobResult::Searched(answer),
                None => JobResult::Failed,
            }
        }
        // The fog player keeps nothing between requests: each one carries
        // the whole observed game.
        Subject::Fog(obs) => match best_fog_move(obs, &task.fog_limits(time_left), &job.cancel) {
            Ok(report) => JobResult::Searched(Answer {
                uci: report.best.to_string(),
                score: report.score,
                mate_in: None,
                depth: report.depth,
                nodes: report.nodes,
                elapsed: report.elapsed,
            }),
            Err(err @ (FogError::Belief(_) | FogError::GameOver | FogError::NotOurTurn(_))) => {
                JobResult::Refused(err.to_string())
            }
        },
    };
    drop(busy);
    // A fog observation no game fits is refused, not counted as a search.
    if let JobResult::Searched(answer) = &result {
        metrics.searched(task.level, started.elapsed().as_secs_f64());
        metrics.nodes.inc_by(answer.nodes);
    }
    result
}

/// Counts a thread as busy while it lives, unwinding included.
struct Busy<'a>(&'a IntGauge);

impl Busy<'_> {
    fn start(gauge: &IntGauge) -> Busy<'_> {
        gauge.inc();
        Busy(gauge)
    }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// A lock whose holder cannot leave the data half-changed (every critical
/// section here is one assignment), so poisoning is ignored.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
