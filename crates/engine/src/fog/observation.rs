//! What a fog-of-war player is told, and nothing more. The engine's fog
//! entry point takes a [`FogObservation`]: the side it plays, its own moves,
//! what it saw after every ply, and the squares where it lost pieces it no
//! longer sees. There is no way to put a full position or an opponent's
//! move into one: a [`Sight`] keeps only the pieces on the squares it
//! calls visible, and an opponent's ply carries no move at all.

use std::fmt::Write as _;

use fogblast_rules::{Bitboard, Board, Color, FogView, Game, Move, Piece, Position, Square, Uci, Variant};

/// Why an observation cannot be read or extended.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ObservationError {
    #[error("view {0:?}: expected 8 ranks of 8 squares, each a piece letter, a digit for empty squares or * for fog")]
    BadBoard(String),
    #[error("view {view:?}: the {color} pieces on it must all be visible and include one king at most")]
    BadOwnPieces { view: String, color: Color },
    #[error("en passant square {0:?} is not a square on the third or sixth rank")]
    BadEnPassant(String),
    #[error("lost square {0:?} is not a square")]
    BadLostSquare(String),
    #[error("lost square {0} is visible: only pieces lost out of sight are flagged")]
    LostSquareVisible(Square),
    #[error("ply {ply}: {expected} was to move, not {got}")]
    WrongMover { ply: usize, expected: Color, got: Color },
    #[error("ply {ply}: move {text:?} is not UCI")]
    BadMove { ply: usize, text: String },
}

/// One side's view of the board after a ply: the squares it sees and the
/// pieces on them. Pieces on other squares are never stored.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Sight {
    visible: Bitboard,
    board: Board,
    ep_square: Option<Square>,
}

impl Sight {
    /// A sight of `visible`; pieces of `board` elsewhere are dropped, and so
    /// is an en passant square that is not visible.
    pub fn new(visible: Bitboard, board: &Board, ep_square: Option<Square>) -> Sight {
        let mut masked = *board;
        for sq in board.occupied() - visible {
            masked.remove_piece_at(sq);
        }
        Sight { visible, board: masked, ep_square: ep_square.filter(|&sq| visible.contains(sq)) }
    }

    /// The rules' fog view, as it is shown to the player.
    pub fn from_view(view: &FogView) -> Sight {
        Sight::new(view.visible, &view.board, view.ep_square)
    }

    /// Reads a board in FEN placement form with `*` on fogged squares (as
    /// `FogView::board_fen` writes it) and an optional en passant square.
    pub fn parse(text: &str, ep_square: Option<&str>) -> Result<Sight, ObservationError> {
        let bad = || ObservationError::BadBoard(text.to_owned());
        let ranks: Vec<&str> = text.split('/').collect();
        if ranks.len() != 8 {
            return Err(bad());
        }
        let mut visible = Bitboard::EMPTY;
        let mut board = Board::empty();
        for (row, rank_text) in ranks.iter().enumerate() {
            let rank = 7 - row as u8;
            let mut file = 0u8;
            for c in rank_text.chars() {
                if file >= 8 {
                    return Err(bad());
                }
                if let Some(n) = c.to_digit(10).filter(|n| (1..=8).contains(n)) {
                    for _ in 0..n {
                        if file >= 8 {
                            return Err(bad());
                        }
                        visible.set(Square::new(rank * 8 + file).ok_or_else(bad)?);
                        file += 1;
                    }
                    continue;
                }
                let sq = Square::new(rank * 8 + file).ok_or_else(bad)?;
                if c == '*' {
                    file += 1;
                    continue;
                }
                let piece = Piece::from_char(c).ok_or_else(bad)?;
                visible.set(sq);
                board.set_piece_at(sq, piece);
                file += 1;
            }
            if file != 8 {
                return Err(bad());
            }
        }
        let ep_square = match ep_square.map(str::trim).filter(|t| !t.is_empty() && *t != "-") {
            None => None,
            Some(t) => {
                let sq: Square = t.parse().map_err(|_| ObservationError::BadEnPassant(t.to_owned()))?;
                if ![2, 5].contains(&sq.rank().index()) {
                    return Err(ObservationError::BadEnPassant(t.to_owned()));
                }
                Some(sq)
            }
        };
        Ok(Sight::new(visible, &board, ep_square))
    }

    /// The board with `*` on fogged squares, as [`Sight::parse`] reads it.
    pub fn board_text(&self) -> String {
        let mut out = String::with_capacity(72);
        for rank in (0..8u8).rev() {
            let mut empty = 0;
            for file in 0..8u8 {
                let sq = Square::new(rank * 8 + file).expect("0..64");
                let c = if !self.visible.contains(sq) { Some('*') } else { self.board.piece_at(sq).map(|p| p.char()) };
                match c {
                    None => empty += 1,
                    Some(c) => {
                        if empty > 0 {
                            write!(out, "{empty}").expect("writing to a string");
                            empty = 0;
                        }
                        out.push(c);
                    }
                }
            }
            if empty > 0 {
                write!(out, "{empty}").expect("writing to a string");
            }
            if rank > 0 {
                out.push('/');
            }
        }
        out
    }

    pub fn visible(&self) -> Bitboard {
        self.visible
    }

    /// The pieces on visible squares.
    pub fn board(&self) -> &Board {
        &self.board
    }

    pub fn ep_square(&self) -> Option<Square> {
        self.ep_square
    }

