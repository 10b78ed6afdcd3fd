//! Arena tournaments end to end: berserk bots on `fogblast up` create a
//! one-minute atomic arena through lichess's tournament API, join it and
//! play every game they are paired in (one goes berserk each time); at the
//! end the standings must be exactly the scores recomputed from the
//! archive's games of that tournament, with the same rules.

use std::collections::BTreeMap;
use std::time::Duration;

use fogblast_tournament::arena::{Outcome, Played, Sheet};
use serde_json::Value;

use crate::events::run_for;
use crate::support::Proc;

fn arena_bots(up: &Proc) -> Value {
    let python = fogblast_testkit::python::python();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/python/bots/play.py");
    let mut command = std::process::Command::new(python);
    command.arg(script).arg("arena").arg(format!("http://{}", up.http));
    let output = run_for(&mut command, Duration::from_secs(420));
    assert!(output.status.success(), "the bots failed: {}\n{}", String::from_utf8_lossy(&output.stderr), up.logs());
    let printed = String::from_utf8(output.stdout).expect("UTF-8");
    serde_json::from_str(printed.lines().last().expect("a summary")).expect(&printed)
}

/// The arena's scores from its archived games alone, game by game in the
/// order they ended.
fn scores_from_archive(archived: &[Value]) -> BTreeMap<String, u32> {
    let mut games: Vec<&Value> = archived.iter().collect();
    games.sort_by_key(|g| (g["ended_ms"].as_u64().unwrap(), g["game"].as_str().unwrap().to_owned()));
    let mut sheets: BTreeMap<String, Sheet> = BTreeMap::new();
    for game in games {
        let outcome = match game["result"].as_str().unwrap() {
            "1-0" => (Outcome::Win, Outcome::Loss),
            "0-1" => (Outcome::Loss, Outcome::Win),
            "1/2-1/2" => (Outcome::Draw, Outcome::Draw),
            _ => continue,
        };
        let plies = game["moves"].as_array().unwrap().len() as u32;
        let id = |side: &str| game["players"][side]["id"].as_str().unwrap().to_owned();
        let (white, black) = (id("white"), id("black"));
        for (me, other, result, side) in [(&white, &black, outcome.0, "white"), (&black, &white, outcome.1, "black")] {
            let berserk = game["berserk"][side].as_bool().unwrap();
            let played =
                Played { game: game["game"].as_str().unwrap(), opponent: other, outcome: result, plies, berserk };
            sheets.entry(me.clone()).or_default().record(&played);
        }
    }
    sheets.into_iter().map(|(player, sheet)| (player, sheet.score)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_arena_is_played_to_its_end_and_its_standings_match_the_archive() {
    let up = Proc::up_with("arena", &["--tournament-min-minutes", "1"]);
    let seen = arena_bots(&up);
    assert_eq!(seen["finished"], true, "the arena finished: {seen}");
    assert_eq!(seen["name"], "Test <b>arena</b>", "markup is kept as text, to be shown escaped: {seen}");
    assert_eq!(seen["description"], "<script>alert(1)</script>");
    assert_eq!(seen["join_twice_status"], 200, "joining twice changes nothing: {seen}");
    assert_eq!(seen["join_late_status"], 400, "a finished arena is not joined: {seen}");
    assert!(seen["listed_finished"].as_array().unwrap().contains(&seen["tournament"]), "{seen}");
    assert_eq!(seen["refusals"], serde_json::json!([]), "every berserk before a first move was taken: {seen}");
    let played = seen["played"].as_array().unwrap();
    assert!(played.len() >= 2, "the bots were paired again and again: {seen}");
    let archived = seen["archived"].as_array().unwrap();
    assert_eq!(archived.len(), played.len(), "every game of the arena is archived: {seen}");
    let berserker = seen["players"][0].as_str().unwrap();
    assert!(
        archived.iter().any(|g| ["white", "black"]
            .iter()
            .any(|side| g["players"][*side]["id"] == berserker && g["berserk"][*side] == true)),
        "the berserk is in the archive: {seen}"
    );
    let recomputed = scores_from_archive(archived);
    let results = seen["results"].as_array().unwrap();
    assert_eq!(results.len(), 4, "every player is in the results: {seen}");
    for line in results {
        let player = line["id"].as_str().unwrap();
        let expected = recomputed.get(player).copied().unwrap_or(0);
        assert_eq!(line["score"].as_u64().unwrap() as u32, expected, "{player}'s score from the archive: {seen}");
    }
    let podium: Vec<&Value> = results.iter().take(3).map(|r| &r["id"]).collect();
    assert_eq!(seen["podium"].as_array().unwrap().iter().collect::<Vec<_>>(), podium, "{seen}");
    up.terminate();
}
