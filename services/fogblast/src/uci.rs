//! `fogblast uci`: the engine behind the Universal Chess Interface on stdin
//! and stdout, so chess GUIs and match tools can run it as an engine binary.

use std::io;

pub fn run() -> anyhow::Result<()> {
    fogblast_engine::uci::run_uci(io::stdin().lock(), io::stdout())?;
    Ok(())
}
