//! `fogblast`: the single entry point for the server and its tools.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod backends;
mod bench;
mod chaos;
mod engine_bench;
mod engine_pool;
mod game_bench;
mod game_shard;
mod gateway;
mod loadtest;
mod matchmaker;
mod matchmaker_bench;
mod migrate;
mod perft;
mod rating;
mod rating_bench;
mod selfplay;
mod signals;
mod uci;
mod up;
mod wasm_bench;

#[derive(Debug, Parser)]
#[command(name = "fogblast", version, about = "Atomic and fog-of-war chess server")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run all of Fogblast in one process: engine, game shard, rating service, matchmaker and gateway, on embedded stores unless REDIS_URL, NATS_URL and DATABASE_URL say otherwise.
    Up(up::UpArgs),
    /// Count the leaves of the legal move tree of a position.
    Perft(perft::PerftArgs),
    /// Measure move generation speed on fixed positions (leaf nodes per second).
    Bench(bench::BenchArgs),
    /// Measure search speed (nodes per second) and each level's time to move.
    EngineBench(engine_bench::EngineBenchArgs),
    /// Compare the browser engine (WebAssembly, under Node.js) with the native one: nodes per second on the same searches.
    WasmBench(wasm_bench::WasmBenchArgs),
    /// Play a match between two computer levels.
    Selfplay(selfplay::SelfplayArgs),
    /// Play as a UCI engine on stdin and stdout, for chess GUIs and match tools.
    Uci,
    /// Run the engine pool service: computer moves over gRPC, metrics over HTTP.
    Engine(fogblast_engine_service::EngineConfig),
    /// Run one game shard: authoritative games and clocks over gRPC, kept in Redis.
    Game(game_shard::GameArgs),
    /// Run one gateway: the WebSocket edge players and bots connect to.
    Gateway(gateway::GatewayArgs),
    /// Run the rating service: ratings, the game archive and leaderboards from the finished-games stream.
    Rating(rating::RatingArgs),
    /// Run one matchmaker replica: seeks paired by rating in waves, and the lobby of open boards, kept in Redis.
    Matchmaker(matchmaker::MatchmakerArgs),
    /// Measure one pairing wave over many waiting seekers on Redis; checks nobody was paired twice or left out.
    MatchmakerBench(matchmaker_bench::MatchmakerBenchArgs),
    /// Bring the archive database's schema up to date and exit (what the rating service also does when it starts).
    Migrate(migrate::MigrateArgs),
    /// Measure the rating service on Postgres and NATS: finished games applied per second.
    RatingBench(rating_bench::RatingBenchArgs),
    /// Measure a game shard on Redis: moves applied per second and MakeMove latency.
    GameBench(game_bench::GameBenchArgs),
    /// Drive gateways with pairs of bots playing random moves: connections, moves/s, relay latency; verifies every game.
    Loadtest(loadtest::LoadtestArgs),
    /// Run a whole cluster under bots while killing, restarting and pausing its processes; judges every game and fails if any promise broke.
    Chaos(chaos::ChaosArgs),
}

fn main() -> ExitCode {
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let cli = <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|err| err.exit());
    // Logs and traces name the service after its command: `fogblast-game`.
    signals::set_service(matches.subcommand_name().unwrap_or("fogblast"));
    let result = match cli.command {
        Command::Up(args) => up::run(args),
        Command::Perft(args) => perft::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::EngineBench(args) => engine_bench::run(&args),
        Command::WasmBench(args) => wasm_bench::run(&args),
        Command::Selfplay(args) => selfplay::run(&args),
        Command::Uci => uci::run(),
        Command::Engine(config) => engine_pool::run(config),
        Command::Game(args) => game_shard::run(args),
        Command::GameBench(args) => game_bench::run(&args),
        Command::Gateway(args) => gateway::run(args),
        Command::Rating(args) => rating::run(args),
        Command::RatingBench(args) => rating_bench::run(&args),
        Command::Matchmaker(args) => matchmaker::run(args),
        Command::MatchmakerBench(args) => matchmaker_bench::run(&args),
        Command::Migrate(args) => migrate::run(args),
        Command::Loadtest(args) => loadtest::run(&args),
        Command::Chaos(args) => chaos::run(&args),
    };
    // Export the spans still buffered before the process goes.
    fogblast_telemetry::shutdown();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`fogblast perft ... | head`): nothing to report.
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}
