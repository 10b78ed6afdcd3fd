//! `fogblast-tools puzzles`: cuts puzzles from games. It plays seeded
//! engine self-play games (a few random opening plies, then a shallow
//! search with seeded noise, so the sides make the mistakes puzzles are
//! made of) and, with `--database-url`, replays archived atomic and fog
//! games too. At every position it asks `fogblast-puzzles` whether the
//! side to move has a unique solution: in atomic chess a winning line the
//! engine confirms move by move, in fog of war a move that wins or is safe
//! whatever the fog hides. Each puzzle found is checked again from its
//! stored form, given themes and a starting rating, and written as one
//! JSON line. The starter set in `crates/puzzles/data/starter.jsonl` is
//! this command's output (docs/puzzles.md).

use std::collections::HashSet;
use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;
use fogblast_engine::{Limits, Searcher};
use fogblast_puzzles::atomic::{self, Check};
use fogblast_puzzles::view::parse_view;
use fogblast_puzzles::{fog, puzzle_id, uci, Puzzle};
use fogblast_rules::{Position, Variant};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[derive(Debug, Args)]
pub struct PuzzlesArgs {
    /// Atomic puzzles wanted.
    #[arg(long, default_value_t = 30)]
    atomic: usize,
    /// Fog puzzles wanted.
    #[arg(long, default_value_t = 30)]
    fog: usize,
    /// The most self-play games played per variant.
    #[arg(long, default_value_t = 200)]
    max_games: usize,
    /// The most puzzles cut from one game.
    #[arg(long, default_value_t = 2)]
    per_game: usize,
    /// The largest share of each variant's puzzles one kind (the first
    /// theme: kingExplosion, advantage, defence, kingCapture, safeCapture,
    /// trade, escape...) may take, so the set is varied.
    #[arg(long, default_value_t = 0.4)]
    theme_share: f64,
    /// Keep only puzzles with this theme (e.g. connectedKings).
    #[arg(long)]
    only_theme: Option<String>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// An archive (postgres:// or sqlite:) whose atomic and fog games are
    /// searched before self-play.
    #[arg(long)]
    database_url: Option<String>,
    /// Where to write the puzzles, one JSON object a line.
    #[arg(long)]
    out: PathBuf,
}

/// A game to cut puzzles from: its start and moves.
struct Source {
    name: String,
    variant: Variant,
    start: Position,
    moves: Vec<String>,
}

/// The puzzles gathered so far, by variant.
#[derive(Default)]
struct Found {
    atomic: Vec<Puzzle>,
    fog: Vec<Puzzle>,
    /// Puzzles found of each variant and kind.
    kinds: std::collections::HashMap<(Variant, String), usize>,
    positions: HashSet<String>,
}

