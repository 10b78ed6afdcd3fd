//! The arena load test's final check: every game the players saw end is in
//! the archive as they saw it (moves, result, players, berserks), the
//! archive holds no game of the arena that no player was told of, nobody
//! sat in two games at once, and every player's score in the arena's
//! results is exactly the score recomputed from the archived games with
//! the arena's rules (`fogblast_tournament::arena`).

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use anyhow::Context;
use fogblast_client::Http;
use fogblast_tournament::arena::{Outcome, Played, Sheet};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::Value;

use super::player::{PlayerReport, SeenGame};

/// How long the archive gets to hold every game after the arena ends.
const ARCHIVE_WAIT: Duration = Duration::from_secs(180);
/// Players whose game lists are read at once.
const READS_IN_FLIGHT: usize = 32;

/// An archived game, as `/api/players/{id}/games` lists it.
#[derive(Clone, Debug, Deserialize)]
pub struct Archived {
    pub game: String,
    players: Sides<Value>,
    result: String,
    moves: Vec<String>,
    started_ms: u64,
    ended_ms: u64,
    tournament: Option<String>,
    berserk: Sides<bool>,
}

#[derive(Clone, Debug, Deserialize)]
struct Sides<T> {
    white: T,
    black: T,
}

impl Archived {
    fn player(&self, color: &str) -> Option<&str> {
        let side = if color == "white" { &self.players.white } else { &self.players.black };
        side["id"].as_str()
    }
}

/// One line of `/api/tournament/{id}/results`.
#[derive(Clone, Debug, Deserialize)]
pub struct ResultLine {
    pub id: String,
    pub score: u32,
}

/// What the check found; the run fails unless every count but `games`,
/// `moves` and `players` is zero.
#[derive(Debug, Default)]
pub struct Verdict {
    pub games: usize,
    pub moves: usize,
    pub players: usize,
    pub missing: Vec<String>,
    pub mismatched: Vec<String>,
    pub untold: Vec<String>,
    pub overlapping: Vec<String>,
    pub scores_differ: Vec<String>,
    pub unranked: Vec<String>,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        [&self.missing, &self.mismatched, &self.untold, &self.overlapping, &self.scores_differ, &self.unranked]
            .iter()
            .all(|v| v.is_empty())
    }

    pub fn print(&self) {
        println!(
            "verified: {} games, {} moves: {} missing from the archive, {} mismatched, {} untold",
            self.games,
            self.moves,
            self.missing.len(),
            self.mismatched.len(),
            self.untold.len()
        );
        println!(
            "scores: {} players recomputed from the archive: {} differ, {} missing from the results, {} in two games at once",
            self.players,
            self.scores_differ.len(),
            self.unranked.len(),
            self.overlapping.len()
        );
        for (what, list) in [
            ("missing", &self.missing),
            ("mismatched", &self.mismatched),
            ("untold", &self.untold),
            ("in two games at once", &self.overlapping),
            ("score differs", &self.scores_differ),
            ("not in the results", &self.unranked),
        ] {
            for line in list.iter().take(5) {
                println!("  {what}: {line}");
            }
        }
    }
}

/// Every game that ended with a result the arena scores.
fn scored(result: &str) -> bool {
    matches!(result, "1-0" | "0-1" | "1/2-1/2")
}

/// The views of each game, by id: each player's, with their id.
fn views(reports: &[PlayerReport]) -> BTreeMap<String, Vec<(&str, &SeenGame)>> {
    let mut views: BTreeMap<String, Vec<(&str, &SeenGame)>> = BTreeMap::new();
    for report in reports {
        let Some(player) = report.id.as_deref() else { continue };
        for game in &report.games {
            views.entry(game.id.clone()).or_default().push((player, game));
        }
    }
    views
}

