use super::super::{Entrant, ReportedResult, System, TournamentRecord};
use super::*;

const START: u64 = 1_000_000;
const WAIT_MS: u64 = 10_000;

fn snapshot(players: &[&str], rounds: u32, now_ms: u64) -> Snapshot {
    let record = TournamentRecord {
        id: "sw1".into(),
        name: "Weekly".into(),
        description: String::new(),
        variant: "atomic".into(),
        chess960: false,
        clock: (180_000, 2_000),
        rated: true,
        starts_ms: START,
        minutes: 60,
        system: System::Swiss,
        rounds,
        round_interval_s: (WAIT_MS / 1000) as u32,
        created_by: String::new(),
        created_ms: 0,
    };
    let mut snap = Snapshot {
        record,
        status: Status::Created,
        version: 1,
        now_ms,
        joined: BTreeMap::new(),
        presence: BTreeMap::new(),
        standing: BTreeMap::new(),
        games: BTreeMap::new(),
        results: BTreeMap::new(),
        swiss: None,
    };
    for p in players {
        join(&mut snap, p);
    }
    snap
}

fn join(snap: &mut Snapshot, player: &str) {
    let rating = 2000 - 10 * snap.joined.len() as u32;
    snap.joined.insert(player.into(), Entrant { name: player.to_uppercase(), rating, joined_ms: 0 });
    snap.presence.insert(player.into(), Presence::Active);
}

/// The snapshot after `commit`, as the store gives it back, at `now_ms`.
fn after(mut snap: Snapshot, commit: &Commit, now_ms: u64) -> Snapshot {
    if let Some(status) = commit.status {
        snap.status = status;
    }
    for player in &commit.paused {
        snap.presence.insert(player.clone(), Presence::Paused);
    }
    snap.standing.extend(commit.standing.iter().cloned());
    for game in &commit.games {
        snap.games.insert(game.id.clone(), game.clone());
    }
    for taken in &commit.results_taken {
        snap.results.remove(taken);
    }
    if let Some(swiss) = &commit.swiss {
        snap.swiss = Some(swiss.clone());
    }
    snap.now_ms = now_ms;
    snap.version += 1;
    snap
}

/// The games of the round being played, made and seated by the driver.
fn made(mut snap: Snapshot) -> Snapshot {
    for game in snap.games.values_mut() {
        if game.stage == Stage::New {
            game.stage = Stage::Started;
        }
    }
    snap
}

fn current_round(snap: &Snapshot) -> &SwissRoundState {
    snap.swiss.as_ref().unwrap().rounds.last().unwrap()
}

