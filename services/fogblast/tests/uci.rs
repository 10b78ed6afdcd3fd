//! `fogblast uci` run as a GUI runs it: a child process spoken to over its
//! stdin and stdout.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Long enough for a debug build on a busy machine; only a hang takes it.
const PATIENCE: Duration = Duration::from_secs(30);

#[test]
fn plays_the_handshake_and_a_search() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fogblast"))
        .arg("uci")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("fogblast starts");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    // Lines arrive on a channel so a silent engine fails the test on a deadline.
    let (line_tx, lines) = mpsc::channel();
    thread::spawn(move || {
        for line in stdout.lines() {
            if line_tx.send(line.expect("stdout is UTF-8")).is_err() {
                break;
            }
        }
    });
    let read_until = |last: &str| {
        let deadline = Instant::now() + PATIENCE;
        let mut seen = Vec::new();
        loop {
            match lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) => {
                    let done = line.starts_with(last);
                    seen.push(line);
                    if done {
                        return seen;
                    }
                }
                Err(err) => panic!("waiting for {last:?}: {err}; got {seen:#?}"),
            }
        }
    };

    writeln!(stdin, "uci").unwrap();
    let handshake = read_until("uciok");
    assert!(handshake[0].starts_with("id name Fogblast"), "{handshake:?}");
    assert!(handshake.contains(&"option name UCI_Variant type combo default atomic var atomic var chess".to_owned()));

    writeln!(stdin, "isready").unwrap();
    assert_eq!(read_until("readyok"), ["readyok"]);

    writeln!(stdin, "ucinewgame\nposition startpos moves e2e4 e7e5\ngo depth 2").unwrap();
    let search = read_until("bestmove");
    assert!(search.iter().any(|line| line.starts_with("info depth 2 score ")), "{search:?}");
    let best = search.last().unwrap().strip_prefix("bestmove ").unwrap();
    let pos = fogblast_rules::Position::from_fen(
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
        fogblast_rules::Variant::Atomic,
    )
    .unwrap();
    assert!(pos.parse_uci(&best.parse().unwrap()).is_some(), "bestmove {best} is not legal");

    writeln!(stdin, "quit").unwrap();
    let deadline = Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("quit did not end the process");
        }
        thread::sleep(Duration::from_millis(10));
    };
    assert!(status.success(), "{status}");
}
