//! Tournaments end to end: berserk bots on `fogblast up` create a
//! one-minute atomic arena through lichess's tournament API, join it and
//! play every game they are paired in (one goes berserk each time); at the
//! end the standings must be exactly the scores recomputed from the
//! archive's games of that tournament, with the same rules. The same for a
//! three-round Swiss through lichess's Swiss API, tie-breaks included.

use std::collections::BTreeMap;
use std::time::Duration;

use fogblast_tournament::arena::{Outcome, Played, Sheet};
use fogblast_tournament::tiebreak::{standings, PlayerRecord, RoundResult, TieBreak};
use serde_json::{json, Value};

use crate::events::run_for;
use crate::support::{Cluster, Proc};

fn bots_command(urls: &[String]) -> std::process::Command {
    let python = fogblast_testkit::python::python();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/python/bots/play.py");
    let mut command = std::process::Command::new(python);
    command.arg(script).arg("arena").args(urls);
    command
}

fn summary(output: &std::process::Output, logs: &str) -> Value {
    assert!(output.status.success(), "the bots failed: {}\n{logs}", String::from_utf8_lossy(&output.stderr));
    let printed = String::from_utf8(output.stdout.clone()).expect("UTF-8");
    serde_json::from_str(printed.lines().last().expect("a summary")).expect(&printed)
}

