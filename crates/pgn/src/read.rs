//! Reading PGN back: games exported here or by other servers come back as
//! UCI moves, clocks and results, so they can be imported, analysed or
//! checked against what was written. The reader replays every SAN move
//! with `fogblast-rules` in the game's variant, reports where and why text
//! is not PGN or not legal, and never panics, whatever it is fed.

use std::collections::HashSet;

use fogblast_rules::{CastlingMode, Color, File, ParsePositionError, Position, SanError, Variant};

use crate::clock::parse_clock;
use crate::date::DateTime;
use crate::tags::{variant_from_tag, GameResult, TimeControl};
use crate::write::move_number;

/// One game read from PGN.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgnGame {
    /// Every tag in file order, values unescaped.
    pub tags: Vec<(String, String)>,
    /// From the `Variant` tag; standard chess without one.
    pub variant: Variant,
    /// Whether castling follows Chess960: the `Variant` tag says so, or the
    /// start's castling rights name a rook off the a- and h-files or a king
    /// off the e-file (the rule python-chess follows).
    pub chess960: bool,
    /// The start: the `FEN` tag's position, or the variant's standard one.
    pub initial: Position,
    /// The main line in UCI. Castling is king takes rook (`e1h1`) when
    /// [`PgnGame::chess960`], else `e1g1`; `Position::parse_uci` reads both.
    pub moves: Vec<String>,
    /// The `[%clk]` reading after each move of [`PgnGame::moves`], in
    /// milliseconds; `None` for a move without one.
    pub clocks_ms: Vec<Option<u64>>,
    /// The movetext's result token, or the `Result` tag when the movetext
    /// has none.
    pub result: GameResult,
}

impl PgnGame {
    /// The value of the tag `name` (case-sensitive, as PGN tag names are).
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags.iter().find(|(n, _)| n == name).map(|(_, value)| value.as_str())
    }

    /// The `TimeControl` tag, if it names a Fischer clock (`600+5`, `600`);
    /// `None` for `-`, `?`, a missing tag and other forms.
    pub fn time_control(&self) -> Option<TimeControl> {
        self.tag("TimeControl")?.parse().ok()
    }

    /// When the game started, in unix milliseconds, from `UTCDate` (or
    /// `Date`) and `UTCTime` (or midnight); `None` if the date is unknown
    /// or malformed.
    pub fn started_at_ms(&self) -> Option<u64> {
        let date = self.tag("UTCDate").or_else(|| self.tag("Date"))?;
        DateTime::parse(date, self.tag("UTCTime").unwrap_or("00:00:00"))?.to_unix_ms()
    }
}

/// Where reading PGN failed: the game (counted from 1), the line (from 1)
/// and what was wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("PGN game {game}, line {line}: {kind}")]
pub struct PgnError {
    pub game: usize,
    pub line: usize,
    pub kind: PgnErrorKind,
}

/// What was wrong with a game's PGN.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PgnErrorKind {
    #[error("no game in the input")]
    NoGame,
    #[error("unexpected {0:?}")]
    UnexpectedChar(char),
    #[error("malformed tag pair: {0} (expected [Name \"value\"])")]
    MalformedTag(&'static str),
    #[error("tag {0:?} appears twice")]
    DuplicateTag(String),
    #[error("comment opened with '{{' is never closed")]
    UnterminatedComment,
    #[error("variation opened with '(' is not closed before the game ends")]
    UnclosedVariation,
    #[error("'$' must be followed by a number (a NAG such as $1)")]
    MalformedNag,
    #[error("unsupported variant {0:?} (expected Standard, Chess960, Atomic or Fog of War)")]
    UnsupportedVariant(String),
    #[error("FEN tag {fen:?}: {error}")]
    Fen { fen: String, error: ParsePositionError },
    #[error("Result tag {0:?}: expected 1-0, 0-1, 1/2-1/2 or *")]
    ResultTag(String),
    #[error("the movetext ends in {movetext} but the Result tag says {tag}")]
    ResultMismatch { tag: GameResult, movetext: GameResult },
    #[error("move {number} {san}: {error}")]
    Move { number: String, san: String, error: SanError },
    #[error("clock comment [%clk {0}]: expected H:MM:SS")]
    Clock(String),
}

