//! The search threads. Searching is long, CPU-bound work, so it never runs
//! on the async runtime: handlers hand jobs to a fixed set of OS threads,
//! each with its own `Searcher`, through bounded queues that refuse work
//! at once when full rather than letting callers wait behind them.
//!
//! Two lanes feed the threads. Computer moves come first: a free thread
//! always takes a waiting move before any analysis, an analysing thread
//! serves waiting moves between two positions of its game, and a move that
//! finds no thread free stops one analysing thread's search at once (that
//! position is searched again after the move). Analysis may hold at most
//! its own number of threads, so the others stay free for moves.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Select, Sender, TryRecvError, TrySendError};
use fogblast_engine::fog::FogError;
use fogblast_engine::{best_fog_move, SearchReport, Searcher};
use fogblast_proto::engine::PositionEval;
use fogblast_rules::CastlingMode;
use prometheus::IntGauge;
use tokio::sync::oneshot;

use crate::analysis::AnalysisTask;
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

/// A game waiting for, or being analysed by, a thread.
#[derive(Debug)]
pub(crate) struct AnalysisJob {
    pub task: AnalysisTask,
    /// Raised when the caller stops waiting: the analysis stops at its next position.
    pub cancel: Arc<AtomicBool>,
    pub reply: oneshot::Sender<AnalysisResult>,
    pub enqueued: Instant,
}

#[derive(Debug)]
pub(crate) enum AnalysisResult {
    /// One evaluation per position, the start first.
    Analysed { positions: Vec<PositionEval>, nodes: u64, elapsed: Duration },
    /// Stopped unfinished: the pool is closing or the caller left.
    Stopped,
    /// A search panicked.
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
    /// The analysis lane's only sender, taken out on close like `queue`'s.
    analysis_queue: Mutex<Option<Sender<AnalysisJob>>>,
    /// Set on close: analyses stop at their next position and queued ones
    /// are answered `Stopped`, for the durable queue to hand to another replica.
    closing: AtomicBool,
    /// Each thread's stop flag for its analysis search, raised by a move
    /// that found no thread free.
    preempt: Vec<Arc<AtomicBool>>,
    /// Which threads are analysing now.
    analysing: Vec<AtomicBool>,
    /// Threads waiting for work now.
    idle: AtomicUsize,
    /// Threads analysis may still take.
    analysis_slots: AtomicU32,
    metrics: Arc<Metrics>,
}

/// The receiving ends a thread takes work from.
struct Lanes {
    moves: Receiver<Job>,
    analysis: Receiver<AnalysisJob>,
}

/// What a thread takes next.
enum Next {
    Move(Job),
    /// Holding one of analysis's threads until it ends.
    Analysis(AnalysisJob),
}

/// How the pool is sized.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PoolSize {
    pub workers: u32,
    pub queue: u32,
    pub hash_mb: u32,
    pub analysis_workers: u32,
    pub analysis_queue: u32,
}

