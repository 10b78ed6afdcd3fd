//! A Swiss event's pass, without I/O, as the arena's is: start at the
//! start time, count the results in the inbox, record a round once every
//! one of its games is counted, pair the next round once the wait after
//! the last game has passed, finish after the last round. Everything it
//! changes is in the returned [`Commit`], written at once under the lease,
//! so a driver killed anywhere leaves a state the next holder continues
//! from: a round is paired once (the commit that pairs it also writes it
//! down), and a result is counted once (the commit that counts it also
//! takes it out of the inbox).
//!
//! The pairing itself is `fogblast_tournament::swiss` (FIDE's Dutch
//! system): the pairing-allocated bye scores a point; a player joining
//! after round 1 enters with a zero-point unplayed round for each round
//! missed; a withdrawn or paused player is not paired (their results
//! stay); a side that never made their first move (the game service
//! aborts such a game) loses by forfeit and is paused until they join
//! again, and their opponent wins by forfeit, so a round never stalls. A
//! round that cannot be paired without a rematch, or with fewer than two
//! players left, ends the event early, as on lichess.

use std::collections::{BTreeMap, BTreeSet};

use fogblast_proto::ids::GameId;
use fogblast_tournament::swiss::{pair_round, ColorPlayed, Float, SwissPlayer, SwissSettings};
use fogblast_tournament::tiebreak::{self, PlayerRecord, RoundResult, TieBreak};

use super::{
    Commit, Presence, Snapshot, Stage, Standing, Status, SwissLine, SwissRoundState, SwissState, TourGame,
    TournamentRecord,
};

/// The tie-breaks of a Swiss's standings, in order.
pub const TIEBREAKS: [TieBreak; 2] = [TieBreak::Buchholz, TieBreak::SonnebornBerger];

/// The rules the pairing uses: a full-point bye, zero-point late entries.
pub fn settings() -> SwissSettings {
    SwissSettings::default()
}

/// What one side got on one board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// Played over the board, in half points.
    Played(u32),
    /// Scored without playing (a forfeit, or a game never made).
    Forfeit(u32),
}

/// A board's outcome for White and Black from its game's result.
fn outcomes(game: &TourGame) -> (Outcome, Outcome) {
    match (game.result.as_str(), game.plies) {
        ("1-0", _) => (Outcome::Played(2), Outcome::Played(0)),
        ("0-1", _) => (Outcome::Played(0), Outcome::Played(2)),
        ("1/2-1/2", _) => (Outcome::Played(1), Outcome::Played(1)),
        // Aborted before White's first move: White did not come.
        ("*", 0) => (Outcome::Forfeit(0), Outcome::Forfeit(2)),
        ("*", 1) => (Outcome::Forfeit(2), Outcome::Forfeit(0)),
        // Never made, or stopped some other way: nobody scores.
        _ => (Outcome::Forfeit(0), Outcome::Forfeit(0)),
    }
}

/// A board's result as shown: `1-0`, `1-0 forfeit`, `0-0 forfeit`…; empty
/// while it is played.
pub fn board_result(game: &TourGame) -> String {
    if game.stage != Stage::Done {
        return String::new();
    }
    let word = |o: Outcome| match o {
        Outcome::Played(2) | Outcome::Forfeit(2) => "1",
        Outcome::Played(1) => "1/2",
        _ => "0",
    };
    let (white, black) = outcomes(game);
    let forfeit = matches!(white, Outcome::Forfeit(_));
    format!("{}-{}{}", word(white), word(black), if forfeit { " forfeit" } else { "" })
}

/// The Chess960 start position of `round` of tournament `id`: the same on
/// every board and for every driver, different from round to round.
pub fn round_position(id: &str, round: u32) -> u32 {
    // FNV-1a: fixed by the text alone, whatever the build.
    let hash = format!("{id}:{round}")
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3));
    (hash % 960) as u32
}

/// When the next round is paired: the start for the first, the wait after
/// the last round's results for the others; `None` while a round is being
/// played or after the last.
pub fn next_round_ms(snapshot: &Snapshot) -> Option<u64> {
    next_round_at(&snapshot.record, snapshot.swiss.as_ref().unwrap_or(&SwissState::default()))
}

fn next_round_at(record: &TournamentRecord, state: &SwissState) -> Option<u64> {
    match state.rounds.last() {
        None => Some(record.starts_ms),
        Some(last) if last.recorded && (state.rounds.len() as u32) < record.rounds => {
            Some(state.round_ended_ms + u64::from(record.round_interval_s) * 1000)
        }
        Some(_) => None,
    }
}

