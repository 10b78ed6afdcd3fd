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
    let options: Vec<&str> = lines.iter().filter(|l| l.starts_with("option ")).map(String::as_str).collect();
    assert_eq!(
        options,
        [
            "option name UCI_Variant type combo default atomic var atomic var chess",
            "option name Hash type spin default 16 min 1 max 1024",
            "option name UCI_Chess960 type check default false",
            "option name Threads type spin default 1 min 1 max 1024",
            "option name Move Overhead type spin default 10 min 0 max 5000",
            "option name MultiPV type spin default 1 min 1 max 64",
            "option name Ponder type check default false",
            "option name UCI_ShowWDL type check default false",
            "option name UCI_LimitStrength type check default false",
            "option name UCI_Elo type spin default 2400 min 800 max 2400",
            "option name SyzygyPath type string default <empty>",
        ]
    );
    assert_eq!(lines.last().unwrap(), "uciok");
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

/// The `info depth` lines among `lines`.
fn infos(lines: &[String]) -> Vec<&String> {
    lines.iter().filter(|line| line.starts_with("info depth ")).collect()
}

/// The value after `key` in an info line (`nodes`, `multipv`, ...).
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let mut words = line.split_whitespace();
    words.by_ref().find(|&word| word == key)?;
    words.next()
}

/// The moves after ` pv `.
fn pv(line: &str) -> Vec<&str> {
    line.split(" pv ").nth(1).map(|pv| pv.split_whitespace().collect()).unwrap_or_default()
}

fn after(moves: &[&str]) -> Position {
    let mut pos = Position::new(Variant::Atomic);
    for text in moves {
        pos = pos.play(pos.parse_uci(&text.parse().unwrap()).unwrap()).unwrap().0;
    }
    pos
}

#[test]
fn lichess_bots_default_options_are_all_accepted() {
    let engine = Engine::start();
    for (name, value) in [
        ("Move Overhead", "100"),
        ("Threads", "4"),
        ("Hash", "512"),
        ("SyzygyPath", "./syzygy/"),
        ("UCI_ShowWDL", "true"),
        ("Ponder", "true"),
    ] {
        engine.send(&format!("setoption name {name} value {value}"));
    }
    let lines = engine.ready();
    assert!(errors(&lines).is_empty(), "{lines:#?}");
    let notes: Vec<&String> = lines.iter().filter(|l| l.starts_with("info string ")).collect();
    assert_eq!(notes.len(), 2, "{lines:#?}");
    assert!(notes[0].contains("single-threaded"), "Threads above 1 says the search uses one: {notes:?}");
    assert!(notes[1].contains("SyzygyPath") && notes[1].contains("ignored"), "{notes:?}");
    // An empty path (the default) says nothing.
    engine.send("setoption name SyzygyPath value <empty>");
    engine.send("setoption name Threads value 1");
    assert_eq!(engine.ready(), ["readyok"]);
    engine.quit();
}

#[test]
fn option_values_out_of_range_are_reported_with_the_range() {
    let engine = Engine::start();
    let bad = [
        ("Threads", "0", "from 1 to 1024"),
        ("MultiPV", "65", "from 1 to 64"),
        ("Move Overhead", "-5", "from 0 to 5000"),
        ("UCI_Elo", "100", "from 800 to 2400"),
        ("UCI_ShowWDL", "yes", "true or false"),
        ("Ponder", "1", "true or false"),
    ];
    for (name, value, _) in bad {
        engine.send(&format!("setoption name {name} value {value}"));
    }
    engine.send("setoption name Contempt value 20");
    let lines = engine.ready();
    let errors = errors(&lines);
    assert_eq!(errors.len(), bad.len() + 1, "{lines:#?}");
    for ((name, _, range), error) in bad.iter().zip(&errors) {
        assert!(error.contains(name) && error.contains(range), "{name}: {error}");
    }
    let unknown = errors.last().unwrap();
    for name in ["Threads", "Move Overhead", "MultiPV", "Ponder", "UCI_ShowWDL", "UCI_Elo", "SyzygyPath"] {
        assert!(unknown.contains(name), "the unknown option's error lists {name}: {unknown}");
    }
    engine.quit();
}

#[test]
fn bestmove_names_the_reply_the_principal_variation_expects() {
    let engine = Engine::start();
    engine.send("position startpos moves e2e4 e7e5");
    engine.send("go depth 4");
    let (best, lines) = engine.best_move();
    let bestmove: Vec<&str> = lines.last().unwrap().split_whitespace().collect();
    let last = pv(infos(&lines).last().unwrap());
    assert_eq!(bestmove, ["bestmove", &best, "ponder", last[1]], "{lines:#?}");
    assert_eq!(best, last[0]);
    let pos = after(&["e2e4", "e7e5", &best]);
    assert_legal(&pos, last[1]);
    engine.quit();
}

