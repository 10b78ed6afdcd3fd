//! The history checker of the partition runs, in Jepsen's vocabulary: every
//! client operation (a move sent at a ply of a game) is written down as
//! invoked, then completed as acknowledged (`Ok`), refused (`Fail`) or
//! never answered (`Unknown`: the connection or the deadline went first).
//! At the end the final state is read back (each game's moves as the
//! archive holds them, how often each was archived and rated, the public
//! stream's event numbers per game, the fog frames' checks) and each
//! property is judged on its own:
//!
//! - every acknowledged move is in its game at the ply it was acknowledged
//!   for, so in the acknowledged order;
//! - every move in a game was sent by a client at that ply (none doubled:
//!   the same move again at another ply; none foreign: sent by nobody);
//!   a refused move is never in the game, an unknown one may be;
//! - every finished game archived exactly once and, when rated, rated
//!   exactly once;
//! - the public stream holds each game's events numbered 1, 2, 3... without
//!   a gap or a repeat;
//! - no frame showed a client a square its fog hides;
//! - fencing held: by the commits the shards logged as acknowledged by the
//!   store (`fogblast::commits`), no version of a game was written twice,
//!   and a game's epochs never go back (an owner fenced out wrote nothing
//!   after its successor).

use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// How an operation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Sent; no answer yet (an operation the run ended on is left so).
    Invoked,
    /// Acknowledged: the server said it is applied.
    Ok,
    /// Refused: the server said it is not applied.
    Fail,
    /// No answer: applied or not, nobody knows.
    Unknown,
}

/// One move sent by a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation {
    pub client: usize,
    pub game: String,
    /// The ply the client sent it for (0: White's first move).
    pub ply: usize,
    pub uci: String,
    pub outcome: Outcome,
}

/// The history of a run: operations in the order they were invoked.
#[derive(Debug, Default)]
pub struct History {
    operations: Vec<Operation>,
}

impl History {
    /// Writes an operation down as invoked; returns its index for [`History::complete`].
    pub fn invoke(&mut self, client: usize, game: &str, ply: usize, uci: &str) -> usize {
        self.operations.push(Operation {
            client,
            game: game.to_owned(),
            ply,
            uci: uci.to_owned(),
            outcome: Outcome::Invoked,
        });
        self.operations.len() - 1
    }

    /// Completes operation `index` with its outcome; an operation completes once.
    pub fn complete(&mut self, index: usize, outcome: Outcome) {
        if let Some(operation) = self.operations.get_mut(index) {
            if operation.outcome == Outcome::Invoked {
                operation.outcome = outcome;
            }
        }
    }

    /// Counts by outcome: invoked (never completed), ok, fail, unknown.
    pub fn counts(&self) -> [usize; 4] {
        let mut counts = [0; 4];
        for operation in &self.operations {
            counts[operation.outcome as usize] += 1;
        }
        counts
    }
}

/// What the run reads back at the end.
#[derive(Debug, Default)]
pub struct FinalState {
    /// Each finished game's moves, as archived.
    pub games: HashMap<String, Vec<String>>,
    /// The games the clients saw finish.
    pub finished: Vec<String>,
    /// How many archive rows each game has.
    pub archived: HashMap<String, u32>,
    /// The rated games, with how many times each was rated.
    pub rated: HashMap<String, u32>,
    /// Which finished games were rated games.
    pub rated_games: Vec<String>,
    /// Each game's event numbers on the public stream, in stream order.
    pub public_events: HashMap<String, Vec<u64>>,
    /// Fog frames checked, and what the ones that leaked showed.
    pub fog_frames: usize,
    pub fog_leaks: Vec<String>,
    /// Every commit the shards logged, of the clients' games and others.
    pub commits: Vec<CommitLine>,
    /// What each move of a timed game between bots cost its mover's clock.
    pub charges: Vec<Charge>,
}

/// One move's charge on its mover's clock (from the archived clocks), with
/// the bots' own times around it: the opponent's first send of the ply
/// before (the mover's clock cannot have started earlier) and the mover's
/// last send of this one (from then on the move was inside the cluster,
/// whose time is not the mover's, docs/game-service.md "Clocks").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Charge {
    pub game: String,
    pub ply: usize,
    pub charged_ms: i64,
    pub turn_began_ms: u64,
    pub last_sent_ms: u64,
    /// The move was sent to a gateway whose link to the players was cut
    /// before it was shown played: it may have waited on the player's own
    /// link, outside the cluster (where lag compensation, at most 1 s a
    /// move, is all a server can give back), so it is not judged.
    pub over_cut_client_link: bool,
}

