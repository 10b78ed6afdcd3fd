//! Writing a finished game as PGN. The server keeps games as UCI moves and
//! clock readings; players and other tools want PGN with SAN, the tags
//! lichess writes, and `[%clk]` comments, so this turns the one into the
//! other, replaying the moves to get each SAN and check mark right.

use fogblast_rules::{Color, ParsePositionError, ParseUciError, Position, Uci, Variant};

use crate::clock::format_clock;
use crate::date::DateTime;
use crate::eval::Eval;
use crate::tags::{escape_value, is_valid_tag_name, variant_tag, GameResult, TimeControl};

/// Movetext lines are wrapped before this many columns, as the PGN
/// standard's export format asks.
const LINE_WIDTH: usize = 80;

/// A finished (or abandoned) game as the server knows it: what
/// [`write_game`] turns into PGN.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GameRecord {
    /// The `Event` tag, e.g. `Rated atomic game`. Empty writes `?`.
    pub event: String,
    /// The `Site` tag, e.g. the game's URL. Empty writes `?`.
    pub site: String,
    /// When the game started, in unix milliseconds: the `Date`, `UTCDate`
    /// and `UTCTime` tags. `None` writes `Date "????.??.??"` and no UTC
    /// tags.
    pub started_at_ms: Option<u64>,
    /// White's name. Empty writes `?`.
    pub white: String,
    /// Black's name. Empty writes `?`.
    pub black: String,
    pub result: GameResult,
    pub variant: Variant,
    /// Whether the game started from a Chess960 position (standard or
    /// atomic only): the `Variant` tag says `Chess960` for standard chess,
    /// and the `FEN` tag is always written.
    pub chess960: bool,
    /// The starting position as FEN (X-FEN or Shredder-FEN castling);
    /// `None` for the variant's standard start.
    pub initial_fen: Option<String>,
    /// The moves in UCI; castling as `e1g1` or as king takes rook (`e1h1`).
    pub moves: Vec<String>,
    /// The mover's remaining time after each move, in milliseconds: at most
    /// one per move, in order; empty when the game had no clock. Written
    /// as `{ [%clk H:MM:SS] }`, rounded down to whole seconds.
    pub clocks_ms: Vec<u64>,
    /// An analysed game's score after each move, from white's side: at most
    /// one per move, in order; `None` for a move without one (the one that
    /// ends the game). Written as `[%eval 0.17]` before the clock, in the
    /// same comment, as lichess does.
    pub evals: Vec<Option<Eval>>,
    /// `None` writes `TimeControl "-"` (no clock, or correspondence).
    pub time_control: Option<TimeControl>,
    /// The `Termination` tag as lichess writes it (`Normal`, `Time
    /// forfeit`, `Abandoned`, `Rules infraction`, `Unterminated`); empty
    /// writes no tag.
    pub termination: String,
    pub white_elo: Option<u32>,
    pub black_elo: Option<u32>,
    /// More tags, written last in this order (e.g. `WhiteTitle`). Names
    /// are letters, digits and `_`, and may not repeat a tag the writer
    /// writes itself.
    pub extra_tags: Vec<(String, String)>,
}

/// Why a [`GameRecord`] cannot be written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    #[error("initial FEN {fen:?}: {error}")]
    InitialFen { fen: String, error: ParsePositionError },
    #[error("{0} is not played from Chess960 starts")]
    Chess960Variant(Variant),
    #[error("move {number} {uci:?} (ply {ply}): {error}")]
    MoveSyntax { ply: usize, number: String, uci: String, error: ParseUciError },
    #[error("move {number} {uci} (ply {ply}) is not legal in {fen}")]
    IllegalMove { ply: usize, number: String, uci: String, fen: String },
    #[error("{clocks} clock readings for {moves} moves: give at most one per move")]
    TooManyClocks { clocks: usize, moves: usize },
    #[error("{evals} evaluations for {moves} moves: give at most one per move")]
    TooManyEvals { evals: usize, moves: usize },
    #[error("tag name {0:?}: use letters, digits and '_', starting with a letter or digit")]
    InvalidTagName(String),
    #[error("tag {0:?} is written twice: extra tags may not repeat one another or the writer's own tags")]
    DuplicateTag(String),
}

/// `12.` before a white move, `12...` before a black one.
pub(crate) fn move_number(pos: &Position) -> String {
    match pos.turn() {
        Color::White => format!("{}.", pos.fullmoves()),
        Color::Black => format!("{}...", pos.fullmoves()),
    }
}