#[test]
fn ponderhit_turns_pondering_into_the_timed_search() {
    let engine = Engine::start();
    engine.send("setoption name Ponder value true");
    engine.send("position startpos moves e2e4 e7e5");
    // A tenth of a second on the clock: a timed search would long be done.
    engine.send("go ponder wtime 100 btime 100");
    let mut pondering = engine.read_until(|l| l.starts_with("info depth 1 "));
    pondering.extend(engine.drain(Duration::from_millis(500)));
    assert!(!pondering.iter().any(|l| l.starts_with("bestmove")), "pondering holds its move: {pondering:#?}");
    engine.send("ponderhit");
    let (best, lines) = engine.best_move();
    assert_legal(&after(&["e2e4", "e7e5"]), &best);
    assert!(errors(&lines).is_empty(), "{lines:#?}");
    assert_eq!(lines.iter().filter(|l| l.starts_with("bestmove")).count(), 1, "{lines:#?}");
    assert_eq!(engine.ready(), ["readyok"], "one bestmove only");

    // A pondering search that ends on its own (a depth) holds its move too.
    engine.send("go ponder depth 2");
    let mut pondering = engine.read_until(|l| l.starts_with("info depth 2 "));
    pondering.extend(engine.ready());
    assert!(!pondering.iter().any(|l| l.starts_with("bestmove")), "{pondering:#?}");
    engine.send("ponderhit");
    let (best, _) = engine.best_move();
    assert_legal(&after(&["e2e4", "e7e5"]), &best);
    assert_eq!(engine.ready(), ["readyok"]);
    engine.quit();
}

#[test]
fn stop_while_pondering_gives_the_bestmove() {
    let engine = Engine::start();
    engine.send("setoption name Ponder value true");
    engine.send("position startpos moves d2d4");
    engine.send("go ponder wtime 100 btime 100 winc 0 binc 0");
    let mut pondering = engine.read_until(|l| l.starts_with("info depth 1 "));
    pondering.extend(engine.drain(Duration::from_millis(500)));
    assert!(!pondering.iter().any(|l| l.starts_with("bestmove")), "{pondering:#?}");
    engine.send("stop");
    let (best, lines) = engine.best_move();
    assert_legal(&after(&["d2d4"]), &best);
    assert_eq!(lines.iter().filter(|l| l.starts_with("bestmove")).count(), 1, "{lines:#?}");
    assert_eq!(engine.ready(), ["readyok"], "one bestmove only");
    // A ponderhit with nothing pondering changes nothing.
    engine.send("ponderhit");
    assert_eq!(engine.ready(), ["readyok"]);
    engine.quit();
}

#[test]
fn multipv_reports_the_best_lines_and_plays_the_first() {
    let engine = Engine::start();
    engine.send("setoption name MultiPV value 3");
    engine.send("position startpos moves e2e4 e7e5");
    engine.send("go depth 5");
    let (best, lines) = engine.best_move();
    assert!(errors(&lines).is_empty(), "{lines:#?}");
    let pos = after(&["e2e4", "e7e5"]);
    for depth in 1..=5 {
        let at_depth: Vec<&String> =
            infos(&lines).into_iter().filter(|l| field(l, "depth") == Some(&depth.to_string())).collect();
        let numbers: Vec<&str> = at_depth.iter().filter_map(|l| field(l, "multipv")).collect();
        assert_eq!(numbers, ["1", "2", "3"], "three lines at depth {depth}: {lines:#?}");
        let mut firsts: Vec<&str> = at_depth.iter().map(|l| pv(l)[0]).collect();
        firsts.iter().for_each(|m| assert_legal(&pos, m));
        firsts.sort_unstable();
        firsts.dedup();
        assert_eq!(firsts.len(), 3, "three different moves at depth {depth}: {at_depth:#?}");
    }
    let line_one = infos(&lines).into_iter().rfind(|l| field(l, "multipv") == Some("1")).unwrap();
    assert_eq!(pv(line_one)[0], best, "bestmove is line 1: {lines:#?}");

    // No more lines than moves: a lone king has three.
    engine.send("setoption name MultiPV value 5");
    engine.send("position fen 4k3/8/8/8/8/8/8/K7 w - - 0 1");
    engine.send("go depth 2");
    let (_, lines) = engine.best_move();
    let numbers: Vec<&str> = infos(&lines).iter().filter_map(|l| field(l, "multipv")).collect();
    assert_eq!(numbers, ["1", "2", "3", "1", "2", "3"], "{lines:#?}");

    // Back to one line: the usual output, without `multipv`.
    engine.send("setoption name MultiPV value 1");
    engine.send("position startpos");
    engine.send("go depth 2");
    let (_, lines) = engine.best_move();
    assert!(infos(&lines).iter().all(|l| field(l, "multipv").is_none()), "{lines:#?}");
    engine.quit();
}

