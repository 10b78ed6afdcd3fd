//! The Universal Chess Interface front end, so chess GUIs and match tools
//! (cutechess-cli, fastchess, lichess-bot) can play the engine: a loop that
//! reads commands line by line and answers on any writer, with the search on
//! its own thread so `stop`, `ponderhit` and `isready` are answered while it
//! thinks. Bad input is reported as `info string error: ...` and never ends
//! the session. The options it declares are in [`options`].

mod options;

use std::collections::hash_map::RandomState;
use std::fmt::Write as _;
use std::hash::BuildHasher;
use std::io::{self, BufRead, Write};
use std::panic::{self, AssertUnwindSafe};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::thread::{self, Scope, ScopedJoinHandle};
use std::time::Duration;

use fogblast_rules::{CastlingMode, Color, Move, ParsePositionError, Position, Uci};

use crate::search::{Limits, SearchReport, Searcher};
use crate::time::Clock;
use options::{Options, Value, HASH, SYZYGY_PATH, THREADS, UCI_VARIANT};

const ENGINE_NAME: &str = concat!("Fogblast ", env!("CARGO_PKG_VERSION"));

/// The least remaining time `Move Overhead` leaves on the clock.
const MIN_CLOCK: Duration = Duration::from_millis(10);

/// Plays UCI: reads commands from `input` until `quit` or the end of input
/// and writes the replies to `output`, one flushed line at a time.
///
/// At the end of input a search with limits is allowed to finish (so
/// `echo "go depth 8" | fogblast uci` prints its result); `quit` and an
/// infinite or pondering search are stopped at once. The only error
/// returned is a failure to read or write.
///
/// ```
/// let commands = "uci\nisready\nposition startpos moves e2e4\ngo depth 2\n";
/// let mut replies = Vec::new();
/// fogblast_engine::uci::run_uci(commands.as_bytes(), &mut replies).unwrap();
/// let replies = String::from_utf8(replies).unwrap();
/// assert!(replies.contains("uciok\nreadyok\n"));
/// assert!(replies.lines().last().unwrap().starts_with("bestmove "));
/// ```
pub fn run_uci(mut input: impl BufRead, output: impl Write + Send) -> io::Result<()> {
    let output = Mutex::new(output);
    let signals = Signals::default();
    thread::scope(|scope| {
        let mut session = Session::new(scope, &output, &signals);
        let ending = session.serve(&mut input);
        // Whatever ended the loop, no search may outlive it.
        let finished = match ending {
            Ok(Ending::EndOfInput) => session.finish_search(),
            Ok(Ending::Quit) | Err(_) => session.stop_search(),
        };
        ending.and(finished)
    })
}

/// Why the command loop ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    Quit,
    EndOfInput,
}

/// What the session tells a running search.
#[derive(Debug, Default)]
struct Signals {
    /// Stop now (and print `bestmove`, unless `quiet`).
    stop: AtomicBool,
    /// End without a `bestmove`: a pondering search that `ponderhit`
    /// replaces with the timed one.
    quiet: AtomicBool,
}