/// Every game of the current round reported with `result_of(white, black)`.
fn report_all(mut snap: Snapshot, result_of: impl Fn(&str, &str) -> (&'static str, u32)) -> Snapshot {
    let round = current_round(&snap).clone();
    for id in &round.games {
        let game = &snap.games[id];
        let (result, plies) = result_of(&game.white, &game.black);
        let reported = ReportedResult {
            game: id.clone(),
            result: result.into(),
            plies,
            white_berserk: false,
            black_berserk: false,
        };
        snap.results.insert(id.clone(), reported);
    }
    snap
}

fn points(snap: &Snapshot, player: &str) -> u32 {
    snap.standing[player].swiss.as_ref().unwrap().player.points_x2
}

/// Plays the current round with `result_of`, records it, waits, and pairs
/// the next: the snapshot with the next round paired (or the event over).
fn play_round(snap: Snapshot, result_of: impl Fn(&str, &str) -> (&'static str, u32)) -> Snapshot {
    let now = snap.now_ms;
    let reported = report_all(made(snap), result_of);
    let recorded = decide(&reported);
    let snap = after(reported, &recorded, now + WAIT_MS);
    let paired = decide(&snap);
    after(snap, &paired, now + WAIT_MS + 1)
}

fn white_wins(_: &str, _: &str) -> (&'static str, u32) {
    ("1-0", 30)
}

#[test]
fn a_swiss_starts_on_time_with_a_bye_for_the_odd_player() {
    let early = snapshot(&["a", "b", "c", "d", "e"], 3, START - 1);
    assert!(decide(&early).is_empty(), "nothing before the start");
    let due = snapshot(&["a", "b", "c", "d", "e"], 3, START);
    let commit = decide(&due);
    assert_eq!(commit.status, Some(Status::Started));
    let state = commit.swiss.clone().expect("round 1 is written down");
    let round = &state.rounds[0];
    assert_eq!(round.pairing.round, 1);
    assert_eq!(round.pairing.boards.len(), 2);
    assert_eq!(round.pairing.bye.as_deref(), Some("e"), "the lowest rated of five gets the bye");
    assert_eq!(commit.games.len(), 2);
    assert!(commit.games.iter().all(|g| g.stage == Stage::New && round.games.contains(&g.id)));
    // Top half against bottom half: 1-3, 2-4 (ratings 2000, 1990, ...).
    let seated: Vec<(String, String)> =
        round.pairing.boards.iter().map(|b| (b.white.clone(), b.black.clone())).collect();
    assert_eq!(seated, [("a".to_owned(), "c".to_owned()), ("d".to_owned(), "b".to_owned())]);
    let started = after(due, &commit, START + 100);
    let again = decide(&started);
    assert!(again.games.is_empty() && again.swiss.is_none(), "a round is paired once: {again:?}");
}

#[test]
fn the_next_round_waits_for_every_game_and_then_the_interval() {
    let due = snapshot(&["a", "b", "c", "d", "e"], 3, START);
    let commit = decide(&due);
    let snap = made(after(due, &commit, START + 60_000));
    // One of two games reported: nothing recorded, nothing paired.
    let first = current_round(&snap).games[0].clone();
    let mut half = snap.clone();
    half.results.insert(
        first.clone(),
        ReportedResult {
            game: first.clone(),
            result: "1-0".into(),
            plies: 30,
            white_berserk: false,
            black_berserk: false,
        },
    );
    let counted = decide(&half);
    assert!(counted.games.iter().all(|g| g.id == first && g.stage == Stage::Done));
    assert!(counted.swiss.is_none(), "the round is not over");
    let half = after(half, &counted, START + 61_000);
    assert!(half.standing["a"].swiss.as_ref().unwrap().rounds.is_empty());
    // The other game ends: the round is recorded; the bye scores a point.
    let all = report_all(half, |w, _| if w == "a" { ("1-0", 30) } else { ("1/2-1/2", 40) });
    let recorded = decide(&all);
    let state = recorded.swiss.clone().unwrap();
    assert!(state.rounds[0].recorded);
    assert_eq!(state.round_ended_ms, START + 61_000);
    assert_eq!(state.rounds.len(), 1, "the wait before round 2 has not passed");
    let snap = after(all, &recorded, START + 61_000 + WAIT_MS - 1);
    assert_eq!((points(&snap, "a"), points(&snap, "c"), points(&snap, "e")), (2, 0, 2), "the bye is a point");
    assert_eq!((points(&snap, "b"), points(&snap, "d")), (1, 1));
    assert!(decide(&snap).is_empty(), "still waiting");
    assert_eq!(next_round_ms(&snap), Some(START + 61_000 + WAIT_MS));
    let due = Snapshot { now_ms: START + 61_000 + WAIT_MS, ..snap };
    let paired = decide(&due);
    let round2 = &paired.swiss.as_ref().unwrap().rounds[1].pairing;
    assert_eq!(round2.round, 2);
    assert_ne!(round2.bye.as_deref(), Some("e"), "no second bye");
    for board in &round2.boards {
        let pair = [board.white.as_str(), board.black.as_str()];
        assert!(!(pair.contains(&"a") && pair.contains(&"c")), "no rematch: {round2:?}");
    }
}

#[test]
fn a_late_joiner_enters_with_zero_point_byes_for_the_rounds_missed() {
    let due = snapshot(&["a", "b", "c", "d"], 3, START);
    let commit = decide(&due);
    assert_eq!(commit.swiss.as_ref().unwrap().rounds[0].pairing.bye, None, "four players: no bye");
    let mut snap = after(due, &commit, START + 1_000);
    join(&mut snap, "late");
    let snap = play_round(snap, white_wins);
    let round2 = &current_round(&snap).pairing;
    assert_eq!(round2.round, 2);
    let line = snap.standing["late"].swiss.as_ref().unwrap();
    assert_eq!(line.rounds, vec![RoundResult::Unplayed { points_x2: 0 }], "round 1 missed, no point");
    assert_eq!(line.player.colors, vec![ColorPlayed::Absent]);
    let seated = round2.boards.iter().any(|b| b.white == "late" || b.black == "late");
    assert!(seated || round2.bye.as_deref() == Some("late"), "the late joiner is in round 2: {round2:?}");
}

#[test]
fn a_withdrawn_player_is_not_paired_again_and_keeps_their_results() {
    let due = snapshot(&["a", "b", "c", "d"], 3, START);
    let commit = decide(&due);
    let mut snap = after(due, &commit, START + 1_000);
    snap.presence.insert("a".into(), Presence::Withdrawn);
    let snap = play_round(snap, white_wins);
    let round2 = &current_round(&snap).pairing;
    assert!(round2.boards.iter().all(|b| b.white != "a" && b.black != "a"), "{round2:?}");
    assert_eq!(round2.not_paired, vec!["a".to_owned()]);
    assert_eq!(points(&snap, "a"), 2, "a won round 1 as White and keeps it");
    let snap = play_round(snap, white_wins);
    let line = snap.standing["a"].swiss.as_ref().unwrap();
    assert_eq!(line.rounds.len(), 2, "one entry a round, the round away too");
    assert_eq!(line.rounds[1], RoundResult::Unplayed { points_x2: 0 });
}

#[test]
fn a_side_that_never_moves_loses_by_forfeit_and_is_not_paired_again() {
    let due = snapshot(&["a", "b", "c", "d"], 3, START);
    let commit = decide(&due);
    let snap = after(due, &commit, START + 1_000);
    // Board 1's White never moves (the game service aborts it); board 2's
    // Black never answers.
    let snap = play_round(snap, |w, _| if w == "a" { ("*", 0) } else { ("*", 1) });
    let round1 = &snap.swiss.as_ref().unwrap().rounds[0];
    let boards = &round1.pairing.boards;
    let (a_opponent, other_white, other_black) = (&boards[0].black, &boards[1].white, &boards[1].black);
    assert_eq!(points(&snap, "a"), 0);
    assert_eq!(points(&snap, a_opponent), 2, "a forfeit win");
    assert_eq!(points(&snap, other_white), 2);
    assert_eq!(points(&snap, other_black), 0);
    assert_eq!(snap.presence["a"], Presence::Paused);
    assert_eq!(snap.presence[other_black], Presence::Paused);
    let line = snap.standing[a_opponent].swiss.as_ref().unwrap();
    assert_eq!(line.player.colors, vec![ColorPlayed::Bye], "no second bye after a forfeit win");
    assert!(line.player.opponents.is_empty(), "a forfeit is no game: the two may meet");
    let game = &snap.games[&round1.games[0]];
    assert_eq!(board_result(game), "0-1 forfeit");
    // Round 2 pairs the two still there.
    let round2 = &current_round(&snap).pairing;
    assert_eq!(round2.boards.len(), 1);
    assert_eq!(round2.not_paired.len(), 2);
}

#[test]
fn a_driver_taking_over_mid_round_neither_loses_nor_doubles_anything() {
    let due = snapshot(&["a", "b", "c", "d", "e"], 3, START);
    let first = decide(&due);
    assert_eq!(decide(&due), first, "the same state decides the same pairing, whoever drives");
    let snap = made(after(due, &first, START + 1_000));
    let reported = report_all(snap, white_wins);
    // The first driver decides and is killed before its commit: the
    // next one decides from the same state, and commits.
    let lost = decide(&reported);
    let taken_over = decide(&reported);
    assert_eq!(lost, taken_over);
    let snap = after(reported.clone(), &taken_over, START + 2_000);
    // A result delivered again after it was counted: taken out, not counted.
    let mut again = snap.clone();
    let game = current_round(&snap).games[0].clone();
    again.results.insert(game.clone(), reported.results[&game].clone());
    let commit = decide(&again);
    assert_eq!(commit.results_taken, vec![game]);
    assert!(commit.standing.is_empty() && commit.swiss.is_none(), "{commit:?}");
    assert_eq!(points(&snap, "a"), 2);
}

#[test]
fn the_event_finishes_after_its_last_round_with_standings_by_tiebreaks() {
    let due = snapshot(&["a", "b", "c", "d", "e"], 3, START);
    let commit = decide(&due);
    let mut snap = after(due, &commit, START + 1_000);
    for _ in 0..2 {
        snap = play_round(snap, white_wins);
    }
    assert_eq!(current_round(&snap).pairing.round, 3);
    let now = snap.now_ms;
    let reported = report_all(made(snap), white_wins);
    let last = decide(&reported);
    assert_eq!(last.status, Some(Status::Finished));
    let done = after(reported, &last, now + WAIT_MS * 10);
    assert!(decide(&done).is_empty(), "nothing after the end");
    let lines = standings(&done);
    assert_eq!(lines.len(), 5);
    for pair in lines.windows(2) {
        let key = |l: &tiebreak::Standing| (l.points_x2, l.tiebreaks.clone());
        assert!(key(&pair[0]) >= key(&pair[1]), "{lines:?}");
    }
    let total: u32 = lines.iter().map(|l| l.points_x2).sum();
    // Six games of 2 half points, three byes of 2.
    assert_eq!(total, 6 * 2 + 3 * 2);
    assert!(done.swiss.as_ref().unwrap().rounds.iter().all(|r| r.recorded));
}

#[test]
fn too_few_players_end_the_event() {
    let due = snapshot(&["a"], 3, START);
    let commit = decide(&due);
    assert_eq!(commit.status, Some(Status::Finished));
    assert!(commit.games.is_empty());
}

#[test]
fn an_atomic960_round_starts_every_board_from_one_position() {
    let mut due = snapshot(&["a", "b", "c", "d", "e", "f"], 3, START);
    due.record.chess960 = true;
    let commit = decide(&due);
    let round = &commit.swiss.as_ref().unwrap().rounds[0];
    let position = round.chess960_position.expect("a position for the round");
    assert_eq!(position, round_position("sw1", 1));
    assert!(position < 960);
    assert_eq!(commit.games.len(), 3);
    assert!(commit.games.iter().all(|g| g.chess960_position == Some(position)));
    let positions: BTreeSet<u32> = (1..=10).map(|r| round_position("sw1", r)).collect();
    assert!(positions.len() > 5, "rounds differ: {positions:?}");
}
