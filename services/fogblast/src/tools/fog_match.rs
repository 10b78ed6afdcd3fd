//! `fogblast-tools fog-match`: the fog-of-war computer against an outside
//! fog player run as a separate process (misty, through
//! tests/python/misty/misty_player.py), each side told only what it sees.
//!
//! This process is the referee: it keeps the real game, gives the engine
//! its [`FogObservation`] (the referee's cut) and the outside player its
//! own observation as misty defines it (visible squares, the pieces on
//! them, the square where it lost a piece and whether the taker stands
//! there), one JSON line a command. Colours alternate from game to game.
//! After each game the outside player replays the game by its own rules and
//! counts the observations that differ from the ones it was given.
//!
//! Every game the engine loses is classified: its king taken by a piece it
//! did not see when it chose its last move (`fog`), by a piece it saw
//! (`sight`), on time (`flag`), or on material when the game reaches the
//! ply cap (`material`); with the number of moves it had, at its last move,
//! that left its king out of reach of every enemy piece on the real board.
//!
//! With `--opponent-level` the opponent is this engine instead, at a level
//! or a frozen yardstick (`hard-before-deepening`: Hard as it was before it
//! weighed threatening candidates and searched deeper in its spare time;
//! `prior-hard`), in this process and told only its own
//! [`FogObservation`], as the engine is: fog of war between two builds of
//! the player without a second binary.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _};
use clap::Args;
use fogblast_engine::fog::{FORMER_HARD, PRIOR_HARD};
use fogblast_engine::{best_fog_move, FogLimits, FogObservation, FogSettings, Level};
use fogblast_rules::{Bitboard, CastlingMode, Color, Game, Move, Position, Role, Variant};
use serde_json::{json, Value};

#[derive(Debug, Args)]
pub struct FogMatchArgs {
    /// The engine's fog level.
    #[arg(long, default_value = "hard")]
    level: Level,
    /// Games (the engine is white in even-numbered ones).
    #[arg(long, default_value_t = 40)]
    games: usize,
    /// Python interpreter that runs the outside player (the venv's, with
    /// misty installed).
    #[arg(long, default_value = "python3")]
    python: String,
    /// The outside player's script.
    #[arg(long, default_value = "tests/python/misty/misty_player.py")]
    player: String,
    /// The outside player's search time a move, in seconds.
    #[arg(long, default_value_t = 1.0)]
    opponent_time: f64,
    /// The engine's budget a move in milliseconds (the level's own cap
    /// when it is lower).
    #[arg(long, default_value_t = 1000)]
    movetime_ms: u64,
    /// A move taking longer than this many seconds loses on time.
    #[arg(long, default_value_t = 10.0)]
    flag_seconds: f64,
    /// Plies after which a game is adjudicated on material (3 points
    /// ahead wins, else a draw).
    #[arg(long, default_value_t = 300)]
    max_plies: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also write one JSON line a game (moves, result, classification) here.
    #[arg(long)]
    record: Option<std::path::PathBuf>,
    /// Play the engine itself as the opponent instead of the outside
    /// player: easy, medium, hard, hard-before-deepening (Hard before its
    /// threat weight and deeper search), hard-without-deepening,
    /// hard-without-threat-weight or prior-hard. It
    /// gets the same budget a move (`--movetime-ms`, under its own cap).
    #[arg(long)]
    opponent_level: Option<String>,
    /// Play the engine's side with these settings (the names
    /// `--opponent-level` takes) instead of its level's.
    #[arg(long)]
    engine_settings: Option<String>,
}

/// The outside player reported an error of its own (misty's belief can
/// lose every position, which it calls a soundness violation): the game is
/// not scored, and a fresh player takes the next one.
#[derive(Debug)]
struct OutsideFailure(String);

impl std::fmt::Display for OutsideFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the outside player failed: {} (see its stderr)", self.0)
    }
}

impl std::error::Error for OutsideFailure {}

/// The outside player's process and its pipes.
struct Outside {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Outside {
    fn spawn(args: &FogMatchArgs) -> anyhow::Result<Outside> {
        let mut child = Command::new(&args.python)
            .arg(&args.player)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {} {}", args.python, args.player))?;
        let input = child.stdin.take().context("the player's stdin")?;
        let output = BufReader::new(child.stdout.take().context("the player's stdout")?);
        Ok(Outside { child, input, output })
    }

