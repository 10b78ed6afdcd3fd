//! A fog puzzle's position: one side's view, written as
//! [`fogblast_rules::FogView::fen`] writes it (`*` on every fogged square,
//! no halfmove field), and read back here.

use fogblast_rules::{Bitboard, Position, Role, Square, Variant};

use crate::PuzzleError;

/// A view read back: the position with the fogged squares empty (but for
/// the enemy king, placed on the first fogged square when the view does not
/// show it), and the squares the solver sees.
#[derive(Clone, Debug)]
pub struct ParsedView {
    pub position: Position,
    pub visible: Bitboard,
}

/// Reads a view FEN: `board turn castling ep fullmoves`, the board with `*`
/// for each fogged square.
pub fn parse_view(text: &str) -> Result<ParsedView, PuzzleError> {
    let bad = |why: &str| PuzzleError::Position(format!("{why} in view `{text}`"));
    let mut fields = text.split_whitespace();
    let board = fields.next().ok_or_else(|| bad("no board"))?;
    let rest: Vec<&str> = fields.collect();
    if rest.len() != 4 {
        return Err(bad("not five fields"));
    }
    let ranks: Vec<&str> = board.split('/').collect();
    if ranks.len() != 8 {
        return Err(bad("not eight ranks"));
    }
    let mut visible = Bitboard::EMPTY;
    let mut placement = Vec::with_capacity(8);
    for (row, rank_text) in ranks.iter().enumerate() {
        let rank = 7 - row as u8;
        let mut file = 0u8;
        let mut out = String::new();
        let mut empty = 0u8;
        for c in rank_text.chars() {
            let (width, piece) = match c {
                '*' => (1, None),
                '1'..='8' => (c as u8 - b'0', None),
                _ => (1, Some(c)),
            };
            for step in 0..width {
                let square = Square::new(rank * 8 + file + step).filter(|_| file + step < 8);
                let square = square.ok_or_else(|| bad("a rank longer than eight squares"))?;
                if c != '*' {
                    visible.set(square);
                }
            }
            match piece {
                Some(p) => {
                    if empty > 0 {
                        out.push(char::from(b'0' + empty));
                        empty = 0;
                    }
                    out.push(p);
                }
                None => empty += width,
            }
            file += width;
        }
        if file != 8 {
            return Err(bad("a rank shorter than eight squares"));
        }
        if empty > 0 {
            out.push(char::from(b'0' + empty));
        }
        placement.push(out);
    }
    let fen = format!("{} {} {} {} 0 {}", placement.join("/"), rest[0], rest[1], rest[2], rest[3]);
    let invalid = |error: &dyn std::fmt::Display| PuzzleError::Position(format!("{error} in `{text}`"));
    let mut position = Position::from_fen(&fen, Variant::Fog).map_err(|e| invalid(&e))?;
    let enemy = !position.turn();
    if position.board().king_of(enemy).is_none() {
        // The enemy king is in the fog. Without one the game would be
        // over and have no moves; on a fogged square it changes none of
        // the solver's moves (they all end on squares the solver sees, and
        // every square before a slider's first piece is seen).
        let square = (!visible).first().ok_or_else(|| bad("no enemy king and no fog to hide it"))?;
        let mut setup = position.to_setup();
        setup.board.set_piece_at(square, Role::King.of(enemy));
        position = Position::from_setup(setup, Variant::Fog).map_err(|e| invalid(&e))?;
    }
    Ok(ParsedView { position, visible })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fogblast_rules::Color;

    #[test]
    fn a_view_reads_back_as_the_view_it_was_written_from() {
        let pos =
            Position::from_fen("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 2 4", Variant::Fog)
                .unwrap();
        let view = pos.fog_view(Color::White);
        let parsed = parse_view(&view.fen()).unwrap();
        assert_eq!(parsed.visible, view.visible);
        for square in view.visible {
            assert_eq!(parsed.position.board().piece_at(square), view.board.piece_at(square));
        }
        assert_eq!(parsed.position.turn(), Color::White);
        assert!(view.fen().contains('*'));
    }

    #[test]
    fn malformed_views_are_refused() {
        for text in ["", "8/8/8 w - - 1", "********/8/8/8/8/8/8/4K3 w - -", "*********/8/8/8/8/8/8/4K3 w - - 1 1"] {
            assert!(parse_view(text).is_err(), "{text}");
        }
    }
}