/// Every game in `text`, or the first error.
pub fn read_games(text: &str) -> Result<Vec<PgnGame>, PgnError> {
    games(text).collect()
}

/// The first game in `text` (like python-chess's `read_game`; later games
/// are not read).
pub fn read_game(text: &str) -> Result<PgnGame, PgnError> {
    games(text).next().unwrap_or(Err(PgnError { game: 1, line: 1, kind: PgnErrorKind::NoGame }))
}

/// The games in `text`, one at a time. After an error the iterator ends.
pub fn games(text: &str) -> Games<'_> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    Games { lexer: Lexer { text, pos: 0 }, game: 0, failed: false }
}

/// Iterator over the games of a PGN text; see [`games`].
#[derive(Debug)]
pub struct Games<'a> {
    lexer: Lexer<'a>,
    /// Games started so far.
    game: usize,
    failed: bool,
}

impl Iterator for Games<'_> {
    type Item = Result<PgnGame, PgnError>;

    fn next(&mut self) -> Option<Result<PgnGame, PgnError>> {
        if self.failed {
            return None;
        }
        loop {
            self.lexer.skip_trivia();
            if self.lexer.at_end() {
                return None;
            }
            let result = self.read_one();
            match result {
                Ok(Some(game)) => return Some(Ok(game)),
                // Nothing but comments and annotations: not a game.
                Ok(None) => continue,
                Err((offset, kind)) => {
                    self.failed = true;
                    let line = self.lexer.line_at(offset);
                    return Some(Err(PgnError { game: self.game.max(1), line, kind }));
                }
            }
        }
    }
}

/// An error and the byte offset it is reported at.
type Failure = (usize, PgnErrorKind);

/// A tag as read, with where it started.
struct Tag {
    name: String,
    value: String,
    offset: usize,
}

/// A game's tags, in order, each name once.
struct Tags(Vec<Tag>);

impl Tags {
    fn find(&self, name: &str) -> Option<&Tag> {
        self.0.iter().find(|t| t.name == name)
    }

    /// The variant, whether castling is Chess960's, the starting position
    /// and the result the tags give.
    fn setup(&self) -> Result<(Variant, bool, Position, Option<GameResult>), Failure> {
        let (variant, mut chess960) = match self.find("Variant") {
            None => (Variant::Standard, false),
            Some(tag) => variant_from_tag(&tag.value)
                .ok_or_else(|| (tag.offset, PgnErrorKind::UnsupportedVariant(tag.value.clone())))?,
        };
        let initial = match self.find("FEN") {
            None => Position::new(variant),
            Some(tag) => Position::from_fen(&tag.value, variant)
                .map_err(|error| (tag.offset, PgnErrorKind::Fen { fen: tag.value.clone(), error }))?,
        };
        chess960 |= has_chess960_castling(&initial);
        let result = match self.find("Result") {
            None => None,
            Some(tag) => Some(
                tag.value
                    .parse::<GameResult>()
                    .map_err(|_| (tag.offset, PgnErrorKind::ResultTag(tag.value.clone())))?,
            ),
        };
        Ok((variant, chess960, initial, result))
    }
}

/// A game's main line as its movetext gives it.
struct Movetext {
    moves: Vec<String>,
    clocks_ms: Vec<Option<u64>>,
    /// The result token, if the movetext ended with one.
    result: Option<GameResult>,
    /// Whether it held anything but comments and annotations.
    saw_anything: bool,
}