/// The game as PGN: tags, a blank line, the movetext wrapped at 80 columns
/// and ending in the result, and a final newline. Concatenate games with a
/// blank line between them (see [`write_games`]).
///
/// Tags, in order: the Seven Tag Roster (`Event`, `Site`, `Date`, `Round
/// "-"`, `White`, `Black`, `Result`), then `Variant`, `TimeControl`,
/// `Termination`, `UTCDate`, `UTCTime`, `WhiteElo`, `BlackElo` (those
/// known), `FEN` and `SetUp "1"` when the game did not start from the
/// standard position or is Chess960, then the extra tags.
pub fn write_game(record: &GameRecord) -> Result<String, WriteError> {
    let initial = initial_position(record)?;
    let movetext = movetext(record, initial)?;

    let mut tags: Vec<(&str, String)> = Vec::with_capacity(16 + record.extra_tags.len());
    let or_unknown = |value: &str| if value.is_empty() { "?".to_owned() } else { value.to_owned() };
    let started = record.started_at_ms.map(DateTime::from_unix_ms);
    tags.push(("Event", or_unknown(&record.event)));
    tags.push(("Site", or_unknown(&record.site)));
    tags.push(("Date", started.map_or_else(|| "????.??.??".to_owned(), DateTime::pgn_date)));
    tags.push(("Round", "-".to_owned()));
    tags.push(("White", or_unknown(&record.white)));
    tags.push(("Black", or_unknown(&record.black)));
    tags.push(("Result", record.result.to_string()));
    tags.push(("Variant", variant_tag(record.variant, record.chess960).to_owned()));
    tags.push(("TimeControl", record.time_control.map_or_else(|| "-".to_owned(), |tc| tc.to_string())));
    if !record.termination.is_empty() {
        tags.push(("Termination", record.termination.clone()));
    }
    if let Some(started) = started {
        tags.push(("UTCDate", started.pgn_date()));
        tags.push(("UTCTime", started.pgn_time()));
    }
    if let Some(elo) = record.white_elo {
        tags.push(("WhiteElo", elo.to_string()));
    }
    if let Some(elo) = record.black_elo {
        tags.push(("BlackElo", elo.to_string()));
    }
    if record.chess960 || initial != Position::new(record.variant) {
        tags.push(("FEN", initial.fen()));
        tags.push(("SetUp", "1".to_owned()));
    }
    // Reserve every tag the writer may write, so that an extra tag cannot
    // collide with one only some games get.
    const OWN: [&str; 16] = [
        "Event",
        "Site",
        "Date",
        "Round",
        "White",
        "Black",
        "Result",
        "Variant",
        "TimeControl",
        "Termination",
        "UTCDate",
        "UTCTime",
        "WhiteElo",
        "BlackElo",
        "FEN",
        "SetUp",
    ];
    for (i, (name, value)) in record.extra_tags.iter().enumerate() {
        if !is_valid_tag_name(name) {
            return Err(WriteError::InvalidTagName(name.clone()));
        }
        if OWN.contains(&name.as_str()) || record.extra_tags[..i].iter().any(|(other, _)| other == name) {
            return Err(WriteError::DuplicateTag(name.clone()));
        }
        tags.push((name, value.clone()));
    }

    let mut out = String::with_capacity(64 * tags.len() + movetext.len() + 2);
    for (name, value) in &tags {
        out.push('[');
        out.push_str(name);
        out.push_str(" \"");
        out.push_str(&escape_value(value));
        out.push_str("\"]\n");
    }
    out.push('\n');
    out.push_str(&movetext);
    out.push('\n');
    Ok(out)
}

/// Several games as one PGN file, separated by blank lines.
pub fn write_games<'a>(records: impl IntoIterator<Item = &'a GameRecord>) -> Result<String, WriteError> {
    let games: Vec<String> = records.into_iter().map(write_game).collect::<Result<_, _>>()?;
    Ok(games.join("\n"))
}

fn initial_position(record: &GameRecord) -> Result<Position, WriteError> {
    if record.chess960 && !record.variant.allows_chess960() {
        return Err(WriteError::Chess960Variant(record.variant));
    }
    match &record.initial_fen {
        None => Ok(Position::new(record.variant)),
        Some(fen) => {
            Position::from_fen(fen, record.variant).map_err(|error| WriteError::InitialFen { fen: fen.clone(), error })
        }
    }
}