fn arena_bots(up: &Proc) -> Value {
    let output = run_for(&mut bots_command(&[format!("http://{}", up.http)]), Duration::from_secs(420));
    summary(&output, &up.logs())
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

/// What every arena must show at its end: every game archived, each
/// player's score exactly the archive's, the podium the top three.
fn assert_standings_match_the_archive(seen: &Value) {
    assert_eq!(seen["finished"], true, "the arena finished: {seen}");
    let played = seen["played"].as_array().unwrap();
    assert!(played.len() >= 2, "the bots were paired again and again: {seen}");
    let archived = seen["archived"].as_array().unwrap();
    assert_eq!(archived.len(), played.len(), "every game of the arena is archived: {seen}");
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
}

/// Nobody sat in two games at once: a player paired twice would.
fn assert_nobody_played_two_games_at_once(seen: &Value) {
    let mut spans: BTreeMap<String, Vec<(u64, u64, String)>> = BTreeMap::new();
    for game in seen["archived"].as_array().unwrap() {
        for side in ["white", "black"] {
            let player = game["players"][side]["id"].as_str().unwrap().to_owned();
            let span = (game["started_ms"].as_u64().unwrap(), game["ended_ms"].as_u64().unwrap());
            spans.entry(player).or_default().push((span.0, span.1, game["game"].as_str().unwrap().to_owned()));
        }
    }
    for (player, mut games) in spans {
        games.sort();
        for pair in games.windows(2) {
            assert!(pair[0].1 <= pair[1].0, "{player} played {} and {} at once: {seen}", pair[0].2, pair[1].2);
        }
    }
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
    assert_standings_match_the_archive(&seen);
    assert_nobody_played_two_games_at_once(&seen);
    up.terminate();
}

/// The replica of `replicas` that holds the lease of the one tournament
/// of the cluster, once one does.
fn lease_holder(cluster: &Cluster, replicas: &[&str]) -> Option<usize> {
    let mut redis = redis::Client::open(crate::support::redis_url()).ok()?.get_connection().ok()?;
    let pattern = format!("{}mm:tour:*:lease", cluster.redis_prefix());
    let keys: Vec<String> = redis::cmd("KEYS").arg(&pattern).query(&mut redis).ok()?;
    let holder: String = redis::cmd("GET").arg(keys.first()?).query(&mut redis).ok()?;
    replicas.iter().position(|r| holder.starts_with(&format!("{r}:")))
}

/// The matchmaker replicas of the failover tests.
const REPLICAS: [&str; 2] = ["mm-a", "mm-b"];

/// A cluster with a rating service, the two matchmaker [`REPLICAS`] on its
/// Redis (with `flags` besides their own) and a gateway in front of each;
/// the processes, and the gateways' URLs.
fn two_matchmakers(name: &str, flags: &[&str]) -> (Cluster, Vec<Proc>, Vec<String>) {
    let cluster = Cluster::start(name, 1, 0);
    let rating = cluster.spawn_rating("rating", "sqlite::memory:");
    let rating_addr = format!("http://{}", rating.grpc.expect("the rating service logs its gRPC address"));
    let mut procs: Vec<Proc> = REPLICAS
        .iter()
        .map(|id| {
            let mut all = vec!["--matchmaker-id", id, "--matchmaker-rating-addr", &rating_addr];
            all.extend_from_slice(flags);
            cluster.spawn_matchmaker_with(id, &all)
        })
        .collect();
    let gateways: Vec<Proc> = procs
        .iter()
        .enumerate()
        .map(|(i, matchmaker)| {
            let addr = format!("http://{}", matchmaker.grpc.expect("the matchmaker logs its gRPC address"));
            cluster.spawn_gateway_with(
                &format!("gateway-{i}"),
                &["--matchmaker-addr", &addr, "--rating-addr", &rating_addr],
            )
        })
        .collect();
    let urls = gateways.iter().map(|g| format!("http://{}", g.http)).collect();
    // The matchmakers first; the rest stay up with them until the test ends.
    procs.extend(gateways);
    procs.push(rating);
    (cluster, procs, urls)
}

/// The replica holding the one tournament's lease, once one does within
/// `limit`.
fn lease_holder_within(cluster: &Cluster, limit: Duration) -> Option<usize> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(holder) = lease_holder(cluster, &REPLICAS) {
            return Some(holder);
        }
        if std::time::Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Whether `survivor` took the lease over within 30 s.
fn taken_over(cluster: &Cluster, survivor: usize) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::time::Instant::now() < deadline {
        if lease_holder(cluster, &REPLICAS) == Some(survivor) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    false
}

/// Two matchmaker replicas on Redis; the one driving the arena is killed
/// (SIGKILL) while its games are played. The other takes the arena over:
/// it loses no result and no pairing, pairs nobody twice, the arena's
/// standings at the end are exactly the archive's, and the public stream
/// told the arena's life once, ending with those standings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_matchmaker_killed_mid_arena_loses_and_doubles_nothing() {
    let (cluster, matchmakers, urls) = two_matchmakers("arena-failover", &["--tournament-min-minutes", "1"]);
    // The bots play through the first gateway and read through either.
    let bots =
        bots_command(&urls).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let holder = lease_holder_within(&cluster, Duration::from_secs(60)).expect("a replica took the arena's lease");
    // Mid-event: a few waves paired and games under way.
    std::thread::sleep(Duration::from_secs(15));
    matchmakers[holder].kill();
    let survivor = 1 - holder;
    assert!(taken_over(&cluster, survivor), "{} took the arena over", REPLICAS[survivor]);
    let output = crate::events::wait_for(bots, Duration::from_secs(420)).expect("the bots finished in time");
    let seen = summary(&output, &matchmakers[survivor].logs());
    assert_standings_match_the_archive(&seen);
    assert_nobody_played_two_games_at_once(&seen);
    assert_events_tell_the_arena(&tournament_events(&cluster).await, &seen);
}

/// The tournament events of the cluster's public stream, from its start
/// until a `finished` one (or a minute without it), as JSON.
async fn tournament_events(cluster: &Cluster) -> Vec<Value> {
    use async_nats::jetstream::consumer::{pull::OrderedConfig, DeliverPolicy};
    use futures::StreamExt;
    let client = async_nats::connect(crate::support::nats_url()).await.expect("NATS");
    let jetstream = async_nats::jetstream::new(client);
    let public = fogblast_bus::public_stream(&cluster.names.stream);
    let stream = jetstream.get_stream(&public).await.expect("the public stream");
    let filter_subject = format!("{}tournaments.public.json.*", cluster.names.subject_prefix);
    let config = OrderedConfig { filter_subject, deliver_policy: DeliverPolicy::All, ..Default::default() };
    let mut messages = stream.create_consumer(config).await.unwrap().messages().await.unwrap();
    let mut events = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while let Ok(Some(Ok(message))) = tokio::time::timeout_at(deadline, messages.next()).await {
        let event: Value = serde_json::from_slice(&message.payload).expect("JSON");
        let finished = event["kind"] == "finished";
        events.push(event);
        if finished {
            break;
        }
    }
    events
}

