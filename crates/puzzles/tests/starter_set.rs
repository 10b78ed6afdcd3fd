//! Every puzzle shipped in the starter set has the unique solution it
//! claims: the engine finds exactly its line afresh (atomic), or its move
//! is the only one that wins or is safe whatever the fog hides (fog).

use fogblast_puzzles::atomic::{self, Check};
use fogblast_puzzles::{fog, starter_set};

#[test]
fn the_starter_set_has_both_variants() {
    let set = starter_set();
    let atomic = set.iter().filter(|p| p.variant == "atomic").count();
    let fog = set.iter().filter(|p| p.variant == "fog").count();
    assert!(atomic >= 20 && fog >= 20, "{atomic} atomic and {fog} fog puzzles");
    let mut ids: Vec<&str> = set.iter().map(|p| p.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), set.len(), "ids are unique");
}

#[test]
fn every_atomic_starter_puzzle_has_its_unique_line() {
    for puzzle in starter_set().iter().filter(|p| p.variant == "atomic") {
        assert_eq!(atomic::verify(puzzle, &Check::STANDARD), Ok(()), "puzzle {} ({})", puzzle.id, puzzle.fen);
    }
}

#[test]
fn every_fog_starter_puzzle_has_its_unique_move() {
    for puzzle in starter_set().iter().filter(|p| p.variant == "fog") {
        let found = fog::verify(puzzle).unwrap_or_else(|e| panic!("puzzle {} ({}): {e}", puzzle.id, puzzle.fen));
        assert_eq!(found.kind, puzzle.themes[0], "puzzle {}", puzzle.id);
    }
}