/// The movetext, wrapped, without a final newline.
fn movetext(record: &GameRecord, initial: Position) -> Result<String, WriteError> {
    if record.clocks_ms.len() > record.moves.len() {
        return Err(WriteError::TooManyClocks { clocks: record.clocks_ms.len(), moves: record.moves.len() });
    }
    if record.evals.len() > record.moves.len() {
        return Err(WriteError::TooManyEvals { evals: record.evals.len(), moves: record.moves.len() });
    }
    // Tokens never broken across lines: a comment stays whole.
    let mut tokens: Vec<String> = Vec::with_capacity(record.moves.len() * 3 + 1);
    let mut pos = initial;
    let mut after_comment = false;
    for (ply, text) in record.moves.iter().enumerate() {
        let number = move_number(&pos);
        let uci: Uci = text.parse().map_err(|error| WriteError::MoveSyntax {
            ply: ply + 1,
            number: number.clone(),
            uci: text.clone(),
            error,
        })?;
        let m = pos.parse_uci(&uci).ok_or_else(|| WriteError::IllegalMove {
            ply: ply + 1,
            number: number.clone(),
            uci: text.clone(),
            fen: pos.fen(),
        })?;
        // Lichess style: a black move gets its number again after a
        // comment, and at the start of a game from a position with black
        // to move.
        if pos.turn() == Color::White || ply == 0 || after_comment {
            tokens.push(number);
        }
        tokens.push(pos.san(m));
        after_comment = false;
        let eval = record.evals.get(ply).copied().flatten().map(|eval| format!("[%eval {eval}]"));
        let clock = record.clocks_ms.get(ply).map(|&ms| format!("[%clk {}]", format_clock(ms)));
        let comment: Vec<String> = eval.into_iter().chain(clock).collect();
        if !comment.is_empty() {
            tokens.push(format!("{{ {} }}", comment.join(" ")));
            after_comment = true;
        }
        pos.play_unchecked(m);
    }
    tokens.push(record.result.to_string());
    Ok(wrap(&tokens))
}

/// Joins `tokens` with spaces into lines of at most [`LINE_WIDTH`]
/// characters (a longer token gets a line of its own).
fn wrap(tokens: &[String]) -> String {
    let mut out = String::new();
    let mut line_len = 0;
    for token in tokens {
        let len = token.chars().count();
        if line_len > 0 && line_len + 1 + len > LINE_WIDTH {
            out.push('\n');
            line_len = 0;
        }
        if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(token);
        line_len += len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_before_the_width() {
        let tokens: Vec<String> = (0..40).map(|i| format!("tok{i:04}")).collect();
        let text = wrap(&tokens);
        assert!(text.lines().all(|line| line.len() <= LINE_WIDTH), "{text}");
        assert_eq!(text.lines().next().unwrap().len(), 79);
        assert_eq!(text.split_whitespace().collect::<Vec<_>>(), tokens.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(wrap(&["x".repeat(100), "y".into()]), format!("{}\ny", "x".repeat(100)));
    }

    #[test]
    fn numbers_black_moves_after_comments_and_at_a_black_start() {
        let record = GameRecord {
            variant: Variant::Standard,
            initial_fen: Some("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into()),
            moves: ["e7e5", "g1f3", "b8c6"].map(String::from).to_vec(),
            clocks_ms: vec![60_000],
            ..GameRecord::default()
        };
        let pgn = write_game(&record).unwrap();
        assert!(pgn.ends_with("\n\n1... e5 { [%clk 0:01:00] } 2. Nf3 Nc6 *\n"), "{pgn}");
    }

    #[test]
    fn evals_go_before_the_clock_in_one_comment() {
        let record = GameRecord {
            variant: Variant::Atomic,
            moves: ["g1f3", "a7a6", "f3g5", "a6a5", "g5f7"].map(String::from).to_vec(),
            clocks_ms: vec![60_000, 59_000],
            evals: vec![Some(Eval::Cp(35)), Some(Eval::Cp(-120)), Some(Eval::Mate(2)), Some(Eval::Mate(1)), None],
            result: crate::GameResult::WhiteWins,
            ..GameRecord::default()
        };
        let pgn = write_game(&record).unwrap();
        let movetext = pgn.split("\n\n").nth(1).unwrap().replace('\n', " ");
        assert_eq!(
            movetext.trim_end(),
            "1. Nf3 { [%eval 0.35] [%clk 0:01:00] } 1... a6 { [%eval -1.2] [%clk 0:00:59] } 2. Ng5 { [%eval #2] } \
             2... a5 { [%eval #1] } 3. Nxf7# 1-0"
        );
        let too_many = GameRecord { evals: vec![None; 6], ..record };
        assert!(matches!(write_game(&too_many), Err(WriteError::TooManyEvals { evals: 6, moves: 5 })));
    }
}