/// The public stream told the arena's life once each, and its last word
/// is the final standings.
fn assert_events_tell_the_arena(events: &[Value], seen: &Value) {
    let ids: Vec<&str> = events.iter().map(|e| e["event_id"].as_str().unwrap()).collect();
    let unique: std::collections::BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "each event once, though its driver was killed: {ids:?}");
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    for kind in ["created", "started", "finished"] {
        assert_eq!(kinds.iter().filter(|k| **k == kind).count(), 1, "one {kind}: {kinds:?}");
    }
    assert_eq!(kinds.last(), Some(&"finished"), "{kinds:?}");
    assert!(kinds.contains(&"standings"), "standings were told as results came: {kinds:?}");
    assert!(events.iter().all(|e| e["tournament_id"] == seen["tournament"] && e["info"]["variant"] == "atomic"));
    let top: Vec<(String, u64)> = events.last().unwrap()["finished"]["top"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["player_id"].as_str().unwrap().to_owned(), l["score"].as_u64().unwrap()))
        .collect();
    let results: Vec<(String, u64)> = seen["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["id"].as_str().unwrap().to_owned(), l["score"].as_u64().unwrap()))
        .collect();
    assert_eq!(top, results, "the finished event's standings are the final ones");
}

fn swiss_command(urls: &[String]) -> std::process::Command {
    let python = fogblast_testkit::python::python();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/python/bots/play.py");
    let mut command = std::process::Command::new(python);
    command.arg(script).arg("swiss").args(urls);
    command
}

fn swiss_bots(urls: &[String], logs: &dyn Fn() -> String) -> Value {
    let output = run_for(&mut swiss_command(urls), Duration::from_secs(600));
    summary(&output, &logs())
}

/// A player's rounds recomputed from the archive: each board's result is
/// the archived game's (a game aborted before a side's first move is that
/// side's forfeit), the pairing-allocated bye a point, a round not paired
/// nothing.
fn swiss_records_from_archive(seen: &Value) -> Vec<PlayerRecord> {
    let archived: BTreeMap<&str, &Value> =
        seen["archived"].as_array().unwrap().iter().map(|g| (g["game"].as_str().unwrap(), g)).collect();
    let rounds = seen["info"]["rounds"].as_array().unwrap();
    let mut records: BTreeMap<String, Vec<RoundResult>> = BTreeMap::new();
    for (r, round) in rounds.iter().enumerate() {
        let mut got: BTreeMap<String, RoundResult> = BTreeMap::new();
        for board in round["boards"].as_array().unwrap() {
            let (white, black) = (board["white"].as_str().unwrap(), board["black"].as_str().unwrap());
            let game = archived.get(board["id"].as_str().unwrap());
            let (result, plies) = game.map_or(("", 0), |g| {
                assert_eq!(g["players"]["white"]["id"], white, "{g}");
                assert_eq!(g["players"]["black"]["id"], black, "{g}");
                (g["result"].as_str().unwrap(), g["moves"].as_array().unwrap().len())
            });
            let played = |w: u32, b: u32| {
                (
                    RoundResult::Game { opponent: black.to_owned(), points_x2: w },
                    RoundResult::Game { opponent: white.to_owned(), points_x2: b },
                )
            };
            let unplayed =
                |w: u32, b: u32| (RoundResult::Unplayed { points_x2: w }, RoundResult::Unplayed { points_x2: b });
            let (w, b) = match (result, plies) {
                ("1-0", _) => played(2, 0),
                ("0-1", _) => played(0, 2),
                ("1/2-1/2", _) => played(1, 1),
                ("*", 0) => unplayed(0, 2),
                ("*", 1) => unplayed(2, 0),
                _ => unplayed(0, 0),
            };
            got.insert(white.to_owned(), w);
            got.insert(black.to_owned(), b);
        }
        if let Some(bye) = round["bye"].as_str() {
            got.insert(bye.to_owned(), RoundResult::Unplayed { points_x2: 2 });
        }
        let absent = round["absent"].as_array().unwrap().iter().filter_map(Value::as_str).map(str::to_owned);
        for player in got.keys().cloned().chain(absent) {
            // A player entering late: an unplayed round for each missed.
            records.entry(player).or_insert_with(|| vec![RoundResult::Unplayed { points_x2: 0 }; r]);
        }
        for (player, rounds) in records.iter_mut() {
            rounds.push(got.get(player).cloned().unwrap_or(RoundResult::Unplayed { points_x2: 0 }));
        }
    }
    records.into_iter().map(|(id, rounds)| PlayerRecord { id, rounds }).collect()
}