/// Input the session understood but cannot act on. Reported to the GUI as
/// an `info string`; the session goes on.
#[derive(Debug, thiserror::Error)]
enum CommandError {
    #[error("setoption expects `setoption name <option> [value <value>]`")]
    OptionSyntax,
    #[error("no option named {0:?} (options: {names})", names = options::names())]
    UnknownOption(String),
    #[error("option {option}: {value:?} is not {expected}")]
    OptionValue { option: &'static str, value: String, expected: String },
    #[error("position expects `position startpos|fen <FEN> [moves <move>...]`; the position is unchanged")]
    PositionSyntax,
    #[error("{0}; the position is unchanged")]
    Fen(ParsePositionError),
    #[error("expected `moves` after the start position, found {0:?}; no moves were played")]
    MovesKeyword(String),
    #[error("move {text:?} is not legal in {fen}; the position stays after {played} of {total} moves")]
    IllegalMove { text: String, fen: String, played: usize, total: usize },
    #[error("go {parameter}: {value:?} is not a number; the parameter is ignored")]
    GoValue { parameter: String, value: String },
    #[error("go: unknown parameter {0:?} ignored")]
    GoParameter(String),
    #[error("go searchmoves is not supported; searching every move")]
    SearchMoves,
}

/// What one `go` command asks for, before the options apply.
#[derive(Debug, Default)]
struct GoRequest {
    /// `depth`, `nodes` and `movetime`.
    limits: Limits,
    infinite: bool,
    ponder: bool,
    wtime: Option<Duration>,
    btime: Option<Duration>,
    winc: Option<Duration>,
    binc: Option<Duration>,
    moves_to_go: Option<u32>,
}

/// What one search does, handed to the search thread.
#[derive(Clone, Debug)]
struct SearchJob {
    root: Position,
    history: Vec<u64>,
    limits: Limits,
    /// Hold `bestmove` back until `stop`, as UCI requires of `go infinite`
    /// and `go ponder`.
    hold: bool,
    castling: CastlingMode,
    show_wdl: bool,
}

/// A search thread, which hands the searcher back when it ends.
struct RunningSearch<'scope> {
    handle: ScopedJoinHandle<'scope, (Searcher, io::Result<()>)>,
    hold: bool,
    /// For a pondering search: the timed search `ponderhit` starts.
    after_ponderhit: Option<SearchJob>,
}

/// One conversation with a GUI: its options, the game so far and the
/// searcher, idle or lent to a search thread.
struct Session<'scope, 'env, W> {
    scope: &'scope Scope<'scope, 'env>,
    output: &'env Mutex<W>,
    signals: &'env Signals,
    options: Options,
    position: Position,
    /// Zobrist keys of the positions before `position`, oldest first.
    history: Vec<u64>,
    /// Idle searcher; `None` while a search thread holds it.
    searcher: Option<Searcher>,
    search: Option<RunningSearch<'scope>>,
    /// The seed of a limited strength's noise: 0 until the first
    /// `ucinewgame`, then drawn anew for each game.
    seed: u64,
}

impl<'scope, 'env, W: Write + Send> Session<'scope, 'env, W> {
    fn new(scope: &'scope Scope<'scope, 'env>, output: &'env Mutex<W>, signals: &'env Signals) -> Self {
        let options = Options::new();
        Session {
            scope,
            output,
            signals,
            options,
            position: Position::new(options.variant),
            history: Vec::new(),
            searcher: Some(Searcher::new(options.hash_mb)),
            search: None,
            seed: 0,
        }
    }

    fn serve(&mut self, input: &mut impl BufRead) -> io::Result<Ending> {
        let mut line = Vec::new();
        loop {
            line.clear();
            if input.read_until(b'\n', &mut line)? == 0 {
                return Ok(Ending::EndOfInput);
            }
            if self.handle(&String::from_utf8_lossy(&line))? == Some(Ending::Quit) {
                return Ok(Ending::Quit);
            }
        }
    }

    /// Acts on one line. As UCI asks, unknown words before a command are
    /// skipped (`joho isready` is `isready`).
    fn handle(&mut self, line: &str) -> io::Result<Option<Ending>> {
        const COMMANDS: [&str; 11] = [
            "uci",
            "isready",
            "setoption",
            "ucinewgame",
            "position",
            "go",
            "stop",
            "quit",
            "debug",
            "register",
            "ponderhit",
        ];
        let mut tokens = line.split_whitespace();
        let mut skipped = Vec::new();
        let command = tokens.by_ref().find(|word| {
            let known = COMMANDS.contains(word);
            if !known {
                skipped.push(*word);
            }
            known
        });
        if !skipped.is_empty() {
            send(self.output, &format!("info string unknown command ignored: {}", skipped.join(" ")))?;
        }
        match command {
            Some("uci") => self.identify()?,
            Some("isready") => send(self.output, "readyok")?,
            Some("setoption") => self.set_option(tokens)?,
            Some("ucinewgame") => self.new_game()?,
            Some("position") => self.set_position(tokens)?,
            Some("go") => self.go(tokens)?,
            Some("stop") => self.stop_search()?,
            Some("ponderhit") => self.ponderhit()?,
            Some("quit") => return Ok(Some(Ending::Quit)),
            // Nothing to do: no debug output or registration.
            _ => {}
        }
        Ok(None)
    }