impl Games<'_> {
    /// Reads one game from the lexer's position, which is at a token.
    fn read_one(&mut self) -> Result<Option<PgnGame>, Failure> {
        self.game += 1;
        let tags = self.read_tags()?;
        let (variant, chess960, initial, tag_result) = tags.setup()?;
        let movetext = self.read_movetext(initial, CastlingMode::for_game(chess960))?;
        if tags.0.is_empty() && !movetext.saw_anything && movetext.result.is_none() {
            self.game -= 1;
            return Ok(None);
        }
        let result = match (tag_result, movetext.result) {
            (Some(tag), Some(movetext)) if tag != movetext => {
                let offset = tags.find("Result").map_or(0, |t| t.offset);
                return Err((offset, PgnErrorKind::ResultMismatch { tag, movetext }));
            }
            (_, Some(result)) | (Some(result), None) => result,
            (None, None) => GameResult::Unknown,
        };
        Ok(Some(PgnGame {
            tags: tags.0.into_iter().map(|t| (t.name, t.value)).collect(),
            variant,
            chess960,
            initial,
            moves: movetext.moves,
            clocks_ms: movetext.clocks_ms,
            result,
        }))
    }

    fn read_tags(&mut self) -> Result<Tags, Failure> {
        let lexer = &mut self.lexer;
        let mut tags: Vec<Tag> = Vec::new();
        let mut seen = HashSet::new();
        while lexer.peek() == Some(b'[') {
            let tag = lexer.tag()?;
            if !seen.insert(tag.name.clone()) {
                return Err((tag.offset, PgnErrorKind::DuplicateTag(tag.name)));
            }
            tags.push(tag);
            lexer.skip_trivia();
        }
        Ok(Tags(tags))
    }

    /// Reads the movetext up to its result token, the next game's tags or
    /// the end, playing the main line from `initial`; variations are
    /// skipped.
    fn read_movetext(&mut self, initial: Position, mode: CastlingMode) -> Result<Movetext, Failure> {
        let lexer = &mut self.lexer;
        let mut pos = initial;
        let mut text = Movetext { moves: Vec::new(), clocks_ms: Vec::new(), result: None, saw_anything: false };
        // The main-line move a following comment's clock belongs to.
        let mut last_move: Option<usize> = None;
        let mut depth = 0usize;
        loop {
            lexer.skip_trivia();
            let start = lexer.pos;
            let token = lexer.token()?;
            if !matches!(token, Token::Comment(_) | Token::Nag | Token::Annotation | Token::End | Token::TagOpen) {
                text.saw_anything = true;
            }
            match token {
                Token::End | Token::TagOpen if depth > 0 => return Err((start, PgnErrorKind::UnclosedVariation)),
                // A new game starts without this one's result token.
                Token::End | Token::TagOpen => break,
                Token::Symbol(symbol) => {
                    if let Ok(result) = symbol.parse::<GameResult>() {
                        if depth > 0 {
                            return Err((start, PgnErrorKind::UnclosedVariation));
                        }
                        text.result = Some(result);
                        break;
                    }
                    if depth > 0 {
                        continue;
                    }
                    if symbol.bytes().all(|b| b.is_ascii_digit()) {
                        // A move number: the position knows better.
                        last_move = None;
                        continue;
                    }
                    let m = pos.parse_san(symbol).map_err(|error| {
                        (start, PgnErrorKind::Move { number: move_number(&pos), san: symbol.to_owned(), error })
                    })?;
                    text.moves.push(m.to_uci(mode).to_string());
                    text.clocks_ms.push(None);
                    last_move = Some(text.moves.len() - 1);
                    pos.play_unchecked(m);
                }
                Token::Star => {
                    if depth > 0 {
                        return Err((start, PgnErrorKind::UnclosedVariation));
                    }
                    text.result = Some(GameResult::Unknown);
                    break;
                }
                Token::Comment(comment) => {
                    if let (0, Some(index)) = (depth, last_move) {
                        if let Some(ms) = clock_in_comment(comment).map_err(|kind| (start, kind))? {
                            text.clocks_ms[index] = Some(ms);
                        }
                    }
                }
                Token::VariationOpen => depth += 1,
                Token::VariationClose if depth == 0 => return Err((start, PgnErrorKind::UnexpectedChar(')'))),
                Token::VariationClose => depth -= 1,
                Token::Period | Token::Nag | Token::Annotation => {}
            }
        }
        Ok(text)
    }
}

/// Whether `pos` has castling rights that standard castling cannot
/// describe: a king off the e-file or a rook off the a- and h-files.
fn has_chess960_castling(pos: &Position) -> bool {
    pos.castling_rooks().into_iter().any(|rook| {
        let color = if rook.rank() == fogblast_rules::Rank::FIRST { Color::White } else { Color::Black };
        let king_on_e = pos.board().king_of(color).is_some_and(|king| king.file() == File::E);
        !king_on_e || !(rook.file() == File::A || rook.file() == File::H)
    })
}

