//! The rating math against published numbers (Glickman's worked example and
//! lichess's own test cases) and against the properties players rely on:
//! winners gain, equal draws stay equal, deviations stay within bounds and
//! grow while a player is away.

use std::time::Duration;

use fogblast_ratings::{decay, rate, rate_game, Rating, Score, Settings, PROVISIONAL_DEVIATION};

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

#[track_caller]
fn assert_close(actual: f64, expected: f64, tolerance: f64) {
    assert!((actual - expected).abs() <= tolerance, "{actual} is not within {tolerance} of {expected}");
}

/// Glickman's paper, section "Example calculation": tau 0.5 and one rating
/// period per update, as the paper has it.
#[test]
fn glickman_worked_example() {
    let settings = Settings { tau: 0.5, periods_per_update: 1.0, ..Settings::LICHESS };
    let player = Rating::new(1500.0, 200.0, 0.06);
    let results = [
        (Rating::new(1400.0, 30.0, 0.06), Score::Win),
        (Rating::new(1550.0, 100.0, 0.06), Score::Loss),
        (Rating::new(1700.0, 300.0, 0.06), Score::Loss),
    ];
    let after = rate(player, &results, &settings);

    // The paper's figures, which it rounds (and computes from rounded
    // intermediate values): 1464.06, 151.52, 0.05999.
    assert_close(after.rating, 1464.06, 0.01);
    assert_close(after.deviation, 151.52, 0.01);
    assert_close(after.volatility, 0.05999, 0.00001);

    // Without the intermediate rounding.
    assert_close(after.rating, 1464.0507, 0.0001);
    assert_close(after.deviation, 151.5165, 0.0001);
    assert_close(after.volatility, 0.059996, 0.000001);

    // The order of the games within a period does not matter.
    let mut reversed = results;
    reversed.reverse();
    let again = rate(player, &reversed, &settings);
    assert_close(again.rating, after.rating, 1e-9);
    assert_close(again.deviation, after.deviation, 1e-9);
    assert_close(again.volatility, after.volatility, 1e-9);
}

/// Cases from lichess's own calculator tests (scalachess
/// `GlickoCalculatorTest`), which rate a game with no step 6 growth.
#[test]
fn matches_lichess_single_games() {
    let settings = Settings::LICHESS;

    let (white, black) = rate_game(Rating::default(), Rating::default(), Score::Win, &settings);
    assert_close(white.rating, 1741.0, 1.0);
    assert_close(black.rating, 1258.0, 1.0);
    assert_close(white.deviation, 396.0, 1.0);
    assert_close(black.deviation, 396.0, 1.0);
    assert_close(white.volatility, 0.0899983, 0.0000001);
    assert_close(black.volatility, 0.0899983, 0.0000001);

    let player = Rating::new(1500.0, 350.0, 0.06);
    let (white, black) = rate_game(player, player, Score::Loss, &settings);
    assert_close(white.rating, 1337.79, 0.005);
    assert_close(black.rating, 1662.21, 0.005);
    assert_close(white.deviation, 290.23, 0.005);
    assert_close(black.deviation, 290.23, 0.005);
    assert_close(white.volatility, 0.0599993, 0.0000001);
    assert_close(black.volatility, 0.0599993, 0.0000001);
}

#[test]
fn draw_between_equals_keeps_them_equal_and_surer() {
    let settings = Settings::LICHESS;
    for player in [Rating::default(), Rating::new(1500.0, 350.0, 0.06), Rating::new(2210.0, 48.0, 0.059)] {
        let (white, black) = rate_game(player, player, Score::Draw, &settings);
        assert_eq!(white, black);
        assert_close(white.rating, player.rating, 1e-9);
        assert!(white.deviation < player.deviation, "{player:?} -> {white:?}");
    }
}

