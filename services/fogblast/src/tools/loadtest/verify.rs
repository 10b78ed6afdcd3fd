//! The load test's check of its own work: every game the bots played is
//! read back from a gateway as a spectator sees it (`GET /api/games/{id}`),
//! and its move list must be exactly the moves the bots made and had
//! acknowledged. The bots resign every game before this runs, so fog of
//! war games are over and show all their moves; a fog game still in
//! progress (its pair lost a connection) can only be checked move by move
//! where the server shows the move, and by its length.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use fogblast_client::Http;
use fogblast_rules::Variant;
use serde_json::Value;

use super::bot::PlayedGame;

/// Mismatches quoted in full in the report; the rest are only counted.
const QUOTED: usize = 10;

/// What the check found.
#[derive(Debug, Default)]
pub struct Verdict {
    pub games: usize,
    pub moves: usize,
    /// Games whose move list matched.
    pub matched: usize,
    /// Of those, games in progress in fog of war, checked only as far as
    /// a spectator may see.
    pub partly_hidden: usize,
    pub mismatches: usize,
    /// Games that could not be read at all.
    pub unreadable: usize,
    /// The first few problems, in words.
    pub problems: Vec<String>,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        self.mismatches == 0 && self.unreadable == 0
    }
}

/// Reads back every game, `concurrency` at a time.
pub async fn verify(games: Vec<PlayedGame>, concurrency: usize) -> Verdict {
    let games = Arc::new(games);
    let next = Arc::new(AtomicUsize::new(0));
    let verdict = Arc::new(Mutex::new(Verdict {
        games: games.len(),
        moves: games.iter().map(|g| g.moves.len()).sum(),
        ..Verdict::default()
    }));
    let workers: Vec<_> = (0..concurrency.max(1))
        .map(|_| {
            let (games, next, verdict) = (games.clone(), next.clone(), verdict.clone());
            tokio::spawn(async move {
                let mut conns: HashMap<String, Http> = HashMap::new();
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(game) = games.get(index) else { break };
                    let result = read_and_check(game, &mut conns).await;
                    let mut verdict = verdict.lock().expect("verdict lock");
                    match result {
                        Ok(Checked::Whole) => verdict.matched += 1,
                        Ok(Checked::PartlyHidden) => {
                            verdict.matched += 1;
                            verdict.partly_hidden += 1;
                        }
                        Err(Problem::Mismatch(text)) => {
                            verdict.mismatches += 1;
                            if verdict.problems.len() < QUOTED {
                                verdict.problems.push(text);
                            }
                        }
                        Err(Problem::Unreadable(text)) => {
                            verdict.unreadable += 1;
                            if verdict.problems.len() < QUOTED {
                                verdict.problems.push(text);
                            }
                        }
                    }
                }
            })
        })
        .collect();
    for worker in workers {
        if let Err(error) = worker.await {
            let mut verdict = verdict.lock().expect("verdict lock");
            verdict.unreadable += 1;
            verdict.problems.push(format!("a verification worker failed: {error}"));
        }
    }
    let verdict = std::mem::take(&mut *verdict.lock().expect("verdict lock"));
    verdict
}

enum Checked {
    Whole,
    PartlyHidden,
}

enum Problem {
    Mismatch(String),
    Unreadable(String),
}

async fn read_and_check(game: &PlayedGame, conns: &mut HashMap<String, Http>) -> Result<Checked, Problem> {
    // One client per gateway keeps its connections alive between games, so
    // thousands of games are read over a few sockets.
    let http = conns.entry(game.http.clone()).or_insert_with(|| Http::new(&game.http));
    let answer = http.game(&game.id).await.map_err(|e| Problem::Unreadable(format!("game {}: {e}", game.id)))?;
    let (status, body) = (answer.status, answer.body);
    if status != 200 {
        let text = String::from_utf8_lossy(&body);
        let shown: String = text.chars().take(200).collect();
        return Err(Problem::Unreadable(format!("game {}: HTTP {status}: {shown}", game.id)));
    }
    let state: Value = serde_json::from_slice(&body)
        .map_err(|e| Problem::Unreadable(format!("game {}: the answer is not JSON: {e}", game.id)))?;
    check(game, &state).map_err(Problem::Mismatch)
}

/// Compares the server's view of a game with what the bots played.
fn check(game: &PlayedGame, state: &Value) -> Result<Checked, String> {
    let id = &game.id;
    let Some(moves) = state.get("moves").and_then(Value::as_array) else {
        return Err(format!("game {id}: the server's state has no move list"));
    };
    let status = state.get("status").and_then(Value::as_str).unwrap_or("missing");
    if game.ended && status != "ended" {
        return Err(format!("game {id}: both bots saw it end, but the server says it is {status}"));
    }
    let may_hide = game.variant == Variant::Fog && status != "ended";
    let mut hidden = false;
    for (ply, ours) in game.moves.iter().enumerate() {
        match moves.get(ply) {
            Some(Value::String(theirs)) if theirs == ours => {}
            Some(Value::Null) if may_hide => hidden = true,
            Some(theirs) => {
                return Err(format!(
                    "game {id} ({}): ply {ply} is {theirs} on the server, {ours:?} as acknowledged",
                    game.variant
                ))
            }
            None => break,
        }
    }
    if moves.len() != game.moves.len() {
        return Err(format!(
            "game {id} ({}): the server holds {} moves, the bots had {} acknowledged",
            game.variant,
            moves.len(),
            game.moves.len()
        ));
    }
    Ok(if hidden { Checked::PartlyHidden } else { Checked::Whole })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn played(variant: Variant, moves: &[&str], ended: bool) -> PlayedGame {
        PlayedGame {
            id: "g1".into(),
            http: "http://127.0.0.1:1".into(),
            variant,
            moves: moves.iter().map(|m| (*m).to_owned()).collect(),
            ended,
        }
    }

    #[test]
    fn equal_lists_pass_and_any_difference_fails() {
        let game = played(Variant::Atomic, &["e2e4", "e7e5"], true);
        let ok = json!({ "status": "ended", "moves": ["e2e4", "e7e5"] });
        assert!(matches!(check(&game, &ok), Ok(Checked::Whole)));
        for bad in [
            json!({ "status": "ended", "moves": ["e2e4"] }),
            json!({ "status": "ended", "moves": ["e2e4", "e7e5", "g1f3"] }),
            json!({ "status": "ended", "moves": ["e2e4", "e7e6"] }),
            json!({ "status": "playing", "moves": ["e2e4", "e7e5"] }),
            json!({ "status": "ended", "moves": ["e2e4", null] }),
            json!({ "status": "ended" }),
        ] {
            assert!(check(&game, &bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_fog_game_in_progress_is_checked_as_far_as_it_shows() {
        let game = played(Variant::Fog, &["e2e4", "e7e5"], false);
        let hidden = json!({ "status": "playing", "moves": [null, null] });
        assert!(matches!(check(&game, &hidden), Ok(Checked::PartlyHidden)));
        let short = json!({ "status": "playing", "moves": [null] });
        assert!(check(&game, &short).is_err());
    }
}