/// The `[%clk ...]` reading in a comment's text, if it has one.
fn clock_in_comment(comment: &str) -> Result<Option<u64>, PgnErrorKind> {
    let Some(start) = comment.find("[%clk") else {
        return Ok(None);
    };
    let rest = &comment[start + "[%clk".len()..];
    let body = match rest.find(']') {
        Some(end) => &rest[..end],
        None => rest,
    };
    let value = body.trim();
    let separated = body.starts_with(|c: char| c.is_ascii_whitespace());
    match parse_clock(value) {
        Some(ms) if separated && rest.contains(']') => Ok(Some(ms)),
        _ => Err(PgnErrorKind::Clock(value.to_owned())),
    }
}

/// A movetext token. Tag pairs are read by [`Lexer::tag`].
#[derive(Debug)]
enum Token<'a> {
    End,
    /// `[`, not consumed: the next game's tags.
    TagOpen,
    /// A move, a move number or a result (letters, digits, `_+#=:/-`).
    Symbol(&'a str),
    Period,
    Star,
    /// `$n`
    Nag,
    /// `!`, `?`, `!?` and the like.
    Annotation,
    /// The text between `{` and `}`.
    Comment(&'a str),
    VariationOpen,
    VariationClose,
}

/// Splits PGN text into tokens. It only ever stops at ASCII bytes, so
/// every slice it takes lies on character boundaries.
#[derive(Debug)]
struct Lexer<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Lexer<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn at_end(&self) -> bool {
        self.pos >= self.text.len()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
    }

    fn line_at(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.bytes()[..end].iter().filter(|&&b| b == b'\n').count() + 1
    }

    /// The character at the current position (which is always on a
    /// character boundary).
    fn current_char(&self) -> char {
        self.text.get(self.pos..).and_then(|rest| rest.chars().next()).unwrap_or('\u{fffd}')
    }

    fn skip_to_line_end(&mut self) {
        while let Some(b) = self.peek() {
            if b == b'\n' {
                break;
            }
            self.pos += 1;
        }
    }

    /// Skips whitespace, `;` comments to the end of the line, and `%`
    /// escape lines.
    fn skip_trivia(&mut self) {
        while let Some(b) = self.peek() {
            match b {
                b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c' => self.pos += 1,
                b';' => self.skip_to_line_end(),
                b'%' if self.pos == 0 || self.bytes()[self.pos - 1] == b'\n' => self.skip_to_line_end(),
                _ => break,
            }
        }
    }

    fn token(&mut self) -> Result<Token<'a>, Failure> {
        let start = self.pos;
        let Some(b) = self.peek() else {
            return Ok(Token::End);
        };
        let token = match b {
            b'[' => return Ok(Token::TagOpen),
            b'{' => {
                let Some(len) = self.bytes()[start + 1..].iter().position(|&b| b == b'}') else {
                    return Err((start, PgnErrorKind::UnterminatedComment));
                };
                self.pos = start + 1 + len + 1;
                return Ok(Token::Comment(&self.text[start + 1..start + 1 + len]));
            }
            b'(' => Token::VariationOpen,
            b')' => Token::VariationClose,
            b'.' => Token::Period,
            b'*' => Token::Star,
            b'$' => {
                let digits = self.bytes()[start + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
                if digits == 0 {
                    return Err((start, PgnErrorKind::MalformedNag));
                }
                self.pos = start + 1 + digits;
                return Ok(Token::Nag);
            }
            b'!' | b'?' => {
                let len = self.bytes()[start..].iter().take_while(|&&b| b == b'!' || b == b'?').count();
                self.pos = start + len;
                return Ok(Token::Annotation);
            }
            b if b.is_ascii_alphanumeric() => {
                let len = self.bytes()[start..]
                    .iter()
                    .take_while(|&&b| b.is_ascii_alphanumeric() || b"_+#=:/-".contains(&b))
                    .count();
                self.pos = start + len;
                return Ok(Token::Symbol(&self.text[start..start + len]));
            }
            _ => return Err((start, PgnErrorKind::UnexpectedChar(self.current_char()))),
        };
        self.pos += 1;
        Ok(token)
    }

    /// Reads a tag pair `[Name "value"]` at `[`.
    fn tag(&mut self) -> Result<Tag, Failure> {
        let offset = self.pos;
        let malformed = |why| (offset, PgnErrorKind::MalformedTag(why));
        self.pos += 1;
        self.skip_blanks();
        let name_len = self.bytes()[self.pos..].iter().take_while(|&&b| b.is_ascii_alphanumeric() || b == b'_').count();
        if name_len == 0 {
            return Err(malformed("expected a tag name after '['"));
        }
        let name = self.text[self.pos..self.pos + name_len].to_owned();
        self.pos += name_len;
        self.skip_blanks();
        if self.peek() != Some(b'"') {
            return Err(malformed("expected a quoted value after the tag name"));
        }
        self.pos += 1;
        let mut value = String::new();
        let rest = &self.text[self.pos..];
        let mut chars = rest.char_indices();
        let closed_at = loop {
            match chars.next() {
                None | Some((_, '\n' | '\r')) => return Err(malformed("the value's closing quote is missing")),
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.clone().next() {
                    Some((_, c @ ('\\' | '"'))) => {
                        chars.next();
                        value.push(c);
                    }
                    _ => value.push('\\'),
                },
                Some((_, c)) => value.push(c),
            }
        };
        self.pos += closed_at + 1;
        self.skip_blanks();
        if self.peek() != Some(b']') {
            return Err(malformed("expected ']' after the value"));
        }
        self.pos += 1;
        Ok(Tag { name, value, offset })
    }

    /// Spaces and tabs, within a tag pair's line.
    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<String> {
        let mut lexer = Lexer { text, pos: 0 };
        let mut out = Vec::new();
        loop {
            lexer.skip_trivia();
            match lexer.token() {
                Ok(Token::End) => return out,
                Ok(Token::TagOpen) => {
                    let tag = lexer.tag().unwrap();
                    out.push(format!("tag {}={}", tag.name, tag.value));
                }
                Ok(token) => out.push(format!("{token:?}")),
                Err((offset, kind)) => {
                    out.push(format!("error at {offset}: {kind}"));
                    return out;
                }
            }
        }
    }

    #[test]
    fn splits_movetext_into_tokens() {
        assert_eq!(
            kinds("1.e4 e5!? $1 {a [%clk 0:01:00] } (1... c5) 0-0-0+ 1/2-1/2 *"),
            [
                "Symbol(\"1\")",
                "Period",
                "Symbol(\"e4\")",
                "Symbol(\"e5\")",
                "Annotation",
                "Nag",
                "Comment(\"a [%clk 0:01:00] \")",
                "VariationOpen",
                "Symbol(\"1\")",
                "Period",
                "Period",
                "Period",
                "Symbol(\"c5\")",
                "VariationClose",
                "Symbol(\"0-0-0+\")",
                "Symbol(\"1/2-1/2\")",
                "Star",
            ]
        );
    }

    #[test]
    fn skips_line_comments_and_escapes() {
        assert_eq!(kinds("% escaped\ne4 ; rest of line e5\nNf3"), ["Symbol(\"e4\")", "Symbol(\"Nf3\")"]);
        // '%' escapes only at the start of a line.
        assert_eq!(kinds("e4 %x"), ["Symbol(\"e4\")", "error at 3: unexpected '%'"]);
    }

    #[test]
    fn reads_escaped_tag_values() {
        assert_eq!(kinds(r#"[Event "a \"b\" \\ c \x"]"#), [r#"tag Event=a "b" \ c \x"#]);
        assert_eq!(kinds("[ Site\t\"é\" ]"), ["tag Site=é"]);
    }

    #[test]
    fn finds_clocks_in_comments() {
        assert_eq!(clock_in_comment(" [%clk 0:09:58] "), Ok(Some(598_000)));
        assert_eq!(clock_in_comment("[%eval 0.2] [%clk 1:00:00.5]"), Ok(Some(3_600_500)));
        assert_eq!(clock_in_comment("no clock"), Ok(None));
        assert!(clock_in_comment("[%clk 9:58]").is_err());
        assert!(clock_in_comment("[%clk 0:09:58").is_err());
        assert!(clock_in_comment("[%clk0:09:58]").is_err());
    }
}
