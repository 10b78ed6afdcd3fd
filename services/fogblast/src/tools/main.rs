//! `fogblast-tools`: what developers and operators run against Fogblast but
//! never deploy: the load test and the chaos run, which drive real
//! clusters of `fogblast` processes through the client crate, and the
//! benchmarks of each layer (move generation, search, a game shard, the
//! rating service, the matchmaker, the browser engine) and engine
//! self-play. Kept out of the `fogblast` binary so the production image
//! carries no bots and no benchmarks.

/// mimalloc instead of the system allocator: see docs/performance.md.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use fogblast::signals;

mod analysis_bench;
mod arena_bench;
mod arena_loadtest;
mod bench;
mod chaos;
mod engine_bench;
mod fog_match;
mod game_bench;
mod loadtest;
mod matchmaker_bench;
mod node_net;
mod partitions;
mod puzzles;
mod rating_bench;
mod relay_server;
mod selfplay;
mod server_bin;
mod wasm_bench;

#[derive(Debug, Parser)]
#[command(name = "fogblast-tools", version, about = "Load test, chaos run and benchmarks for the Fogblast server")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Measure move generation speed on fixed positions (leaf nodes per second).
    Bench(bench::BenchArgs),
    /// Measure search speed (nodes per second) and each level's time to move.
    EngineBench(engine_bench::EngineBenchArgs),
    /// Compare the browser engine (WebAssembly, under Node.js) with the native one: nodes per second on the same searches.
    WasmBench(wasm_bench::WasmBenchArgs),
    /// Cut puzzles from self-play (and archived) games, each checked for a unique solution, as JSON lines.
    Puzzles(puzzles::PuzzlesArgs),
    /// Play a match between two computer levels.
    Selfplay(selfplay::SelfplayArgs),
    /// Play the fog-of-war computer against an outside fog player (misty) in its own process, each side told only what it sees; classifies every loss.
    FogMatch(fog_match::FogMatchArgs),
    /// Measure one pairing wave over many waiting seekers on Redis; checks nobody was paired twice or left out.
    MatchmakerBench(matchmaker_bench::MatchmakerBenchArgs),
    /// Drive one arena of many players on Redis in real time: the first wave, game end to next game, changes told, standings read.
    ArenaBench(arena_bench::ArenaBenchArgs),
    /// Play a whole arena with bot players through real gateways, shards, matchmakers and the rating service; verifies every game and recomputes every score from the archive.
    ArenaLoadtest(arena_loadtest::ArenaLoadtestArgs),
    /// Measure the engine pool's analyses per minute and computer-move latency with and without an analysis backlog.
    AnalysisBench(analysis_bench::AnalysisBenchArgs),
    /// Measure the rating service on Postgres and NATS: finished games applied per second.
    RatingBench(rating_bench::RatingBenchArgs),
    /// Measure a game shard on Redis: moves applied per second and MakeMove latency.
    GameBench(game_bench::GameBenchArgs),
    /// Drive gateways with pairs of bots playing random moves: connections, moves/s, relay latency; verifies every game.
    Loadtest(loadtest::LoadtestArgs),
    /// Serve the load test's bots with the least a server must do (relay each checked move, nothing kept): the yardstick for `loadtest`.
    RelayServer(relay_server::RelayServerArgs),
    /// Run a whole cluster under bots while killing, restarting and pausing its processes; judges every game and fails if any promise broke.
    Chaos(chaos::ChaosArgs),
    /// Run the cluster on separate network nodes (namespaces, as root) under bots while schedules cut the network; judges each schedule's history.
    Partitions(partitions::PartitionsArgs),
}

fn main() -> ExitCode {
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let cli = <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|err| err.exit());
    signals::set_service(matches.subcommand_name().unwrap_or("tools"));
    let result = match cli.command {
        Command::Bench(args) => bench::run(&args),
        Command::EngineBench(args) => engine_bench::run(&args),
        Command::WasmBench(args) => wasm_bench::run(&args),
        Command::Selfplay(args) => selfplay::run(&args),
        Command::FogMatch(args) => fog_match::run(&args),
        Command::Puzzles(args) => puzzles::run(&args),
        Command::GameBench(args) => game_bench::run(&args),
        Command::RatingBench(args) => rating_bench::run(&args),
        Command::AnalysisBench(args) => analysis_bench::run(&args),
        Command::MatchmakerBench(args) => matchmaker_bench::run(&args),
        Command::ArenaBench(args) => arena_bench::run(&args),
        Command::ArenaLoadtest(args) => arena_loadtest::run(&args),
        Command::Loadtest(args) => loadtest::run(&args),
        Command::RelayServer(args) => relay_server::run(&args),
        Command::Chaos(args) => chaos::run(&args),
        Command::Partitions(args) => partitions::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