pub fn run(args: &PuzzlesArgs) -> anyhow::Result<()> {
    let started = std::time::Instant::now();
    let mut found = Found::default();
    if let Some(url) = &args.database_url {
        for source in archived_games(url)? {
            cut(args, &source, &mut found);
        }
    }
    for variant in [Variant::Atomic, Variant::Fog] {
        for game in 0..args.max_games {
            if wanted(args, &found, variant) == 0 {
                break;
            }
            let source = selfplay_game(variant, args.seed.wrapping_mul(1_000_003).wrapping_add(game as u64));
            cut(args, &source, &mut found);
            eprintln!("{} game {game}: {} atomic, {} fog", variant.name(), found.atomic.len(), found.fog.len());
        }
    }
    let mut out = std::fs::File::create(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    for puzzle in found.atomic.iter().chain(&found.fog) {
        writeln!(out, "{}", serde_json::to_string(puzzle)?)?;
    }
    println!(
        "{} atomic and {} fog puzzles written to {} in {:.1} s",
        found.atomic.len(),
        found.fog.len(),
        args.out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn wanted(args: &PuzzlesArgs, found: &Found, variant: Variant) -> usize {
    match variant {
        Variant::Atomic => args.atomic.saturating_sub(found.atomic.len()),
        _ => args.fog.saturating_sub(found.fog.len()),
    }
}

/// Tries every position of `source` (after its opening) for a puzzle.
fn cut(args: &PuzzlesArgs, source: &Source, found: &mut Found) {
    let mut pos = source.start;
    let mut taken = 0;
    let mut skip_until = 8;
    for (ply, text) in source.moves.iter().enumerate() {
        if taken >= args.per_game || wanted(args, found, source.variant) == 0 {
            return;
        }
        if ply >= skip_until {
            let puzzle = match source.variant {
                Variant::Atomic => atomic_puzzle(&pos, source, ply),
                _ => fog_puzzle(&pos, source, ply),
            };
            let wanted_total = if source.variant == Variant::Atomic { args.atomic } else { args.fog };
            let room = |p: &Puzzle| {
                let have = found.kinds.get(&(source.variant, p.themes[0].clone())).copied().unwrap_or(0);
                (have + 1) as f64 <= (args.theme_share * wanted_total as f64).max(1.0)
            };
            let themed = |p: &Puzzle| args.only_theme.as_ref().is_none_or(|theme| p.themes.contains(theme));
            let puzzle = puzzle.filter(|p| themed(p) && room(p) && !found.positions.contains(&p.fen));
            if let Some(puzzle) = puzzle {
                found.positions.insert(puzzle.fen.clone());
                *found.kinds.entry((source.variant, puzzle.themes[0].clone())).or_default() += 1;
                match source.variant {
                    Variant::Atomic => found.atomic.push(puzzle),
                    _ => found.fog.push(puzzle),
                }
                taken += 1;
                skip_until = ply + 6;
            }
        }
        let Some(m) = fogblast_puzzles::parse_move(&pos, text, None) else { return };
        pos.play_unchecked(m);
        if pos.outcome().is_some() {
            return;
        }
    }
}

fn atomic_puzzle(pos: &Position, source: &Source, ply: usize) -> Option<Puzzle> {
    let check = Check::STANDARD;
    let line = atomic::find_line(pos, &check)?;
    let first = atomic::unique_move(&mut Searcher::new(16), pos, &check).ok()?;
    let themes = atomic::themes(pos, &line, &first);
    let solution: Vec<String> = line.iter().map(|&m| uci(m)).collect();
    let fen = pos.fen();
    let puzzle = Puzzle {
        id: puzzle_id("atomic", &fen, &solution),
        variant: "atomic".to_owned(),
        rating: atomic::initial_rating(pos, &line, &themes),
        fen,
        solution,
        themes,
        source: format!("{} ply {ply}", source.name),
    };
    atomic::verify(&puzzle, &check).ok().map(|()| puzzle)
}

fn fog_puzzle(pos: &Position, source: &Source, ply: usize) -> Option<Puzzle> {
    let fen = pos.fog_view(pos.turn()).fen();
    let solution = fog::unique_move(&parse_view(&fen).ok()?)?;
    let moves = vec![uci(solution.best)];
    let puzzle = Puzzle {
        id: puzzle_id("fog", &fen, &moves),
        variant: "fog".to_owned(),
        fen,
        solution: moves,
        themes: fog::themes(&solution),
        rating: fog::initial_rating(&solution),
        source: format!("{} ply {ply}", source.name),
    };
    fog::verify(&puzzle).ok().map(|_| puzzle)
}

/// One seeded self-play game: six random plies, then depth-3 searches with
/// up to 120 centipawns of noise, and a random move one time in eight, to
/// at most 160 plies.
fn selfplay_game(variant: Variant, seed: u64) -> Source {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut searcher = Searcher::new(8);
    let mut pos = Position::new(variant);
    let mut moves = Vec::new();
    while moves.len() < 160 && pos.outcome().is_none() {
        let legal = pos.legal_moves();
        let m = if moves.len() < 6 || rng.random_range(0..8) == 0 {
            legal[rng.random_range(0..legal.len())]
        } else {
            let limits = Limits { depth: Some(3), eval_noise: 120, seed: rng.random(), ..Limits::default() };
            let report = searcher.search(&pos, &[], &limits, &std::sync::atomic::AtomicBool::new(false), &mut |_| {});
            report.best.unwrap_or(legal[0])
        };
        moves.push(uci(m));
        pos.play_unchecked(m);
    }
    Source { name: format!("selfplay {} seed {seed}", variant.name()), variant, start: Position::new(variant), moves }
}

/// Atomic and fog games from an archive, newest first.
fn archived_games(url: &str) -> anyhow::Result<Vec<Source>> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let games = runtime.block_on(async {
        let archive = fogblast_rating::archive::Archive::connect(url).await?;
        archive.games_for_puzzles(500).await
    })?;
    Ok(games
        .into_iter()
        .filter_map(|(id, variant, fen, moves)| {
            let variant = Variant::from_name(&variant).filter(|v| *v != Variant::Standard)?;
            let start = Position::from_fen(&fen, variant).ok()?;
            Some(Source { name: format!("game {id}"), variant, start, moves })
        })
        .collect())
}
