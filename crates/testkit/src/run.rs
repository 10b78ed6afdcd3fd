//! Runs a long command (a whole cluster under faults) to its end from a
//! test: its output read as it comes, so a full pipe never stalls it, and a
//! limit past which it counts as hung.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How a command ended and what it printed.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `command` (stdin closed, stdout and stderr captured) until it
/// exits. Past `limit` it is sent SIGTERM (so it can stop what it started
/// and clean up), killed if it has not exited 20 s later, and the test panics with what it
/// printed.
pub fn run_with_limit(mut command: Command, limit: Duration) -> Finished {
    let name = format!("{:?}", command.get_program());
    let mut child = command
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{name} starts: {e}"));
    let stdout = read_all(child.stdout.take().expect("piped"));
    let stderr = read_all(child.stderr.take().expect("piped"));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap_or_else(|e| panic!("waiting for {name}: {e}")) {
            break status;
        }
        if started.elapsed() > limit {
            let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
            let stopping = Instant::now();
            while stopping.elapsed() < Duration::from_secs(20) && matches!(child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
            panic!("{name} still running after {limit:?}:\n{}", stdout.join().unwrap_or_default());
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    Finished { status, stdout: stdout.join().unwrap_or_default(), stderr: stderr.join().unwrap_or_default() }
}

fn read_all(mut from: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = from.read_to_string(&mut text);
        text
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_run_to_its_end_with_both_outputs() {
        let mut command = Command::new("sh");
        command.args(["-c", "echo out; echo err >&2; exit 3"]);
        let finished = run_with_limit(command, Duration::from_secs(30));
        assert_eq!(finished.status.code(), Some(3));
        assert_eq!((finished.stdout.as_str(), finished.stderr.as_str()), ("out\n", "err\n"));
    }

    #[test]
    fn a_command_past_its_limit_is_stopped_and_reported() {
        let mut command = Command::new("sh");
        command.args(["-c", "echo started; trap 'exit 0' TERM; while true; do sleep 0.1; done"]);
        let run = std::panic::AssertUnwindSafe(|| run_with_limit(command, Duration::from_millis(500)));
        let panicked = std::panic::catch_unwind(run);
        let message = panicked.expect_err("a hung command fails the test");
        let text = message.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(text.contains("still running after") && text.contains("started"), "{text}");
    }
}