    fn identify(&self) -> io::Result<()> {
        send(self.output, &format!("id name {ENGINE_NAME}"))?;
        send(self.output, "id author The Fogblast developers")?;
        options::DECLARED.iter().try_for_each(|declared| send(self.output, &declared.to_string()))?;
        send(self.output, "uciok")
    }

    fn report(&self, err: CommandError) -> io::Result<()> {
        send(self.output, &format!("info string error: {err}"))
    }

    /// Sets an option. Changing the variant resets the position to the
    /// variant's start, since the old one may not even be valid under it;
    /// options accepted but not acted on say so.
    fn set_option<'a>(&mut self, mut tokens: impl Iterator<Item = &'a str>) -> io::Result<()> {
        if tokens.next() != Some("name") {
            return self.report(CommandError::OptionSyntax);
        }
        let (mut name, mut value) = (Vec::new(), Vec::new());
        let mut in_value = false;
        for token in tokens {
            match token {
                "value" if !in_value => in_value = true,
                _ if in_value => value.push(token),
                _ => name.push(token),
            }
        }
        let (name, value) = (name.join(" "), value.join(" "));
        if name.is_empty() {
            return self.report(CommandError::OptionSyntax);
        }
        let Some(declared) = options::find(&name) else {
            return self.report(CommandError::UnknownOption(name));
        };
        let parsed = match declared.parse(&value) {
            Ok(parsed) => parsed,
            Err(expected) => return self.report(CommandError::OptionValue { option: declared.name, value, expected }),
        };
        let before = self.options;
        self.options.set(declared.name, parsed.clone());
        match declared.name {
            UCI_VARIANT if self.options.variant != before.variant => {
                self.position = Position::new(self.options.variant);
                self.history.clear();
            }
            HASH if self.options.hash_mb != before.hash_mb => {
                self.stop_search()?;
                self.searcher = Some(Searcher::new(self.options.hash_mb));
            }
            THREADS if self.options.threads > 1 => {
                let threads = self.options.threads;
                let note = format!("info string Threads {threads}: the search is single-threaded and uses one");
                send(self.output, &note)?;
            }
            SYZYGY_PATH if parsed != Value::Text(String::new()) => {
                let note = "info string SyzygyPath: there are no atomic tablebases; the path is ignored";
                send(self.output, note)?;
            }
            _ => {}
        }
        Ok(())
    }

    fn new_game(&mut self) -> io::Result<()> {
        self.stop_search()?;
        self.searcher.get_or_insert_with(|| Searcher::new(self.options.hash_mb)).clear();
        // Each RandomState has keys of its own, random for the process.
        self.seed = RandomState::new().hash_one(self.seed);
        Ok(())
    }

    /// `position startpos|fen <FEN> [moves ...]`. A bad start leaves the
    /// position as it was; an illegal move leaves it after the last legal one.
    fn set_position<'a>(&mut self, tokens: impl Iterator<Item = &'a str>) -> io::Result<()> {
        let tokens: Vec<&str> = tokens.collect();
        let (start, rest) = match tokens.split_first() {
            Some((&"startpos", rest)) => (Position::new(self.options.variant), rest),
            Some((&"fen", rest)) => {
                let fen_len = rest.iter().position(|&t| t == "moves").unwrap_or(rest.len());
                match Position::from_fen(&rest[..fen_len].join(" "), self.options.variant) {
                    Ok(pos) => (pos, &rest[fen_len..]),
                    Err(err) => return self.report(CommandError::Fen(err)),
                }
            }
            _ => return self.report(CommandError::PositionSyntax),
        };
        self.position = start;
        self.history.clear();
        let moves = match rest.split_first() {
            None => return Ok(()),
            Some((&"moves", moves)) => moves,
            Some((other, _)) => return self.report(CommandError::MovesKeyword((*other).to_owned())),
        };
        for (played, text) in moves.iter().enumerate() {
            let Some(m) = text.parse::<Uci>().ok().and_then(|uci| self.position.parse_uci(&uci)) else {
                let fen = self.position.fen();
                let (text, total) = ((*text).to_owned(), moves.len());
                return self.report(CommandError::IllegalMove { text, fen, played, total });
            };
            self.history.push(self.position.zobrist_hash());
            self.position.play_unchecked(m);
        }
        Ok(())
    }

    /// `go`: starts a search thread. `go ponder` searches without a time
    /// limit until `ponderhit` (then the timed search the command
    /// describes starts) or `stop`. A `bestmove` always follows.
    fn go<'a>(&mut self, tokens: impl Iterator<Item = &'a str>) -> io::Result<()> {
        let request = self.parse_go(tokens)?;
        let job = self.job(&request);
        self.stop_search()?;
        if request.ponder {
            let limits = Limits { movetime: None, clock: None, ..job.limits.clone() };
            let pondering = SearchJob { limits, hold: true, ..job.clone() };
            self.start(pondering, Some(job));
        } else {
            self.start(job, None);
        }
        Ok(())
    }

    /// Reads `go`'s parameters. Those that do not parse are reported and
    /// left out.
    fn parse_go<'a>(&self, tokens: impl Iterator<Item = &'a str>) -> io::Result<GoRequest> {
        let mut request = GoRequest::default();
        let mut tokens = tokens.peekable();
        while let Some(word) = tokens.next() {
            match word {
                "infinite" => request.infinite = true,
                "ponder" => request.ponder = true,
                "searchmoves" => {
                    while tokens.peek().is_some_and(|t| t.parse::<Uci>().is_ok()) {
                        tokens.next();
                    }
                    self.report(CommandError::SearchMoves)?;
                }
                "depth" | "nodes" | "movetime" | "wtime" | "btime" | "winc" | "binc" | "movestogo" => {
                    let value = tokens.next().unwrap_or_default();
                    let r = &mut request;
                    let parsed = match word {
                        "depth" => parse_number(value).map(|d| r.limits.depth = Some(d)),
                        "nodes" => parse_number(value).map(|n| r.limits.nodes = Some(n)),
                        "movetime" => parse_millis(value).map(|t| r.limits.movetime = Some(t)),
                        "wtime" => parse_millis(value).map(|t| r.wtime = Some(t)),
                        "btime" => parse_millis(value).map(|t| r.btime = Some(t)),
                        "winc" => parse_millis(value).map(|t| r.winc = Some(t)),
                        "binc" => parse_millis(value).map(|t| r.binc = Some(t)),
                        _ => parse_number(value).map(|n| r.moves_to_go = Some(n)),
                    };
                    if parsed.is_none() {
                        let (parameter, value) = (word.to_owned(), value.to_owned());
                        self.report(CommandError::GoValue { parameter, value })?;
                    }
                }
                _ => self.report(CommandError::GoParameter(word.to_owned()))?,
            }
        }
        Ok(request)
    }

    /// The search a `go` asks for under the current options: the side's
    /// clock less `Move Overhead`, the level's limits when
    /// `UCI_LimitStrength` is on, and `MultiPV` lines.
    fn job(&self, request: &GoRequest) -> SearchJob {
        let (remaining, increment) = match self.position.turn() {
            Color::White => (request.wtime, request.winc),
            Color::Black => (request.btime, request.binc),
        };
        let clock = remaining.map(|remaining| Clock {
            remaining: remaining.saturating_sub(self.options.move_overhead).max(remaining.min(MIN_CLOCK)),
            increment: increment.unwrap_or(Duration::ZERO),
            moves_to_go: request.moves_to_go.filter(|&n| n > 0),
        });
        let mut limits = match self.options.level() {
            None => Limits { clock, ..request.limits.clone() },
            Some(level) => {
                let mut limits = level.limits(clock, request.limits.movetime, self.seed);
                limits.depth = tighter(limits.depth, request.limits.depth);
                limits.nodes = tighter(limits.nodes, request.limits.nodes);
                limits
            }
        };
        limits.multipv = self.options.multipv;
        SearchJob {
            root: self.position,
            history: self.history.clone(),
            limits,
            hold: request.infinite,
            castling: self.options.castling_mode(),
            show_wdl: self.options.show_wdl,
        }
    }

    /// Starts `job` on a search thread.
    fn start(&mut self, job: SearchJob, after_ponderhit: Option<SearchJob>) {
        let mut searcher = self.searcher.take().unwrap_or_else(|| Searcher::new(self.options.hash_mb));
        self.signals.stop.store(false, Ordering::SeqCst);
        self.signals.quiet.store(false, Ordering::SeqCst);
        let (output, signals, hold) = (self.output, self.signals, job.hold);
        let handle = self.scope.spawn(move || {
            let written = job.run(&mut searcher, signals, output);
            (searcher, written)
        });
        self.search = Some(RunningSearch { handle, hold, after_ponderhit });
    }

    /// `ponderhit`: the move pondered on was played. The pondering search
    /// ends without a `bestmove` and the timed search of its `go` starts at
    /// once, finding the pondering's work in the transposition table.
    /// Without a pondering search it does nothing.
    fn ponderhit(&mut self) -> io::Result<()> {
        let Some(mut search) = self.search.take() else { return Ok(()) };
        let Some(next) = search.after_ponderhit.take() else {
            self.search = Some(search);
            return Ok(());
        };
        self.signals.quiet.store(true, Ordering::SeqCst);
        self.halt(search)?;
        self.start(next, None);
        Ok(())
    }

    /// Stops the running search, if any, and waits for its `bestmove`.
    fn stop_search(&mut self) -> io::Result<()> {
        match self.search.take() {
            Some(search) => self.halt(search),
            None => Ok(()),
        }
    }

    fn halt(&mut self, search: RunningSearch<'scope>) -> io::Result<()> {
        self.signals.stop.store(true, Ordering::SeqCst);
        search.handle.thread().unpark();
        self.collect(search)
    }

    /// Lets a search with limits finish; stops an infinite or pondering one.
    fn finish_search(&mut self) -> io::Result<()> {
        match self.search.take() {
            Some(search) if !search.hold => self.collect(search),
            Some(search) => self.halt(search),
            None => Ok(()),
        }
    }

    fn collect(&mut self, search: RunningSearch<'scope>) -> io::Result<()> {
        // The thread catches panics from the search itself, so a failed
        // join means even reporting failed: start over with empty tables.
        let (searcher, written) =
            search.handle.join().unwrap_or_else(|_| (Searcher::new(self.options.hash_mb), Ok(())));
        self.searcher = Some(searcher);
        written
    }
}

