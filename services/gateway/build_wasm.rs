//! Builds `crates/wasm` for the browser (wasm32-unknown-unknown, release)
//! so the gateway can serve it for offline games. The build runs a nested
//! `cargo` with its own target directory, so it never waits on the outer
//! build's lock.
//!
//! rustup adds the `targets` of `rust-toolchain.toml` only when it installs
//! the toolchain, so a machine that already had `stable` lacks the target's
//! standard library. The build adds it through rustup when it is missing,
//! and says exactly what to install where there is no rustup.

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
    ensure_target_installed();
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
    assert!(status.success(), "building crates/wasm for {TARGET} failed (the compiler's messages are above)");
    target_dir.join(TARGET).join("release").join("fogblast_wasm.wasm")
}

/// Makes sure the compiler has the standard library for [`TARGET`], adding
/// it through rustup (for the toolchain this build runs on) when it is not.
fn ensure_target_installed() {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()));
    let installed = |sysroot: &Option<PathBuf>| {
        sysroot.as_ref().is_some_and(|root| root.join("lib/rustlib").join(TARGET).join("lib").is_dir())
    };
    if installed(&sysroot) {
        return;
    }
    let toolchain = env::var("RUSTUP_TOOLCHAIN").ok();
    println!(
        "cargo:warning=the {TARGET} standard library is missing; adding it with `rustup target add {TARGET}`{}",
        toolchain.as_deref().map(|t| format!(" for toolchain {t}")).unwrap_or_default()
    );
    let mut rustup = Command::new("rustup");
    rustup.args(["target", "add", TARGET]);
    if let Some(toolchain) = &toolchain {
        rustup.args(["--toolchain", toolchain]);
    }
    match rustup.status() {
        Ok(status) if status.success() && installed(&sysroot) => {}
        Ok(status) => panic!(
            "`rustup target add {TARGET}` did not install the target ({status}); the page's offline engine \
             needs it: run `rustup target add {TARGET}` and build again"
        ),
        Err(error) => panic!(
            "the page's offline engine is built for {TARGET}, whose standard library this Rust toolchain \
             ({sysroot}) lacks, and there is no rustup to add it ({error}). Install Rust with rustup \
             (https://rustup.rs), or install your distribution's standard library for {TARGET} \
             (on Debian and Ubuntu: `apt-get install libstd-rust-dev-wasm32`), then build again",
            sysroot = sysroot.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "unknown sysroot".into())
        ),
    }
}
