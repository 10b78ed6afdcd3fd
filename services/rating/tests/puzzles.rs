//! Puzzle storage on both backends: the starter set seeded once, the daily
//! and next puzzles, and Glicko-2 ratings moved by a player's first attempt
//! at a puzzle only.

use fogblast_proto::events::{FinishedPlayer, GameFinished};
use fogblast_proto::game::{EndReason, Variant};
use fogblast_puzzles::starter_set;
use fogblast_rating::puzzles::AttemptError;
use fogblast_rating::Archive;
use fogblast_testkit::ScratchDatabase;

const PLAYER: &str = "p-puzzler";

async fn exercise(archive: &Archive) {
    let set = starter_set();
    assert_eq!(archive.seed_puzzles(&set).await.unwrap(), set.len() as u64);
    assert_eq!(archive.seed_puzzles(&set).await.unwrap(), 0, "a store with puzzles is not seeded again");

    let first = archive.puzzle(&set[0].id).await.unwrap().expect("a seeded puzzle");
    assert_eq!(first.puzzle, set[0]);
    assert_eq!((first.plays, first.deviation), (0, 300.0));
    assert!(archive.puzzle("zzzzzzzz").await.unwrap().is_none());

    let today = archive.daily_puzzle(20_000).await.unwrap().unwrap();
    assert_eq!(archive.daily_puzzle(20_000).await.unwrap().unwrap().puzzle.id, today.puzzle.id);
    assert_ne!(archive.daily_puzzle(20_001).await.unwrap().unwrap().puzzle.id, today.puzzle.id);

    let either = archive.next_puzzle(PLAYER, None).await.unwrap().unwrap();
    let nearest = set.iter().map(|p| (p.rating - 1500.0).abs()).fold(f64::MAX, f64::min);
    assert_eq!((either.puzzle.rating - 1500.0).abs(), nearest, "either variant, the nearest to 1500");
    let next = archive.next_puzzle(PLAYER, Some("fog")).await.unwrap().unwrap();
    assert_eq!(next.puzzle.variant, "fog");
    let nearest = set.iter().filter(|p| p.variant == "fog").map(|p| (p.rating - 1500.0).abs()).fold(f64::MAX, f64::min);
    assert_eq!((next.puzzle.rating - 1500.0).abs(), nearest, "the nearest to a newcomer's 1500");

    let solved = archive.record_puzzle_attempt(PLAYER, &next.puzzle.id, true).await.unwrap();
    assert!(solved.rated);
    assert!(solved.player.rating.rating > 1500.0 && solved.puzzle_after < solved.puzzle_before);
    assert_eq!((solved.player.attempts, solved.player.solved), (1, 1));
    let again = archive.record_puzzle_attempt(PLAYER, &next.puzzle.id, false).await.unwrap();
    assert!(!again.rated, "a second attempt is not rated");
    assert_eq!(again.player, solved.player);
    assert_eq!(archive.puzzle_standing(PLAYER).await.unwrap(), solved.player);
    assert_eq!(archive.puzzle(&next.puzzle.id).await.unwrap().unwrap().plays, 1);
    assert_ne!(archive.next_puzzle(PLAYER, Some("fog")).await.unwrap().unwrap().puzzle.id, next.puzzle.id);

    let failed = archive.record_puzzle_attempt(PLAYER, &set[0].id, false).await.unwrap();
    assert!(failed.rated && failed.player.rating.rating < solved.player.rating.rating);
    assert!(matches!(archive.record_puzzle_attempt(PLAYER, "zzzzzzzz", true).await, Err(AttemptError::NoPuzzle(_))));
    assert_eq!(archive.puzzle_standing(PLAYER).await.unwrap().attempts, 2);
    games_to_cut(archive).await;
}

fn finished(id: &str, variant: Variant, moves: &[&str], ended_ms: u64) -> GameFinished {
    let player = |id: &str| FinishedPlayer { id: id.to_owned(), name: id.to_owned(), ..Default::default() };
    GameFinished {
        game_id: id.to_owned(),
        variant: variant as i32,
        initial_fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1".to_owned(),
        white: Some(player("alice")),
        black: Some(player("bob")),
        result: "1-0".to_owned(),
        reason: EndReason::Resign as i32,
        moves: moves.iter().map(|m| (*m).to_owned()).collect(),
        created_at_ms: ended_ms - 60_000,
        started_at_ms: ended_ms - 50_000,
        ended_at_ms: ended_ms,
        ..Default::default()
    }
}

/// The generator's source of archived games: atomic and fog ones, newest
/// first, with their moves; standard games are not cut.
async fn games_to_cut(archive: &Archive) {
    let t0 = 1_700_000_000_000;
    for game in [
        finished("cutatomic1", Variant::Atomic, &["e2e4", "e7e5"], t0),
        finished("cutstandard", Variant::Standard, &["d2d4"], t0 + 1_000),
        finished("cutfog1", Variant::Fog, &["g1f3"], t0 + 2_000),
    ] {
        archive.apply(&game, game.ended_at_ms as i64 + 100).await.unwrap();
    }
    let games = archive.games_for_puzzles(10).await.unwrap();
    let seen: Vec<(&str, &str, usize)> = games.iter().map(|(id, v, _, m)| (id.as_str(), v.as_str(), m.len())).collect();
    assert_eq!(seen, [("cutfog1", "fog", 1), ("cutatomic1", "atomic", 2)]);
}

#[tokio::test]
async fn sqlite_keeps_puzzles_and_rates_first_attempts() {
    exercise(&Archive::connect("sqlite::memory:").await.unwrap()).await;
}

#[tokio::test]
async fn postgres_keeps_puzzles_and_rates_first_attempts() {
    let database = ScratchDatabase::create("puzzles").await;
    exercise(&Archive::connect(&database.url).await.unwrap()).await;
}
