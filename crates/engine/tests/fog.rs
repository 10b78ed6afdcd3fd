//! The fog-of-war player: what it is given holds no hidden square, its
//! belief keeps the real position while uncapped, it always answers a
//! legal move, and it beats the baseline (a random visible capture, else a
//! random move) in fixed-seed games.

use std::sync::atomic::AtomicBool;

use fogblast_engine::fog::{baseline_move, Belief, FogSettings, ObservedPly, Sight, PRIOR_HARD};
use fogblast_engine::{best_fog_move, FogLimits, FogObservation, Level};
use fogblast_rules::{Bitboard, CastlingMode, Color, Game, Position, Variant};
use proptest::prelude::*;

fn random_game(choices: &[u32]) -> Game {
    let mut game = Game::new(Position::new(Variant::Fog));
    for &choice in choices {
        if game.outcome().is_some() {
            break;
        }
        let moves = game.position().legal_moves();
        game.play(moves[choice as usize % moves.len()]).unwrap();
    }
    game
}

fn sight_of(ply: &ObservedPly) -> &Sight {
    match ply {
        ObservedPly::Own { after, .. } | ObservedPly::Opponent { after, .. } => after,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Every sight in an observation is the side's view and nothing more:
    /// its squares are the ones the side sees, its pieces stand on them,
    /// and the flagged squares are out of sight.
    #[test]
    fn observations_hold_no_hidden_square(choices in prop::collection::vec(any::<u32>(), 0..100)) {
        let game = random_game(&choices);
        for color in Color::ALL {
            let obs = FogObservation::from_game(&game, color);
            let mut pos = *game.initial();
            for (ply, (&m, observed)) in game.moves().iter().zip(obs.plies()).enumerate() {
                pos.play_unchecked(m);
                let sight = sight_of(observed);
                let seen = pos.visible_squares(color);
                prop_assert_eq!(sight.visible(), seen, "ply {}", ply);
                prop_assert!((sight.board().occupied() - seen).is_empty(), "ply {}: a piece in the fog", ply);
                for sq in seen {
                    prop_assert_eq!(sight.board().piece_at(sq), pos.board().piece_at(sq));
                }
                if let ObservedPly::Opponent { lost, .. } = observed {
                    prop_assert!((*lost & seen).is_empty());
                }
                // The text a server sends reads back to the same sight.
                let ep = sight.ep_square().map(|sq| sq.to_string());
                prop_assert_eq!(&Sight::parse(&sight.board_text(), ep.as_deref()).unwrap(), sight);
            }
        }
    }

    /// A sight keeps no piece off its visible squares, whatever it is given.
    #[test]
    fn sights_drop_what_is_not_visible(choices in prop::collection::vec(any::<u32>(), 0..60), mask in any::<u64>()) {
        let game = random_game(&choices);
        let sight = Sight::new(Bitboard(mask), game.position().board(), game.position().ep_square());
        prop_assert!((sight.board().occupied() - Bitboard(mask)).is_empty());
        prop_assert_eq!(sight.board().occupied(), game.position().board().occupied() & Bitboard(mask));
    }

    /// Observations no game fits (sights spliced in from another game) get
    /// an answer or an error, never a panic.
    #[test]
    fn spliced_observations_never_panic(
        a in prop::collection::vec(any::<u32>(), 1..50),
        b in prop::collection::vec(any::<u32>(), 1..50),
        cut in any::<usize>(),
    ) {
        let (first, second) = (random_game(&a), random_game(&b));
        let color = Color::White;
        let (oa, ob) = (FogObservation::from_game(&first, color), FogObservation::from_game(&second, color));
        let mut spliced = FogObservation::new(color);
        let cut = cut % oa.plies().len().max(1);
        for (i, ply) in oa.plies().iter().enumerate() {
            let ply = if i >= cut { ob.plies().get(i).unwrap_or(ply) } else { ply };
            let _ = match ply {
                ObservedPly::Own { uci, after } => spliced.push_own(*uci, after.clone()),
                ObservedPly::Opponent { after, lost } => spliced.push_opponent(after.clone(), *lost),
            };
        }
        if spliced.turn() == color {
            let limits = FogLimits { settings: Level::Easy.fog_settings(), movetime: None, seed: cut as u64 };
            let _ = best_fog_move(&spliced, &limits, &AtomicBool::new(false));
        }
    }

    /// The player answers a legal move from any observed position.
    #[test]
    fn the_player_answers_a_legal_move(choices in prop::collection::vec(any::<u32>(), 0..60), seed in any::<u64>()) {
        let game = random_game(&choices);
        prop_assume!(game.outcome().is_none());
        let color = game.position().turn();
        let obs = FogObservation::from_game(&game, color);
        let limits = FogLimits { settings: Level::Easy.fog_settings(), movetime: None, seed };
        let report = best_fog_move(&obs, &limits, &AtomicBool::new(false)).unwrap();
        prop_assert!(game.position().parse_uci(&report.best).is_some(), "{} in {}", report.best, game.position().fen());
        prop_assert!(report.belief_size >= 1 && report.belief_size <= Level::Easy.fog_settings().belief_cap);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// The prior Hard's settings, kept as a yardstick, answer legal moves
    /// too (their budgets cut so the test stays quick in a debug build).
    #[test]
    fn the_prior_hard_answers_a_legal_move(choices in prop::collection::vec(any::<u32>(), 0..60), seed in any::<u64>()) {
        let game = random_game(&choices);
        prop_assume!(game.outcome().is_none());
        let color = game.position().turn();
        let obs = FogObservation::from_game(&game, color);
        let settings = FogSettings { samples: 2, nodes_per_sample: 2_000, belief_cap: 64, ..PRIOR_HARD };
        let limits = FogLimits { settings, movetime: None, seed };
        let report = best_fog_move(&obs, &limits, &AtomicBool::new(false)).unwrap();
        prop_assert!(game.position().parse_uci(&report.best).is_some(), "{} in {}", report.best, game.position().fen());
    }
}

#[test]
fn an_uncapped_belief_holds_the_real_position() {
    for seed in 0..4u32 {
        let choices: Vec<u32> = (0..10).map(|i| seed.wrapping_mul(2654435761).wrapping_add(i * 40503)).collect();
        let game = random_game(&choices);
        for color in Color::ALL {
            let obs = FogObservation::from_game(&game, color);
            let belief = Belief::track(&obs, usize::MAX, u64::from(seed)).unwrap();
            assert_eq!(belief.rebuilds, 0);
            assert!(belief.particles().iter().any(|p| p.board() == game.position().board()));
        }
    }
}

#[test]
fn an_observation_of_an_impossible_move_is_refused() {
    let mut obs = FogObservation::new(Color::White);
    let start = Position::new(Variant::Fog);
    obs.push_own("e2e5".parse().unwrap(), Sight::from_view(&start.fog_view(Color::White))).unwrap();
    obs.push_opponent(Sight::from_view(&start.fog_view(Color::White)), Bitboard::EMPTY).unwrap();
    let limits = FogLimits { settings: Level::Easy.fog_settings(), movetime: None, seed: 0 };
    assert!(best_fog_move(&obs, &limits, &AtomicBool::new(false)).is_err());
    // And black is not to move at the start.
    assert!(best_fog_move(&FogObservation::new(Color::Black), &limits, &AtomicBool::new(false)).is_err());
}

#[test]
fn a_king_in_sight_is_taken() {
    // 1. e4 f6 2. Qh5+ g5: the queen sees the king on e8 along h5-e8.
    let mut game = Game::new(Position::new(Variant::Fog));
    for uci in ["e2e4", "f7f6", "d1h5", "g7g5"] {
        game.play_uci(uci).unwrap();
    }
    let obs = FogObservation::from_game(&game, Color::White);
    for level in Level::ALL {
        let limits = FogLimits { settings: level.fog_settings(), movetime: None, seed: 1 };
        let report = best_fog_move(&obs, &limits, &AtomicBool::new(false)).unwrap();
        assert_eq!(report.best.to_string(), "h5e8", "{level}");
    }
}

/// A reduced Hard (fewer samples and nodes, so the test stays quick in a
/// debug build) against the baseline in fixed-seed games, both colours.
#[test]
fn the_player_beats_the_baseline() {
    let settings = FogSettings {
        samples: 4,
        max_samples: 8,
        nodes_per_sample: 4_000,
        belief_cap: 48,
        ..Level::Hard.fog_settings()
    };
    let stop = AtomicBool::new(false);
    let mut wins = 0;
    for game_index in 0..4u64 {
        let engine = if game_index % 2 == 0 { Color::White } else { Color::Black };
        let mut game = Game::new(Position::new(Variant::Fog));
        let mut obs = FogObservation::new(engine);
        while game.outcome().is_none() && game.ply() < 200 {
            let pos = *game.position();
            let seed = game_index << 32 | game.ply() as u64;
            let m = if pos.turn() == engine {
                let limits = FogLimits { settings, movetime: None, seed };
                let report = best_fog_move(&obs, &limits, &stop).unwrap();
                pos.parse_uci(&report.best).expect("a legal move")
            } else {
                baseline_move(&pos.legal_moves(), seed).unwrap()
            };
            let mut before = pos;
            obs.observe_move(&mut before, m);
            game.play(m).unwrap();
        }
        if game.outcome().and_then(|o| o.winner()) == Some(engine) {
            wins += 1;
        }
    }
    assert_eq!(wins, 4, "the engine won {wins} of 4");
}

/// A reduced Hard, king guard on: few samples and nodes, since the guard
/// does not depend on them.
fn guarded_settings() -> FogSettings {
    FogSettings {
        samples: 2,
        max_samples: 2,
        depth: 2,
        nodes_per_sample: 2_000,
        belief_cap: 64,
        ..Level::Hard.fog_settings()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Hard never puts or leaves its king where a piece of some position
    /// its belief holds could take it, unless every move does.
    #[test]
    fn hard_keeps_its_king_out_of_reach(choices in prop::collection::vec(any::<u32>(), 6..60), seed in any::<u64>()) {
        let game = random_game(&choices);
        prop_assume!(game.outcome().is_none());
        let color = game.position().turn();
        let obs = FogObservation::from_game(&game, color);
        let settings = guarded_settings();
        let limits = FogLimits { settings, movetime: None, seed };
        let report = best_fog_move(&obs, &limits, &AtomicBool::new(false)).unwrap();
        let belief = Belief::track_with(&obs, settings.belief_cap, seed, settings.keep_threats).unwrap();
        let live: Vec<Position> = belief
            .particles()
            .iter()
            .copied()
            .filter(|p| Color::ALL.iter().all(|&c| p.board().king_of(c).is_some()))
            .collect();
        // Whether each of our moves (in UCI) leaves our king capturable in
        // some candidate.
        let exposed = |uci: &str| {
            live.iter().any(|pos| {
                let Some(m) = pos.legal_moves().into_iter().find(|m| m.to_uci(CastlingMode::Standard).to_string() == uci)
                else {
                    return false;
                };
                let (after, _) = pos.play(m).unwrap();
                let board = after.board();
                board.king_of(color).is_some_and(|king| board.attackers(king, !color, board.occupied()).any())
            })
        };
        let ours: Vec<String> =
            game.position().legal_moves().iter().map(|m| m.to_uci(CastlingMode::Standard).to_string()).collect();
        let chosen = report.best.to_string();
        let takes_king = game.position().parse_uci(&report.best).unwrap().capture() == Some(fogblast_rules::Role::King);
        if !takes_king && exposed(&chosen) {
            let safe: Vec<&String> = ours.iter().filter(|uci| !exposed(uci)).collect();
            prop_assert!(safe.is_empty(), "{} exposes the king though {:?} do not, in {}", chosen, safe, game.position().fen());
        }
    }
}

/// Hard with a belief that keeps a single candidate: it has lost the real
/// position nearly at once, so what guards its king is what it can prove
/// from its observations alone.
fn lost_belief_settings() -> FogSettings {
    FogSettings { belief_cap: 1, ..guarded_settings() }
}

/// Whether `color`'s king, after `m`, stands where an enemy piece on the
/// real board can take it.
fn leaves_king_capturable(pos: &Position, m: fogblast_rules::Move, color: Color) -> bool {
    let (after, _) = pos.play(m).unwrap();
    let board = after.board();
    board.king_of(color).is_none_or(|king| board.attackers(king, !color, board.occupied()).any())
}

/// After 1. e4 e5 2. Bc4 d6 3. Qh5 Be7 4. Qxf7+ black sees the checking
/// queen next to its king but not the bishop on c4 that defends it (c4 was
/// never in black's sight). Kxf7 loses the king to the bishop; Kd7 is the
/// one move after which nothing can take it. Hard must find it even when
/// its belief holds no bishop on c4.
#[test]
fn a_checker_defended_from_the_fog_is_not_taken_with_the_king() {
    let mut game = Game::new(Position::new(Variant::Fog));
    for uci in ["e2e4", "e7e5", "f1c4", "d7d6", "d1h5", "f8e7", "h5f7"] {
        game.play_uci(uci).unwrap();
    }
    let pos = *game.position();
    let view = pos.fog_view(Color::Black);
    assert!(!view.visible.contains(fogblast_rules::Square::C4), "c4 is in the fog");
    let safe: Vec<String> = pos
        .legal_moves()
        .into_iter()
        .filter(|&m| !leaves_king_capturable(&pos, m, Color::Black))
        .map(|m| m.to_uci(CastlingMode::Standard).to_string())
        .collect();
    assert_eq!(safe, ["e8d7"], "one safe move on the real board");
    let obs = FogObservation::from_game(&game, Color::Black);
    for seed in 0..16 {
        for settings in [lost_belief_settings(), Level::Hard.fog_settings()] {
            let limits =
                FogLimits { settings: FogSettings { nodes_per_sample: 2_000, ..settings }, movetime: None, seed };
            let report = best_fog_move(&obs, &limits, &AtomicBool::new(false)).unwrap();
            assert_eq!(report.best.to_string(), "e8d7", "seed {seed}, belief cap {}", settings.belief_cap);
        }
    }
}

/// Whether, after `m`, no enemy piece could take `color`'s king wherever
/// the fog hides it: the enemy pieces in sight, and every kind of piece on
/// every fogged square, lines through the fog open.
fn safe_from_any_fog(pos: &Position, m: fogblast_rules::Move, color: Color) -> bool {
    let visible = pos.fog_view(color).visible;
    let (after, _) = pos.play(m).unwrap();
    let board = after.board();
    let Some(king) = board.king_of(color) else { return false };
    // Our pieces and the enemy pieces we saw block lines; the fog does not.
    let in_sight = board.by_color(!color) & visible;
    let blockers = board.by_color(color) | in_sight;
    fogblast_rules::Role::ALL.into_iter().all(|role| {
        let reach = fogblast_rules::attacks::attacks(role, color, king, blockers);
        let enemies = (board.by_piece(role.of(!color)) & in_sight) | (!visible - board.by_color(color));
        (reach & enemies).is_empty()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// With a belief that has lost the real position, Hard still never
    /// moves its king where an enemy piece on the real board can take it
    /// while some move is safe against any piece the fog could hide.
    #[test]
    fn hard_with_a_lost_belief_keeps_its_king_out_of_reach(
        choices in prop::collection::vec(any::<u32>(), 6..70),
        seed in any::<u64>(),
    ) {
        let game = random_game(&choices);
        prop_assume!(game.outcome().is_none());
        let pos = *game.position();
        let color = pos.turn();
        let obs = FogObservation::from_game(&game, color);
        let limits = FogLimits { settings: lost_belief_settings(), movetime: None, seed };
        let report = best_fog_move(&obs, &limits, &AtomicBool::new(false)).unwrap();
        let chosen = pos.parse_uci(&report.best).unwrap();
        prop_assume!(chosen.capture() != Some(fogblast_rules::Role::King));
        if chosen.role() == fogblast_rules::Role::King && leaves_king_capturable(&pos, chosen, color) {
            let safe: Vec<String> = pos
                .legal_moves()
                .into_iter()
                .filter(|&m| safe_from_any_fog(&pos, m, color))
                .map(|m| m.to_uci(CastlingMode::Standard).to_string())
                .collect();
            prop_assert!(safe.is_empty(), "{} loses the king though {:?} are safe, in {}", report.best, safe, pos.fen());
        }
    }
}

/// After 1. a4 Na6 2. Ra3 c5 3. Rf3 Qc7 4. c3 f5 5. c4 d6 6. Na3 Qb8 7. Rb3
/// Nh6 8. a5 Kd7 9. Re3 Kc6 10. d3 e6 11. g3 e5 12. Bg2 the bishop, moved
/// out of black's sight, attacks the king on c6 along the long diagonal.
/// Few of the positions black's belief holds have that check (white had
/// many moves), so weighing every candidate alike, Hard played b5 and lost
/// the king; a candidate in which the opponent's last move attacks our king
/// counts ten times, and Hard steps the king out of the diagonal.
#[test]
fn a_check_from_the_fog_weighs_above_the_quiet_candidates() {
    let mut game = Game::new(Position::new(Variant::Fog));
    let moves = "a2a4 b8a6 a1a3 c7c5 a3f3 d8c7 c2c3 f7f5 c3c4 d7d6 b1a3 c7b8 f3b3 g8h6 a4a5 e8d7 b3e3 d7c6 d2d3 \
                 e7e6 g2g3 e6e5 f1g2";
    for uci in moves.split_whitespace() {
        game.play_uci(uci).unwrap();
    }
    let pos = *game.position();
    assert!(!pos.fog_view(Color::Black).visible.contains(fogblast_rules::Square::G2), "g2 is in the fog");
    assert!(leaves_king_capturable(&pos, pos.parse_uci(&"b7b5".parse().unwrap()).unwrap(), Color::Black));
    let obs = FogObservation::from_game(&game, Color::Black);
    for seed in 0..8 {
        let settings = FogSettings { nodes_per_sample: 2_000, ..Level::Hard.fog_settings() };
        let report =
            best_fog_move(&obs, &FogLimits { settings, movetime: None, seed }, &AtomicBool::new(false)).unwrap();
        let chosen = pos.parse_uci(&report.best).unwrap();
        assert!(!leaves_king_capturable(&pos, chosen, Color::Black), "seed {seed}: {} loses the king", report.best);
    }
}

/// Late in a long game (white: king d3, queen a7, rooks b2 and c1; black:
/// king h8, queen f4, rook c5, bishop c7, knight h7), searched to depth 3
/// Hard steps the king to d2, after which black forces the king's capture
/// within two of its moves on the real board; given the time to search its
/// samples deeper (to depth 6), it plays Qa8, which leaves nothing forced.
/// The time is ample, so the search ends at the node budgets, whatever the
/// machine.
#[test]
fn spare_time_searched_deeper_avoids_a_king_hunt_the_shallow_search_misses() {
    let moves = "e2e4 h7h6 b2b3 a7a5 c2c3 b7b5 f1d3 c8a6 d3b5 g7g5 c1a3 a6b5 a3d6 f8g7 c3c4 b5c6 f2f4 c7d6 b1a3 \
                 a5a4 g2g3 c6b7 b3a4 d6d5 a3b5 e7e6 f4f5 b8a6 d1c1 a6c5 c1d1 a8a5 d1b3 g8f6 g1f3 a5a6 g3g4 f6e4 \
                 b5a3 e4f6 a1d1 f6h5 a3b5 h5f6 b5d6 d8c8 b3b4 h8g8 f3d4 a6a5 d1b1 a5b5 d6b7 e8f8 b1c1 c8b7 b4c5 \
                 b5b4 c1b1 b7c8 b1b3 c8a8 c5a7 a8c6 c4d5 c6c4 a7a6 c4d4 a6a5 g8h8 a5b6 d4a1 d2d4 h8g8 b3f3 e6d5 \
                 h2h3 a1b2 b6c7 b4a4 f3b3 a4a7 b3b8 b2g2 c7d7 f6h7 d7f7 g2f2 b8c8 a7d7 c8c2 d7c7 e1e2 g7f6 c2d2 \
                 c7c5 a2a3 g8g7 d2a2 c5c4 f7g7 f2h2 g7d7 h2g3 e2d3 g3h2 a2c2 c4c5 c2f2 f8g7 h1a1 h2d6 f2h2 f6d8 \
                 a1c1 g7h8 d7a7 d6f4 h2b2 d8c7";
    let mut game = Game::new(Position::new(Variant::Fog));
    for uci in moves.split_whitespace() {
        game.play_uci(uci).unwrap();
    }
    let pos = *game.position();
    assert_eq!(pos.fen(), "7k/Q1b4n/7p/2rp1Pp1/3P1qP1/P2K3P/1R6/2R5 w - - 19 61");
    assert!(black_forces_the_king(&pos, "d3d2"), "Kd2 loses the king by force");
    let obs = FogObservation::from_game(&game, Color::White);
    // The threat weight off, to measure the depth alone: some candidates
    // put a black piece on our king, and drawn ten times as often they
    // favour Kd2 again (full Hard plays Kd2 here).
    let settings = FogSettings {
        samples: 4,
        max_samples: 4,
        belief_cap: 256,
        nodes_per_sample: 20_000,
        threat_weight: 1,
        max_depth: 6,
        ..Level::Hard.fog_settings()
    };
    let limits = FogLimits { settings, movetime: Some(std::time::Duration::from_secs(600)), seed: 1 };
    let shallow = FogLimits { settings: FogSettings { max_depth: settings.depth, ..settings }, ..limits };
    let report = best_fog_move(&obs, &shallow, &AtomicBool::new(false)).unwrap();
    assert_eq!(report.best.to_string(), "d3d2", "searched to depth 3 only");
    let report = best_fog_move(&obs, &limits, &AtomicBool::new(false)).unwrap();
    assert!(!black_forces_the_king(&pos, &report.best.to_string()), "{} loses the king by force", report.best);
}

/// Whether, after white's `uci` in `pos`, black can force the capture of
/// white's king within two black moves whatever white replies.
fn black_forces_the_king(pos: &Position, uci: &str) -> bool {
    fn forced(pos: &Position, moves_left: u32) -> bool {
        let board = pos.board();
        let king = board.king_of(Color::White).unwrap();
        if board.attackers(king, Color::Black, board.occupied()).any() {
            return true;
        }
        moves_left > 0
            && pos.legal_moves().into_iter().any(|m| {
                let (after, _) = pos.play(m).unwrap();
                let replies = after.legal_moves();
                !replies.is_empty()
                    && replies.into_iter().all(|r| {
                        let (next, _) = after.play(r).unwrap();
                        next.board().king_of(Color::Black).is_some() && forced(&next, moves_left - 1)
                    })
            })
    }
    let (after, _) = pos.play(pos.parse_uci(&uci.parse().unwrap()).unwrap()).unwrap();
    forced(&after, 2)
}
