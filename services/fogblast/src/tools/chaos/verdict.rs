//! The chaos verdict: what the bots wrote down, checked against the final
//! record of every game (the rating service's archive in Postgres, which
//! every finished game reaches through the stream) and against the rules.
//! Each line is a promise that holds or does not: no acknowledged move
//! lost, none applied twice, every game ended with a valid result, each
//! rated game rated once, clocks right within the tolerance, no fog of war
//! payload showing what its receiver may not see, no process panicked.

use std::collections::{BTreeSet, HashMap};

use anyhow::Context;
use fogblast_rules::{Color, Game, Position, Square, Variant};
use sqlx::{Connection, Row};

use super::bot::Records;

/// One finished game as the archive holds it.
#[derive(Clone, Debug)]
pub struct Archived {
    pub variant: String,
    pub rated: bool,
    pub result: String,
    /// `EndReason` number of `proto/game.proto`.
    pub reason: i64,
    pub moves: Vec<String>,
    pub clocks: Vec<u64>,
    pub increment_ms: Option<u64>,
    pub white: Option<String>,
    pub black: Option<String>,
    pub computer: bool,
}

/// One player's rating in one variant.
#[derive(Clone, Debug)]
pub struct RatingRow {
    pub player: String,
    pub variant: String,
    pub rated_games: i64,
    pub wins: i64,
    pub losses: i64,
    pub draws: i64,
}

/// What the database holds at the end.
#[derive(Debug, Default)]
pub struct Database {
    pub games: HashMap<String, Archived>,
    /// Rated game ids with how many rows each has.
    pub rated: HashMap<String, i64>,
    pub ratings: Vec<RatingRow>,
}

pub async fn read_database(url: &str) -> anyhow::Result<Database> {
    let mut db = sqlx::PgConnection::connect(url).await.context("connecting to the chaos database")?;
    let mut out = Database::default();
    let rows = sqlx::query(
        "SELECT id, variant, rated, result, reason, moves, clocks, clock_increment_ms, white_id, black_id, \
         white_computer, black_computer FROM games",
    )
    .fetch_all(&mut db)
    .await?;
    for row in rows {
        let split = |text: String| text.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
        let computer = row.try_get::<i64, _>("white_computer")? != 0 || row.try_get::<i64, _>("black_computer")? != 0;
        let game = Archived {
            variant: row.try_get("variant")?,
            rated: row.try_get::<i64, _>("rated")? != 0,
            result: row.try_get("result")?,
            reason: row.try_get("reason")?,
            moves: split(row.try_get("moves")?),
            clocks: split(row.try_get("clocks")?).iter().filter_map(|c| c.parse().ok()).collect(),
            increment_ms: row.try_get::<Option<i64>, _>("clock_increment_ms")?.map(|i| i as u64),
            white: row.try_get("white_id")?,
            black: row.try_get("black_id")?,
            computer,
        };
        out.games.insert(row.try_get("id")?, game);
    }
    for row in sqlx::query("SELECT game_id, COUNT(*) AS n FROM rated_games GROUP BY game_id").fetch_all(&mut db).await?
    {
        out.rated.insert(row.try_get("game_id")?, row.try_get("n")?);
    }
    for row in sqlx::query("SELECT player_id, variant, rated_games, wins, losses, draws FROM ratings")
        .fetch_all(&mut db)
        .await?
    {
        out.ratings.push(RatingRow {
            player: row.try_get("player_id")?,
            variant: row.try_get("variant")?,
            rated_games: row.try_get("rated_games")?,
            wins: row.try_get("wins")?,
            losses: row.try_get("losses")?,
            draws: row.try_get("draws")?,
        });
    }
    Ok(out)
}

/// One line of the verdict: a promise, whether it held, and the evidence.
#[derive(Debug)]
pub struct Line {
    pub promise: &'static str,
    pub checked: String,
    pub failures: Vec<String>,
}

impl Line {
    fn new(promise: &'static str) -> Line {
        Line { promise, checked: String::new(), failures: Vec::new() }
    }