/// The pass. See the module's documentation.
pub fn decide(snapshot: &Snapshot) -> Commit {
    let now = snapshot.now_ms;
    let mut commit = Commit::default();
    let mut status = snapshot.status;
    if status == Status::Finished {
        commit.results_taken = snapshot.results.keys().cloned().collect();
        return commit;
    }
    if status == Status::Created && now >= snapshot.record.starts_ms {
        status = Status::Started;
        commit.status = Some(Status::Started);
    }
    let mut pass =
        Pass { snapshot, standing: snapshot.standing.clone(), changed: BTreeSet::new(), games: BTreeMap::new() };
    pass.count_results(&mut commit);
    let mut state = snapshot.swiss.clone().unwrap_or_default();
    let before = state.clone();
    if status == Status::Started {
        if pass.record_round_if_complete(&mut state) {
            state.round_ended_ms = now;
        }
        let rounds_done = state.rounds.len() as u32;
        let last_recorded = state.rounds.last().is_none_or(|r| r.recorded);
        if last_recorded && rounds_done >= snapshot.record.rounds {
            status = Status::Finished;
        } else if last_recorded && next_round_at(&snapshot.record, &state).is_some_and(|at| now >= at) {
            match pass.pair_next(&state) {
                Some(round) => {
                    state.rounds.push(round);
                    state.round_ended_ms = 0;
                }
                None => status = Status::Finished,
            }
        }
        if status == Status::Finished {
            commit.status = Some(Status::Finished);
        }
    }
    if state != before {
        commit.swiss = Some(state);
    }
    let Pass { standing, changed, games, .. } = pass;
    commit.standing = changed.into_iter().map(|p| (p.clone(), standing.get(&p).cloned().unwrap_or_default())).collect();
    commit.games = games.into_values().collect();
    commit
}

/// One pass's working copy of what it changes.
struct Pass<'a> {
    snapshot: &'a Snapshot,
    standing: BTreeMap<String, Standing>,
    changed: BTreeSet<String>,
    /// Games changed in this pass.
    games: BTreeMap<String, TourGame>,
}