/// What every Swiss of five bots (one joining late) must show at its end:
/// three rounds, byes in rounds 2 and 3 to different players, nobody met
/// twice, every game archived, every score and both tie-breaks those
/// recomputed from the archived games, and the TRF and PGN exports whole.
fn assert_swiss_matches_the_archive(seen: &Value) {
    let info = &seen["info"];
    assert_eq!(info["status"], "finished", "the Swiss finished: {seen}");
    assert_eq!((info["round"].as_u64(), info["nbRounds"].as_u64()), (Some(3), Some(3)), "{info}");
    let rounds = info["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 3);
    let late = seen["players"][4].as_str().unwrap();
    let in_round = |r: &Value, p: &str| {
        r["bye"] == p || r["boards"].as_array().unwrap().iter().any(|b| b["white"] == p || b["black"] == p)
    };
    assert!(!in_round(&rounds[0], late), "the late joiner missed round 1: {info}");
    assert!(rounds[0]["bye"].is_null(), "four players in round 1, no bye: {info}");
    let byes: Vec<&str> = rounds[1..].iter().filter_map(|r| r["bye"].as_str()).collect();
    assert_eq!(byes.len(), 2, "five players: a bye in rounds 2 and 3: {info}");
    assert_ne!(byes[0], byes[1], "no second bye");
    let mut met = std::collections::BTreeSet::new();
    for board in rounds.iter().flat_map(|r| r["boards"].as_array().unwrap()) {
        let mut pair = [board["white"].as_str().unwrap(), board["black"].as_str().unwrap()];
        pair.sort();
        assert!(met.insert(pair), "{pair:?} met twice: {info}");
    }
    let played = seen["played"].as_array().unwrap();
    let archived = seen["archived"].as_array().unwrap();
    assert_eq!(archived.len(), played.len(), "every game played is archived: {seen}");
    let recomputed = standings(&swiss_records_from_archive(seen), &[TieBreak::Buchholz, TieBreak::SonnebornBerger]);
    let results = seen["results"].as_array().unwrap();
    assert_eq!(results.len(), 5, "{seen}");
    for (line, expected) in results.iter().zip(&recomputed) {
        assert_eq!(line["id"].as_str().unwrap(), expected.id, "the order of the standings: {results:?} {recomputed:?}");
        assert_eq!(line["rank"].as_u64().unwrap() as u32, expected.rank);
        assert_eq!(line["points"].as_f64().unwrap(), f64::from(expected.points_x2) / 2.0, "{line}");
        assert_eq!(line["buchholz"].as_f64().unwrap(), f64::from(expected.tiebreaks[0]) / 2.0, "{line}");
        assert_eq!(line["sonnebornBerger"].as_f64().unwrap(), f64::from(expected.tiebreaks[1]) / 4.0, "{line}");
    }
    let trf = seen["trf"].as_str().unwrap();
    assert_eq!(trf.lines().filter(|l| l.starts_with("001 ")).count(), 5, "{trf}");
    assert!(trf.lines().any(|l| l == "XXR 3"), "{trf}");
    let pgn = seen["pgn"].as_str().unwrap();
    let decided = archived.iter().filter(|g| g["result"] != "*").count();
    assert_eq!(pgn.matches("[White ").count(), decided, "every game played is in the PGN: {pgn}");
    assert_nobody_played_two_games_at_once(&json!({ "archived": archived }));
}

/// Five berserk bots play a three-round atomic Swiss on `fogblast up`
/// through lichess's Swiss API, one joining after round 1 is paired; the
/// end is checked against the archive, and the API's refusals on the way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swiss_is_played_to_its_end_and_its_standings_match_the_archive() {
    let up = Proc::up_with("swiss", &[]);
    let seen = swiss_bots(&[format!("http://{}", up.http)], &|| up.logs());
    assert_eq!(seen["name"], "Test <b>swiss</b>", "markup is kept as text, to be shown escaped");
    assert_eq!(seen["description"], "<script>alert(1)</script>");
    assert_eq!(seen["join_twice_status"], 200, "joining twice changes nothing: {seen}");
    assert_eq!(seen["join_late_status"], 400, "a finished Swiss is not joined: {seen}");
    assert_eq!(seen["join_unknown_status"], 404, "{seen}");
    assert_eq!(seen["flood_status"], 429, "one open tournament a player: {seen}");
    assert_eq!(seen["bad_rounds_status"], 400, "{seen}");
    assert_swiss_matches_the_archive(&seen);
    up.terminate();
}