#[test]
fn winner_gains_and_loser_loses() {
    let settings = Settings::LICHESS;
    let players = [
        Rating::default(),
        Rating::new(1200.0, 60.0, 0.06),
        Rating::new(1800.0, 45.0, 0.06),
        Rating::new(2600.0, 120.0, 0.09),
        Rating::new(900.0, 300.0, 0.07),
    ];
    for &a in &players {
        for &b in &players {
            let (white, black) = rate_game(a, b, Score::Win, &settings);
            assert!(white.rating > a.rating && black.rating < b.rating, "{a:?} beat {b:?}: {white:?} {black:?}");
            let (white, black) = rate_game(a, b, Score::Loss, &settings);
            assert!(white.rating < a.rating && black.rating > b.rating, "{a:?} lost to {b:?}: {white:?} {black:?}");
        }
    }

    // An upset moves the ratings more than the expected result does.
    let (strong, weak) = (Rating::new(2000.0, 80.0, 0.06), Rating::new(1600.0, 80.0, 0.06));
    let (expected, _) = rate_game(strong, weak, Score::Win, &settings);
    let (upset, _) = rate_game(strong, weak, Score::Loss, &settings);
    assert!(strong.rating - upset.rating > expected.rating - strong.rating);
}

#[test]
fn rate_game_is_rate_for_each_side() {
    let settings = Settings::LICHESS;
    let (a, b) = (Rating::new(1650.0, 70.0, 0.06), Rating::new(1580.0, 200.0, 0.08));
    let (white, black) = rate_game(a, b, Score::Draw, &settings);
    assert_eq!(white, rate(a, &[(b, Score::Draw)], &settings));
    assert_eq!(black, rate(b, &[(a, Score::Draw)], &settings));
}

#[test]
fn provisional_until_deviation_below_110() {
    assert!(Rating::default().is_provisional());
    assert!(Rating::new(1500.0, PROVISIONAL_DEVIATION, 0.09).is_provisional());
    assert!(!Rating::new(1500.0, 109.99, 0.09).is_provisional());

    // A newcomer's first games, against established players, settle it.
    let settings = Settings::LICHESS;
    let opponent = Rating::new(1500.0, 60.0, 0.06);
    let mut player = Rating::default();
    let mut games = 0;
    while player.is_provisional() {
        let score = if games % 2 == 0 { Score::Win } else { Score::Draw };
        player = rate(player, &[(opponent, score)], &settings);
        games += 1;
        assert!(games < 50, "still provisional after 50 games: {player:?}");
    }
    assert!(games > 1);
}

#[test]
fn deviation_stays_within_45_and_500() {
    let settings = Settings::LICHESS;

    // Many games take the deviation down to the floor, and no lower.
    let opponent = Rating::new(1500.0, 45.0, 0.06);
    let mut player = Rating::new(1500.0, 60.0, 0.06);
    for _ in 0..2000 {
        player = rate(player, &[(opponent, Score::Draw)], &settings);
    }
    assert_eq!(player.deviation, settings.min_deviation);

    // A deviation above the ceiling (stored before the bounds) comes back
    // down, with or without games.
    let loose = Rating::new(1500.0, 650.0, 0.09);
    assert!(rate(loose, &[(opponent, Score::Win)], &settings).deviation <= 500.0);
    assert_eq!(rate(loose, &[], &settings).deviation, 500.0);

    // The paper's own settings would let a game add to a capped deviation;
    // the ceiling still holds.
    let paper = Settings { tau: 0.5, periods_per_update: 1.0, ..Settings::LICHESS };
    let newcomer = Rating::default();
    assert_eq!(rate(newcomer, &[], &paper).deviation, 500.0);
}

#[test]
fn volatility_stays_at_most_lichess_maximum() {
    let settings = Settings::LICHESS;
    // Results wildly at odds with the ratings push the volatility up.
    let mut player = Rating::new(1500.0, 45.0, 0.099);
    for i in 0..200 {
        let opponent = if i % 2 == 0 { Rating::new(2500.0, 45.0, 0.06) } else { Rating::new(500.0, 45.0, 0.06) };
        let score = if i % 2 == 0 { Score::Win } else { Score::Loss };
        player = rate(player, &[(opponent, score)], &settings);
        assert!(player.volatility <= settings.max_volatility, "{player:?}");
    }
    // Unbounded, it would reach about 0.145.
    assert_eq!(player.volatility, settings.max_volatility);
}