    fn ask(&mut self, msg: &Value) -> anyhow::Result<Value> {
        writeln!(self.input, "{msg}")?;
        self.input.flush()?;
        let mut line = String::new();
        if self.output.read_line(&mut line)? == 0 {
            bail!("the outside player closed its output (see its stderr)");
        }
        let reply: Value = serde_json::from_str(&line).with_context(|| format!("the player's reply {line:?}"))?;
        if let Some(err) = reply.get("error") {
            return Err(OutsideFailure(err.to_string()).into());
        }
        Ok(reply)
    }
}

impl Drop for Outside {
    fn drop(&mut self) {
        let _ = writeln!(self.input, "{}", json!({"cmd": "quit"}));
        let _ = self.input.flush();
        let _ = self.child.wait();
    }
}

/// The fog player's settings an `--opponent-level` names.
fn opponent_settings(name: &str) -> anyhow::Result<FogSettings> {
    Ok(match name.to_ascii_lowercase().as_str() {
        "hard-before-deepening" => FORMER_HARD,
        // Hard less one of its two latest changes, to measure each alone.
        "hard-without-deepening" => FogSettings { max_depth: FORMER_HARD.max_depth, ..Level::Hard.fog_settings() },
        "hard-without-threat-weight" => FogSettings { threat_weight: 1, ..Level::Hard.fog_settings() },
        "prior-hard" => PRIOR_HARD,
        other => other.parse::<Level>()?.fog_settings(),
    })
}

/// Who plays against the engine: the outside player, or the engine itself
/// at other settings with its own view of the game.
enum Opponent {
    Outside(Outside),
    Engine { settings: FogSettings, view: FogObservation },
}

impl Opponent {
    fn spawn(args: &FogMatchArgs) -> anyhow::Result<Opponent> {
        Ok(match &args.opponent_level {
            Some(name) => {
                Opponent::Engine { settings: opponent_settings(name)?, view: FogObservation::new(Color::White) }
            }
            None => Opponent::Outside(Outside::spawn(args)?),
        })
    }

    fn new_game(&mut self, color: Color, seed: u64, time: f64) -> anyhow::Result<()> {
        match self {
            Opponent::Outside(outside) => {
                let colour = if color == Color::White { "white" } else { "black" };
                outside.ask(&json!({"cmd": "new", "color": colour, "seed": seed, "time": time}))?;
            }
            Opponent::Engine { view, .. } => *view = FogObservation::new(color),
        }
        Ok(())
    }

    /// Tells the opponent, playing `color`, what it sees after `m` took
    /// `before` to `after`.
    fn observe(&mut self, before: &Position, after: &Position, m: Move, color: Color) -> anyhow::Result<()> {
        match self {
            Opponent::Outside(outside) => {
                outside.ask(&outside_observation(before, after, m, color))?;
            }
            Opponent::Engine { view, .. } => view.observe_move(&mut before.clone(), m),
        }
        Ok(())
    }

    /// The opponent's move in `pos`, which it sees only through its view.
    fn choose(&mut self, pos: &Position, args: &FogMatchArgs, seed: u64) -> anyhow::Result<Move> {
        let text = match self {
            Opponent::Outside(outside) => {
                let legal: Vec<String> =
                    pos.legal_moves().iter().map(|m| m.to_uci(CastlingMode::Standard).to_string()).collect();
                let reply = outside.ask(&json!({"cmd": "go", "legal": legal}))?;
                reply["move"].as_str().context("a move in the player's reply")?.to_owned()
            }
            Opponent::Engine { settings, view } => {
                let movetime = Duration::from_millis(args.movetime_ms).min(settings.max_time);
                let limits = FogLimits { settings: *settings, movetime: Some(movetime), seed };
                best_fog_move(view, &limits, &AtomicBool::new(false))?.best.to_string()
            }
        };
        pos.parse_uci(&text.parse()?).with_context(|| format!("the opponent chose {text}, not legal"))
    }

