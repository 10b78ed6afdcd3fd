//! The UCI loop driven in memory the way a GUI drives it: commands go in
//! line by line while the session runs on its own thread, and replies are
//! read back with deadlines, so a hang fails the test instead of stalling it.

use std::io::{self, BufReader, Read, Write};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use fogblast_engine::uci::run_uci;
use fogblast_rules::{Position, Uci, Variant};

/// Long enough for a debug build on a busy machine; only a hang takes it.
const PATIENCE: Duration = Duration::from_secs(30);

const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

/// The reading end of the command channel: each message is one chunk of
/// input, and a dropped sender is the end of input.
struct CommandReader {
    chunks: Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    read: usize,
}

impl Read for CommandReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.read == self.chunk.len() {
            match self.chunks.recv() {
                Ok(chunk) => (self.chunk, self.read) = (chunk, 0),
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len() - self.read);
        buf[..n].copy_from_slice(&self.chunk[self.read..self.read + n]);
        self.read += n;
        Ok(n)
    }
}

/// The writing end of the reply channel: whole lines, without newlines.
struct ReplyWriter {
    lines: Sender<String>,
    partial: Vec<u8>,
}

impl Write for ReplyWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.partial.extend_from_slice(buf);
        while let Some(end) = self.partial.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            let line = String::from_utf8(line).expect("replies are UTF-8");
            self.lines.send(line.trim_end().to_owned()).map_err(|_| io::ErrorKind::BrokenPipe)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A running session, as a GUI sees it.
struct Engine {
    commands: Option<Sender<Vec<u8>>>,
    replies: Receiver<String>,
    session: Option<JoinHandle<io::Result<()>>>,
}

impl Engine {
    fn start() -> Engine {
        let (command_tx, command_rx) = mpsc::channel();
        let (reply_tx, reply_rx) = mpsc::channel();
        let session = thread::spawn(move || {
            let input = BufReader::new(CommandReader { chunks: command_rx, chunk: Vec::new(), read: 0 });
            run_uci(input, ReplyWriter { lines: reply_tx, partial: Vec::new() })
        });
        Engine { commands: Some(command_tx), replies: reply_rx, session: Some(session) }
    }

    fn send(&self, command: &str) {
        self.send_bytes(format!("{command}\n").as_bytes());
    }

    fn send_bytes(&self, bytes: &[u8]) {
        self.commands.as_ref().expect("input is open").send(bytes.to_vec()).expect("the session is running");
    }

    /// Replies up to and including the first that satisfies `last`.
    fn read_until(&self, last: impl Fn(&str) -> bool) -> Vec<String> {
        let deadline = Instant::now() + PATIENCE;
        let mut seen = Vec::new();
        loop {
            let wait = deadline.saturating_duration_since(Instant::now());
            match self.replies.recv_timeout(wait) {
                Ok(line) => {
                    let done = last(&line);
                    seen.push(line);
                    if done {
                        return seen;
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!("no awaited reply within {PATIENCE:?}; got {seen:#?}"),
                Err(RecvTimeoutError::Disconnected) => panic!("the session ended; got {seen:#?}"),
            }
        }
    }

    /// Replies up to the `bestmove`, and the move it names.
    fn best_move(&self) -> (String, Vec<String>) {
        let lines = self.read_until(|line| line.starts_with("bestmove"));
        let best = lines.last().unwrap().split_whitespace().nth(1).expect("bestmove names a move").to_owned();
        (best, lines)
    }

    fn ready(&self) -> Vec<String> {
        self.send("isready");
        self.read_until(|line| line == "readyok")
    }

    /// Replies that arrive within `wait`, without expecting any.
    fn drain(&self, wait: Duration) -> Vec<String> {
        let deadline = Instant::now() + wait;
        let mut seen = Vec::new();
        while let Ok(line) = self.replies.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            seen.push(line);
        }
        seen
    }

    fn quit(mut self) {
        self.send("quit");
        let session = self.session.take().unwrap();
        let deadline = Instant::now() + PATIENCE;
        while !session.is_finished() {
            assert!(Instant::now() < deadline, "quit did not end the session");
            thread::sleep(Duration::from_millis(5));
        }
        session.join().expect("the session does not panic").expect("the session ends without an I/O error");
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        // End of input: stops an infinite search so no thread is left spinning.
        self.commands.take();
    }
}

fn errors(lines: &[String]) -> Vec<&String> {
    lines.iter().filter(|line| line.starts_with("info string error")).collect()
}

fn assert_legal(fen_or_start: &Position, best: &str) {
    let uci: Uci = best.parse().unwrap_or_else(|_| panic!("bestmove {best:?} is not UCI"));
    assert!(fen_or_start.parse_uci(&uci).is_some(), "bestmove {best} is not legal in {}", fen_or_start.fen());
}

#[test]
fn handshake_lists_the_options_then_uciok() {
    let engine = Engine::start();
    engine.send("uci");
    let lines = engine.read_until(|line| line == "uciok");
    assert!(lines[0].starts_with("id name Fogblast"), "{lines:?}");
    assert!(lines.contains(&"id author The Fogblast developers".to_owned()), "{lines:?}");
    assert!(
        lines.contains(&"option name UCI_Variant type combo default atomic var atomic var chess".to_owned()),
        "{lines:?}"
    );
    assert!(lines.contains(&"option name Hash type spin default 16 min 1 max 1024".to_owned()), "{lines:?}");
    assert!(lines.contains(&"option name UCI_Chess960 type check default false".to_owned()), "{lines:?}");
    assert_eq!(engine.ready(), ["readyok"]);
    engine.quit();
}

#[test]
fn searches_the_position_after_the_given_moves() {
    let engine = Engine::start();
    engine.send("ucinewgame");
    engine.send("position startpos moves e2e4 e7e5");
    engine.send("go depth 3");
    let (best, lines) = engine.best_move();
    let mut pos = Position::new(Variant::Atomic);
    for text in ["e2e4", "e7e5"] {
        pos = pos.play(pos.parse_uci(&text.parse().unwrap()).unwrap()).unwrap().0;
    }
    assert_legal(&pos, &best);
    assert!(errors(&lines).is_empty(), "{lines:?}");
    let depths: Vec<&str> = lines.iter().filter_map(|l| l.strip_prefix("info depth ")?.split(' ').next()).collect();
    assert_eq!(depths, ["1", "2", "3"], "{lines:?}");
    let info = lines.iter().find(|l| l.starts_with("info depth 3 ")).unwrap();
    for field in [" score cp ", " nodes ", " nps ", " time ", " pv "] {
        assert!(info.contains(field), "{field:?} missing from {info}");
    }
    assert!(info.split(" pv ").nth(1).unwrap().starts_with(&best), "the pv starts with the best move: {info}");
    engine.quit();
}

#[test]
fn finds_the_atomic_mate_in_one() {
    let engine = Engine::start();
    // Either knight capture next to e8 explodes the black king.
    engine.send(&format!("position fen {KIWIPETE}"));
    engine.send("go depth 4");
    let (best, lines) = engine.best_move();
    assert!(["e5f7", "e5d7"].contains(&best.as_str()), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains(" score mate 1 ")), "{lines:?}");

