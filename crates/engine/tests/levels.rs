//! Easy is beatable by a newcomer: against a player who blows up the enemy
//! king whenever it can and otherwise moves at random, Easy wins more often
//! than not, loses a fair share, and the games last. A small fixed-seed
//! sample (the games repeat exactly: Easy is node-capped); the documented
//! calibration plays many more with `fogblast-tools selfplay`.

use std::sync::atomic::AtomicBool;

use fogblast_engine::{newcomer_move, Level, Searcher};
use fogblast_rules::{Color, Game, Position, Variant};

/// SplitMix64, for openings and seeds.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One game from four random plies; Easy's points (1, ½, 0) and the plies.
fn easy_vs_newcomer(index: u64) -> (f64, usize) {
    let mut game = Game::new(Position::new(Variant::Atomic));
    let mut state = mix(index / 2);
    for _ in 0..4 {
        let moves = game.position().legal_moves();
        state = mix(state);
        game.play(moves[(state % moves.len() as u64) as usize]).unwrap();
    }
    let easy = if index.is_multiple_of(2) { Color::White } else { Color::Black };
    let mut searcher = Searcher::new(1);
    let stop = AtomicBool::new(false);
    while game.outcome().is_none() && game.ply() < 300 {
        let pos = *game.position();
        let seed = mix(index ^ (game.ply() as u64) << 20);
        let m = if pos.turn() == easy {
            let limits = Level::Easy.limits(None, None, seed);
            searcher.search(&pos, game.history_keys(), &limits, &stop, &mut |_| {}).best
        } else {
            newcomer_move(&pos, seed)
        };
        game.play(m.expect("a move in a game not over")).expect("a legal move");
    }
    let points = match game.outcome().and_then(|o| o.winner()) {
        Some(winner) if winner == easy => 1.0,
        Some(_) => 0.0,
        None => 0.5,
    };
    (points, game.ply())
}

#[test]
fn easy_beats_a_newcomer_often_but_not_always_nor_quickly() {
    let games = 100;
    let (points, plies) =
        (0..games).map(easy_vs_newcomer).fold((0.0, 0), |(p, n), (points, plies)| (p + points, n + plies));
    let score = points / games as f64;
    let moves = plies as f64 / games as f64 / 2.0;
    eprintln!("Easy against the newcomer: {:.1}%, {moves:.1} moves a game", score * 100.0);
    assert!((0.5..=0.75).contains(&score), "Easy scored {:.1}% against the newcomer", score * 100.0);
    assert!(moves >= 20.0, "games lasted {moves:.1} moves on average");
}