impl Pass<'_> {
    fn game(&self, id: &str) -> Option<&TourGame> {
        self.games.get(id).or_else(|| self.snapshot.games.get(id))
    }

    /// Marks the inbox's games done with their results and frees their
    /// players; a side that never moved is paused.
    fn count_results(&mut self, commit: &mut Commit) {
        for result in self.snapshot.results.values() {
            commit.results_taken.push(result.game.clone());
            let Some(game) = self.snapshot.games.get(&result.game) else { continue };
            if game.stage == Stage::Done {
                continue;
            }
            if result.result == "*" && result.plies < 2 {
                commit.paused.push(if result.plies == 0 { game.white.clone() } else { game.black.clone() });
            }
            for player in [&game.white, &game.black] {
                let line = self.standing.entry(player.clone()).or_default();
                if line.playing.as_deref() == Some(game.id.as_str()) {
                    line.playing = None;
                    line.free_since_ms = self.snapshot.now_ms;
                }
                self.changed.insert(player.clone());
            }
            let done =
                TourGame { stage: Stage::Done, result: result.result.clone(), plies: result.plies, ..game.clone() };
            self.games.insert(game.id.clone(), done);
        }
    }

    /// Writes the last round into every player's record once all its games
    /// are done; true when it did.
    fn record_round_if_complete(&mut self, state: &mut SwissState) -> bool {
        let Some(last) = state.rounds.last_mut() else { return false };
        if last.recorded || !last.games.iter().all(|g| self.game(g).is_some_and(|g| g.stage == Stage::Done)) {
            return false;
        }
        let mut got: BTreeMap<String, (ColorPlayed, Option<String>, Outcome)> = BTreeMap::new();
        for (board, id) in last.pairing.boards.iter().zip(&last.games) {
            let Some(game) = self.game(id) else { continue };
            let (white, black) = outcomes(game);
            got.insert(board.white.clone(), (ColorPlayed::White, Some(board.black.clone()), white));
            got.insert(board.black.clone(), (ColorPlayed::Black, Some(board.white.clone()), black));
        }
        if let Some(bye) = &last.pairing.bye {
            got.insert(bye.clone(), (ColorPlayed::Bye, None, Outcome::Forfeit(last.pairing.bye_points_x2)));
        }
        let players: Vec<String> =
            self.standing.iter().filter(|(_, s)| s.swiss.is_some()).map(|(p, _)| p.clone()).collect();
        for player in players {
            let float = last.pairing.floats.iter().find(|(p, _)| *p == player).map_or(Float::None, |(_, f)| *f);
            let entry = got.get(&player).cloned().unwrap_or((ColorPlayed::Absent, None, Outcome::Forfeit(0)));
            let Some(line) = self.standing.get_mut(&player).and_then(|s| s.swiss.as_mut()) else { continue };
            record(line, entry, float);
            self.changed.insert(player);
        }
        last.recorded = true;
        true
    }

    /// The next round's pairing and games; `None` when it cannot be paired.
    fn pair_next(&mut self, state: &SwissState) -> Option<SwissRoundState> {
        let snapshot = self.snapshot;
        let record = &snapshot.record;
        let round = state.rounds.len() as u32 + 1;
        let mut players: Vec<SwissPlayer> = Vec::new();
        let mut entering: Vec<(String, SwissLine)> = Vec::new();
        for (id, entrant) in &snapshot.joined {
            let active = snapshot.presence.get(id).copied().unwrap_or(Presence::Active) == Presence::Active;
            let mut player = match self.standing.get(id).and_then(|s| s.swiss.as_ref()) {
                Some(line) => line.player.clone(),
                None if active => {
                    let player = SwissPlayer::late_joiner(id.clone(), entrant.rating, round, &settings());
                    let missed = vec![RoundResult::Unplayed { points_x2: player.points_x2 }; round as usize - 1];
                    entering.push((id.clone(), SwissLine { player: player.clone(), rounds: missed }));
                    player
                }
                None => continue,
            };
            player.withdrawn = !active;
            players.push(player);
        }
        if players.iter().filter(|p| !p.withdrawn).count() < 2 {
            return None;
        }
        let pairing = pair_round(&players, round, record.rounds, &settings()).ok()?;
        for (id, line) in entering {
            self.standing.entry(id.clone()).or_default().swiss = Some(line);
            self.changed.insert(id);
        }
        let chess960_position = record.chess960.then(|| round_position(&record.id, round));
        let mut games = Vec::with_capacity(pairing.boards.len());
        for (i, board) in pairing.boards.iter().enumerate() {
            let id = GameId::derived(&format!("swiss:{}:{round}:{i}", record.id)).into_string();
            for player in [&board.white, &board.black] {
                self.standing.entry(player.clone()).or_default().playing = Some(id.clone());
                self.changed.insert(player.clone());
            }
            let game = TourGame {
                id: id.clone(),
                white: board.white.clone(),
                black: board.black.clone(),
                stage: Stage::New,
                code: String::new(),
                paired_ms: snapshot.now_ms,
                result: String::new(),
                plies: 0,
                chess960_position,
            };
            self.games.insert(id.clone(), game);
            games.push(id);
        }
        Some(SwissRoundState { pairing, games, chess960_position, recorded: false })
    }
}

/// One round into one player's record.
fn record(line: &mut SwissLine, (colour, opponent, outcome): (ColorPlayed, Option<String>, Outcome), float: Float) {
    let player = &mut line.player;
    player.floats.push(float);
    match (outcome, opponent) {
        (Outcome::Played(points_x2), Some(opponent)) => {
            player.colors.push(colour);
            player.opponents.push(opponent.clone());
            player.points_x2 += points_x2;
            line.rounds.push(RoundResult::Game { opponent, points_x2 });
        }
        (Outcome::Played(points_x2) | Outcome::Forfeit(points_x2), _) => {
            // Scored without playing: a win counts as a bye (no second
            // one), anything else as a round not played.
            player.colors.push(if points_x2 >= 2 { ColorPlayed::Bye } else { ColorPlayed::Absent });
            player.points_x2 += points_x2;
            line.rounds.push(RoundResult::Unplayed { points_x2 });
        }
    }
}

/// A Swiss's standings: every player with a record, by points, then
/// Buchholz, then Sonneborn-Berger (see [`TIEBREAKS`]).
pub fn standings(snapshot: &Snapshot) -> Vec<tiebreak::Standing> {
    let records: Vec<PlayerRecord> = snapshot
        .standing
        .iter()
        .filter_map(|(id, s)| s.swiss.as_ref().map(|line| PlayerRecord { id: id.clone(), rounds: line.rounds.clone() }))
        .collect();
    tiebreak::standings(&records, &TIEBREAKS)
}

#[cfg(test)]
mod tests;
