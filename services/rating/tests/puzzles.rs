//! Puzzle storage on both backends: the starter set seeded once, the daily
//! and next puzzles, and Glicko-2 ratings moved by a player's first attempt
//! at a puzzle only.

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
