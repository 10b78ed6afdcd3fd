//! The Universal Chess Interface front end, so chess GUIs and match tools
//! (cutechess-cli, fastchess, lichess-bot) can play the engine: a loop that
//! reads commands line by line and answers on any writer, with the search on
//! its own thread so `stop` and `isready` are answered while it thinks. Bad
//! input is reported as `info string error: ...` and never ends the session.

use std::io::{self, BufRead, Write};
use std::panic::{self, AssertUnwindSafe};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::thread::{self, Scope, ScopedJoinHandle};
use std::time::Duration;

use fogblast_rules::{CastlingMode, Color, Move, ParsePositionError, Position, Uci, Variant};

use crate::search::{Limits, SearchReport, Searcher};
use crate::time::Clock;

const ENGINE_NAME: &str = concat!("Fogblast ", env!("CARGO_PKG_VERSION"));
const DEFAULT_HASH_MB: usize = 16;
const MAX_HASH_MB: usize = 1024;

/// Plays UCI: reads commands from `input` until `quit` or the end of input
/// and writes the replies to `output`, one flushed line at a time.
///
/// At the end of input a search with limits is allowed to finish (so
/// `echo "go depth 8" | fogblast uci` prints its result); `quit` and an
/// infinite search are stopped at once. The only error returned is a
/// failure to read or write.
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
    let stop = AtomicBool::new(false);
    thread::scope(|scope| {
        let mut session = Session::new(scope, &output, &stop);
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

/// Input the session understood but cannot act on. Reported to the GUI as
/// an `info string`; the session goes on.
#[derive(Debug, thiserror::Error)]
enum CommandError {
    #[error("setoption expects `setoption name <option> [value <value>]`")]
    OptionSyntax,
    #[error("no option named {0:?} (options: UCI_Variant, Hash, UCI_Chess960)")]
    UnknownOption(String),
    #[error("option {option}: {value:?} is not {expected}")]
    OptionValue { option: &'static str, value: String, expected: &'static str },
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

/// The options a GUI may set.
#[derive(Clone, Copy, Debug)]
struct Options {
    variant: Variant,
    hash_mb: usize,
    chess960: bool,
}

impl Options {
    fn castling_mode(&self) -> CastlingMode {
        CastlingMode::for_game(self.chess960)
    }
}

/// What one `go` asks for, handed to the search thread.
#[derive(Debug)]
struct SearchJob {
    root: Position,
    history: Vec<u64>,
    limits: Limits,
    /// Hold `bestmove` back until `stop`, as UCI requires of `go infinite`.
    infinite: bool,
    castling: CastlingMode,
}

/// A search thread, which hands the searcher back when it ends.
struct RunningSearch<'scope> {
    handle: ScopedJoinHandle<'scope, (Searcher, io::Result<()>)>,
    infinite: bool,
}

/// One conversation with a GUI: its options, the game so far and the
/// searcher, idle or lent to a search thread.
struct Session<'scope, 'env, W> {
    scope: &'scope Scope<'scope, 'env>,
    output: &'env Mutex<W>,
    stop: &'env AtomicBool,
    options: Options,
    position: Position,
    /// Zobrist keys of the positions before `position`, oldest first.
    history: Vec<u64>,
    /// Idle searcher; `None` while a search thread holds it.
    searcher: Option<Searcher>,
    search: Option<RunningSearch<'scope>>,
}

impl<'scope, 'env, W: Write + Send> Session<'scope, 'env, W> {
    fn new(scope: &'scope Scope<'scope, 'env>, output: &'env Mutex<W>, stop: &'env AtomicBool) -> Self {
        let options = Options { variant: Variant::Atomic, hash_mb: DEFAULT_HASH_MB, chess960: false };
        Session {
            scope,
            output,
            stop,
            options,
            position: Position::new(options.variant),
            history: Vec::new(),
            searcher: Some(Searcher::new(options.hash_mb)),
            search: None,
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
            Some("quit") => return Ok(Some(Ending::Quit)),
            // Nothing to do: no debug output, registration or pondering.
            _ => {}
        }
        Ok(None)
    }

    fn identify(&self) -> io::Result<()> {
        let lines = [
            format!("id name {ENGINE_NAME}"),
            "id author The Fogblast developers".to_owned(),
            "option name UCI_Variant type combo default atomic var atomic var chess".to_owned(),
            format!("option name Hash type spin default {DEFAULT_HASH_MB} min 1 max {MAX_HASH_MB}"),
            "option name UCI_Chess960 type check default false".to_owned(),
            "uciok".to_owned(),
        ];
        lines.iter().try_for_each(|line| send(self.output, line))
    }

    fn report(&self, err: CommandError) -> io::Result<()> {
        send(self.output, &format!("info string error: {err}"))
    }

    /// Sets an option. Changing the variant resets the position to the
    /// variant's start, since the old one may not even be valid under it.
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
        if name.eq_ignore_ascii_case("UCI_Variant") {
            let variant = match value.to_ascii_lowercase().as_str() {
                "atomic" => Variant::Atomic,
                "chess" | "standard" => Variant::Standard,
                _ => {
                    let expected = "atomic or chess";
                    return self.report(CommandError::OptionValue { option: "UCI_Variant", value, expected });
                }
            };
            if variant != self.options.variant {
                self.options.variant = variant;
                self.position = Position::new(variant);
                self.history.clear();
            }
        } else if name.eq_ignore_ascii_case("Hash") {
            let hash_mb = match value.parse::<usize>() {
                Ok(mb) if (1..=MAX_HASH_MB).contains(&mb) => mb,
                _ => {
                    let expected = "a whole number of MiB from 1 to 1024";
                    return self.report(CommandError::OptionValue { option: "Hash", value, expected });
                }
            };
            if hash_mb != self.options.hash_mb {
                self.stop_search()?;
                self.options.hash_mb = hash_mb;
                self.searcher = Some(Searcher::new(hash_mb));
            }
        } else if name.eq_ignore_ascii_case("UCI_Chess960") {
            self.options.chess960 = match value.to_ascii_lowercase().as_str() {
                "true" => true,
                "false" => false,
                _ => {
                    let expected = "true or false";
                    return self.report(CommandError::OptionValue { option: "UCI_Chess960", value, expected });
                }
            };
        } else if name.is_empty() {
            return self.report(CommandError::OptionSyntax);
        } else {
            return self.report(CommandError::UnknownOption(name));
        }
        Ok(())
    }

    fn new_game(&mut self) -> io::Result<()> {
        self.stop_search()?;
        self.searcher.get_or_insert_with(|| Searcher::new(self.options.hash_mb)).clear();
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

    /// `go`: parses the limits and starts a search thread. Parameters that
    /// do not parse are reported and left out; a `bestmove` always follows.
    fn go<'a>(&mut self, tokens: impl Iterator<Item = &'a str>) -> io::Result<()> {
        let mut limits = Limits::default();
        let mut infinite = false;
        let (mut wtime, mut btime, mut winc, mut binc, mut moves_to_go) = (None, None, None, None, None);
        let mut tokens = tokens.peekable();
        while let Some(word) = tokens.next() {
            match word {
                "infinite" => infinite = true,
                // Pondering is not offered; `go ponder` is an ordinary search.
                "ponder" => {}
                "searchmoves" => {
                    while tokens.peek().is_some_and(|t| t.parse::<Uci>().is_ok()) {
                        tokens.next();
                    }
                    self.report(CommandError::SearchMoves)?;
                }
                "depth" | "nodes" | "movetime" | "wtime" | "btime" | "winc" | "binc" | "movestogo" => {
                    let value = tokens.next().unwrap_or_default();
                    let parsed = match word {
                        "depth" => parse_number(value).map(|d| limits.depth = Some(d)),
                        "nodes" => parse_number(value).map(|n| limits.nodes = Some(n)),
                        "movetime" => parse_millis(value).map(|t| limits.movetime = Some(t)),
                        "wtime" => parse_millis(value).map(|t| wtime = Some(t)),
                        "btime" => parse_millis(value).map(|t| btime = Some(t)),
                        "winc" => parse_millis(value).map(|t| winc = Some(t)),
                        "binc" => parse_millis(value).map(|t| binc = Some(t)),
                        _ => parse_number(value).map(|n| moves_to_go = Some(n)),
                    };
                    if parsed.is_none() {
                        let (parameter, value) = (word.to_owned(), value.to_owned());
                        self.report(CommandError::GoValue { parameter, value })?;
                    }
                }
                _ => self.report(CommandError::GoParameter(word.to_owned()))?,
            }
        }
        let (remaining, increment) = match self.position.turn() {
            Color::White => (wtime, winc),
            Color::Black => (btime, binc),
        };
        limits.clock = remaining.map(|remaining| Clock {
            remaining,
            increment: increment.unwrap_or(Duration::ZERO),
            moves_to_go: moves_to_go.filter(|&n| n > 0),
        });

        self.stop_search()?;
        let mut searcher = self.searcher.take().unwrap_or_else(|| Searcher::new(self.options.hash_mb));
        let job = SearchJob {
            root: self.position,
            history: self.history.clone(),
            limits,
            infinite,
            castling: self.options.castling_mode(),
        };
        self.stop.store(false, Ordering::SeqCst);
        let (output, stop) = (self.output, self.stop);
        let handle = self.scope.spawn(move || {
            let written = job.run(&mut searcher, stop, output);
            (searcher, written)
        });
        self.search = Some(RunningSearch { handle, infinite });
        Ok(())
    }

    /// Stops the running search, if any, and waits for its `bestmove`.
    fn stop_search(&mut self) -> io::Result<()> {
        let Some(search) = self.search.take() else { return Ok(()) };
        self.stop.store(true, Ordering::SeqCst);
        search.handle.thread().unpark();
        self.collect(search)
    }

    /// Lets a search with limits finish; stops an infinite one.
    fn finish_search(&mut self) -> io::Result<()> {
        match self.search.take() {
            Some(search) if !search.infinite => self.collect(search),
            Some(search) => {
                self.search = Some(search);
                self.stop_search()
            }
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
    /// Searches, printing an `info` line per completed iteration, then the
    /// `bestmove`. Runs on the search thread.
    fn run<W: Write>(&self, searcher: &mut Searcher, stop: &AtomicBool, output: &Mutex<W>) -> io::Result<()> {
        let legal = self.root.legal_moves();
        let best = if legal.is_empty() {
            let lost = self.root.is_check() || self.root.board().king_of(self.root.turn()).is_none();
            send(output, if lost { "info depth 0 score mate 0" } else { "info depth 0 score cp 0" })?;
            None
        } else {
            let mut write_error = None;
            let searched = panic::catch_unwind(AssertUnwindSafe(|| {
                let mut on_iteration = |report: &SearchReport| {
                    if write_error.is_none() {
                        write_error = send(output, &self.info_line(report)).err();
                    }
                };
                searcher.search(&self.root, &self.history, &self.limits, stop, &mut on_iteration).best
            }));
            if let Some(err) = write_error {
                return Err(err);
            }
            match searched {
                Ok(best) => best.filter(|&m| self.root.is_legal(m)).or(legal.first().copied()),
                Err(_) => {
                    // A bug in the search must not leave the GUI waiting
                    // for a move: play any legal one and forget the tables.
                    searcher.clear();
                    send(output, "info string error: the search failed; playing the first legal move")?;
                    legal.first().copied()
                }
            }
        };
        if self.infinite {
            while !stop.load(Ordering::SeqCst) {
                thread::park();
            }
        }
        send(output, &format!("bestmove {}", best.map_or_else(|| "0000".to_owned(), |m| self.uci(m))))
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
        let millis = report.elapsed.as_millis();
        let nps = u128::from(report.nodes) * 1_000_000 / report.elapsed.as_micros().max(1);
        let mut line =
            format!("info depth {} score {score} nodes {} nps {nps} time {millis}", report.depth, report.nodes);
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