/// How far a charge may exceed the bots' bound: the socket's way from the
/// bot to its gateway, and the wall clocks' reading, both on one machine.
pub const CLOCK_TOLERANCE_MS: i64 = 250;

/// One commit a shard logged once the store acknowledged it: versions
/// `from + 1 ..= to` of `game` (none when `from == to`) at `epoch`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitLine {
    pub shard: String,
    pub game: String,
    pub from: u64,
    pub to: u64,
    pub epoch: u64,
}

impl CommitLine {
    /// The commit of one line of a shard's log, if it is one:
    /// `... game committed game=G from=F to=T epoch=E`.
    pub fn parse(shard: &str, line: &str) -> Option<CommitLine> {
        let (_, fields) = line.split_once("game committed ")?;
        let mut commit = CommitLine { shard: shard.to_owned(), game: String::new(), from: 0, to: 0, epoch: 0 };
        let mut seen = 0;
        for field in fields.split_whitespace() {
            let (key, value) = field.split_once('=')?;
            match key {
                "game" => commit.game = value.to_owned(),
                "from" => commit.from = value.parse().ok()?,
                "to" => commit.to = value.parse().ok()?,
                "epoch" => commit.epoch = value.parse().ok()?,
                _ => continue,
            }
            seen += 1;
        }
        (seen == 4 && commit.to >= commit.from).then_some(commit)
    }
}

/// One property's verdict.
#[derive(Debug)]
pub struct Verdict {
    pub property: &'static str,
    pub checked: String,
    pub failures: Vec<String>,
}

impl Verdict {
    fn new(property: &'static str) -> Verdict {
        Verdict { property, checked: String::new(), failures: Vec::new() }
    }

    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mark = if self.passed() { "PASS" } else { "FAIL" };
        write!(f, "{mark} {} ({})", self.property, self.checked)?;
        for failure in self.failures.iter().take(5) {
            write!(f, "\n       {failure}")?;
        }
        if self.failures.len() > 5 {
            write!(f, "\n       ... and {} more", self.failures.len() - 5)?;
        }
        Ok(())
    }
}

pub const ACKNOWLEDGED_KEPT: &str = "every acknowledged move is in its game, in order (0 lost)";
pub const NONE_DOUBLED_OR_FOREIGN: &str = "no move doubled or foreign, no refused move applied";
pub const ARCHIVED_AND_RATED_ONCE: &str = "each finished game archived and rated exactly once";
pub const PUBLIC_STREAM_WHOLE: &str = "the public stream has each game's events in order without gaps";
pub const FOG_KEPT: &str = "fog never leaked to a client";
pub const FENCING_HELD: &str = "no game version written twice, no epoch going back (fencing held)";
pub const CLOCKS_FAIR: &str = "no clock charged a mover for its move's time inside the cluster";

/// Judges the history against the final state, property by property.
pub fn check(history: &History, state: &FinalState) -> Vec<Verdict> {
    vec![
        acknowledged_kept(history, state),
        none_doubled_or_foreign(history, state),
        archived_and_rated_once(state),
        public_stream_whole(state),
        fog_kept(state),
        fencing_held(state),
        clocks_fair(state),
    ]
}

fn clocks_fair(state: &FinalState) -> Verdict {
    let mut verdict = Verdict::new(CLOCKS_FAIR);
    let mut worst = i64::MIN;
    let mut unjudged = 0;
    for charge in &state.charges {
        if charge.over_cut_client_link {
            unjudged += 1;
            continue;
        }
        let allowed = charge.last_sent_ms as i64 - charge.turn_began_ms as i64;
        let excess = charge.charged_ms - allowed;
        worst = worst.max(excess);
        if excess > CLOCK_TOLERANCE_MS {
            verdict.failures.push(format!(
                "game {} ply {}: charged {} ms, {excess} ms more than from the opponent's send to the mover's last",
                charge.game, charge.ply, charge.charged_ms
            ));
        }
    }
    verdict.checked = match state.charges.len() {
        0 => "no timed game between bots".to_owned(),
        n => format!(
            "{} charged moves; the most beyond the bound {worst} ms (tolerance {CLOCK_TOLERANCE_MS} ms){}",
            n - unjudged,
            if unjudged > 0 { format!("; {unjudged} sent over a cut player link not judged") } else { String::new() }
        ),
    };
    verdict
}

