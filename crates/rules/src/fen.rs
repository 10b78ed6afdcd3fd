//! FEN and EPD: parsing into a [`Setup`] and printing, with X-FEN and
//! Shredder-FEN castling for Chess960.

use std::fmt::{self, Write as _};
use std::str::FromStr;

use crate::bitboard::Bitboard;
use crate::board::Board;
use crate::color::Color;
use crate::piece::{Piece, Role};
use crate::position::{Position, PositionError};
use crate::setup::Setup;
use crate::square::{File, Rank, Square};
use crate::variant::Variant;

/// FEN of the standard starting position.
pub const STARTING_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// Why a string is not FEN. Each variant names the field at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FenError {
    #[error("empty FEN")]
    Empty,
    #[error("FEN has {0} fields; expected 4 to 6 (board, turn, castling, en passant, halfmoves, fullmoves)")]
    FieldCount(usize),
    #[error("board field: {0}")]
    Board(String),
    #[error("turn field {0:?}: expected w or b")]
    Turn(String),
    #[error("castling field {0:?}: {1}")]
    Castling(String, &'static str),
    #[error("en passant field {0:?}: expected - or a square on the third or sixth rank")]
    EpSquare(String),
    #[error("halfmove field {0:?}: expected a number from 0")]
    Halfmoves(String),
    #[error("fullmove field {0:?}: expected a number from 1")]
    Fullmoves(String),
}

/// Why a string is not a position of a variant: bad syntax or bad chess.
/// The message already names the cause, so no error source is chained.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParsePositionError {
    #[error("invalid FEN: {0}")]
    Fen(FenError),
    #[error("impossible position: {0}")]
    Position(PositionError),
}

impl From<FenError> for ParsePositionError {
    fn from(err: FenError) -> ParsePositionError {
        ParsePositionError::Fen(err)
    }
}

impl From<PositionError> for ParsePositionError {
    fn from(err: PositionError) -> ParsePositionError {
        ParsePositionError::Position(err)
    }
}

/// A parsed FEN. Parsing checks syntax only; [`Position::from_setup`]
/// checks the chess.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fen(pub Setup);

impl Fen {
    pub fn from_position(pos: &Position) -> Fen {
        Fen(pos.to_setup())
    }

    pub fn into_position(self, variant: Variant) -> Result<Position, PositionError> {
        Position::from_setup(self.0, variant)
    }

    /// The FEN with every castling right written as a rook file (`HAha`).
    pub fn to_shredder_string(&self) -> String {
        self.render(true)
    }

    fn render(&self, shredder: bool) -> String {
        let setup = &self.0;
        let mut out = String::with_capacity(90);
        write_board(&setup.board, &mut out);
        out.push(' ');
        out.push(setup.turn.char());
        out.push(' ');
        write_castling(&setup.board, setup.castling_rooks, shredder, &mut out);
        out.push(' ');
        match setup.ep_square {
            Some(sq) => write!(out, "{sq}").unwrap(),
            None => out.push('-'),
        }
        write!(out, " {} {}", setup.halfmoves, setup.fullmoves).unwrap();
        out
    }
}

impl fmt::Display for Fen {
    /// X-FEN: `KQkq` for the outermost rooks, file letters for inner ones.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(false))
    }
}

impl FromStr for Fen {
    type Err = FenError;

    fn from_str(s: &str) -> Result<Fen, FenError> {
        let fields: Vec<&str> = s.split_ascii_whitespace().collect();
        if fields.is_empty() {
            return Err(FenError::Empty);
        }
        if !(4..=6).contains(&fields.len()) {
            return Err(FenError::FieldCount(fields.len()));
        }
        let board = parse_board(fields[0])?;
        let turn = match fields[1] {
            "w" => Color::White,
            "b" => Color::Black,
            other => return Err(FenError::Turn(other.to_owned())),
        };
        let castling_rooks = parse_castling(&board, fields[2])?;
        let ep_square = match fields[3] {
            "-" => None,
            text => match text.parse::<Square>() {
                Ok(sq) if sq.rank() == Rank::THIRD || sq.rank() == Rank::SIXTH => Some(sq),
                _ => return Err(FenError::EpSquare(text.to_owned())),
            },
        };
        let halfmoves = match fields.get(4) {
            None => 0,
            Some(text) => parse_number(text).ok_or_else(|| FenError::Halfmoves((*text).to_owned()))?,
        };
        let fullmoves = match fields.get(5) {
            None => 1,
            Some(text) => {
                parse_number(text).filter(|&n| n >= 1).ok_or_else(|| FenError::Fullmoves((*text).to_owned()))?
            }
        };
        Ok(Fen(Setup { board, turn, castling_rooks, ep_square, halfmoves, fullmoves }))
    }
}