/// The status of the one Swiss in `cluster`'s store and how many of its
/// rounds are paired.
fn swiss_progress(cluster: &Cluster) -> Option<(String, usize)> {
    let mut redis = redis::Client::open(crate::support::redis_url()).ok()?.get_connection().ok()?;
    let pattern = format!("{}mm:tour:*:meta", cluster.redis_prefix());
    let keys: Vec<String> = redis::cmd("KEYS").arg(&pattern).query(&mut redis).ok()?;
    let (status, swiss): (Option<String>, Option<String>) =
        redis::cmd("HMGET").arg(keys.first()?).arg("status").arg("swiss").query(&mut redis).ok()?;
    let rounds = swiss
        .and_then(|s| serde_json::from_str::<Value>(&s).ok())
        .map_or(0, |s| s["rounds"].as_array().map_or(0, Vec::len));
    Some((status?, rounds))
}

/// Two matchmaker replicas on Redis; the one driving a Swiss is killed
/// (SIGKILL) mid-event. The other takes it over: no round is paired twice,
/// no result is lost or counted twice, and the standings at the end are
/// exactly those recomputed from the archive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_matchmaker_killed_mid_swiss_loses_and_doubles_nothing() {
    let (cluster, matchmakers, urls) = two_matchmakers("swiss-failover", &[]);
    let bots =
        swiss_command(&urls).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let holder = lease_holder_within(&cluster, Duration::from_secs(60)).expect("a replica took the Swiss's lease");
    // Mid-event: round 1 paired, its games made and under way.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while swiss_progress(&cluster).is_none_or(|(_, rounds)| rounds < 1) {
        assert!(std::time::Instant::now() < deadline, "round 1 was not paired");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(2));
    matchmakers[holder].kill();
    let (status, _) = swiss_progress(&cluster).expect("the Swiss in the store");
    assert_eq!(status, "started", "killed mid-event, not after it");
    let survivor = 1 - holder;
    assert!(taken_over(&cluster, survivor), "{} took the Swiss over", REPLICAS[survivor]);
    let output = crate::events::wait_for(bots, Duration::from_secs(600)).expect("the bots finished in time");
    let seen = summary(&output, &matchmakers[survivor].logs());
    assert_swiss_matches_the_archive(&seen);
}
