//! `fogblast-tools puzzles`: cuts puzzles from games. It plays seeded
//! engine self-play games (a few random opening plies, then a shallow
//! search with seeded noise, so the sides make the mistakes puzzles are
//! made of) and, with `--database-url`, replays archived atomic and fog
//! games too. At every position it asks `fogblast-puzzles` whether the
//! side to move has a unique solution: in atomic chess a winning line the
//! engine confirms move by move, in fog of war a move that wins or is safe
//! whatever the fog hides, then checked deeper against the positions its
//! game allows (`fog::verify_in_game`). With `--connected-kings`, a pass of
//! its own plays from seeded positions with the kings two squares apart to
//! find the connected-kings defence. Each puzzle found is checked again
//! from its stored form, given themes and a starting rating, and written as
//! one JSON line. The starter set in `crates/puzzles/data/starter.jsonl` is
//! this command's output (docs/puzzles.md).

use std::collections::HashSet;
use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;
use fogblast_engine::Searcher;
use fogblast_puzzles::atomic::{self, Check};
use fogblast_puzzles::view::parse_view;
use fogblast_puzzles::{fog, puzzle_id, selfplay, uci, Puzzle};
use fogblast_rules::{Move, Position, Variant};
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
    /// Atomic connected-kings defences wanted on top of `--atomic`: found
    /// by playing the engine from seeded positions whose kings stand two
    /// squares apart, one king step from connecting (see
    /// `kings_near_game`), keeping only puzzles whose solution connects
    /// them.
    #[arg(long, default_value_t = 0)]
    connected_kings: usize,
    /// The most such games played.
    #[arg(long, default_value_t = 3000)]
    max_kings_near_games: usize,
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
    /// The first ply tried (self-play and archived games skip their
    /// opening; a constructed position is tried from its start).
    first_ply: usize,
    /// Keep only puzzles with this theme, besides `--only-theme`.
    theme: Option<&'static str>,
}