fn acknowledged_kept(history: &History, state: &FinalState) -> Verdict {
    let mut verdict = Verdict::new(ACKNOWLEDGED_KEPT);
    let acknowledged: Vec<&Operation> =
        history.operations.iter().filter(|operation| operation.outcome == Outcome::Ok).collect();
    for operation in &acknowledged {
        let Operation { game, ply, uci, client, .. } = operation;
        match state.games.get(game).map(|moves| moves.get(*ply)) {
            Some(Some(played)) if played == uci => {}
            Some(Some(played)) => verdict
                .failures
                .push(format!("game {game} ply {ply}: client {client} was acknowledged {uci}, the game has {played}")),
            Some(None) => {
                verdict.failures.push(format!("game {game} ply {ply}: {uci} acknowledged, the game ends before it"))
            }
            None => verdict
                .failures
                .push(format!("game {game} ply {ply}: {uci} acknowledged, the game is not in the archive")),
        }
    }
    verdict.checked = format!("{} acknowledged moves", acknowledged.len());
    verdict
}

fn none_doubled_or_foreign(history: &History, state: &FinalState) -> Verdict {
    let mut verdict = Verdict::new(NONE_DOUBLED_OR_FOREIGN);
    // What was sent, per game and ply, with the outcomes.
    let mut sent: HashMap<(&str, usize), Vec<&Operation>> = HashMap::new();
    let mut sent_in_game: HashMap<&str, Vec<&Operation>> = HashMap::new();
    for operation in &history.operations {
        sent.entry((operation.game.as_str(), operation.ply)).or_default().push(operation);
        sent_in_game.entry(operation.game.as_str()).or_default().push(operation);
    }
    let mut plies = 0;
    for (game, moves) in state.games.iter().filter(|(game, _)| sent_in_game.contains_key(game.as_str())) {
        for (ply, played) in moves.iter().enumerate() {
            plies += 1;
            let at_ply = sent.get(&(game.as_str(), ply)).map_or(&[][..], Vec::as_slice);
            let matching: Vec<&&Operation> = at_ply.iter().filter(|operation| operation.uci == *played).collect();
            if matching.is_empty() {
                let elsewhere = sent_in_game[game.as_str()]
                    .iter()
                    .find(|operation| operation.uci == *played && operation.ply != ply);
                verdict.failures.push(match elsewhere {
                    Some(first) => format!("game {game} ply {ply}: {played} doubled (sent for ply {})", first.ply),
                    None => format!("game {game} ply {ply}: {played} foreign (no client sent it)"),
                });
            } else if matching.iter().all(|operation| operation.outcome == Outcome::Fail) {
                verdict.failures.push(format!("game {game} ply {ply}: {played} was refused, yet applied"));
            }
        }
    }
    verdict.checked = format!("{plies} plies of the clients' games");
    verdict
}

fn archived_and_rated_once(state: &FinalState) -> Verdict {
    let mut verdict = Verdict::new(ARCHIVED_AND_RATED_ONCE);
    for game in &state.finished {
        match state.archived.get(game).copied().unwrap_or(0) {
            1 => {}
            n => verdict.failures.push(format!("game {game} archived {n} times")),
        }
    }
    for game in &state.rated_games {
        match state.rated.get(game).copied().unwrap_or(0) {
            1 => {}
            n => verdict.failures.push(format!("rated game {game} rated {n} times")),
        }
    }
    for (game, times) in &state.rated {
        if !state.rated_games.contains(game) && *times > 0 {
            verdict
                .failures
                .push(format!("game {game} rated {times} times, yet not a rated game the clients finished"));
        }
    }
    verdict.checked = format!("{} finished games, {} rated", state.finished.len(), state.rated_games.len());
    verdict
}