#[test]
fn show_wdl_adds_win_draw_and_loss_to_every_score() {
    let engine = Engine::start();
    engine.send("setoption name UCI_ShowWDL value true");
    let wdl = |line: &str| -> Vec<u32> {
        let after = line.split(" wdl ").nth(1).unwrap_or_else(|| panic!("no wdl in {line}"));
        after.split_whitespace().take(3).map(|n| n.parse().unwrap()).collect()
    };
    engine.send("position startpos moves e2e4");
    engine.send("go depth 4");
    let (_, lines) = engine.best_move();
    assert_eq!(infos(&lines).len(), 4, "{lines:#?}");
    for line in infos(&lines) {
        assert_eq!(wdl(line).iter().sum::<u32>(), 1000, "{line}");
        let score = line.split(" score ").nth(1).unwrap();
        assert!(score.split_whitespace().nth(2) == Some("wdl"), "wdl follows the score: {line}");
    }

    engine.send(&format!("position fen {KIWIPETE}"));
    engine.send("go depth 2");
    let (_, lines) = engine.best_move();
    let mate = infos(&lines).into_iter().find(|l| l.contains(" score mate 1 ")).expect("a mate");
    assert_eq!(wdl(mate), [1000, 0, 0], "{mate}");

    // The side to move is mated: a certain loss.
    engine.send("position fen 4k3/4Q3/8/8/8/8/8/4K3 b - - 0 1");
    engine.send("go depth 2");
    let (_, lines) = engine.best_move();
    assert!(lines.contains(&"info depth 0 score mate 0 wdl 0 0 1000".to_owned()), "{lines:#?}");
    engine.quit();
}

#[test]
fn move_overhead_comes_off_the_clock() {
    let engine = Engine::start();
    // 5,010 ms on the clock less 5,000 ms of overhead leaves no time to
    // plan with: the first iteration, which always completes, is the
    // only one (without the overhead the budget is over 100 ms).
    engine.send("setoption name Move Overhead value 5000");
    engine.send("position startpos moves e2e4");
    engine.send("go wtime 5010 btime 5010");
    let (best, lines) = engine.best_move();
    assert!(errors(&lines).is_empty(), "{lines:#?}");
    let depths: Vec<&str> = infos(&lines).iter().filter_map(|l| field(l, "depth")).collect();
    assert_eq!(depths, ["1"], "{lines:#?}");
    assert_legal(&after(&["e2e4"]), &best);
    engine.quit();
}

#[test]
fn a_low_elo_plays_as_easy() {
    use std::sync::atomic::AtomicBool;

    use fogblast_engine::{Level, Searcher};

    let moves = ["e2e4", "e7e5", "g1f3"];
    let engine = Engine::start();
    engine.send("setoption name UCI_LimitStrength value true");
    engine.send("setoption name UCI_Elo value 800");
    engine.send(&format!("position startpos moves {}", moves.join(" ")));
    // The level caps the search: without a limit of its own it ends.
    engine.send("go");
    let (best, lines) = engine.best_move();
    assert!(errors(&lines).is_empty(), "{lines:#?}");

    // The same search as Easy's limits give (seed 0 before any ucinewgame),
    // with the same size of table. Easy searches fewer than 1,024 nodes
    // here, so it never reads the clock: load cannot change its result.
    let mut searcher = Searcher::new(16);
    let root = after(&moves);
    let mut history = Vec::new();
    let mut pos = Position::new(Variant::Atomic);
    for text in moves {
        history.push(pos.zobrist_hash());
        pos = pos.play(pos.parse_uci(&text.parse().unwrap()).unwrap()).unwrap().0;
    }
    let mut reports = Vec::new();
    let limits = Level::Easy.limits(None, None, 0);
    searcher.search(&root, &history, &limits, &AtomicBool::new(false), &mut |r| reports.push(r.clone()));
    let expected = reports.last().unwrap();
    let info = *infos(&lines).last().unwrap();
    assert_eq!(field(info, "depth"), Some(expected.depth.to_string().as_str()), "{lines:#?}");
    assert_eq!(field(info, "nodes"), Some(expected.nodes.to_string().as_str()), "{lines:#?}");
    assert_eq!(
        Some(best.as_str()),
        expected.best.map(|m| m.to_uci(fogblast_rules::CastlingMode::Standard).to_string()).as_deref()
    );
    assert_eq!(infos(&lines).len(), reports.len(), "{lines:#?}");
    engine.quit();
}