/// How long an idle thread waits before it looks again whether analysis
/// may take it (a slot freed by another thread wakes no one).
const IDLE_RECHECK: Duration = Duration::from_millis(50);

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
    pub fn start(size: PoolSize, metrics: Arc<Metrics>) -> std::io::Result<Pool> {
        let (sender, receiver) = crossbeam_channel::bounded(size.queue as usize);
        let (analysis_sender, analysis_receiver) = crossbeam_channel::bounded(size.analysis_queue as usize);
        let workers = size.workers as usize;
        let shared = Arc::new(Shared {
            queue: Mutex::new(Some(sender)),
            aborting: AtomicBool::new(false),
            running: (0..workers).map(|_| Mutex::new(None)).collect(),
            analysis_queue: Mutex::new(Some(analysis_sender)),
            closing: AtomicBool::new(false),
            preempt: (0..workers).map(|_| Arc::new(AtomicBool::new(false))).collect(),
            analysing: (0..workers).map(|_| AtomicBool::new(false)).collect(),
            idle: AtomicUsize::new(0),
            analysis_slots: AtomicU32::new(size.analysis_workers),
            metrics,
        });
        let mut pool = Pool { shared: shared.clone(), threads: Vec::with_capacity(workers) };
        for id in 0..workers {
            let shared = shared.clone();
            let lanes = Lanes { moves: receiver.clone(), analysis: analysis_receiver.clone() };
            let thread = std::thread::Builder::new()
                .name(format!("engine-worker-{id}"))
                .spawn(move || work(id, &lanes, &shared, size.hash_mb as usize));
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

    /// Stops taking jobs; the threads finish the moves queued, stop
    /// analysing and end.
    pub fn close(&self) {
        lock(&self.shared.queue).take();
        self.submitter().stop_analysis();
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
                drop(queue);
                self.preempt_one_analysis();
                Ok(())
            }
            Err(TrySendError::Full(_)) => Err(SubmitError::QueueFull),
            Err(TrySendError::Disconnected(_)) => Err(SubmitError::Closed),
        }
    }

    /// Queues an analysis, or gives it back with the reason it was not.
    pub fn submit_analysis(&self, job: AnalysisJob) -> Result<(), (SubmitError, Box<AnalysisJob>)> {
        let queue = lock(&self.shared.analysis_queue);
        let Some(sender) = queue.as_ref() else { return Err((SubmitError::Closed, Box::new(job))) };
        match sender.try_send(job) {
            Ok(()) => {
                self.shared.metrics.analysis.queue_depth.set(sender.len() as i64);
                Ok(())
            }
            Err(TrySendError::Full(job)) => Err((SubmitError::QueueFull, Box::new(job))),
            Err(TrySendError::Disconnected(job)) => Err((SubmitError::Closed, Box::new(job))),
        }
    }

    /// Takes no more analyses and stops those running at once, answering
    /// them and the queued ones `Stopped`: on shutdown an analysis is left
    /// to the durable queue, which hands it to another replica, rather than
    /// holding the drain.
    pub fn stop_analysis(&self) {
        lock(&self.shared.analysis_queue).take();
        self.shared.closing.store(true, Ordering::SeqCst);
        for flag in &self.shared.preempt {
            flag.store(true, Ordering::SeqCst);
        }
    }

    /// A move just queued finds no thread waiting: one analysing thread
    /// stops its search and takes the move.
    fn preempt_one_analysis(&self) {
        let shared = &self.shared;
        if shared.idle.load(Ordering::SeqCst) > 0 {
            return;
        }
        if let Some(id) = (0..shared.analysing.len()).find(|&id| shared.analysing[id].load(Ordering::SeqCst)) {
            shared.preempt[id].store(true, Ordering::SeqCst);
        }
    }
}