impl SearchJob {
    /// Searches, printing `info` lines as it goes, then the `bestmove` (with
    /// the reply expected to it, when the principal variation has one).
    /// Runs on the search thread.
    fn run<W: Write>(&self, searcher: &mut Searcher, signals: &Signals, output: &Mutex<W>) -> io::Result<()> {
        let (best, reply) = self.think(searcher, &signals.stop, output)?;
        if self.hold {
            while !signals.stop.load(Ordering::SeqCst) {
                thread::park();
            }
        }
        if signals.quiet.load(Ordering::SeqCst) {
            return Ok(());
        }
        let mut line = format!("bestmove {}", best.map_or_else(|| "0000".to_owned(), |m| self.uci(m)));
        if let Some(reply) = reply {
            let _ = write!(line, " ponder {}", self.uci(reply));
        }
        send(output, &line)
    }

    /// The search itself: the best move, and the reply the principal
    /// variation expects to it.
    fn think<W: Write>(
        &self,
        searcher: &mut Searcher,
        stop: &AtomicBool,
        output: &Mutex<W>,
    ) -> io::Result<(Option<Move>, Option<Move>)> {
        let legal = self.root.legal_moves();
        if legal.is_empty() {
            let lost = self.root.is_check() || self.root.board().king_of(self.root.turn()).is_none();
            let mut line = (if lost { "info depth 0 score mate 0" } else { "info depth 0 score cp 0" }).to_owned();
            if self.show_wdl {
                options::push_wdl(&mut line, if lost { (0, 0, 1000) } else { (0, 1000, 0) });
            }
            send(output, &line)?;
            return Ok((None, None));
        }
        let mut write_error = None;
        let searched = panic::catch_unwind(AssertUnwindSafe(|| {
            let mut on_iteration = |report: &SearchReport| {
                if write_error.is_none() {
                    write_error = send(output, &self.info_line(report)).err();
                }
            };
            searcher.search(&self.root, &self.history, &self.limits, stop, &mut on_iteration)
        }));
        if let Some(err) = write_error {
            return Err(err);
        }
        match searched {
            Ok(report) => {
                let best = report.best.filter(|&m| self.root.is_legal(m)).or(legal.first().copied());
                Ok((best, best.and_then(|m| self.reply(m, &report.pv))))
            }
            Err(_) => {
                // A bug in the search must not leave the GUI waiting for a
                // move: play any legal one and forget the tables.
                searcher.clear();
                send(output, "info string error: the search failed; playing the first legal move")?;
                Ok((legal.first().copied(), None))
            }
        }
    }

