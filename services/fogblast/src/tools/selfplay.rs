//! `fogblast-tools selfplay`: matches between two engine levels, used to
//! calibrate the levels. Openings are random but seeded, and each is played
//! twice with colours swapped so neither level gets the better side of it.
//!
//! In fog of war each side is given only its own observations (the
//! referee's cut of the game), never the position, and either side may be
//! the `baseline`: a random capture among those in sight, else a random
//! move. Fog games are played to node budgets rather than times unless a
//! clock is given, so a match gives the same result on a busy machine. In
//! atomic and standard chess either side may be the `newcomer`: it blows up
//! the enemy king when it can, else plays a random move (Easy's yardstick).

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Args;
use fogblast_engine::fog::{baseline_move, FogObservation, PRIOR_HARD};
use fogblast_engine::{best_fog_move, newcomer_move, Clock, FogLimits, FogSettings, Level, Searcher, TimeBudget};
use fogblast_rules::{CastlingMode, Color, Game, Position, Variant};

/// One side of a match: a level, (fog of war only) the baseline, or
/// (atomic and standard only) the newcomer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Player {
    Level(Level),
    Baseline,
    Newcomer,
    /// Fog of war only: Hard as it was before its king guard (12 samples,
    /// king care by share of candidates only), to measure the guard by:
    /// the prior Hard's settings with the guard off.
    OldHard,
    /// Fog of war only: Hard as it stood before it spent its time, its
    /// settings kept, to measure its successor by.
    PriorHard,
}

/// [`Player::OldHard`]'s settings: the prior Hard's, without the king guard.
const OLD_FOG_HARD: FogSettings = FogSettings { king_guard: false, ..PRIOR_HARD };

impl std::str::FromStr for Player {
    type Err = String;

    fn from_str(s: &str) -> Result<Player, String> {
        if s.eq_ignore_ascii_case("baseline") {
            return Ok(Player::Baseline);
        }
        if s.eq_ignore_ascii_case("newcomer") {
            return Ok(Player::Newcomer);
        }
        if s.eq_ignore_ascii_case("old-hard") {
            return Ok(Player::OldHard);
        }
        if s.eq_ignore_ascii_case("prior-hard") {
            return Ok(Player::PriorHard);
        }
        s.parse().map(Player::Level).map_err(|err: fogblast_engine::ParseLevelError| {
            format!(
                "{err}, baseline (fog of war: a random visible capture, else a random move) \
                 newcomer (a king explosion if any, else a random move), old-hard (fog of war: \
                 Hard before its king guard) or prior-hard (fog of war: Hard before it spent its time)"
            )
        })
    }
}

impl std::fmt::Display for Player {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Player::Level(level) => level.fmt(f),
            Player::Baseline => f.write_str("baseline"),
            Player::Newcomer => f.write_str("newcomer"),
            Player::OldHard => f.write_str("old-hard"),
            Player::PriorHard => f.write_str("prior-hard"),
        }
    }
}

#[derive(Debug, Args)]
pub struct SelfplayArgs {
    /// Level of the first player (white in even-numbered games); in fog
    /// of war also `baseline`.
    #[arg(long)]
    first: Player,
    /// Level of the second player.
    #[arg(long)]
    second: Player,
    /// Games in the match (rounded up to an even number).
    #[arg(long, default_value_t = 100)]
    games: usize,
    #[arg(long, default_value = "atomic")]
    variant: Variant,
    /// Clock of each side, as MINUTES+SECONDS like 1+0.5; without it each
    /// move gets the level's own time cap.
    #[arg(long)]
    clock: Option<String>,
    /// Random plies played before the engines take over.
    #[arg(long, default_value_t = 4)]
    opening_plies: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Games played at once.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// A game still running after this many plies is drawn.
    #[arg(long, default_value_t = 300)]
    max_plies: usize,
}

#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    first_wins: usize,
    second_wins: usize,
    draws: usize,
}

fn parse_clock(text: &str) -> anyhow::Result<(Duration, Duration)> {
    let (minutes, seconds) = text.split_once('+').context("clock must look like 1+0.5")?;
    let initial = Duration::from_secs_f64(minutes.parse::<f64>()? * 60.0);
    let increment = Duration::from_secs_f64(seconds.parse::<f64>()?);
    Ok((initial, increment))
}

