//! The web client in a real browser. Runs the suite in `tests/browser`
//! (node's test runner driving headless Chromium through playwright-core)
//! against `fogblast up` started from this package's binary: a game against
//! the computer, two players through an invite link, fog of war holding no
//! hidden piece, the 3D board and the themes, and a reload mid-game.
//!
//! Chromium (`/usr/bin/chromium`) and the suite's npm packages must be
//! installed: `tests/run` installs both and then runs every test. Screenshots
//! of every run land in `target/browser-screenshots/`.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_fogblast");

fn suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/browser")
}

/// What the suite needs and is missing, as sentences.
fn missing(dir: &Path) -> Vec<String> {
    let mut missing = Vec::new();
    let chromium = std::env::var("FOGBLAST_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".to_owned());
    if !Path::new(&chromium).exists() {
        missing.push(format!("Chromium is not installed at {chromium} (apt-get install -y chromium)"));
    }
    if Command::new("node").arg("--version").output().is_err() {
        missing.push("node is not on the PATH (apt-get install -y nodejs npm)".to_owned());
    }
    if !dir.join("node_modules/playwright-core/package.json").exists() {
        missing.push(format!("the suite's npm packages are not installed (cd {} && npm ci)", dir.display()));
    }
    missing
}

#[test]
fn web_client_in_headless_chromium() {
    let dir = suite_dir();
    let missing = missing(&dir);
    assert!(
        missing.is_empty(),
        "the browser tests cannot run: {}.\nRun `tests/run` from the repository root: it installs them and runs every test.",
        missing.join("; ")
    );
    let screenshots = Path::new(BIN).parent().and_then(Path::parent).map(|target| target.join("browser-screenshots"));
    let mut node = Command::new("node");
    node.arg("run.js").current_dir(&dir).env("FOGBLAST_BIN", BIN);
    if let Some(screenshots) = screenshots {
        node.env("FOGBLAST_SCREENSHOTS", screenshots);
    }
    let out = node.output().expect("running node run.js in tests/browser");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    eprintln!("{stderr}");
    assert!(out.status.success(), "the browser tests failed ({}):\n{stdout}\n{stderr}", out.status);
}
