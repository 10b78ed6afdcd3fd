//! Squares, files and ranks: small `const` types over `u8`.

use std::fmt;
use std::str::FromStr;

/// A file, `a` (0) to `h` (7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct File(u8);

impl File {
    pub const A: File = File(0);
    pub const B: File = File(1);
    pub const C: File = File(2);
    pub const D: File = File(3);
    pub const E: File = File(4);
    pub const F: File = File(5);
    pub const G: File = File(6);
    pub const H: File = File(7);

    pub const fn new(index: u8) -> Option<File> {
        if index < 8 {
            Some(File(index))
        } else {
            None
        }
    }

    pub const fn index(self) -> u8 {
        self.0
    }

    pub const fn char(self) -> char {
        (b'a' + self.0) as char
    }

    pub const fn from_char(c: char) -> Option<File> {
        match c {
            'a'..='h' => Some(File(c as u8 - b'a')),
            _ => None,
        }
    }

    pub fn all() -> impl DoubleEndedIterator<Item = File> {
        (0..8).map(File)
    }
}

/// A rank, `1` (0) to `8` (7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rank(u8);

impl Rank {
    pub const FIRST: Rank = Rank(0);
    pub const SECOND: Rank = Rank(1);
    pub const THIRD: Rank = Rank(2);
    pub const FOURTH: Rank = Rank(3);
    pub const FIFTH: Rank = Rank(4);
    pub const SIXTH: Rank = Rank(5);
    pub const SEVENTH: Rank = Rank(6);
    pub const EIGHTH: Rank = Rank(7);

    pub const fn new(index: u8) -> Option<Rank> {
        if index < 8 {
            Some(Rank(index))
        } else {
            None
        }
    }

    pub const fn index(self) -> u8 {
        self.0
    }

    pub const fn char(self) -> char {
        (b'1' + self.0) as char
    }

    pub const fn from_char(c: char) -> Option<Rank> {
        match c {
            '1'..='8' => Some(Rank(c as u8 - b'1')),
            _ => None,
        }
    }

    /// The same rank seen from black's side when `flip` is set.
    pub const fn relative(self, black: bool) -> Rank {
        if black {
            Rank(7 - self.0)
        } else {
            self
        }
    }

    pub fn all() -> impl DoubleEndedIterator<Item = Rank> {
        (0..8).map(Rank)
    }
}

/// One of the 64 squares, `a1` (0) to `h8` (63), rank by rank.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

macro_rules! square_consts {
    ($($name:ident = $index:expr),* $(,)?) => {
        impl Square { $(pub const $name: Square = Square($index);)* }
    };
}

square_consts! {
    A1 = 0, B1 = 1, C1 = 2, D1 = 3, E1 = 4, F1 = 5, G1 = 6, H1 = 7,
    A2 = 8, B2 = 9, C2 = 10, D2 = 11, E2 = 12, F2 = 13, G2 = 14, H2 = 15,
    A3 = 16, B3 = 17, C3 = 18, D3 = 19, E3 = 20, F3 = 21, G3 = 22, H3 = 23,
    A4 = 24, B4 = 25, C4 = 26, D4 = 27, E4 = 28, F4 = 29, G4 = 30, H4 = 31,
    A5 = 32, B5 = 33, C5 = 34, D5 = 35, E5 = 36, F5 = 37, G5 = 38, H5 = 39,
    A6 = 40, B6 = 41, C6 = 42, D6 = 43, E6 = 44, F6 = 45, G6 = 46, H6 = 47,
    A7 = 48, B7 = 49, C7 = 50, D7 = 51, E7 = 52, F7 = 53, G7 = 54, H7 = 55,
    A8 = 56, B8 = 57, C8 = 58, D8 = 59, E8 = 60, F8 = 61, G8 = 62, H8 = 63,
}

impl Square {
    pub const fn new(index: u8) -> Option<Square> {
        if index < 64 {
            Some(Square(index))
        } else {
            None
        }
    }

    /// # Panics
    /// In debug builds, when `index` is 64 or more.
    #[inline]
    pub(crate) const fn new_unchecked(index: u8) -> Square {
        debug_assert!(index < 64);
        Square(index & 63)
    }

    pub const fn from_coords(file: File, rank: Rank) -> Square {
        Square(rank.0 * 8 + file.0)
    }

    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    pub const fn file(self) -> File {
        File(self.0 & 7)
    }

    pub const fn rank(self) -> Rank {
        Rank(self.0 >> 3)
    }

    /// The square mirrored top to bottom (a1 <-> a8).
    pub const fn flip_vertical(self) -> Square {
        Square(self.0 ^ 56)
    }

    /// The square `delta` steps further in index order, if it is on the board.
    pub const fn offset(self, delta: i8) -> Option<Square> {
        let index = self.0 as i16 + delta as i16;
        if index >= 0 && index < 64 {
            Some(Square(index as u8))
        } else {
            None
        }
    }

    /// Whether this is a dark square (a1 is dark).
    pub const fn is_dark(self) -> bool {
        (self.0 / 8 + self.0 % 8).is_multiple_of(2)
    }

    /// Chebyshev distance: the number of king steps between two squares.
    pub const fn distance(self, other: Square) -> u8 {
        let df = (self.0 & 7).abs_diff(other.0 & 7);
        let dr = (self.0 >> 3).abs_diff(other.0 >> 3);
        if df > dr {
            df
        } else {
            dr
        }
    }

    pub fn all() -> impl DoubleEndedIterator<Item = Square> + ExactSizeIterator {
        (0..64).map(Square)
    }
}

impl Square {
    /// The square's name, `a1` to `h8`, without formatting machinery.
    pub const fn name(self) -> &'static str {
        NAMES[self.index()]
    }
}

/// Every square's name, by index.
const NAMES: [&str; 64] = [
    "a1", "b1", "c1", "d1", "e1", "f1", "g1", "h1", "a2", "b2", "c2", "d2", "e2", "f2", "g2", "h2", "a3", "b3", "c3",
    "d3", "e3", "f3", "g3", "h3", "a4", "b4", "c4", "d4", "e4", "f4", "g4", "h4", "a5", "b5", "c5", "d5", "e5", "f5",
    "g5", "h5", "a6", "b6", "c6", "d6", "e6", "f6", "g6", "h6", "a7", "b7", "c7", "d7", "e7", "f7", "g7", "h7", "a8",
    "b8", "c8", "d8", "e8", "f8", "g8", "h8",
];

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A string that does not name a square.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a square: {0:?} (expected a file a-h and a rank 1-8, like e4)")]
pub struct ParseSquareError(pub String);

impl FromStr for Square {
    type Err = ParseSquareError;

    fn from_str(s: &str) -> Result<Square, ParseSquareError> {
        let mut chars = s.chars();
        match (chars.next(), chars.next(), chars.next()) {
            (Some(f), Some(r), None) => match (File::from_char(f), Rank::from_char(r)) {
                (Some(file), Some(rank)) => Ok(Square::from_coords(file, rank)),
                _ => Err(ParseSquareError(s.to_owned())),
            },
            _ => Err(ParseSquareError(s.to_owned())),
        }
    }
}