fn public_stream_whole(state: &FinalState) -> Verdict {
    let mut verdict = Verdict::new(PUBLIC_STREAM_WHOLE);
    let mut events = 0;
    let ordered: BTreeMap<&String, &Vec<u64>> = state.public_events.iter().collect();
    for (game, numbers) in ordered {
        events += numbers.len();
        for (index, number) in numbers.iter().enumerate() {
            let expected = index as u64 + 1;
            if *number != expected {
                let shown: Vec<String> = numbers.iter().take(24).map(u64::to_string).collect();
                verdict.failures.push(format!(
                    "game {game}: event {number} where {expected} was due (in stream order: {}{})",
                    shown.join(" "),
                    if numbers.len() > 24 { " ..." } else { "" }
                ));
                break;
            }
        }
    }
    // Every move of the archived game, and no more: a stream whose tail
    // stopped short is not whole.
    let archived: BTreeMap<&String, &Vec<String>> = state.games.iter().collect();
    for (game, moves) in archived {
        let published = state.public_events.get(game).map_or(0, Vec::len);
        if published != moves.len() {
            verdict.failures.push(format!(
                "game {game}: {published} move events on the stream, {} moves in the archive",
                moves.len()
            ));
        }
    }
    verdict.checked = format!("{events} events of {} games", state.public_events.len());
    verdict
}

fn fog_kept(state: &FinalState) -> Verdict {
    let mut verdict = Verdict::new(FOG_KEPT);
    verdict.failures.extend(state.fog_leaks.iter().cloned());
    verdict.checked = format!("{} fog frames", state.fog_frames);
    verdict
}

