//! `fogblast uci` run as a GUI runs it: a child process spoken to over its
//! stdin and stdout, by hand and through python-chess (the library
//! lichess-bot drives its engine with).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};
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
    // `bestmove <move> [ponder <reply>]`
    let best = search.last().unwrap().split_whitespace().nth(1).unwrap();
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

/// Runs `command` to its end, killing it past `limit`.
fn run_for(command: &mut Command, limit: Duration) -> Output {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("the command starts");
    let started = Instant::now();
    while child.try_wait().expect("waiting").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            break;
        }
        thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().expect("the output");
    assert!(started.elapsed() <= limit, "{command:?} ran past {limit:?}: {}", String::from_utf8_lossy(&output.stderr));
    output
}

/// python-chess refuses an option the engine did not declare and a spin
/// value outside its range: `tests/python/uci_options.py` configures
/// lichess-bot's default uci_options and plays atomic moves with pondering,
/// following the expected reply (`ponderhit`) and playing another (`stop`).
#[test]
fn python_chess_sets_lichess_bots_default_options_and_ponders() {
    let python = fogblast_testkit::python::python();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/python/uci_options.py");
    let mut command = Command::new(python);
    command.arg(script).args([env!("CARGO_BIN_EXE_fogblast"), "uci"]);
    let output = run_for(&mut command, Duration::from_secs(300));
    assert!(
        output.status.success(),
        "python-chess failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let printed = String::from_utf8(output.stdout).expect("UTF-8");
    let seen: serde_json::Value = serde_json::from_str(printed.lines().last().expect("a summary")).expect(&printed);
    assert_eq!(seen["engine_moves"], 10, "{seen}");
    assert!(seen["name"].as_str().is_some_and(|name| name.starts_with("Fogblast")), "{seen}");
    assert!(seen["ponder_moves"].as_u64().unwrap() > 0, "bestmove names a reply to ponder on: {seen}");
    assert!(seen["followed"].as_u64().unwrap() > 0, "a pondering search met ponderhit: {seen}");
    assert!(seen["not_followed"].as_u64().unwrap() > 0, "a pondering search was stopped: {seen}");
    assert!(seen["wdl_lines"].as_u64().unwrap() > 0, "UCI_ShowWDL: python-chess read wdl: {seen}");
}