/// SplitMix64, for seeded openings.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn opening(variant: Variant, plies: usize, seed: u64) -> Game {
    // Each attempt draws new moves; one that ends the game is thrown away.
    let mut state = seed;
    loop {
        let mut game = Game::new(Position::new(variant));
        for _ in 0..plies {
            let moves = game.position().legal_moves();
            if moves.is_empty() {
                break;
            }
            state = mix(state);
            let m = moves[(state % moves.len() as u64) as usize];
            game.play(m).expect("generated moves are legal");
        }
        if game.outcome().is_none() {
            return game;
        }
    }
}

/// Plays one game; returns the winner (none for a draw, or a game cut
/// off at `max_plies`) and the number of plies.
fn play_game(
    args: &SelfplayArgs,
    white: Player,
    black: Player,
    index: usize,
) -> anyhow::Result<(Option<Color>, usize)> {
    if args.variant == Variant::Fog {
        return play_fog_game(args, white, black, index);
    }
    let clock = args.clock.as_deref().map(parse_clock).transpose()?;
    let mut game = opening(args.variant, args.opening_plies, mix(args.seed ^ (index as u64 / 2)));
    let mut searchers = [Searcher::new(16), Searcher::new(16)];
    let mut remaining = [clock.map_or(Duration::ZERO, |c| c.0); 2];
    let stop = AtomicBool::new(false);
    loop {
        if let Some(outcome) = game.outcome() {
            return Ok((outcome.winner(), game.ply()));
        }
        if game.ply() >= args.max_plies {
            return Ok((None, game.ply()));
        }
        let pos = *game.position();
        let side = pos.turn();
        let player = if side == Color::White { white } else { black };
        let seed = mix(args.seed ^ index as u64 ^ (game.ply() as u64) << 20);
        let started = Instant::now();
        let best = match player {
            Player::Level(level) => {
                let side_clock = clock.map(|(_, increment)| Clock {
                    remaining: remaining[side.index()],
                    increment,
                    moves_to_go: None,
                });
                let limits = level.limits(side_clock, None, seed);
                searchers[side.index()].search(&pos, game.history_keys(), &limits, &stop, &mut |_| {}).best
            }
            Player::Newcomer => newcomer_move(&pos, seed),
            Player::Baseline | Player::OldHard | Player::PriorHard => anyhow::bail!("{player} plays fog of war only"),
        };
        let spent = started.elapsed();
        if let Some((_, increment)) = clock {
            let left = &mut remaining[side.index()];
            if spent > *left {
                return Ok((pos.outcome_on_timeout(side).winner(), game.ply()));
            }
            *left = *left - spent + increment;
        }
        let m = best.context("a position with moves gave no best move")?;
        game.play(m)?;
    }
}

