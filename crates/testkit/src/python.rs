//! A Python for tests that run outside clients (`tests/python/requirements.txt`):
//! a virtual environment under the target directory, made the first time a
//! test asks and again whenever the requirements change. Tests running at
//! the same time wait for one another's install (a lock file), so the
//! packages are fetched once.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root, two levels above this crate.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the workspace root")
}

fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                dir
            } else {
                workspace().join(dir)
            }
        }
        None => workspace().join("target"),
    }
}

/// The test requirements file.
pub fn requirements() -> PathBuf {
    workspace().join("tests/python/requirements.txt")
}

/// The `python` of a virtual environment holding the test requirements,
/// made (or brought up to date) first if need be. Panics with pip's output
/// when the install fails.
pub fn python() -> PathBuf {
    let wanted = fs::read_to_string(requirements()).expect("tests/python/requirements.txt");
    let root = target_dir().join("python-tests");
    fs::create_dir_all(&root).expect("the virtual environment's directory");
    let lock = File::create(root.join(".lock")).expect("the install lock");
    lock.lock().expect("locking the install");
    let venv = root.join("venv");
    let python = venv.join("bin/python");
    let installed = root.join("installed.txt");
    let current = python.exists() && fs::read_to_string(&installed).is_ok_and(|done| done == wanted);
    if !current {
        let _ = fs::remove_dir_all(&venv);
        run(Command::new("python3").arg("-m").arg("venv").arg(&venv), "making the virtual environment");
        run(
            Command::new(&python)
                .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r"])
                .arg(requirements()),
            "installing tests/python/requirements.txt",
        );
        fs::write(&installed, &wanted).expect("recording the install");
    }
    python
}

fn run(command: &mut Command, what: &str) {
    let output = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
