//! Every puzzle shipped in the starter set has the unique solution it
//! claims: the engine finds exactly its line afresh (atomic), or its move
//! is the only one that wins or is safe whatever the fog hides (fog).

use fogblast_puzzles::atomic::{self, Check};
use fogblast_puzzles::{fog, parse_move, selfplay, starter_set};
use fogblast_rules::Position;

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
fn the_starter_set_has_connected_kings_defences() {
    let set = starter_set();
    let connected: Vec<_> = set.iter().filter(|p| p.themes.iter().any(|t| t == "connectedKings")).collect();
    assert!(connected.len() >= 3, "{} connected-kings puzzles", connected.len());
    for puzzle in connected {
        // The solution's first move itself puts the kings side by side
        // (every line of the set is verified by the test above).
        let mut pos = puzzle.position().unwrap();
        assert!(!pos.kings_connected(), "puzzle {}", puzzle.id);
        pos.play_unchecked(parse_move(&pos, &puzzle.solution[0], None).unwrap());
        assert!(pos.kings_connected(), "puzzle {}", puzzle.id);
    }
}

#[test]
fn every_fog_starter_puzzle_holds_against_the_positions_its_game_allows() {
    for puzzle in starter_set().iter().filter(|p| p.variant == "fog") {
        let (variant, seed, ply) = selfplay::parse_source(&puzzle.source).expect("a self-play source");
        let game = &selfplay::selfplay_game(variant, seed)[..ply];
        let mut pos = Position::new(variant);
        for &m in game {
            pos.play_unchecked(m);
        }
        assert_eq!(pos.fog_view(pos.turn()).fen(), puzzle.fen, "puzzle {} is its game's view", puzzle.id);
        let solution = parse_move(&pos, &puzzle.solution[0], None).unwrap();
        let found = fog::verify_in_game(game, solution, &fog::DeepCheck::STANDARD)
            .unwrap_or_else(|e| panic!("puzzle {} ({}): {e}", puzzle.id, puzzle.fen));
        assert!(found.positions > 1, "puzzle {}: {found:?}", puzzle.id);
    }
}

#[test]
fn every_fog_starter_puzzle_has_its_unique_move() {
    for puzzle in starter_set().iter().filter(|p| p.variant == "fog") {
        let found = fog::verify(puzzle).unwrap_or_else(|e| panic!("puzzle {} ({}): {e}", puzzle.id, puzzle.fen));
        assert_eq!(found.kind, puzzle.themes[0], "puzzle {}", puzzle.id);
    }
}