/// Plays one fog-of-war game: each engine move is chosen from that side's
/// observation alone.
fn play_fog_game(
    args: &SelfplayArgs,
    white: Player,
    black: Player,
    index: usize,
) -> anyhow::Result<(Option<Color>, usize)> {
    let clock = args.clock.as_deref().map(parse_clock).transpose()?;
    let mut game = opening(Variant::Fog, args.opening_plies, mix(args.seed ^ (index as u64 / 2)));
    let mut views = [FogObservation::from_game(&game, Color::White), FogObservation::from_game(&game, Color::Black)];
    let mut remaining = [clock.map_or(Duration::ZERO, |c| c.0); 2];
    let stop = AtomicBool::new(false);
    loop {
        if let Some(outcome) = game.outcome() {
            return Ok((outcome.winner(), game.ply()));
        }
        if game.ply() >= args.max_plies {
            return Ok((None, game.ply()));
        }
        let pos = *game.position();
        let side = pos.turn();
        let player = if side == Color::White { white } else { black };
        let seed = mix(args.seed ^ index as u64 ^ (game.ply() as u64) << 20);
        let started = Instant::now();
        let m = match player {
            Player::Baseline => baseline_move(&pos.legal_moves(), seed).context("no move in a game not over")?,
            Player::Newcomer => anyhow::bail!("the newcomer plays atomic and standard chess only"),
            Player::Level(_) | Player::OldHard | Player::PriorHard => {
                let frozen = if player == Player::PriorHard { PRIOR_HARD } else { OLD_FOG_HARD };
                let limits = match (clock, player) {
                    (Some((_, increment)), Player::Level(level)) => {
                        let side_clock = Clock { remaining: remaining[side.index()], increment, moves_to_go: None };
                        level.fog_limits(Some(side_clock), None, seed)
                    }
                    (Some((_, increment)), _) => {
                        let side_clock = Clock { remaining: remaining[side.index()], increment, moves_to_go: None };
                        let movetime = TimeBudget::from_clock(&side_clock, 0).hard.min(frozen.max_time);
                        FogLimits { settings: frozen, movetime: Some(movetime), seed }
                    }
                    // Calibration: node and sample budgets only.
                    (None, Player::Level(level)) => FogLimits { settings: level.fog_settings(), movetime: None, seed },
                    (None, _) => FogLimits { settings: frozen, movetime: None, seed },
                };
                let report = best_fog_move(&views[side.index()], &limits, &stop)?;
                let uci = report.best;
                pos.parse_uci(&uci).with_context(|| format!("the engine chose {uci}, not a legal move"))?
            }
        };
        let spent = started.elapsed();
        if let Some((_, increment)) = clock {
            let left = &mut remaining[side.index()];
            if spent > *left {
                return Ok((pos.outcome_on_timeout(side).winner(), game.ply()));
            }
            *left = *left - spent + increment;
        }
        for view in &mut views {
            let mut before = pos;
            view.observe_move(&mut before, m);
        }
        game.play(m).with_context(|| format!("{} in {}", m.to_uci(CastlingMode::Standard), pos.fen()))?;
    }
}

pub fn run(args: &SelfplayArgs) -> anyhow::Result<()> {
    for fog_only in [Player::Baseline, Player::OldHard, Player::PriorHard] {
        if args.variant != Variant::Fog && [args.first, args.second].contains(&fog_only) {
            anyhow::bail!("{fog_only} plays fog of war only");
        }
    }
    if args.variant == Variant::Fog && [args.first, args.second].contains(&Player::Newcomer) {
        anyhow::bail!("the newcomer plays atomic and standard chess only");
    }
    let games = args.games.div_ceil(2) * 2;
    let next = AtomicUsize::new(0);
    let tally = Mutex::new(Tally::default());
    let plies = AtomicUsize::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let workers: Vec<_> = (0..args.threads.max(1))
            .map(|_| {
                scope.spawn(|| -> anyhow::Result<()> {
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        if index >= games {
                            return Ok(());
                        }
                        let first_is_white = index.is_multiple_of(2);
                        let (white, black) =
                            if first_is_white { (args.first, args.second) } else { (args.second, args.first) };
                        let (winner, length) = play_game(args, white, black, index)?;
                        plies.fetch_add(length, Ordering::Relaxed);
                        let mut t = tally.lock().expect("no thread panics holding the tally");
                        match winner {
                            None => t.draws += 1,
                            Some(color) if (color == Color::White) == first_is_white => t.first_wins += 1,
                            Some(_) => t.second_wins += 1,
                        }
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.join().expect("selfplay worker panicked")?;
        }
        Ok(())
    })?;
    let t = tally.into_inner().expect("tally lock");
    let played = t.first_wins + t.second_wins + t.draws;
    let score = (t.first_wins as f64 + t.draws as f64 / 2.0) / played as f64;
    let elo = elo_difference(score);
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{} {} vs {}: games {played} first wins {} second wins {} draws {} score {:.1}% elo {elo:+.0} plies {} \
         moves per game {:.1} time {:.0}s",
        args.variant,
        args.first,
        args.second,
        t.first_wins,
        t.second_wins,
        t.draws,
        score * 100.0,
        plies.load(Ordering::Relaxed),
        plies.load(Ordering::Relaxed) as f64 / played as f64 / 2.0,
        started.elapsed().as_secs_f64(),
    )?;
    Ok(())
}

/// The Elo difference that expects `score` (0-1), clamped at the ends.
fn elo_difference(score: f64) -> f64 {
    let s = score.clamp(0.001, 0.999);
    -400.0 * (1.0 / s - 1.0).log10()
}