#[test]
fn lichess_update_without_games_changes_nothing() {
    let player = Rating::new(1720.0, 80.0, 0.06);
    assert_eq!(rate(player, &[], &Settings::LICHESS), player);
}

#[test]
fn inactivity_raises_deviation_up_to_500() {
    let settings = Settings::LICHESS;
    let player = Rating::new(1720.0, 60.0, 0.06);

    assert_eq!(decay(player, Duration::ZERO, &settings), player);

    // Lichess's period length is chosen so that this takes a year.
    let year = decay(player, 365 * DAY, &settings);
    assert_close(year.deviation, 110.0, 0.01);
    assert_eq!((year.rating, year.volatility), (player.rating, player.volatility));

    let mut previous = player.deviation;
    for days in [1, 7, 30, 90, 365, 1000, 3650, 36500] {
        let after = decay(player, days * DAY, &settings);
        assert!(after.deviation > previous, "{days} days: {after:?}");
        assert!(after.deviation <= 500.0);
        previous = after.deviation;
    }
    assert_eq!(decay(player, 36500 * DAY, &settings).deviation, 500.0);
    assert_eq!(decay(Rating::default(), 30 * DAY, &settings).deviation, 500.0);
    assert_eq!(decay(player, Duration::MAX, &settings).deviation, 500.0);
}

/// SplitMix64: a small deterministic generator, so the loop below is the
/// same on every run.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Random games between players of hidden strengths, with random gaps
/// between them: every value stays finite and within bounds, and the
/// ratings end up ordered like the strengths.
#[test]
fn random_games_stay_finite_and_bounded() {
    let settings = Settings::LICHESS;
    let mut rng = SplitMix64(0x0f06_b1a5);
    let strengths: Vec<f64> = (0..24).map(|i| 600.0 + 100.0 * i as f64).collect();
    let mut ratings = vec![Rating::default(); strengths.len()];

    let check = |r: &Rating| {
        assert!(r.rating.is_finite() && r.deviation.is_finite() && r.volatility.is_finite(), "{r:?}");
        assert!((45.0..=500.0).contains(&r.deviation), "{r:?}");
        assert!(r.volatility > 0.0 && r.volatility <= 0.1, "{r:?}");
    };

    for _ in 0..50_000 {
        let w = rng.below(ratings.len());
        let b = (w + 1 + rng.below(ratings.len() - 1)) % ratings.len();
        // Mostly back-to-back games, sometimes months away.
        let away = |rng: &mut SplitMix64| {
            if rng.below(20) == 0 {
                Duration::from_secs_f64(rng.unit() * 400.0 * 86400.0)
            } else {
                Duration::from_secs_f64(rng.unit() * 3600.0)
            }
        };
        let white = decay(ratings[w], away(&mut rng), &settings);
        let black = decay(ratings[b], away(&mut rng), &settings);
        check(&white);
        check(&black);

        let p_white = 1.0 / (1.0 + 10f64.powf((strengths[b] - strengths[w]) / 400.0));
        let roll = rng.unit();
        let score = if roll < p_white * 0.9 {
            Score::Win
        } else if roll < p_white * 0.9 + 0.1 {
            Score::Draw
        } else {
            Score::Loss
        };
        let (white, black) = rate_game(white, black, score, &settings);
        check(&white);
        check(&black);
        ratings[w] = white;
        ratings[b] = black;
    }

    // A tenth of all games are draws whatever the strengths, which narrows
    // the spread of the ratings, but not their order.
    for pair in ratings.windows(2) {
        assert!(pair[0].rating < pair[1].rating + 150.0, "{pair:?}");
    }
    assert!(ratings[0].rating + 1000.0 < ratings[ratings.len() - 1].rating, "{ratings:?}");
}