fn parse_number(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn parse_board(text: &str) -> Result<Board, FenError> {
    let mut board = Board::empty();
    let ranks: Vec<&str> = text.split('/').collect();
    if ranks.len() != 8 {
        return Err(FenError::Board(format!("expected 8 ranks separated by '/', found {}", ranks.len())));
    }
    for (row, rank_text) in ranks.iter().enumerate() {
        let rank = Rank::new(7 - row as u8).expect("eight ranks");
        let mut file = 0u8;
        let mut last_was_digit = false;
        for c in rank_text.chars() {
            if let Some(n) = c.to_digit(10).filter(|n| (1..=8).contains(n)) {
                if last_was_digit {
                    return Err(FenError::Board(format!("rank {} has two digits in a row", rank.char())));
                }
                file += n as u8;
                last_was_digit = true;
            } else if let Some(piece) = Piece::from_char(c) {
                let Some(f) = File::new(file) else {
                    return Err(FenError::Board(format!("rank {} has more than 8 squares", rank.char())));
                };
                board.set_piece_at(Square::from_coords(f, rank), piece);
                file += 1;
                last_was_digit = false;
            } else {
                return Err(FenError::Board(format!("unexpected character {c:?} in rank {}", rank.char())));
            }
            if file > 8 {
                return Err(FenError::Board(format!("rank {} has more than 8 squares", rank.char())));
            }
        }
        if file != 8 {
            return Err(FenError::Board(format!("rank {} has {file} squares, not 8", rank.char())));
        }
    }
    Ok(board)
}

fn write_board(board: &Board, out: &mut String) {
    write_placement(out, |sq| board.piece_at(sq).map(Piece::char));
}

/// Writes the FEN placement field, asking `symbol` for each square: `None`
/// for an empty square, or the letter to print.
pub(crate) fn write_placement(out: &mut String, symbol: impl Fn(Square) -> Option<char>) {
    for rank in Rank::all().rev() {
        let mut empty = 0;
        for file in File::all() {
            match symbol(Square::from_coords(file, rank)) {
                Some(c) => {
                    if empty > 0 {
                        out.push(char::from(b'0' + empty));
                        empty = 0;
                    }
                    out.push(c);
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            out.push(char::from(b'0' + empty));
        }
        if rank != Rank::FIRST {
            out.push('/');
        }
    }
}

fn parse_castling(board: &Board, text: &str) -> Result<Bitboard, FenError> {
    let err = |why| FenError::Castling(text.to_owned(), why);
    if text == "-" {
        return Ok(Bitboard::EMPTY);
    }
    if text.is_empty() || text.len() > 4 {
        return Err(err("expected - or up to four of KQkq or rook files A-H / a-h"));
    }
    let mut rooks = Bitboard::EMPTY;
    for c in text.chars() {
        let color = if c.is_ascii_uppercase() { Color::White } else { Color::Black };
        let back = Rank::FIRST.relative(color == Color::Black);
        let our_rooks = board.by_piece(Role::Rook.of(color)) & Bitboard::from_rank(back);
        let king = board.king_of(color).filter(|k| k.rank() == back);
        let rook = match c.to_ascii_lowercase() {
            'k' | 'q' => {
                let king = king.ok_or_else(|| err("a castling right needs the king on its back rank"))?;
                let kingside = c.eq_ignore_ascii_case(&'k');
                let mut candidates = our_rooks.into_iter().filter(|&r| (r > king) == kingside);
                let outermost = if kingside { candidates.next_back() } else { candidates.next() };
                outermost.ok_or_else(|| err("no rook on that side of the king"))?
            }
            'a'..='h' => {
                let file = File::from_char(c.to_ascii_lowercase()).expect("a-h");
                Square::from_coords(file, back)
            }
            _ => return Err(err("unexpected character")),
        };
        if rooks.contains(rook) {
            return Err(err("the same right twice"));
        }
        rooks.set(rook);
    }
    Ok(rooks)
}

/// Writes the castling field for the rights of the rooks on `castling_rooks`.
pub(crate) fn write_castling(board: &Board, castling_rooks: Bitboard, shredder: bool, out: &mut String) {
    let start = out.len();
    for color in Color::ALL {
        let back = Bitboard::relative_rank(color, Rank::FIRST);
        let rooks_of_color = board.by_piece(Role::Rook.of(color)) & back;
        let Some(king) = board.king_of(color) else { continue };
        let rights = castling_rooks & back;
        // King side first, then queen side, as in "KQkq".
        for rook in rights.into_iter().rev() {
            let kingside = rook > king;
            let outermost = !rooks_of_color.into_iter().any(|other| if kingside { other > rook } else { other < rook });
            let c = if !shredder && outermost {
                if kingside {
                    'k'
                } else {
                    'q'
                }
            } else {
                rook.file().char()
            };
            out.push(if color == Color::White { c.to_ascii_uppercase() } else { c });
        }
    }
    if out.len() == start {
        out.push('-');
    }
}

impl Position {
    /// Parses FEN or EPD into a position of `variant`.
    pub fn from_fen(fen: &str, variant: Variant) -> Result<Position, ParsePositionError> {
        Ok(fen.parse::<Fen>()?.into_position(variant)?)
    }

    /// The position as X-FEN.
    pub fn fen(&self) -> String {
        Fen::from_position(self).to_string()
    }
}
