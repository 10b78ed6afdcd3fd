//! The engine's UCI loop on stdin and stdout, as a small binary for match
//! tools: `cargo build --release -p fogblast-engine --example uci` builds it
//! without the rest of the service (the same loop as `fogblast uci`).

fn main() -> std::io::Result<()> {
    fogblast_engine::uci::run_uci(std::io::stdin().lock(), std::io::stdout())
}