    /// Whether `pos` shows `color` exactly this sight.
    pub(crate) fn matches(&self, pos: &Position, color: Color) -> bool {
        let visible = pos.visible_squares(color);
        if visible != self.visible {
            return false;
        }
        let board = pos.board();
        let same = |a: Bitboard, b: Bitboard| a & visible == b;
        if !same(board.by_color(Color::White), self.board.by_color(Color::White))
            || !same(board.by_color(Color::Black), self.board.by_color(Color::Black))
        {
            return false;
        }
        if fogblast_rules::Role::ALL.into_iter().any(|role| !same(board.by_role(role), self.board.by_role(role))) {
            return false;
        }
        let ep = pos.ep_square().filter(|_| pos.turn() == color);
        ep == self.ep_square
    }
}

/// One ply as the engine's side saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ObservedPly {
    /// Our own move and what we saw after it.
    Own { uci: Uci, after: Sight },
    /// The opponent moved (which move is not told): what we saw after it,
    /// and the squares where we lost pieces we no longer see.
    Opponent { after: Sight, lost: Bitboard },
}

/// Everything one side has observed of a fog-of-war game from the standard
/// start (fog of war has no other start), oldest ply first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FogObservation {
    color: Color,
    plies: Vec<ObservedPly>,
}

impl FogObservation {
    /// The observation of `color` before any move.
    pub fn new(color: Color) -> FogObservation {
        FogObservation { color, plies: Vec::new() }
    }

    pub fn color(&self) -> Color {
        self.color
    }

    pub fn plies(&self) -> &[ObservedPly] {
        &self.plies
    }

    /// The side to move after the plies so far.
    pub fn turn(&self) -> Color {
        if self.plies.len().is_multiple_of(2) {
            Color::White
        } else {
            Color::Black
        }
    }

    /// Adds our own move and the sight after it.
    pub fn push_own(&mut self, uci: Uci, after: Sight) -> Result<(), ObservationError> {
        self.expect_mover(self.color)?;
        self.plies.push(ObservedPly::Own { uci, after });
        Ok(())
    }

    /// Adds an opponent's ply: the sight after it and the squares of our
    /// pieces it took out of sight.
    pub fn push_opponent(&mut self, after: Sight, lost: Bitboard) -> Result<(), ObservationError> {
        self.expect_mover(!self.color)?;
        if let Some(sq) = (lost & after.visible).first() {
            return Err(ObservationError::LostSquareVisible(sq));
        }
        self.plies.push(ObservedPly::Opponent { after, lost });
        Ok(())
    }

    fn expect_mover(&self, got: Color) -> Result<(), ObservationError> {
        let expected = self.turn();
        if expected != got {
            return Err(ObservationError::WrongMover { ply: self.plies.len(), expected, got });
        }
        Ok(())
    }

    /// The referee's cut of a whole game for `color`: what a server shows
    /// that side after each ply. Used by self-play, tests and benchmarks;
    /// the engine itself never sees `game`.
    pub fn from_game(game: &Game, color: Color) -> FogObservation {
        let mut obs = FogObservation::new(color);
        let mut pos = *game.initial();
        debug_assert_eq!(pos.variant(), Variant::Fog);
        for &m in game.moves() {
            obs.observe_move(&mut pos, m);
        }
        obs
    }

    /// Plays `m` on the true position `pos` and records what `color` sees
    /// of it.
    pub fn observe_move(&mut self, pos: &mut Position, m: Move) {
        let mover = pos.turn();
        let ours_before = pos.board().by_color(self.color);
        pos.play_unchecked(m);
        let after = Sight::from_view(&pos.fog_view(self.color));
        if mover == self.color {
            let uci = m.to_uci(fogblast_rules::CastlingMode::Standard);
            self.plies.push(ObservedPly::Own { uci, after });
        } else {
            let lost = (ours_before - pos.board().by_color(self.color)) - after.visible;
            self.plies.push(ObservedPly::Opponent { after, lost });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sights_round_trip_through_text() {
        let pos =
            Position::from_fen("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", Variant::Fog).unwrap();
        let sight = Sight::from_view(&pos.fog_view(Color::White));
        let text = sight.board_text();
        assert_eq!(text, pos.fog_view(Color::White).board_fen());
        assert_eq!(Sight::parse(&text, None).unwrap(), sight);
        assert!(sight.matches(&pos, Color::White));
        assert!(!sight.matches(&pos, Color::Black));
    }

    #[test]
    fn bad_text_is_refused() {
        for text in
            ["", "8/8/8/8/8/8/8", "9/8/8/8/8/8/8/8", "*******/8/8/8/8/8/8/8", "x7/8/8/8/8/8/8/8", "8/8/8/8/8/8/8/8/8"]
        {
            assert!(Sight::parse(text, None).is_err(), "{text}");
        }
        assert!(Sight::parse("8/8/8/8/8/8/8/8", Some("e4")).is_err());
    }

    #[test]
    fn plies_alternate() {
        let mut obs = FogObservation::new(Color::Black);
        let sight = Sight::parse("8/8/8/8/8/8/8/8", None).unwrap();
        assert!(obs.push_own("e7e5".parse().unwrap(), sight.clone()).is_err());
        obs.push_opponent(sight.clone(), Bitboard::EMPTY).unwrap();
        assert!(obs.push_opponent(sight.clone(), Bitboard::EMPTY).is_err());
        obs.push_own("e7e5".parse().unwrap(), sight).unwrap();
        assert_eq!(obs.turn(), Color::White);
    }
}