    // Queen takes e7: the only move that wins at once.
    engine.send("position fen 4k3/4p3/8/8/8/Q7/8/4K3 w - - 0 1");
    engine.send("go depth 4");
    let (best, lines) = engine.best_move();
    assert_eq!(best, "a3e7", "{lines:?}");
    assert!(lines.iter().any(|l| l.contains(" score mate 1 ")), "{lines:?}");
    engine.quit();
}

#[test]
fn infinite_search_waits_for_stop_and_answers_isready_meanwhile() {
    let engine = Engine::start();
    engine.send("position startpos");
    engine.send("go infinite");
    let early = engine.drain(Duration::from_millis(300));
    assert!(!early.iter().any(|l| l.starts_with("bestmove")), "no bestmove before stop: {early:?}");
    let asked = Instant::now();
    let lines = engine.ready();
    assert!(asked.elapsed() < Duration::from_secs(1), "isready answered while searching");
    assert!(!lines.iter().any(|l| l.starts_with("bestmove")), "{lines:?}");
    let stopped = Instant::now();
    engine.send("stop");
    let (best, _) = engine.best_move();
    assert!(stopped.elapsed() < Duration::from_secs(1), "stop took {:?}", stopped.elapsed());
    assert_legal(&Position::new(Variant::Atomic), &best);
    engine.quit();
}

#[test]
fn a_short_clock_gives_a_quick_move() {
    let engine = Engine::start();
    engine.send("position startpos moves e2e4");
    let started = Instant::now();
    engine.send("go wtime 1000 btime 1000");
    let (best, _) = engine.best_move();
    let took = started.elapsed();
    assert!(took < Duration::from_millis(500), "one second on the clock, {took:?} for one move");
    let pos = Position::new(Variant::Atomic);
    let pos = pos.play(pos.parse_uci(&"e2e4".parse().unwrap()).unwrap()).unwrap().0;
    assert_legal(&pos, &best);
    engine.quit();
}

#[test]
fn the_variant_option_switches_the_rules() {
    // The black king stands next to an unprotected queen: in chess it takes
    // her, in atomic kings cannot capture and it is mated.
    let fen = "4k3/4Q3/8/8/8/8/8/4K3 b - - 0 1";
    let engine = Engine::start();
    engine.send(&format!("position fen {fen}"));
    engine.send("go depth 2");
    let (best, lines) = engine.best_move();
    assert_eq!(best, "0000", "{lines:?}");
    assert!(lines.contains(&"info depth 0 score mate 0".to_owned()), "{lines:?}");

    engine.send("setoption name UCI_Variant value chess");
    engine.send(&format!("position fen {fen}"));
    engine.send("go depth 2");
    let (best, lines) = engine.best_move();
    assert_eq!(best, "e8e7", "{lines:?}");

    engine.send("setoption name UCI_Variant value atomic");
    engine.send(&format!("position fen {fen}"));
    engine.send("go depth 2");
    assert_eq!(engine.best_move().0, "0000");
    engine.quit();
}

