//! `fogblast-tools wasm-bench`: the browser engine's speed against the native
//! engine's on the same positions at the same depth. The wasm build is the
//! one the gateway embeds, run under Node.js; both builds must search the
//! same tree (same move, score and node count), so a fast wrong answer fails.

use std::io::Write as _;
use std::time::Instant;

use anyhow::{bail, ensure, Context};
use clap::Args;
use fogblast_rules::Variant;
use serde_json::{json, Value};

use crate::engine_bench::POSITIONS;

#[derive(Debug, Args)]
pub struct WasmBenchArgs {
    /// Depth of the fixed-depth searches.
    #[arg(long, default_value_t = 7)]
    depth: u32,
}

pub fn run(args: &WasmBenchArgs) -> anyhow::Result<()> {
    let requests: Vec<Value> = POSITIONS
        .iter()
        .map(|(variant, fen)| {
            let variant = if *variant == Variant::Atomic { "atomic" } else { "standard" };
            json!({ "op": "search", "variant": variant, "fen": fen, "depth": args.depth })
        })
        .collect();

    let asset = fogblast_gateway::web::lookup("offline/fogblast.wasm").context("no embedded browser engine")?;
    let wasm = match fogblast_wasm::node::run_module(asset.bytes, &requests) {
        Ok(answers) => answers,
        Err(e) => bail!("running the wasm build: {e}"),
    };

    let mut out = std::io::stdout().lock();
    let (mut native_nodes, mut native_ms, mut wasm_ms) = (0u64, 0f64, 0f64);
    for ((request, timed), (variant, fen)) in requests.iter().zip(&wasm).zip(POSITIONS) {
        let started = Instant::now();
        let native: Value = serde_json::from_str(&fogblast_wasm::handle(&request.to_string()))?;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        ensure!(native["ok"] == true, "{fen}: {native}");
        ensure!(timed.answer == native, "{fen}: wasm answered {} but native {native}", timed.answer);
        let nodes = native["nodes"].as_u64().unwrap_or(0);
        ensure!(nodes > 0, "{fen}: no nodes searched");
        native_nodes += nodes;
        native_ms += ms;
        wasm_ms += timed.ms;
        writeln!(
            out,
            "{variant:<8} depth {:>2} {nodes:>9} nodes  native {:>7.1} ms {:>6.2} Mnps  wasm {:>7.1} ms {:>6.2} Mnps  {fen}",
            native["depth"],
            ms,
            nodes as f64 / ms / 1000.0,
            timed.ms,
            nodes as f64 / timed.ms / 1000.0,
        )?;
    }
    let native_nps = native_nodes as f64 / native_ms * 1000.0;
    let wasm_nps = native_nodes as f64 / wasm_ms * 1000.0;
    writeln!(
        out,
        "total {native_nodes} nodes (identical in both builds): native {:.2} Mnps, wasm {:.2} Mnps, wasm/native {:.0}%",
        native_nps / 1e6,
        wasm_nps / 1e6,
        wasm_nps / native_nps * 100.0
    )?;
    Ok(())
}