/// The puzzles gathered so far, by variant.
#[derive(Default)]
struct Found {
    atomic: Vec<Puzzle>,
    fog: Vec<Puzzle>,
    connected_kings: Vec<Puzzle>,
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
            if wanted(args, &found, variant, None) == 0 {
                break;
            }
            let source = selfplay_game(variant, args.seed.wrapping_mul(1_000_003).wrapping_add(game as u64));
            cut(args, &source, &mut found);
            eprintln!("{} game {game}: {} atomic, {} fog", variant.name(), found.atomic.len(), found.fog.len());
        }
    }
    connected_kings_pass(args, &mut found);
    let mut out = std::fs::File::create(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    for puzzle in found.atomic.iter().chain(&found.connected_kings).chain(&found.fog) {
        writeln!(out, "{}", serde_json::to_string(puzzle)?)?;
    }
    println!(
        "{} atomic, {} connected-kings and {} fog puzzles written to {} in {:.1} s",
        found.atomic.len(),
        found.connected_kings.len(),
        found.fog.len(),
        args.out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Plays kings-near games ([`kings_near_game`]) until
/// `--connected-kings` puzzles are found or `--max-kings-near-games` run out.
fn connected_kings_pass(args: &PuzzlesArgs, found: &mut Found) {
    for game in 0..args.max_kings_near_games {
        if found.connected_kings.len() >= args.connected_kings {
            break;
        }
        let source = kings_near_game(args.seed.wrapping_mul(7_000_003).wrapping_add(game as u64));
        let before = found.connected_kings.len();
        cut(args, &source, found);
        if found.connected_kings.len() > before {
            eprintln!("kings-near game {game}: {} connected-kings defences", found.connected_kings.len());
        }
    }
}

/// How many more puzzles of `variant` (with `theme`, the connected-kings
/// pass) are wanted.
fn wanted(args: &PuzzlesArgs, found: &Found, variant: Variant, theme: Option<&str>) -> usize {
    if theme.is_some() {
        return args.connected_kings.saturating_sub(found.connected_kings.len());
    }
    match variant {
        Variant::Atomic => args.atomic.saturating_sub(found.atomic.len()),
        _ => args.fog.saturating_sub(found.fog.len()),
    }
}

/// Tries every position of `source` (after its opening) for a puzzle.
fn cut(args: &PuzzlesArgs, source: &Source, found: &mut Found) {
    let mut pos = source.start;
    let mut taken = 0;
    let mut skip_until = source.first_ply;
    let mut played = Vec::new();
    for (ply, text) in source.moves.iter().enumerate() {
        if taken >= args.per_game || wanted(args, found, source.variant, source.theme) == 0 {
            return;
        }
        if ply >= skip_until {
            let puzzle = match source.variant {
                Variant::Atomic => atomic_puzzle(&pos, source, ply),
                _ => fog_puzzle(&pos, source, &played),
            };
            let wanted_total = if source.variant == Variant::Atomic { args.atomic } else { args.fog };
            let room = |p: &Puzzle| {
                let have = found.kinds.get(&(source.variant, p.themes[0].clone())).copied().unwrap_or(0);
                (have + 1) as f64 <= (args.theme_share * wanted_total as f64).max(1.0)
            };
            let has = |p: &Puzzle, theme: &str| p.themes.iter().any(|t| t == theme);
            let themed = |p: &Puzzle| {
                args.only_theme.as_ref().is_none_or(|theme| has(p, theme))
                    && source.theme.is_none_or(|theme| has(p, theme))
            };
            let fits = |p: &Puzzle| source.theme.is_some() || room(p);
            let puzzle = puzzle.filter(|p| themed(p) && fits(p) && !found.positions.contains(&p.fen));
            if let Some(puzzle) = puzzle {
                found.positions.insert(puzzle.fen.clone());
                match (source.theme, source.variant) {
                    (Some(_), _) => found.connected_kings.push(puzzle),
                    (None, variant) => {
                        *found.kinds.entry((variant, puzzle.themes[0].clone())).or_default() += 1;
                        match variant {
                            Variant::Atomic => found.atomic.push(puzzle),
                            _ => found.fog.push(puzzle),
                        }
                    }
                }
                taken += 1;
                skip_until = ply + 6;
            }
        }
        let Some(m) = fogblast_puzzles::parse_move(&pos, text, None) else { return };
        pos.play_unchecked(m);
        played.push(m);
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

/// A fog puzzle at the end of `played` (from the standard start): the
/// view's unique move, checked again from its stored form and then deeper
/// against the game ([`fog::verify_in_game`]).
fn fog_puzzle(pos: &Position, source: &Source, played: &[Move]) -> Option<Puzzle> {
    if source.start != Position::new(Variant::Fog) {
        return None;
    }
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
        source: format!("{} ply {}", source.name, played.len()),
    };
    fog::verify(&puzzle).ok()?;
    let best = fogblast_puzzles::parse_move(pos, &puzzle.solution[0], None)?;
    match fog::verify_in_game(played, best, &fog::DeepCheck::STANDARD) {
        Ok(_) => Some(puzzle),
        Err(why) => {
            eprintln!("{}: {} dropped by the deeper check: {why}", puzzle.source, puzzle.solution[0]);
            None
        }
    }
}

/// One seeded self-play game ([`selfplay::selfplay_game`]).
fn selfplay_game(variant: Variant, seed: u64) -> Source {
    let moves = selfplay::selfplay_game(variant, seed).into_iter().map(uci).collect();
    let name = selfplay::source_name(variant, seed);
    Source { name, variant, start: Position::new(variant), moves, first_ply: 8, theme: None }
}

/// A seeded atomic game made for the connected-kings defence, which games
/// from the start rarely reach (the kings stay apart): a position with the
/// kings two squares apart (one step from connecting), two to four other
/// pieces a side (no more of one kind than a side starts with), and the
/// side to move facing a capture that would blow up its king; then up to
/// twelve plies of noisy engine play from it. Every position of it is
/// tried, and only puzzles whose solution connects the kings are kept.
fn kings_near_game(seed: u64) -> Source {
    let mut rng = StdRng::seed_from_u64(seed);
    let start = loop {
        if let Some(pos) = kings_near_position(&mut rng).filter(threatened_king) {
            break pos;
        }
    };
    let moves = selfplay::play_noisy(&start, &mut rng, 0, 12).into_iter().map(uci).collect();
    let name = format!("kings-near atomic seed {seed}");
    Source { name, variant: Variant::Atomic, start, moves, first_ply: 0, theme: Some("connectedKings") }
}

/// A random atomic position with the kings two squares apart, or `None`
/// when the draw is not a legal, undecided position.
fn kings_near_position(rng: &mut StdRng) -> Option<Position> {
    use fogblast_rules::{Board, Color, Role, Setup, Square};
    let mut board = Board::empty();
    let ours = Square::new(rng.random_range(0..64))?;
    let (file, rank) = (ours.index() % 8, ours.index() / 8);
    let offsets: Vec<(i8, i8)> = (-2i8..=2)
        .flat_map(|df| (-2i8..=2).map(move |dr| (df, dr)))
        .filter(|&(df, dr)| df.abs().max(dr.abs()) == 2)
        .collect();
    let (df, dr) = offsets[rng.random_range(0..offsets.len())];
    let (their_file, their_rank) = (file as i8 + df, rank as i8 + dr);
    if !(0..8).contains(&their_file) || !(0..8).contains(&their_rank) {
        return None;
    }
    let theirs = Square::new((their_rank * 8 + their_file) as u8)?;
    let turn = if rng.random_range(0..2) == 0 { Color::White } else { Color::Black };
    board.set_piece_at(ours, Role::King.of(turn));
    board.set_piece_at(theirs, Role::King.of(!turn));
    const ROLES: [Role; 6] = [Role::Pawn, Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen];
    for color in [Color::White, Color::Black] {
        for _ in 0..rng.random_range(2..=4) {
            let square = Square::new(rng.random_range(0..64))?;
            let role = ROLES[rng.random_range(0..ROLES.len())];
            let back_rank = square.index() < 8 || square.index() >= 56;
            // No more of a piece than a side starts with (pawns aside).
            let most = match role {
                Role::Queen => 1,
                Role::Pawn => 8,
                _ => 2,
            };
            let have = board.by_piece(role.of(color)).count();
            if board.piece_at(square).is_some() || (role == Role::Pawn && back_rank) || have >= most {
                return None;
            }
            board.set_piece_at(square, role.of(color));
        }
    }
    let setup = Setup {
        board,
        turn,
        castling_rooks: fogblast_rules::Bitboard::EMPTY,
        ep_square: None,
        halfmoves: 0,
        fullmoves: 30,
    };
    let pos = Position::from_setup(setup, Variant::Atomic).ok()?;
    (pos.outcome().is_none() && !pos.kings_connected()).then_some(pos)
}

/// Whether the side not to move, were it its turn, could blow up the king
/// of the side to move at once: the threat a defence must answer.
fn threatened_king(pos: &Position) -> bool {
    let mut setup = pos.to_setup();
    setup.turn = !setup.turn;
    let Ok(passed) = Position::from_setup(setup, Variant::Atomic) else { return false };
    passed.legal_moves().into_iter().any(|m| m.is_capture() && fogblast_puzzles::wins_at_once(&passed, m))
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
            Some(Source { name: format!("game {id}"), variant, start, moves, first_ply: 8, theme: None })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fogblast_rules::attacks::king_attacks;
    use fogblast_rules::Role;

    fn args(connected_kings: usize) -> PuzzlesArgs {
        PuzzlesArgs {
            atomic: 0,
            fog: 0,
            max_games: 0,
            per_game: 2,
            theme_share: 0.4,
            only_theme: None,
            connected_kings,
            max_kings_near_games: 500,
            seed: 1,
            database_url: None,
            out: PathBuf::new(),
        }
    }

    #[test]
    fn kings_near_games_start_one_step_from_connecting_under_threat() {
        for seed in 0..20 {
            let start = kings_near_game(seed).start;
            let (white, black) = (
                start.board().king_of(fogblast_rules::Color::White),
                start.board().king_of(fogblast_rules::Color::Black),
            );
            let (white, black) = (white.unwrap(), black.unwrap());
            assert!(!king_attacks(white).contains(black), "seed {seed}: {}", start.fen());
            assert!((king_attacks(white) & king_attacks(black)).any(), "seed {seed}: {}", start.fen());
            assert!(threatened_king(&start), "seed {seed}: {}", start.fen());
            for color in [fogblast_rules::Color::White, fogblast_rules::Color::Black] {
                for (role, most) in [(Role::Queen, 1), (Role::Rook, 2), (Role::Bishop, 2), (Role::Knight, 2)] {
                    assert!(start.board().by_piece(role.of(color)).count() <= most, "seed {seed}: {}", start.fen());
                }
            }
        }
    }

    #[test]
    fn the_connected_kings_pass_finds_verified_defences_that_connect_the_kings() {
        let mut found = Found::default();
        connected_kings_pass(&args(2), &mut found);
        assert_eq!(found.connected_kings.len(), 2);
        for puzzle in &found.connected_kings {
            assert!(puzzle.themes.iter().any(|t| t == "connectedKings"), "{puzzle:?}");
            assert_eq!(atomic::verify(puzzle, &Check::STANDARD), Ok(()), "{puzzle:?}");
            let mut pos = puzzle.position().unwrap();
            pos.play_unchecked(fogblast_puzzles::parse_move(&pos, &puzzle.solution[0], None).unwrap());
            assert!(pos.kings_connected(), "{puzzle:?}");
        }
    }
}
