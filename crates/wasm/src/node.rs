//! Runs the wasm build under Node.js, for the tests and the benchmark that
//! compare it with the native build.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::Value;

/// The page's loader, as the gateway serves it.
pub const LOADER_JS: &str = include_str!("../js/fogblast-wasm.js");
const RUNNER_JS: &str = include_str!("../js/node-runner.mjs");

/// One answer from the wasm build and the milliseconds it took.
#[derive(Clone, Debug)]
pub struct Timed {
    pub answer: Value,
    pub ms: f64,
}

/// Answers `requests` with the module `bytes` (written to a temporary file
/// for the run) under `node`, in order.
pub fn run_module(bytes: &[u8], requests: &[Value]) -> Result<Vec<Timed>, String> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let name = format!("fogblast-{}-{}.wasm", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let path = std::env::temp_dir().join(name);
    std::fs::write(&path, bytes).map_err(|e| format!("writing {}: {e}", path.display()))?;
    let answers = run(&path, requests);
    let _ = std::fs::remove_file(&path);
    answers
}

/// Answers `requests` with the module at `wasm` under `node`, in order.
pub fn run(wasm: &Path, requests: &[Value]) -> Result<Vec<Timed>, String> {
    let script = format!("{LOADER_JS}\n{RUNNER_JS}");
    let mut child = Command::new("node")
        .args(["--input-type=module", "-e", &script, "--"])
        .arg(wasm)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting node (Node.js must be installed): {e}"))?;
    let mut input = String::new();
    for request in requests {
        input.push_str(&request.to_string());
        input.push('\n');
    }
    let mut stdin = child.stdin.take().ok_or("no stdin for node")?;
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().map_err(|e| format!("waiting for node: {e}"))?;
    writer.join().map_err(|_| "the writer thread panicked")?.map_err(|e| format!("writing to node: {e}"))?;
    if !output.status.success() {
        return Err(format!("node failed ({}): {}", output.status, String::from_utf8_lossy(&output.stderr)));
    }
    let text = String::from_utf8(output.stdout).map_err(|e| format!("node's output: {e}"))?;
    let answers = text
        .lines()
        .map(|line| {
            let value: Value = serde_json::from_str(line).map_err(|e| format!("node's line {line:?}: {e}"))?;
            Ok(Timed { answer: value["answer"].clone(), ms: value["ms"].as_f64().unwrap_or(0.0) })
        })
        .collect::<Result<Vec<_>, String>>()?;
    if answers.len() != requests.len() {
        return Err(format!("{} answers to {} requests", answers.len(), requests.len()));
    }
    Ok(answers)
}