    /// Observations the outside player's own rules give differently from
    /// the ones it was told (an engine opponent is told the referee's own
    /// cut: nothing to compare).
    fn verify(&mut self, moves: &[String]) -> anyhow::Result<u64> {
        match self {
            Opponent::Outside(outside) => {
                let verify = outside.ask(&json!({"cmd": "verify", "moves": moves}))?;
                Ok(verify["mismatches"].as_u64().unwrap_or(u64::MAX))
            }
            Opponent::Engine { .. } => Ok(0),
        }
    }
}

/// What the outside player is told after a ply: misty's observation.
fn outside_observation(before: &Position, after: &Position, m: Move, color: Color) -> Value {
    let board = after.board();
    let visible = after.visible_squares(color);
    let pieces: Vec<Value> = visible
        .into_iter()
        .filter_map(|sq| board.piece_at(sq).map(|p| (sq, p)))
        .map(|(sq, p)| {
            let colour = if p.color == Color::White { "white" } else { "black" };
            json!([sq.index(), p.role.char().to_ascii_uppercase().to_string(), colour])
        })
        .collect();
    let lost = before.board().by_color(color) - board.by_color(color);
    let own_capture = lost.first();
    let landing = own_capture.filter(|&sq| board.color_at(sq) == Some(!color));
    let own_move = (before.turn() == color).then(|| m.to_uci(CastlingMode::Standard).to_string());
    json!({
        "cmd": "observe",
        "own_move": own_move,
        "visible": visible.0.to_string(),
        "pieces": pieces,
        "own_capture": own_capture.map(|sq| sq.index()),
        "opp_landing": landing.map(|sq| sq.index()),
    })
}

/// Material in pawns (1, 3, 3, 5, 9), `color`'s less the other side's.
fn material_lead(pos: &Position, color: Color) -> i32 {
    let worth = |c: Color| -> i32 {
        [Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen]
            .into_iter()
            .map(|role| fogblast_puzzles::fog::value(role) / 100 * pos.board().by_piece(role.of(c)).count() as i32)
            .sum()
    };
    worth(color) - worth(!color)
}

/// Moves of the side to move that leave its king out of reach of every
/// enemy piece on the real board, and all its moves.
fn safe_moves(pos: &Position) -> (usize, usize) {
    let us = pos.turn();
    let moves = pos.legal_moves();
    let safe = moves
        .iter()
        .filter(|&&m| {
            let mut child = *pos;
            child.play_unchecked(m);
            let board = child.board();
            board.king_of(us).is_some_and(|k| board.attackers(k, !us, board.occupied()).is_empty())
        })
        .count();
    (safe, moves.len())
}

/// One game's result, from the engine's side.
struct GameRecord {
    engine: Color,
    /// 1 win, 0 draw, -1 loss for the engine.
    result: i32,
    /// How the game ended (see the module's notes).
    how: String,
    /// Safe moves and all moves the loser had at its last move, when a
    /// king was taken.
    loser_safe: Option<(usize, usize)>,
    plies: usize,
    material_at_40: Option<i32>,
    engine_seconds: Vec<f64>,
    outside_seconds: Vec<f64>,
    mismatches: u64,
    moves: Vec<String>,
}

/// The game's state as the referee keeps it.
struct Table {
    game: Game,
    engine_view: FogObservation,
    engine: Color,
    /// Each side's sight when it chose its latest move, and the safe moves
    /// it had then: what a capture of its king is judged by.
    last_sight: [Bitboard; 2],
    last_safe: [(usize, usize); 2],
    flagged: Option<Color>,
}

fn play_game(args: &FogMatchArgs, outside: &mut Opponent, index: usize) -> anyhow::Result<GameRecord> {
    let engine = if index.is_multiple_of(2) { Color::White } else { Color::Black };
    let seed = args.seed.wrapping_mul(1_000_003).wrapping_add(index as u64);
    outside.new_game(!engine, seed, args.opponent_time)?;
    let mut table = Table {
        game: Game::new(Position::new(Variant::Fog)),
        engine_view: FogObservation::new(engine),
        engine,
        last_sight: [Bitboard::FULL; 2],
        last_safe: [(0, 0); 2],
        flagged: None,
    };
    let mut record = GameRecord {
        engine,
        result: 0,
        how: String::new(),
        loser_safe: None,
        plies: 0,
        material_at_40: None,
        engine_seconds: Vec::new(),
        outside_seconds: Vec::new(),
        mismatches: 0,
        moves: Vec::new(),
    };
    let stop = AtomicBool::new(false);
    let flag = Duration::from_secs_f64(args.flag_seconds);
    while table.game.outcome().is_none() && table.game.ply() < args.max_plies {
        let pos = *table.game.position();
        if table.game.ply() == 40 {
            record.material_at_40 = Some(material_lead(&pos, engine));
        }
        let side = pos.turn();
        table.last_safe[side.index()] = safe_moves(&pos);
        let started = Instant::now();
        let m = if side == engine {
            let mut limits = args.level.fog_limits(
                None,
                Some(Duration::from_millis(args.movetime_ms)),
                seed ^ pos.fullmoves() as u64,
            );
            if let Some(name) = &args.engine_settings {
                limits.settings = opponent_settings(name)?;
                limits.movetime = limits.movetime.map(|t| t.min(limits.settings.max_time));
            }
            let report = best_fog_move(&table.engine_view, &limits, &stop)?;
            record.engine_seconds.push(started.elapsed().as_secs_f64());
            pos.parse_uci(&report.best).with_context(|| format!("the engine chose {}, not legal", report.best))?
        } else {
            let m = outside.choose(&pos, args, seed.rotate_left(29) ^ pos.fullmoves() as u64)?;
            record.outside_seconds.push(started.elapsed().as_secs_f64());
            m
        };
        if started.elapsed() > flag {
            table.flagged = Some(side);
            break;
        }
        let uci = m.to_uci(CastlingMode::Standard).to_string();
        let who = if side == engine { "engine" } else { "outside" };
        eprintln!("game {index} ply {}: {who} {uci} in {:.2} s", table.game.ply() + 1, started.elapsed().as_secs_f64());
        play_ply(&mut table, outside, m)?;
        record.moves.push(uci);
    }
    record.mismatches = outside.verify(&record.moves)?;
    judge(&table, &mut record);
    Ok(record)
}

/// Plays `m` on the real game and tells each side what it sees.
fn play_ply(table: &mut Table, outside: &mut Opponent, m: Move) -> anyhow::Result<()> {
    let before = *table.game.position();
    let side = before.turn();
    let mut after = before;
    table.engine_view.observe_move(&mut after, m);
    // A taken king ends the game: there is nothing more to tell.
    let kings = Color::ALL.into_iter().all(|c| after.board().king_of(c).is_some());
    if kings {
        outside.observe(&before, &after, m, !table.engine)?;
    }
    table.last_sight[side.index()] = before.visible_squares(side);
    table.game.play(m)?;
    Ok(())
}

/// The result and, for a king taken, whether the taker was in the loser's
/// sight when the loser chose its last move.
fn judge(table: &Table, record: &mut GameRecord) {
    let pos = table.game.position();
    record.plies = table.game.ply();
    let engine = table.engine;
    if let Some(flagged) = table.flagged {
        record.result = if flagged == engine { -1 } else { 1 };
        record.how = "flag".into();
        return;
    }
    match table.game.outcome() {
        Some(outcome) => {
            let Some(winner) = outcome.winner() else {
                record.how = format!("draw ({outcome:?})");
                return;
            };
            record.result = if winner == engine { 1 } else { -1 };
            let loser = !winner;
            let taker = table.game.moves().last().map(|m| m.from());
            let seen = taker.is_some_and(|sq| table.last_sight[loser.index()].contains(sq));
            record.how = if seen { "sight".into() } else { "fog".into() };
            record.loser_safe = Some(table.last_safe[loser.index()]);
        }
        None => {
            let lead = material_lead(pos, engine);
            record.result = lead.signum() * i32::from(lead.abs() >= 3);
            record.how = if record.result == 0 { format!("draw (ply cap, {lead:+})") } else { "material".into() };
        }
    }
}

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

fn print_game(index: usize, record: &GameRecord) {
    let result = ["loss", "draw", "win"][(record.result + 1) as usize];
    let safe = record.loser_safe.map_or(String::new(), |(s, n)| format!(", loser had {s} safe of {n}"));
    let at_40 = record.material_at_40.map_or("-".into(), |m| format!("{m:+}"));
    println!(
        "game {index}: engine {} {result} by {}{safe}, {} plies, material at ply 40 {at_40}, engine {:.2} s/move (max {:.2}), outside {:.2} s/move, {} observation mismatches",
        record.engine,
        record.how,
        record.plies,
        mean(&record.engine_seconds),
        record.engine_seconds.iter().copied().fold(0.0, f64::max),
        mean(&record.outside_seconds),
        record.mismatches,
    );
}

fn write_record(path: &std::path::Path, index: usize, record: &GameRecord) -> anyhow::Result<()> {
    let line = json!({
        "game": index,
        "engine": record.engine.to_string(),
        "result": record.result,
        "how": record.how,
        "loser_safe": record.loser_safe,
        "plies": record.plies,
        "material_at_40": record.material_at_40,
        "engine_seconds": record.engine_seconds,
        "outside_seconds": record.outside_seconds,
        "mismatches": record.mismatches,
        "moves": record.moves.join(" "),
    });
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    writeln!(file, "{line}")?;
    Ok(())
}

fn summarize(args: &FogMatchArgs, records: &[GameRecord], elapsed: Duration) {
    let wins = records.iter().filter(|r| r.result == 1).count();
    let losses = records.iter().filter(|r| r.result == -1).count();
    let draws = records.len() - wins - losses;
    let score = (wins as f64 + draws as f64 / 2.0) / records.len().max(1) as f64 * 100.0;
    let count = |how: &str| records.iter().filter(|r| r.result == -1 && r.how == how).count();
    let unsafe_fog =
        records.iter().filter(|r| r.result == -1 && r.how == "fog" && r.loser_safe.is_some_and(|(s, _)| s > 0)).count();
    let at_40: Vec<i32> = records.iter().filter_map(|r| r.material_at_40).collect();
    let engine_times: Vec<f64> = records.iter().flat_map(|r| r.engine_seconds.iter().copied()).collect();
    let outside_times: Vec<f64> = records.iter().flat_map(|r| r.outside_seconds.iter().copied()).collect();
    let opponent = args.opponent_level.as_deref().unwrap_or("outside player");
    let engine = args.engine_settings.clone().unwrap_or_else(|| args.level.to_string());
    println!(
        "{engine} vs {opponent}: {} games, {wins} wins, {draws} draws, {losses} losses, score {score:.1}%",
        records.len()
    );
    println!(
        "losses: {} king taken from the fog ({unsafe_fog} while a safe move existed), {} king taken in sight, {} flag, {} material",
        count("fog"),
        count("sight"),
        count("flag"),
        count("material"),
    );
    println!(
        "material at ply 40 (engine's lead): ahead in {}, even in {}, behind in {} of {} games that reached it",
        at_40.iter().filter(|&&m| m > 0).count(),
        at_40.iter().filter(|&&m| m == 0).count(),
        at_40.iter().filter(|&&m| m < 0).count(),
        at_40.len()
    );
    println!(
        "engine {:.3} s/move (max {:.3}), outside {:.3} s/move, observation mismatches {}, {:.0} s",
        mean(&engine_times),
        engine_times.iter().copied().fold(0.0, f64::max),
        mean(&outside_times),
        records.iter().map(|r| r.mismatches).sum::<u64>(),
        elapsed.as_secs_f64()
    );
}

pub fn run(args: &FogMatchArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut outside = Opponent::spawn(args)?;
    let mut records = Vec::with_capacity(args.games);
    let mut aborted = 0;
    for index in 0..args.games {
        let record = match play_game(args, &mut outside, index) {
            Ok(record) => record,
            Err(err) if err.downcast_ref::<OutsideFailure>().is_some() => {
                println!("game {index}: not scored: {err}");
                aborted += 1;
                outside = Opponent::spawn(args)?;
                continue;
            }
            Err(err) => return Err(err),
        };
        print_game(index, &record);
        if let Some(path) = &args.record {
            write_record(path, index, &record)?;
        }
        records.push(record);
    }
    summarize(args, &records, started.elapsed());
    println!("games not scored (the outside player failed): {aborted}");
    Ok(())
}
