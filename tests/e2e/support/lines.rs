//! Lines of play and boards, found and read with the rules crate.

use std::collections::BTreeMap;

use fogblast_rules::{CastlingMode, Color, Fen, Game, Outcome, Position, Variant, WinReason};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;

/// A line from the starting position that ends by the rules.
#[derive(Clone, Debug)]
pub struct Line {
    pub moves: Vec<String>,
    pub result: &'static str,
    /// The final position's FEN.
    pub fen: String,
}

/// A line of `variant` from its standard start that ends in a win for
/// `reason` after `min..=max` plies: seeded random playouts that never end
/// the game early and take the winning move once the line is long enough.
pub fn find_line(variant: Variant, reason: WinReason, min: usize, max: usize) -> Line {
    let mut rng = StdRng::seed_from_u64(0xf06b_1a57 ^ ((min as u64) << 16) ^ max as u64);
    for _ in 0..5_000 {
        let mut game = Game::new(Position::new(variant));
        while game.ply() < max {
            let mut quiet = Vec::new();
            let mut winning = None;
            for m in game.position().legal_moves() {
                let mut next = game.clone();
                next.play(m).expect("legal moves play");
                match next.outcome() {
                    None => quiet.push(next),
                    Some(Outcome::Decisive { reason: r, .. }) if r == reason => winning = Some(next),
                    Some(_) => {}
                }
            }
            if let Some(won) = winning.filter(|g| g.ply() >= min) {
                let outcome = won.outcome().expect("won");
                return Line {
                    moves: won.moves().iter().map(|m| m.to_uci(CastlingMode::Standard).to_string()).collect(),
                    result: outcome.result_str(),
                    fen: Fen::from_position(won.position()).to_string(),
                };
            }
            if quiet.is_empty() {
                break;
            }
            let i = rng.random_range(0..quiet.len());
            game = quiet.swap_remove(i);
        }
    }
    panic!("no line of {variant:?} to {reason:?} in {min}..={max} plies");
}

/// The positions along `line`: after 0, 1, … plies.
pub fn positions(variant: Variant, line: &[String]) -> Vec<Position> {
    let mut game = Game::new(Position::new(variant));
    let mut out = vec![*game.position()];
    for uci in line {
        game.play_uci(uci).unwrap_or_else(|e| panic!("{uci}: {e:?}"));
        out.push(*game.position());
    }
    out
}

/// The pieces a FEN's board shows, by square name.
pub fn pieces(fen: &str) -> BTreeMap<String, char> {
    let board = fen.split_whitespace().next().unwrap_or("");
    let mut out = BTreeMap::new();
    for (row, rank) in board.split('/').enumerate() {
        let mut file = 0u8;
        for c in rank.chars() {
            if let Some(skip) = c.to_digit(10) {
                file += skip as u8;
            } else {
                out.insert(format!("{}{}", (b'a' + file) as char, 8 - row), c);
                file += 1;
            }
        }
    }
    out
}

/// What `color` is shown of `position` in fog of war: its pieces and the
/// visible squares, by name.
pub fn fog_view(position: &Position, color: Color) -> (BTreeMap<String, char>, Vec<String>) {
    let view = position.fog_view(color);
    let visible: Vec<String> = view.visible.into_iter().map(|sq| sq.to_string()).collect();
    let shown =
        view.visible.into_iter().filter_map(|sq| view.board.piece_at(sq).map(|p| (sq.to_string(), p.char()))).collect();
    (shown, visible)
}

/// The strings of a JSON array.
pub fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap_or("<not a string>").to_owned()).collect())
        .unwrap_or_default()
}
