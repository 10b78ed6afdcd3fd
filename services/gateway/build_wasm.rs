//! Builds `crates/wasm` for the browser (wasm32-unknown-unknown, release)
//! so the gateway can serve it for offline games. The build runs a nested
//! `cargo` with its own target directory, so it never waits on the outer
//! build's lock.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-unknown-unknown";

/// The crates whose sources end up in the module: any change rebuilds it.
const SOURCES: &[&str] = &["crates/rules", "crates/engine", "crates/pgn", "crates/wasm"];

/// Builds the module and returns the path of the `.wasm` file.
pub fn build(workspace: &Path) -> PathBuf {
    for source in SOURCES {
        let dir = workspace.join(source);
        println!("cargo:rerun-if-changed={}", dir.join("src").display());
        println!("cargo:rerun-if-changed={}", dir.join("Cargo.toml").display());
        if dir.join("build.rs").exists() {
            println!("cargo:rerun-if-changed={}", dir.join("build.rs").display());
        }
    }
    println!("cargo:rerun-if-changed={}", workspace.join("crates/wasm/js").display());
    println!("cargo:rerun-if-changed={}", workspace.join("Cargo.lock").display());
    let target_dir =
        env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace.join("target")).join("wasm");
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(workspace)
        .args(["build", "--release", "--locked", "-p", "fogblast-wasm", "--target", TARGET, "--target-dir"])
        .arg(&target_dir);
    // The outer build's settings are for the host, not for the browser.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
        "MFLAGS",
    ] {
        command.env_remove(var);
    }
    let status = command.status().expect("running cargo to build the browser engine");
    assert!(
        status.success(),
        "building crates/wasm for {TARGET} failed; if the target is missing, run `rustup target add {TARGET}` \
         (rust-toolchain.toml lists it, so rustup normally adds it by itself)"
    );
    target_dir.join(TARGET).join("release").join("fogblast_wasm.wasm")
}