    /// The second move of `pv` when it starts with `best` and is legal.
    fn reply(&self, best: Move, pv: &[Move]) -> Option<Move> {
        let (&first, &second) = (pv.first()?, pv.get(1)?);
        let mut after = self.root;
        after.play_unchecked(best);
        (first == best && after.is_legal(second)).then_some(second)
    }

    fn uci(&self, m: Move) -> String {
        m.to_uci(self.castling).to_string()
    }

    fn info_line(&self, report: &SearchReport) -> String {
        let score = match report.mate_in_plies() {
            // UCI counts mates in moves: plies to the win rounded up, or
            // moves of the losing side until it is mated.
            Some(plies) if plies > 0 => format!("mate {}", (plies + 1) / 2),
            Some(plies) => format!("mate {}", plies / 2),
            None => format!("cp {}", report.score),
        };
        let mut line = format!("info depth {}", report.depth);
        if self.limits.multipv > 1 {
            let _ = write!(line, " multipv {}", report.multipv);
        }
        let _ = write!(line, " score {score}");
        if self.show_wdl {
            options::push_wdl(&mut line, options::wdl(report.score));
        }
        let millis = report.elapsed.as_millis();
        let nps = u128::from(report.nodes) * 1_000_000 / report.elapsed.as_micros().max(1);
        let _ = write!(line, " nodes {} nps {nps} hashfull {} time {millis}", report.nodes, report.hashfull);
        let pv = if report.pv.is_empty() { report.best.as_slice() } else { &report.pv };
        if !pv.is_empty() {
            line.push_str(" pv");
            for &m in pv {
                line.push(' ');
                line.push_str(&self.uci(m));
            }
        }
        line
    }
}

/// The tighter of two optional caps.
fn tighter<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Writes one line and flushes it, so the GUI sees it at once. Both threads
/// write through here, so lines never interleave.
fn send<W: Write>(output: &Mutex<W>, line: &str) -> io::Result<()> {
    let mut output = output.lock().unwrap_or_else(PoisonError::into_inner);
    writeln!(output, "{line}")?;
    output.flush()
}

fn parse_number<T: FromStr>(text: &str) -> Option<T> {
    text.parse().ok()
}

/// Milliseconds; GUIs send negative clock times once a side is out of time.
fn parse_millis(text: &str) -> Option<Duration> {
    text.parse::<i64>().ok().map(|ms| Duration::from_millis(ms.max(0).unsigned_abs()))
}
