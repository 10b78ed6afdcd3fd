//! `fogblast`: the server's single entry point: every service, one at a
//! time or all in one process (`up`), the schema migration, and the two
//! small tools a deployment or a chess GUI uses (`perft`, `uci`). The load
//! test, the chaos run and the benchmarks are in `fogblast-tools`
//! (`src/tools/`), so that what runs in production carries none of them.

/// mimalloc instead of the system allocator: see docs/performance.md.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use fogblast::signals;

mod backends;
mod engine_pool;
mod events;
mod game_shard;
mod gateway;
mod matchmaker;
mod migrate;
mod perft;
mod rating;
mod uci;
mod up;

#[derive(Debug, Parser)]
#[command(name = "fogblast", version, about = "Atomic and fog-of-war chess server")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run all of Fogblast in one process: engine, game shard, rating service, matchmaker and gateway, on embedded stores unless REDIS_URL, NATS_URL and DATABASE_URL say otherwise.
    Up(Box<up::UpArgs>),
    /// Count the leaves of the legal move tree of a position.
    Perft(perft::PerftArgs),
    /// Play as a UCI engine on stdin and stdout, for chess GUIs and match tools.
    Uci,
    /// Run the engine pool service: computer moves over gRPC, metrics over HTTP.
    Engine(engine_pool::EngineArgs),
    /// Run one game shard: authoritative games and clocks over gRPC, kept in Redis.
    Game(game_shard::GameArgs),
    /// Run one gateway: the WebSocket edge players and bots connect to.
    Gateway(gateway::GatewayArgs),
    /// Run the rating service: ratings, the game archive and leaderboards from the finished-games stream.
    Rating(rating::RatingArgs),
    /// Run one matchmaker replica: seeks paired by rating in waves, and the lobby of open boards, kept in Redis.
    Matchmaker(matchmaker::MatchmakerArgs),
    /// Read the public game-event stream (docs/events.md).
    Events(events::EventsArgs),
    /// Bring the archive database's schema up to date and exit (what the rating service also does when it starts).
    Migrate(migrate::MigrateArgs),
}

fn main() -> ExitCode {
    fogblast::allocator::keep_freed_memory_mapped();
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let cli = <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|err| err.exit());
    // Logs and traces name the service after its command: `fogblast-game`.
    signals::set_service(matches.subcommand_name().unwrap_or("fogblast"));
    let result = match cli.command {
        Command::Up(args) => up::run(*args),
        Command::Perft(args) => perft::run(&args),
        Command::Uci => uci::run(),
        Command::Engine(config) => engine_pool::run(config),
        Command::Game(args) => game_shard::run(args),
        Command::Gateway(args) => gateway::run(args),
        Command::Rating(args) => rating::run(args),
        Command::Matchmaker(args) => matchmaker::run(args),
        Command::Migrate(args) => migrate::run(args),
        Command::Events(args) => events::run(args),
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