    fn fail(&mut self, text: String) {
        self.failures.push(text);
    }

    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// End reasons of `proto/game.proto` decided by the board.
const NATURAL: [i64; 8] = [1, 2, 3, 4, 5, 6, 7, 13];
const ABORTED: i64 = 12;
const TIMEOUT: i64 = 8;

/// The verdict over the bots' records and the database; `troubles` are
/// the processes that panicked or ended badly, `fenced` whether the paused
/// shard fenced itself.
pub fn judge(
    records: &Records,
    db: &Database,
    troubles: &[String],
    tolerance_ms: u64,
    fenced: Option<bool>,
) -> Vec<Line> {
    let mut lines = Vec::new();

    // Every game the bots were in reached the archive.
    let mut ended = Line::new("every game ended with a valid result");
    let mut replayed: HashMap<&str, Vec<Position>> = HashMap::new();
    for id in records.games.keys() {
        if !db.games.contains_key(id) {
            ended.fail(format!("game {id} never reached the archive (not ended, or its end was lost)"));
        }
    }
    for (id, game) in &db.games {
        match check_result(game) {
            Ok(positions) => {
                replayed.insert(id.as_str(), positions);
            }
            Err(text) => ended.fail(format!("game {id}: {text}")),
        }
        if let Some((result, _)) = records.ends.get(id) {
            if *result != game.result {
                ended.fail(format!("game {id}: players were told {result}, the archive says {}", game.result));
            }
        }
    }
    ended.checked = format!("{} games archived, {} played by the bots", db.games.len(), records.games.len());
    lines.push(ended);

    // Acknowledged moves are in the record.
    let mut lost = Line::new("every acknowledged move is in the final record (0 lost)");
    for ((id, ply), uci) in &records.acked {
        match db.games.get(id).map(|g| g.moves.get(*ply)) {
            Some(Some(played)) if played == uci => {}
            Some(Some(played)) => lost.fail(format!("game {id} ply {ply}: acknowledged {uci}, recorded {played}")),
            Some(None) => lost.fail(format!("game {id} ply {ply}: acknowledged {uci}, the record ends before it")),
            None => lost.fail(format!("game {id} ply {ply}: acknowledged {uci}, the game is not in the archive")),
        }
    }
    lost.checked = format!("{} acknowledged moves", records.acked.len());
    lines.push(lost);

    // Every recorded move of a bot's seat was sent by that bot at that ply.
    let mut twice = Line::new("no move applied twice");
    let mut plies = 0usize;
    for (id, info) in &records.games {
        let Some(game) = db.games.get(id) else { continue };
        for (ply, uci) in game.moves.iter().enumerate() {
            if !info.bot_seats[ply % 2] {
                continue;
            }
            plies += 1;
            match records.sent.get(&(id.clone(), ply)) {
                Some(sent) if sent.tried.contains(uci) => {}
                Some(sent) => twice.fail(format!("game {id} ply {ply}: recorded {uci}, the bot sent {:?}", sent.tried)),
                None => twice.fail(format!("game {id} ply {ply}: recorded {uci}, the bot sent nothing at that ply")),
            }
        }
    }
    for (what, (count, examples)) in &records.problems {
        if what.contains("twice") || what.contains("another move") || what.contains("skipped") {
            twice.fail(format!("{count} × {what}: {}", examples.join("; ")));
        }
    }
    twice.checked = format!("{plies} recorded plies of bots' seats matched to one send each");
    lines.push(twice);

    lines.push(rated_once(records, db));
    lines.push(clocks(records, db, tolerance_ms));
    lines.push(fog(records, db, &replayed));

    let mut other = Line::new("the bots saw nothing else wrong");
    for (what, (count, examples)) in &records.problems {
        if !(what.contains("twice") || what.contains("another move") || what.contains("skipped")) {
            other.fail(format!("{count} × {what}: {}", examples.join("; ")));
        }
    }
    other.checked = format!("{} moves sent", records.moves_sent);
    lines.push(other);

    if let Some(fenced) = fenced {
        let mut line = Line::new("the paused shard was fenced");
        if !fenced {
            line.fail("after SIGCONT it never logged losing its lease and registering again".into());
        }
        line.checked = "its log after the pause".into();
        lines.push(line);
    }

    let mut panics = Line::new("no process panicked or ended badly");
    for trouble in troubles {
        panics.fail(trouble.clone());
    }
    panics.checked = "every log scanned, every exit status read".into();
    lines.push(panics);
    lines
}

/// Replays a record by the rules and checks its result; returns the
/// positions after each ply.
fn check_result(game: &Archived) -> Result<Vec<Position>, String> {
    let variant: Variant = game.variant.parse().map_err(|_| format!("unknown variant {}", game.variant))?;
    if !["1-0", "0-1", "1/2-1/2", "*"].contains(&game.result.as_str()) {
        return Err(format!("result {:?}", game.result));
    }
    let mut replay = Game::new(Position::new(variant));
    let mut positions = vec![*replay.position()];
    for (ply, uci) in game.moves.iter().enumerate() {
        replay.play_uci(uci).map_err(|e| format!("ply {ply} {uci} does not replay: {e:?}"))?;
        positions.push(*replay.position());
    }
    match replay.outcome() {
        Some(outcome) => {
            if !NATURAL.contains(&game.reason) {
                return Err(format!("the board ended it ({outcome:?}) but the reason is {}", game.reason));
            }
            if outcome.result_str() != game.result {
                return Err(format!("the board says {}, the record {}", outcome.result_str(), game.result));
            }
        }
        None if NATURAL.contains(&game.reason) => {
            return Err(format!("reason {} but the board has not ended the game", game.reason));
        }
        None if game.reason == ABORTED => {
            if game.result != "*" || game.moves.len() > 1 {
                return Err(format!("aborted after {} plies with {}", game.moves.len(), game.result));
            }
        }
        None if game.result == "*" => return Err(format!("result * for reason {}", game.reason)),
        None if game.reason == TIMEOUT || (9..=11).contains(&game.reason) => {}
        None => return Err(format!("unknown reason {}", game.reason)),
    }
    if game.clocks.len() != game.moves.len() && !game.clocks.is_empty() {
        return Err(format!("{} clocks for {} moves", game.clocks.len(), game.moves.len()));
    }
    Ok(positions)
}

fn rated_once(records: &Records, db: &Database) -> Line {
    let mut line = Line::new("each rated game rated exactly once");
    let mut rated = 0;
    for (id, game) in &db.games {
        let should = game.rated && !game.computer && game.result != "*";
        let rows = db.rated.get(id).copied().unwrap_or(0);
        match (should, rows) {
            (true, 1) => rated += 1,
            (false, 0) => {}
            (true, n) | (false, n) => {
                line.fail(format!("game {id} (rated {}, {}): {n} rating rows", game.rated, game.result))
            }
        }
    }
    for (id, info) in &records.games {
        if let Some(game) = db.games.get(id) {
            if info.rated != game.rated {
                line.fail(format!("game {id}: the players saw rated {}, the archive says {}", info.rated, game.rated));
            }
        }
    }
    // Each player's count of rated games and results matches the games.
    let mut counted: HashMap<(String, String), [i64; 4]> = HashMap::new();
    for (id, game) in &db.games {
        if db.rated.get(id).copied().unwrap_or(0) == 0 {
            continue;
        }
        for (player, won) in [(&game.white, "1-0"), (&game.black, "0-1")] {
            let Some(player) = player else { continue };
            let entry = counted.entry((player.clone(), game.variant.clone())).or_default();
            entry[0] += 1;
            match game.result.as_str() {
                "1/2-1/2" => entry[3] += 1,
                r if r == won => entry[1] += 1,
                _ => entry[2] += 1,
            }
        }
    }
    for row in &db.ratings {
        let want = counted.remove(&(row.player.clone(), row.variant.clone())).unwrap_or_default();
        let have = [row.rated_games, row.wins, row.losses, row.draws];
        if have != want {
            line.fail(format!(
                "player {} {}: games/wins/losses/draws {have:?} in ratings, {want:?} in the rated games",
                row.player, row.variant
            ));
        }
    }
    for ((player, variant), want) in counted {
        line.fail(format!("player {player} {variant}: {want:?} rated games but no rating"));
    }
    line.checked = format!("{rated} rated games, {} player ratings", db.ratings.len());
    line
}

/// The time each move was charged, from the record's clocks, must lie
/// between what the bots' own times allow: the mover's clock ran from
/// when the previous ply was applied (after its send, before anyone saw
/// it) to when this one was (after its send, before anyone saw it), less
/// up to one second of lag compensation, plus the increment.
fn clocks(records: &Records, db: &Database, tolerance_ms: u64) -> Line {
    const LAG_CAP_MS: i64 = 1_000;
    let mut line = Line::new("clocks never wrong by more than the tolerance");
    let tolerance = tolerance_ms as i64;
    let (mut checked, mut worst) = (0usize, 0i64);
    for (id, info) in &records.games {
        let (Some(game), Some(_)) = (db.games.get(id), info.clock) else { continue };
        if info.bot_seats != [true, true] || game.clocks.len() != game.moves.len() {
            continue;
        }
        let increment = game.increment_ms.unwrap_or(0) as i64;
        for ply in 0..game.moves.len() {
            // What the move frames showed is what the record holds.
            if let Some(&(white, black)) = records.clocks.get(&(id.clone(), ply)) {
                let shown = if ply % 2 == 0 { white } else { black };
                if shown != game.clocks[ply] {
                    line.fail(format!(
                        "game {id} ply {ply}: the move frame showed {shown} ms, the record {}",
                        game.clocks[ply]
                    ));
                }
            }
            if ply < 2 {
                continue;
            }
            let key = |p: usize| (id.clone(), p);
            let (Some(sent), Some(sent_before), Some(&seen), Some(&seen_before)) = (
                records.sent.get(&key(ply)),
                records.sent.get(&key(ply - 1)),
                records.seen.get(&key(ply)),
                records.seen.get(&key(ply - 1)),
            ) else {
                continue;
            };
            let charged = game.clocks[ply - 2] as i64 - game.clocks[ply] as i64 + increment;
            let low = sent.first_ms as i64 - seen_before as i64 - LAG_CAP_MS;
            let high = seen as i64 - sent_before.first_ms as i64;
            checked += 1;
            let off = (low - charged).max(charged - high).max(0);
            worst = worst.max(off);
            if off > tolerance {
                line.fail(format!(
                    "game {id} ply {ply}: charged {charged} ms, the bots' times allow {low}..{high} ms (off by {off} ms)"
                ));
            }
        }
    }
    line.checked =
        format!("{checked} charged moves; largest excess beyond the bounds {worst} ms (tolerance {tolerance_ms} ms)");
    line
}

/// Every fog-of-war frame a seat or a spectator received, against the
/// true position at its ply.
fn fog(records: &Records, db: &Database, replayed: &HashMap<&str, Vec<Position>>) -> Line {
    let mut line = Line::new("no fog payload leaked a hidden square");
    let (mut checked, mut to_spectators) = (0usize, 0usize);
    for frame in &records.fog {
        let Some(positions) = replayed.get(frame.game.as_str()) else { continue };
        let Some(position) = positions.get(frame.plies) else {
            line.fail(format!("game {}: a frame at ply {} beyond the record", frame.game, frame.plies));
            continue;
        };
        let moves = &db.games[&frame.game].moves;
        checked += 1;
        let shown = placement(&frame.fen);
        let who = match frame.viewer {
            None => "a spectator".to_owned(),
            Some(color) => format!("{color:?}"),
        };
        let context = format!("game {} {} frame at ply {} to {who}", frame.game, frame.kind, frame.plies);
        match frame.viewer {
            None => {
                to_spectators += 1;
                if !shown.is_empty() {
                    line.fail(format!("{context}: shows {} pieces", shown.len()));
                }
                if !frame.moves.is_empty() {
                    line.fail(format!("{context}: names moves {:?}", frame.moves));
                }
                if frame.visible.as_ref().is_some_and(|v| !v.is_empty()) {
                    line.fail(format!("{context}: lists visible squares"));
                }
            }
            Some(color) => {
                let visible: BTreeSet<String> =
                    position.visible_squares(color).into_iter().map(|sq| sq.to_string()).collect();
                for (square, piece) in &shown {
                    let truth =
                        square.parse::<Square>().ok().and_then(|sq| position.board().piece_at(sq)).map(|p| p.char());
                    if !visible.contains(square) || truth != Some(*piece) {
                        line.fail(format!(
                            "{context}: shows {piece} on {square} (really {truth:?}, visible {})",
                            visible.contains(square)
                        ));
                    }
                }
                if let Some(listed) = &frame.visible {
                    let listed: BTreeSet<String> = listed.iter().cloned().collect();
                    if listed != visible {
                        line.fail(format!("{context}: lists {} visible squares, sees {}", listed.len(), visible.len()));
                    }
                }
                for (ply, uci) in &frame.moves {
                    let mover = if ply % 2 == 0 { Color::White } else { Color::Black };
                    if mover != color || moves.get(*ply) != Some(uci) {
                        line.fail(format!("{context}: names {uci} at ply {ply}"));
                    }
                }
            }
        }
    }
    line.checked = format!("{} fog frames to seats, {to_spectators} to spectators", checked - to_spectators);
    line
}

/// The pieces of a FEN's placement, by square name.
fn placement(fen: &str) -> Vec<(String, char)> {
    let mut out = Vec::new();
    for (row, rank) in fen.split_whitespace().next().unwrap_or("").split('/').enumerate() {
        let mut file = 0u8;
        for c in rank.chars() {
            match c.to_digit(10) {
                Some(skip) => file += skip as u8,
                None => {
                    out.push((format!("{}{}", (b'a' + file) as char, 8 - row), c));
                    file += 1;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archived(moves: &[&str], result: &str, reason: i64) -> Archived {
        Archived {
            variant: "atomic".into(),
            rated: false,
            result: result.into(),
            reason,
            moves: moves.iter().map(|m| (*m).to_owned()).collect(),
            clocks: Vec::new(),
            increment_ms: None,
            white: None,
            black: None,
            computer: false,
        }
    }

    #[test]
    fn results_are_checked_against_the_board() {
        assert!(check_result(&archived(&["e2e4", "e7e5"], "0-1", 9)).is_ok());
        assert!(check_result(&archived(&["e2e4"], "*", 12)).is_ok());
        // Aborted after both moved, an illegal move, a natural end the board did not reach.
        assert!(check_result(&archived(&["e2e4", "e7e5"], "*", 12)).is_err());
        assert!(check_result(&archived(&["e2e5"], "1-0", 9)).is_err());
        assert!(check_result(&archived(&["e2e4"], "1-0", 1)).is_err());
        assert!(check_result(&archived(&["e2e4"], "2-0", 9)).is_err());
    }

    /// A clean run: one rated standard game between two bots, three plies,
    /// resigned, rated once; a fog frame that shows what white sees.
    fn clean() -> (Records, Database) {
        use super::super::bot::{FogFrame, GameInfo, Sent};
        let id = "g1".to_owned();
        let moves = ["e2e4", "e7e5", "g1f3"];
        let mut records = Records::default();
        records.games.insert(
            id.clone(),
            GameInfo {
                variant: Variant::Standard,
                rated: true,
                clock: Some((300_000, 0)),
                bot_seats: [true, true],
                kind: "invite",
            },
        );
        for (ply, uci) in moves.iter().enumerate() {
            let sent = Sent {
                tried: vec![(*uci).to_owned()],
                first_ms: 1_000 * ply as u64,
                last_ms: 1_000 * ply as u64,
                gateway: 0,
            };
            records.sent.insert((id.clone(), ply), sent);
            records.acked.insert((id.clone(), ply), (*uci).to_owned());
            records.seen.insert((id.clone(), ply), 1_000 * ply as u64 + 10);
        }
        records.fog.push(FogFrame {
            game: "g2".into(),
            viewer: Some(Color::White),
            plies: 0,
            fen: "8/8/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1".into(),
            visible: None,
            moves: Vec::new(),
            kind: "state",
        });
        let mut db = Database::default();
        let mut game = archived(&moves, "1-0", 9);
        game.variant = "standard".into();
        game.rated = true;
        game.white = Some("w".into());
        game.black = Some("b".into());
        // Ply 2 took about a second (sent at 2000, the reply seen at 1010).
        game.clocks = vec![300_000, 300_000, 299_000];
        db.games.insert(id.clone(), game);
        let mut fog = archived(&[], "*", 12);
        fog.variant = "fog".into();
        db.games.insert("g2".into(), fog);
        db.rated.insert(id, 1);
        for (player, wins, losses) in [("w", 1, 0), ("b", 0, 1)] {
            db.ratings.push(RatingRow {
                player: player.into(),
                variant: "standard".into(),
                rated_games: 1,
                wins,
                losses,
                draws: 0,
            });
        }
        (records, db)
    }

    fn failing(records: &Records, db: &Database) -> Vec<&'static str> {
        judge(records, db, &[], 250, Some(true)).iter().filter(|l| !l.passed()).map(|l| l.promise).collect()
    }

    #[test]
    fn a_clean_run_passes_and_each_kind_of_breakage_fails_its_line() {
        let (records, db) = clean();
        assert!(failing(&records, &db).is_empty(), "{:?}", judge(&records, &db, &[], 250, Some(true)));

        let (mut records, db) = clean();
        records.acked.insert(("g1".into(), 3), "b8c6".into());
        assert_eq!(failing(&records, &db), ["every acknowledged move is in the final record (0 lost)"]);

        let (records, mut db) = clean();
        db.games.get_mut("g1").unwrap().moves.push("b8c6".into());
        db.games.get_mut("g1").unwrap().clocks.push(300_000);
        assert!(failing(&records, &db).contains(&"no move applied twice"));

        let (records, mut db) = clean();
        db.rated.insert("g1".into(), 0);
        assert!(failing(&records, &db).contains(&"each rated game rated exactly once"));
        let (records, mut db) = clean();
        db.ratings[0].rated_games = 2;
        assert_eq!(failing(&records, &db), ["each rated game rated exactly once"]);

        let (records, mut db) = clean();
        db.games.get_mut("g1").unwrap().clocks[2] = 297_000;
        assert_eq!(failing(&records, &db), ["clocks never wrong by more than the tolerance"]);

        let (mut records, db) = clean();
        records.fog[0].fen = "4k3/8/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1".into();
        assert_eq!(failing(&records, &db), ["no fog payload leaked a hidden square"]);
        let (mut records, db) = clean();
        records.fog[0].viewer = None;
        assert_eq!(failing(&records, &db), ["no fog payload leaked a hidden square"]);

        let (records, mut db) = clean();
        db.games.get_mut("g1").unwrap().result = "*".into();
        assert!(failing(&records, &db).contains(&"every game ended with a valid result"));
        let (records, mut db) = clean();
        db.games.remove("g1");
        assert!(failing(&records, &db).contains(&"every game ended with a valid result"));

        let (records, db) = clean();
        let lines = judge(&records, &db, &["shard-0 (start 0) panicked: boom".into()], 250, Some(false));
        let failed: Vec<_> = lines.iter().filter(|l| !l.passed()).map(|l| l.promise).collect();
        assert_eq!(failed, ["the paused shard was fenced", "no process panicked or ended badly"]);
    }

    #[test]
    fn placement_reads_squares() {
        assert_eq!(
            placement("8/8/8/8/4P3/8/8/k6K w - - 0 1"),
            vec![("e4".to_owned(), 'P'), ("a1".to_owned(), 'k'), ("h1".to_owned(), 'K')]
        );
        assert!(placement("8/8/8/8/8/8/8/8 b - - 0 2").is_empty());
    }
}