#[test]
fn castling_is_written_as_the_chess960_option_says() {
    // Chess: castling mates (f1 rook, g1 king covers g2); Rf1 alone does not.
    let fen = "8/8/8/8/4ppp1/4pkp1/8/2N1K2R w K - 0 1";
    let engine = Engine::start();
    engine.send("setoption name UCI_Variant value chess");
    engine.send(&format!("position fen {fen}"));
    engine.send("go depth 3");
    let (best, lines) = engine.best_move();
    assert_eq!(best, "e1g1", "{lines:?}");
    assert!(lines.iter().any(|l| l.contains(" score mate 1 ") && l.ends_with(" pv e1g1")), "{lines:?}");

    engine.send("setoption name UCI_Chess960 value true");
    engine.send(&format!("position fen {fen}"));
    engine.send("go depth 3");
    let (best, lines) = engine.best_move();
    assert_eq!(best, "e1h1", "{lines:?}");
    assert!(lines.iter().any(|l| l.ends_with(" pv e1h1")), "{lines:?}");

    // Either notation is accepted in either mode: after castling black is mated.
    for (chess960, castle) in [("true", "e1g1"), ("false", "e1h1")] {
        engine.send(&format!("setoption name UCI_Chess960 value {chess960}"));
        engine.send(&format!("position fen {fen} moves {castle}"));
        engine.send("go depth 1");
        let (best, lines) = engine.best_move();
        assert_eq!(best, "0000", "{lines:?}");
        assert!(errors(&lines).is_empty(), "{lines:?}");
    }
    engine.quit();
}

#[test]
fn bad_input_is_reported_and_the_session_goes_on() {
    let engine = Engine::start();
    let garbage = [
        "hello world",
        "position",
        "position fen not a fen",
        "position fen 8/8/8/8/8/8/8/8 w - - 0 1",
        "position startpos nonsense e2e4",
        "setoption",
        "setoption name Nope value 1",
        "setoption name Hash value -3",
        "setoption name Hash value 99999",
        "setoption name UCI_Variant value shogi",
        "setoption name UCI_Chess960 value maybe",
        "moves e2e4",
        "   ",
        "",
    ];
    for line in garbage {
        engine.send(line);
    }
    engine.send_bytes(b"\xff\xfe\x00 isready\r\n");
    let lines = engine.read_until(|line| line == "readyok");
    let unknown = lines.iter().filter(|l| l.starts_with("info string unknown command")).count();
    assert_eq!(unknown, 3, "hello world, moves e2e4 and the bytes before isready: {lines:#?}");
    assert_eq!(errors(&lines).len(), 10, "one error per bad command: {lines:#?}");
    // A depth with no number is left out, which leaves no limit at all.
    engine.send("go depth");
    assert_eq!(errors(&engine.ready()).len(), 1);
    engine.send("stop");
    engine.best_move();
    assert_eq!(engine.ready().last().unwrap(), "readyok");

    // An illegal move: the position stays after the legal ones.
    engine.send("position startpos moves e2e4 e7e4 g1f3");
    let lines = engine.ready();
    let error = errors(&lines);
    assert_eq!(error.len(), 1, "{lines:?}");
    assert!(error[0].contains("\"e7e4\"") && error[0].contains("after 1 of 3 moves"), "{}", error[0]);
    engine.send("go depth 2");
    let (best, _) = engine.best_move();
    let start = Position::new(Variant::Atomic);
    let after_e4 = start.play(start.parse_uci(&"e2e4".parse().unwrap()).unwrap()).unwrap().0;
    assert_legal(&after_e4, &best);

    // A bad FEN keeps the previous position.
    engine.send("position fen 8/8/8 w - - 0 1");
    engine.send("go depth 1 banana nodes lots");
    let (best, lines) = engine.best_move();
    assert_eq!(errors(&lines).len(), 3, "{lines:?}");
    assert_legal(&after_e4, &best);
    assert_eq!(engine.ready(), ["readyok"]);
    engine.quit();
}

#[test]
fn end_of_input_lets_a_bounded_search_finish() {
    let commands = "uci\nposition startpos moves e2e4\ngo depth 2\n";
    let mut replies = Vec::new();
    run_uci(commands.as_bytes(), &mut replies).unwrap();
    let replies = String::from_utf8(replies).unwrap();
    assert!(replies.contains("info depth 2 "), "{replies}");
    assert!(replies.ends_with('\n') && replies.lines().last().unwrap().starts_with("bestmove "), "{replies}");
}
