//! The Glicko-2 update, steps 1 to 8 of Glickman's paper
//! (<http://www.glicko.net/glicko/glicko2.pdf>), and the growth of the
//! deviation while a player is away. The public functions speak the Glicko
//! scale; the paper's μ and φ live only inside this module.

use std::time::Duration;

use crate::rating::{Rating, Score};
use crate::settings::Settings;

/// Step 2's factor between the Glicko scale and Glicko-2's (μ, φ).
const SCALE: f64 = 173.7178;

/// The Glicko-scale rating that is μ = 0 on the Glicko-2 scale.
const CENTRE: f64 = 1500.0;

/// ε of step 5: the volatility iteration stops once its bracket is this narrow.
const CONVERGENCE_TOLERANCE: f64 = 0.000001;

/// A bound on step 5's iterations, which converge in a handful; it only
/// keeps a pathological input from looping for ever.
const MAX_ITERATIONS: u32 = 1000;

const SECONDS_PER_DAY: f64 = 24.0 * 60.0 * 60.0;

/// One rating period for `player`, who played every game in `results`
/// (each opponent's rating before the period, and the player's score).
///
/// This is the paper's algorithm: step 6 adds
/// [`Settings::periods_per_update`] periods of deviation growth (1 in the
/// paper, 0 for lichess). With no games, only step 6 applies. The returned
/// deviation and volatility are within the bounds of `settings`.
pub fn rate(player: Rating, results: &[(Rating, Score)], settings: &Settings) -> Rating {
    // Step 2: to the Glicko-2 scale.
    let mu = (player.rating - CENTRE) / SCALE;
    let phi = player.deviation / SCALE;
    let sigma = player.volatility;

    // Steps 3 and 4: the estimated variance v of the rating from the games
    // alone, and the sum that step 4's improvement Δ = v·sum and step 7's
    // new rating share.
    let mut v_inverse = 0.0;
    let mut sum = 0.0;
    for &(opponent, score) in results {
        let mu_j = (opponent.rating - CENTRE) / SCALE;
        let g_j = g(opponent.deviation / SCALE);
        let e_j = expected(mu, mu_j, g_j);
        v_inverse += g_j * g_j * e_j * (1.0 - e_j);
        sum += g_j * (score.value() - e_j);
    }
    // No games, or only games whose results were certain (opponents some
    // 6000 points away, beyond f64's reach): nothing to learn.
    if !(v_inverse > 0.0 && v_inverse.is_finite()) {
        return grow(player, settings.periods_per_update, settings);
    }
    let v = 1.0 / v_inverse;
    let delta = v * sum;

    // Step 5: the new volatility.
    let sigma = new_volatility(phi, sigma, v, delta, settings.tau);

    // Step 6: the pre-period deviation φ*.
    let phi_star = (phi * phi + sigma * sigma * settings.periods_per_update).sqrt();

    // Step 7: the new deviation and rating.
    let phi = 1.0 / (1.0 / (phi_star * phi_star) + 1.0 / v).sqrt();
    let mu = mu + phi * phi * sum;

    // Step 8: back to the Glicko scale.
    settings.bound(Rating { rating: CENTRE + SCALE * mu, deviation: SCALE * phi, volatility: sigma })
}

/// Both players' ratings after one game between them, each computed from
/// the other's rating before it, as lichess rates every game as its own
/// rating period. `white_score` is white's result.
///
/// Apply [`decay`] to each rating first, for the time since that player's
/// last rated game.
pub fn rate_game(white: Rating, black: Rating, white_score: Score, settings: &Settings) -> (Rating, Rating) {
    (rate(white, &[(black, white_score)], settings), rate(black, &[(white, white_score.opponent())], settings))
}

/// `rating` after `elapsed` without rated games: step 6's
/// φ* = √(φ² + σ²·t), with t = `elapsed` in days times
/// [`Settings::rating_periods_per_day`], and the deviation brought within
/// the bounds of `settings` (so never above 500 with lichess's). The rating
/// and volatility do not change.
///
/// Decay from the time of the player's last rated game each time: decaying
/// twice over the same time counts it twice.
pub fn decay(rating: Rating, elapsed: Duration, settings: &Settings) -> Rating {
    let periods = elapsed.as_secs_f64() / SECONDS_PER_DAY * settings.rating_periods_per_day;
    grow(rating, periods, settings)
}

/// Step 6 alone over `periods` rating periods, then the bounds. No time
/// leaves the deviation exactly as it was, rather than rounded through the
/// Glicko-2 scale.
fn grow(rating: Rating, periods: f64, settings: &Settings) -> Rating {
    if periods == 0.0 {
        return settings.bound(rating);
    }
    let phi = rating.deviation / SCALE;
    let sigma = rating.volatility;
    let phi_star = (phi * phi + sigma * sigma * periods).sqrt();
    settings.bound(Rating { deviation: SCALE * phi_star, ..rating })
}

/// Step 3's g(φ): how much a result against an opponent with deviation φ
/// counts.
fn g(phi: f64) -> f64 {
    1.0 / (1.0 + 3.0 * phi * phi / (std::f64::consts::PI * std::f64::consts::PI)).sqrt()
}

/// Step 3's E(μ, μⱼ, φⱼ), with g(φⱼ) given: the expected score against the
/// opponent.
fn expected(mu: f64, mu_j: f64, g_j: f64) -> f64 {
    1.0 / (1.0 + (-g_j * (mu - mu_j)).exp())
}

/// Step 5: the new volatility σ', by the Illinois algorithm on f.
fn new_volatility(phi: f64, sigma: f64, v: f64, delta: f64, tau: f64) -> f64 {
    // Step 5.1.
    let a = (sigma * sigma).ln();
    let phi2 = phi * phi;
    let delta2 = delta * delta;
    let f = |x: f64| {
        let ex = x.exp();
        let d = phi2 + v + ex;
        ex * (delta2 - phi2 - v - ex) / (2.0 * d * d) - (x - a) / (tau * tau)
    };

    // Step 5.2: a bracket [A, B] around the root.
    let mut x_a = a;
    let mut x_b = if delta2 > phi2 + v {
        (delta2 - phi2 - v).ln()
    } else {
        let mut k = 1.0;
        while f(a - k * tau) < 0.0 {
            k += 1.0;
        }
        a - k * tau
    };

    // Step 5.3.
    let mut f_a = f(x_a);
    let mut f_b = f(x_b);

    // Step 5.4.
    let mut iterations = 0;
    while (x_b - x_a).abs() > CONVERGENCE_TOLERANCE && iterations < MAX_ITERATIONS {
        let x_c = x_a + (x_a - x_b) * f_a / (f_b - f_a);
        let f_c = f(x_c);
        if f_c * f_b <= 0.0 {
            x_a = x_b;
            f_a = f_b;
        } else {
            f_a /= 2.0;
        }
        x_b = x_c;
        f_b = f_c;
        iterations += 1;
    }

    // Step 5.5.
    (x_a / 2.0).exp()
}