fn fencing_held(state: &FinalState) -> Verdict {
    let mut verdict = Verdict::new(FENCING_HELD);
    let mut by_game: BTreeMap<&str, Vec<&CommitLine>> = BTreeMap::new();
    for commit in &state.commits {
        by_game.entry(commit.game.as_str()).or_default().push(commit);
    }
    for (game, commits) in &mut by_game {
        commits.sort_by_key(|c| (c.to, c.from, c.epoch));
        let mut written_to = 0;
        let mut newest: Option<&CommitLine> = None;
        for commit in commits.iter() {
            if commit.to > commit.from {
                if commit.from < written_to {
                    verdict.failures.push(format!(
                        "game {game}: versions {}..={} written again by {} at epoch {} (already written to {written_to})",
                        commit.from + 1,
                        commit.to,
                        commit.shard,
                        commit.epoch
                    ));
                }
                written_to = written_to.max(commit.to);
            }
            if let Some(before) = newest.filter(|before| before.epoch > commit.epoch) {
                verdict.failures.push(format!(
                    "game {game}: {} wrote version {} at epoch {} after {} wrote version {} at epoch {}",
                    commit.shard, commit.to, commit.epoch, before.shard, before.to, before.epoch
                ));
            }
            if newest.is_none_or(|before| commit.epoch >= before.epoch) {
                newest = Some(commit);
            }
        }
    }
    verdict.checked = format!("{} commits of {} games", state.commits.len(), by_game.len());
    if state.commits.is_empty() {
        verdict.failures.push("no commit was logged: the shards' commit lines are missing".into());
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two clients play e2e4 e7e5 g1f3, each acknowledged; the archive and
    /// stream agree.
    fn clean_run() -> (History, FinalState) {
        let mut history = History::default();
        for (ply, uci) in ["e2e4", "e7e5", "g1f3"].iter().enumerate() {
            let op = history.invoke(ply % 2, "g1", ply, uci);
            history.complete(op, Outcome::Ok);
        }
        let state = FinalState {
            games: [("g1".to_owned(), vec!["e2e4".into(), "e7e5".into(), "g1f3".into()])].into(),
            finished: vec!["g1".into()],
            archived: [("g1".to_owned(), 1)].into(),
            rated: [("g1".to_owned(), 1)].into(),
            rated_games: vec!["g1".into()],
            public_events: [("g1".to_owned(), vec![1, 2, 3])].into(),
            fog_frames: 0,
            fog_leaks: Vec::new(),
            charges: vec![Charge {
                game: "g1".into(),
                ply: 2,
                charged_ms: 1_900,
                turn_began_ms: 10_000,
                last_sent_ms: 12_000,
                over_cut_client_link: false,
            }],
            commits: [(0, 2), (2, 3), (3, 4), (4, 5)]
                .into_iter()
                .map(|(from, to)| CommitLine { shard: "shard-0".into(), game: "g1".into(), from, to, epoch: 3 })
                .collect(),
        };
        (history, state)
    }

    fn failed(verdicts: &[Verdict]) -> Vec<&'static str> {
        verdicts.iter().filter(|verdict| !verdict.passed()).map(|verdict| verdict.property).collect()
    }

    #[test]
    fn a_clean_run_passes_every_property() {
        let (history, state) = clean_run();
        let verdicts = check(&history, &state);
        assert_eq!(verdicts.len(), 7);
        assert!(failed(&verdicts).is_empty(), "{verdicts:#?}");
        assert_eq!(history.counts(), [0, 3, 0, 0]);
    }

    #[test]
    fn a_lost_acknowledged_move_fails_the_check() {
        let (history, mut state) = clean_run();
        state.games.get_mut("g1").expect("g1").pop();
        // The stream agrees with the store: the move is gone from both.
        state.public_events.insert("g1".into(), vec![1, 2]);
        let verdicts = check(&history, &state);
        assert_eq!(failed(&verdicts), [ACKNOWLEDGED_KEPT]);
        assert!(verdicts[0].failures[0].contains("ply 2: g1f3 acknowledged, the game ends before it"), "{verdicts:#?}");
    }

    #[test]
    fn an_acknowledged_move_replaced_by_another_fails_the_check() {
        let (mut history, mut state) = clean_run();
        // The client that lost the race sent b1c3 for the same ply; its
        // answer never came.
        let op = history.invoke(0, "g1", 2, "b1c3");
        history.complete(op, Outcome::Unknown);
        state.games.get_mut("g1").expect("g1")[2] = "b1c3".into();
        assert_eq!(failed(&check(&history, &state)), [ACKNOWLEDGED_KEPT]);
    }

    #[test]
    fn a_doubled_move_fails_the_check() {
        let (history, mut state) = clean_run();
        state.games.get_mut("g1").expect("g1").push("g1f3".into());
        state.public_events.insert("g1".into(), vec![1, 2, 3, 4]);
        let verdicts = check(&history, &state);
        assert_eq!(failed(&verdicts), [NONE_DOUBLED_OR_FOREIGN]);
        assert!(verdicts[1].failures[0].contains("ply 3: g1f3 doubled (sent for ply 2)"), "{verdicts:#?}");
    }

    #[test]
    fn a_foreign_or_refused_move_in_the_game_fails_the_check() {
        let (mut history, mut state) = clean_run();
        state.games.get_mut("g1").expect("g1").push("b8c6".into());
        state.public_events.insert("g1".into(), vec![1, 2, 3, 4]);
        assert_eq!(failed(&check(&history, &state)), [NONE_DOUBLED_OR_FOREIGN]);
        let op = history.invoke(1, "g1", 3, "b8c6");
        history.complete(op, Outcome::Fail);
        let verdicts = check(&history, &state);
        assert!(verdicts[1].failures[0].contains("was refused, yet applied"), "{verdicts:#?}");
        history.operations[op].outcome = Outcome::Unknown;
        assert!(failed(&check(&history, &state)).is_empty(), "an unanswered move may or may not be applied");
    }

    #[test]
    fn a_game_archived_or_rated_twice_or_never_fails_the_check() {
        let (history, mut state) = clean_run();
        state.rated.insert("g1".into(), 2);
        assert_eq!(failed(&check(&history, &state)), [ARCHIVED_AND_RATED_ONCE]);
        state.rated.insert("g1".into(), 1);
        state.archived.clear();
        assert_eq!(failed(&check(&history, &state)), [ARCHIVED_AND_RATED_ONCE]);
    }

    #[test]
    fn a_gap_or_repeat_in_the_public_stream_fails_the_check() {
        let (history, mut state) = clean_run();
        state.public_events.insert("g1".into(), vec![1, 2, 4]);
        assert_eq!(failed(&check(&history, &state)), [PUBLIC_STREAM_WHOLE]);
        state.public_events.insert("g1".into(), vec![1, 2, 2, 3]);
        assert_eq!(failed(&check(&history, &state)), [PUBLIC_STREAM_WHOLE]);
        state.public_events.insert("g1".into(), vec![1, 2]);
        assert_eq!(failed(&check(&history, &state)), [PUBLIC_STREAM_WHOLE], "the last move missing");
        state.public_events.insert("g1".into(), vec![1, 2, 3, 4]);
        assert_eq!(failed(&check(&history, &state)), [PUBLIC_STREAM_WHOLE], "a move the archive lacks");
        state.public_events.insert("g1".into(), vec![1, 2, 3]);
        assert!(failed(&check(&history, &state)).is_empty());
    }

    #[test]
    fn a_version_written_twice_or_an_epoch_going_back_fails_the_check() {
        let (history, mut state) = clean_run();
        let commit =
            |shard: &str, from, to, epoch| CommitLine { shard: shard.into(), game: "g1".into(), from, to, epoch };
        // Taken over at a newer epoch, and a lease renewed (no version):
        // fencing held.
        state.commits.push(commit("shard-1", 5, 6, 8));
        state.commits.push(commit("shard-1", 6, 6, 8));
        assert!(failed(&check(&history, &state)).is_empty());
        // The old owner writes after its successor.
        state.commits.push(commit("shard-0", 6, 7, 3));
        let verdicts = check(&history, &state);
        assert_eq!(failed(&verdicts), [FENCING_HELD]);
        assert!(verdicts[5].failures[0].contains("shard-0 wrote version 7 at epoch 3 after shard-1"), "{verdicts:#?}");
        state.commits.pop();
        // A version the store acknowledged twice (a failover lost the first).
        state.commits.push(commit("shard-1", 4, 5, 8));
        let verdicts = check(&history, &state);
        assert_eq!(failed(&verdicts), [FENCING_HELD]);
        assert!(verdicts[5].failures[0].contains("versions 5..=5 written again by shard-1"), "{verdicts:#?}");
        state.commits.clear();
        assert_eq!(failed(&check(&history, &state)), [FENCING_HELD], "no commit lines at all");
    }

    #[test]
    fn a_commit_line_reads_from_a_shards_log() {
        let line =
            "2026-12-05T19:00:00.123456Z DEBUG execute{game=x}: game committed game=k3xq8r2mtn5p from=12 to=14 epoch=9";
        let commit = CommitLine::parse("shard-1", line).expect("a commit line");
        let expected = CommitLine { shard: "shard-1".into(), game: "k3xq8r2mtn5p".into(), from: 12, to: 14, epoch: 9 };
        assert_eq!(commit, expected);
        assert_eq!(CommitLine::parse("shard-1", "2026-12-05T19:00:00Z INFO shard registered epoch=9"), None);
        assert_eq!(CommitLine::parse("shard-1", "DEBUG game committed game=g from=3 to=x epoch=1"), None);
        assert_eq!(CommitLine::parse("shard-1", "DEBUG game committed game=g from=3 epoch=1"), None);
    }

    #[test]
    fn a_leaked_fog_frame_fails_the_check() {
        let (history, mut state) = clean_run();
        state.fog_frames = 10;
        state.fog_leaks.push("game g1 ply 4: black saw a piece on e5 it cannot see".into());
        assert_eq!(failed(&check(&history, &state)), [FOG_KEPT]);
    }

    #[test]
    fn a_mover_charged_for_time_inside_the_cluster_fails_the_check() {
        let (history, mut state) = clean_run();
        // Sent at 12 s, applied after 3 s of a partition, and charged for it.
        state.charges[0].charged_ms = 2_000 + 3_000;
        assert_eq!(failed(&check(&history, &state)), [CLOCKS_FAIR]);
    }

    #[test]
    fn a_move_held_up_on_a_cut_player_link_is_not_judged_and_is_counted() {
        let (history, mut state) = clean_run();
        state.charges[0].charged_ms = 2_000 + 3_000;
        state.charges[0].over_cut_client_link = true;
        let verdicts = check(&history, &state);
        assert!(failed(&verdicts).is_empty());
        let clocks = verdicts.iter().find(|v| v.property == CLOCKS_FAIR).expect("the clock verdict");
        assert!(
            clocks.checked.contains("0 charged moves; ") && clocks.checked.contains("1 sent over a cut player link")
        );
    }

    #[test]
    fn an_operation_completes_once() {
        let mut history = History::default();
        let op = history.invoke(0, "g", 0, "e2e4");
        history.complete(op, Outcome::Unknown);
        history.complete(op, Outcome::Ok);
        history.complete(99, Outcome::Ok);
        assert_eq!(history.counts(), [0, 0, 0, 1]);
    }
}