fn work(id: usize, lanes: &Lanes, shared: &Shared, hash_mb: usize) {
    let mut searcher = Searcher::new(hash_mb);
    while let Some(next) = next_job(lanes, shared) {
        match next {
            Next::Move(job) => serve_move(id, job, lanes, shared, &mut searcher, hash_mb),
            Next::Analysis(job) => {
                serve_analysis(id, job, lanes, shared, &mut searcher, hash_mb);
                shared.analysis_slots.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
}

/// The next job for a thread: a waiting move first, then an analysis if
/// analysis may take another thread; `None` once both lanes are closed
/// and empty.
fn next_job(lanes: &Lanes, shared: &Shared) -> Option<Next> {
    loop {
        let moves_open = match lanes.moves.try_recv() {
            Ok(job) => return Some(Next::Move(job)),
            Err(TryRecvError::Empty) => true,
            Err(TryRecvError::Disconnected) => false,
        };
        let closing = shared.closing.load(Ordering::SeqCst);
        // Closing, analyses are answered at once: no slot needed.
        if closing || take_slot(&shared.analysis_slots) {
            match lanes.analysis.try_recv() {
                Ok(job) => {
                    if closing {
                        shared.analysis_slots.fetch_sub(1, Ordering::SeqCst);
                    }
                    return Some(Next::Analysis(job));
                }
                Err(_) if !closing => {
                    shared.analysis_slots.fetch_add(1, Ordering::SeqCst);
                }
                Err(_) => {}
            }
        }
        if !moves_open && closing && lanes.analysis.is_empty() {
            return None;
        }
        shared.idle.fetch_add(1, Ordering::SeqCst);
        let mut select = Select::new();
        if moves_open {
            select.recv(&lanes.moves);
        }
        if !closing && shared.analysis_slots.load(Ordering::SeqCst) > 0 {
            select.recv(&lanes.analysis);
        }
        let _ = select.ready_timeout(IDLE_RECHECK);
        shared.idle.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Takes one of analysis's threads if one is left.
fn take_slot(slots: &AtomicU32) -> bool {
    slots.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |free| free.checked_sub(1)).is_ok()
}

fn serve_move(id: usize, job: Job, lanes: &Lanes, shared: &Shared, searcher: &mut Searcher, hash_mb: usize) {
    let metrics = &shared.metrics;
    metrics.queue_depth.set(lanes.moves.len() as i64);
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
        return;
    }
    // Publish the cancel flag before looking at `aborting` again, so an
    // abort either sees the flag or is seen here.
    *lock(&shared.running[id]) = Some(job.cancel.clone());
    if shared.aborting.load(Ordering::SeqCst) {
        job.cancel.store(true, Ordering::SeqCst);
    }
    let searched = panic::catch_unwind(AssertUnwindSafe(|| search(searcher, &job, metrics)));
    *lock(&shared.running[id]) = None;
    let Ok(result) = searched else {
        tracing::error!(worker = id, task = %job.task.describe(), "search panicked");
        *searcher = Searcher::new(hash_mb);
        let _ = job.reply.send(JobResult::Failed);
        return;
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

fn serve_analysis(
    id: usize,
    job: AnalysisJob,
    lanes: &Lanes,
    shared: &Shared,
    searcher: &mut Searcher,
    hash_mb: usize,
) {
    let metrics = &shared.metrics.analysis;
    metrics.queue_depth.set(lanes.analysis.len() as i64);
    metrics.queue_wait_seconds.observe(job.enqueued.elapsed().as_secs_f64());
    shared.analysing[id].store(true, Ordering::SeqCst);
    let busy = Busy::start(&metrics.busy_workers);
    let result = analyse(id, &job, lanes, shared, searcher, hash_mb);
    drop(busy);
    shared.analysing[id].store(false, Ordering::SeqCst);
    let outcome = match &result {
        AnalysisResult::Analysed { positions, elapsed, .. } => {
            metrics.seconds.observe(elapsed.as_secs_f64());
            tracing::debug!(
                worker = id,
                positions = positions.len(),
                elapsed_ms = elapsed.as_millis() as u64,
                "analysed"
            );
            "ok"
        }
        AnalysisResult::Stopped => "stopped",
        AnalysisResult::Failed => "failed",
    };
    metrics.analyses.with_label_values(&[outcome]).inc();
    let _ = job.reply.send(result);
}

/// Searches every position of the game, serving waiting moves before each
/// one and searching a position again when a move stopped it.
fn analyse(
    id: usize,
    job: &AnalysisJob,
    lanes: &Lanes,
    shared: &Shared,
    searcher: &mut Searcher,
    hash_mb: usize,
) -> AnalysisResult {
    let started = Instant::now();
    let limits = job.task.limits();
    let preempt = &shared.preempt[id];
    let mut nodes = 0;
    let mut evals = Vec::with_capacity(job.task.positions.len());
    for position in &job.task.positions {
        if let Some(finished) = position.finished() {
            evals.push(finished);
            continue;
        }
        let report = loop {
            while let Ok(move_job) = lanes.moves.try_recv() {
                serve_move(id, move_job, lanes, shared, searcher, hash_mb);
            }
            if shared.closing.load(Ordering::SeqCst) || job.cancel.load(Ordering::SeqCst) || job.reply.is_closed() {
                return AnalysisResult::Stopped;
            }
            preempt.store(false, Ordering::SeqCst);
            if shared.closing.load(Ordering::SeqCst) {
                return AnalysisResult::Stopped;
            }
            let searched = panic::catch_unwind(AssertUnwindSafe(|| {
                searcher.search(&position.position, &position.history, &limits, preempt, &mut |_| {})
            }));
            let Ok(report) = searched else {
                tracing::error!(worker = id, fen = %position.position.fen(), "analysis search panicked");
                *searcher = Searcher::new(hash_mb);
                return AnalysisResult::Failed;
            };
            nodes += report.nodes;
            shared.metrics.nodes.inc_by(report.nodes);
            if !preempt.load(Ordering::SeqCst) {
                break report;
            }
            shared.metrics.analysis.preemptions.inc();
        };
        shared.metrics.analysis.positions.inc();
        evals.push(position.eval(&report));
    }
    AnalysisResult::Analysed { positions: evals, nodes, elapsed: started.elapsed() }
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