/// Reads every player's archived games of `tournament` until each game
/// the players saw scored is there, or [`ARCHIVE_WAIT`] has passed.
pub async fn read_archive(
    http: &Http,
    tournament: &str,
    reports: &[PlayerReport],
) -> anyhow::Result<HashMap<String, Archived>> {
    let expected: Vec<String> = views(reports)
        .into_iter()
        .filter(|(_, views)| views.iter().any(|(_, seen)| seen.result.as_deref().is_some_and(scored)))
        .map(|(id, _)| id)
        .collect();
    let players: Vec<&str> = reports.iter().filter_map(|r| r.id.as_deref()).collect();
    let deadline = tokio::time::Instant::now() + ARCHIVE_WAIT;
    loop {
        let mut archived = HashMap::new();
        let lists: Vec<anyhow::Result<Vec<Archived>>> =
            futures::stream::iter(players.iter().map(|player| games_of(http, player, tournament)))
                .buffer_unordered(READS_IN_FLIGHT)
                .collect()
                .await;
        for list in lists {
            for game in list? {
                archived.insert(game.game.clone(), game);
            }
        }
        let all_there = expected.iter().all(|id| archived.contains_key(id));
        if all_there || tokio::time::Instant::now() > deadline {
            return Ok(archived);
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// One player's archived games of `tournament`, every page.
async fn games_of(http: &Http, player: &str, tournament: &str) -> anyhow::Result<Vec<Archived>> {
    let mut games = Vec::new();
    let mut token: Option<String> = None;
    for _ in 0..100 {
        let mut path = format!("/api/players/{player}/games?page_size=100");
        if let Some(token) = &token {
            path.push_str(&format!("&page_token={token}"));
        }
        let (status, page): (u16, Value) = http.get_json(&path).await.with_context(|| format!("GET {path}"))?;
        anyhow::ensure!(status == 200, "GET {path}: status {status}");
        for game in page["games"].as_array().into_iter().flatten() {
            let game: Archived = serde_json::from_value(game.clone()).with_context(|| format!("reading {game}"))?;
            if game.tournament.as_deref() == Some(tournament) {
                games.push(game);
            }
        }
        match page["next_page_token"].as_str() {
            Some(next) if !next.is_empty() && token.as_deref() != Some(next) => token = Some(next.to_owned()),
            _ => break,
        }
    }
    Ok(games)
}

/// Checks the archive against what the players saw, and the results
/// against the archive.
pub fn judge(reports: &[PlayerReport], archived: &HashMap<String, Archived>, results: &[ResultLine]) -> Verdict {
    let mut verdict = Verdict::default();
    let views = views(reports);
    for (id, seen) in &views {
        let scored_end = seen.iter().find_map(|(_, s)| s.result.as_deref().filter(|r| scored(r)));
        match (archived.get(id), scored_end) {
            (Some(game), _) => {
                verdict.games += 1;
                verdict.moves += game.moves.len();
                if let Err(why) = matches_views(game, seen) {
                    verdict.mismatched.push(format!("{id}: {why}"));
                }
            }
            (None, Some(result)) => verdict.missing.push(format!("{id} ({result})")),
            // Ended without a score (aborted): nothing to archive.
            (None, None) => {}
        }
    }
    verdict.untold = archived.keys().filter(|id| !views.contains_key(*id)).cloned().collect();
    verdict.overlapping = overlaps(archived);
    let recomputed = scores_from_archive(archived);
    let ranked: HashMap<&str, u32> = results.iter().map(|line| (line.id.as_str(), line.score)).collect();
    for report in reports {
        let Some(player) = report.id.as_deref() else { continue };
        verdict.players += 1;
        let expected = recomputed.get(player).copied().unwrap_or(0);
        match ranked.get(player) {
            None => verdict.unranked.push(player.to_owned()),
            Some(&score) if score != expected => {
                verdict.scores_differ.push(format!("{player}: {score} in the results, {expected} from the archive"))
            }
            Some(_) => {}
        }
    }
    verdict
}

/// The archived game agrees with every view of it: players and colours,
/// each move a player saw at its ply, the length of a complete view, the
/// result and the berserks.
fn matches_views(game: &Archived, seen: &[(&str, &SeenGame)]) -> Result<(), String> {
    for (player, view) in seen {
        if game.player(&view.color) != Some(player) {
            return Err(format!("{player} played {} but the archive says {:?}", view.color, game.player(&view.color)));
        }
        let berserk = if view.color == "white" { game.berserk.white } else { game.berserk.black };
        if berserk != view.berserk {
            return Err(format!("{player}'s berserk: {} played, {berserk} archived", view.berserk));
        }
        if let Some(result) = &view.result {
            if *result != game.result {
                return Err(format!("{player} saw {result}, the archive has {}", game.result));
            }
            if view.end_moves.len() != game.moves.len() {
                return Err(format!("{} plies at the end, {} archived", view.end_moves.len(), game.moves.len()));
            }
        }
        for moves in [&view.moves, &view.end_moves] {
            if moves.len() > game.moves.len() {
                return Err(format!("{player} saw {} plies, {} archived", moves.len(), game.moves.len()));
            }
            for (ply, (saw, kept)) in moves.iter().zip(&game.moves).enumerate() {
                if saw.as_ref().is_some_and(|saw| saw != kept) {
                    return Err(format!("ply {ply}: {player} saw {saw:?}, the archive has {kept}"));
                }
            }
        }
    }
    Ok(())
}

/// Players who sat in two of the arena's games at once.
fn overlaps(archived: &HashMap<String, Archived>) -> Vec<String> {
    let mut spans: BTreeMap<&str, Vec<(u64, u64, &str)>> = BTreeMap::new();
    for game in archived.values() {
        for color in ["white", "black"] {
            if let Some(player) = game.player(color) {
                spans.entry(player).or_default().push((game.started_ms, game.ended_ms, &game.game));
            }
        }
    }
    let mut found = Vec::new();
    for (player, mut games) in spans {
        games.sort();
        for pair in games.windows(2) {
            if pair[0].1 > pair[1].0 {
                found.push(format!("{player}: {} and {}", pair[0].2, pair[1].2));
            }
        }
    }
    found
}

/// The arena's scores from its archived games alone, each player's games
/// in the order they ended.
pub fn scores_from_archive(archived: &HashMap<String, Archived>) -> HashMap<String, u32> {
    let mut games: Vec<&Archived> = archived.values().collect();
    games.sort_by(|a, b| (a.ended_ms, &a.game).cmp(&(b.ended_ms, &b.game)));
    let mut sheets: HashMap<String, Sheet> = HashMap::new();
    for game in games {
        let (white_outcome, black_outcome) = match game.result.as_str() {
            "1-0" => (Outcome::Win, Outcome::Loss),
            "0-1" => (Outcome::Loss, Outcome::Win),
            "1/2-1/2" => (Outcome::Draw, Outcome::Draw),
            _ => continue,
        };
        let (Some(white), Some(black)) = (game.player("white"), game.player("black")) else { continue };
        let plies = game.moves.len() as u32;
        for (me, opponent, outcome, berserk) in
            [(white, black, white_outcome, game.berserk.white), (black, white, black_outcome, game.berserk.black)]
        {
            let played = Played { game: &game.game, opponent, outcome, plies, berserk };
            sheets.entry(me.to_owned()).or_default().record(&played);
        }
    }
    sheets.into_iter().map(|(player, sheet)| (player, sheet.score)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archived(game: &str, white: &str, black: &str, result: &str, moves: &[&str], ended_ms: u64) -> Archived {
        Archived {
            game: game.into(),
            players: Sides { white: serde_json::json!({"id": white}), black: serde_json::json!({"id": black}) },
            result: result.into(),
            moves: moves.iter().map(|m| m.to_string()).collect(),
            started_ms: ended_ms - 10,
            ended_ms,
            tournament: Some("t1".into()),
            berserk: Sides { white: false, black: false },
        }
    }

    fn seen(game: &str, color: &str, moves: &[Option<&str>], result: &str) -> SeenGame {
        let moves: Vec<Option<String>> = moves.iter().map(|m| m.map(str::to_owned)).collect();
        SeenGame {
            id: game.into(),
            color: color.into(),
            moves: moves.clone(),
            result: Some(result.into()),
            end_moves: moves,
            berserk: false,
        }
    }

    fn report(id: &str, games: Vec<SeenGame>) -> PlayerReport {
        PlayerReport { id: Some(id.into()), games, ..PlayerReport::default() }
    }

    fn one_game_arena() -> (Vec<PlayerReport>, HashMap<String, Archived>) {
        let moves = ["e2e4", "d7d5", "e4d5"];
        let reports = vec![
            report("ann", vec![seen("g1", "white", &[Some("e2e4"), None, Some("e4d5")], "1-0")]),
            report("bob", vec![seen("g1", "black", &[Some("e2e4"), Some("d7d5"), Some("e4d5")], "1-0")]),
        ];
        let archive = HashMap::from([("g1".to_owned(), archived("g1", "ann", "bob", "1-0", &moves, 100))]);
        (reports, archive)
    }

    #[test]
    fn an_arena_whose_archive_and_results_agree_passes() {
        let (reports, archive) = one_game_arena();
        let results = [ResultLine { id: "ann".into(), score: 2 }, ResultLine { id: "bob".into(), score: 0 }];
        let verdict = judge(&reports, &archive, &results);
        assert!(verdict.passed(), "{verdict:?}");
        assert_eq!((verdict.games, verdict.moves, verdict.players), (1, 3, 2));
    }

    #[test]
    fn a_lost_or_changed_move_a_missing_game_and_a_wrong_score_each_fail() {
        let (reports, mut archive) = one_game_arena();
        let results = [ResultLine { id: "ann".into(), score: 2 }, ResultLine { id: "bob".into(), score: 0 }];
        archive.get_mut("g1").unwrap().moves[1] = "d7d6".into();
        assert_eq!(judge(&reports, &archive, &results).mismatched.len(), 1, "a changed move");
        archive.get_mut("g1").unwrap().moves.truncate(2);
        assert_eq!(judge(&reports, &archive, &results).mismatched.len(), 1, "a lost move");
        let verdict = judge(&reports, &HashMap::new(), &results);
        assert_eq!(verdict.missing, ["g1 (1-0)"], "a game not archived");
        let (reports, archive) = one_game_arena();
        let wrong = [ResultLine { id: "ann".into(), score: 4 }, ResultLine { id: "bob".into(), score: 0 }];
        assert_eq!(judge(&reports, &archive, &wrong).scores_differ.len(), 1, "a score not from the archive");
        let verdict = judge(&reports, &archive, &wrong[..1]);
        assert_eq!(verdict.unranked, ["bob"], "a player left out of the results");
    }

    #[test]
    fn a_game_nobody_was_told_of_and_two_games_at_once_fail() {
        let (reports, mut archive) = one_game_arena();
        let mut untold = archived("g2", "ann", "carl", "0-1", &["e2e4"], 105);
        untold.started_ms = 95;
        archive.insert("g2".into(), untold);
        let results = [ResultLine { id: "ann".into(), score: 2 }, ResultLine { id: "bob".into(), score: 0 }];
        let verdict = judge(&reports, &archive, &results);
        assert_eq!(verdict.untold, ["g2"]);
        assert_eq!(verdict.overlapping, ["ann: g1 and g2"]);
    }

    #[test]
    fn scores_follow_the_arena_rules_in_the_order_games_ended() {
        let games = [
            archived("a", "ann", "bob", "1-0", &["e2e4"; 20], 100),
            archived("b", "bob", "ann", "0-1", &["e2e4"; 20], 200),
            // On fire: double.
            archived("c", "ann", "bob", "1-0", &["e2e4"; 20], 300),
            // A draw under 20 plies scores nothing.
            archived("d", "bob", "ann", "1/2-1/2", &["e2e4"; 10], 400),
        ];
        let archive: HashMap<String, Archived> = games.into_iter().map(|g| (g.game.clone(), g)).collect();
        let scores = scores_from_archive(&archive);
        assert_eq!(scores["ann"], 2 + 2 + 4);
        assert_eq!(scores["bob"], 0);
    }
}
