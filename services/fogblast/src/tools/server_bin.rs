//! Where the `fogblast` server binary is, for the tools that start clusters
//! of it (the load test's `--spawn`, the chaos run): the path given with
//! `--server-bin`, or else the `fogblast` beside this executable, which is
//! where Cargo puts both binaries of the package and where an install
//! copies them.

use std::path::{Path, PathBuf};

use anyhow::{ensure, Context};

/// The server binary: `flag` when given, else `fogblast` next to this one.
pub fn locate(flag: Option<&Path>) -> anyhow::Result<PathBuf> {
    let path = match flag {
        Some(path) => path.to_owned(),
        None => {
            let me = std::env::current_exe().context("finding this executable")?;
            let dir = me.parent().context("this executable has no directory")?;
            dir.join(format!("fogblast{}", std::env::consts::EXE_SUFFIX))
        }
    };
    ensure!(
        path.is_file(),
        "no server binary at {} (build it with `cargo build -p fogblast`, or pass --server-bin PATH)",
        path.display()
    );
    Ok(path)
}
