//! Standard algebraic notation (SAN) for moves, as PGN uses it: game records
//! and players write moves this way, so the server must print them with the
//! right disambiguation and check marks for each variant, and turn typed text
//! back into the one legal move it names.

use std::fmt;
use std::str::FromStr;

use crate::moves::{CastlingSide, Move};
use crate::piece::Role;
use crate::position::Position;
use crate::square::{File, Rank, Square};

/// A move as SAN writes it, without check marks or annotations. It names a
/// [`Move`] only against a position: [`San::to_move`] or
/// [`Position::parse_san`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum San {
    /// A piece or pawn move. `file` and `rank` narrow down the starting
    /// square: disambiguation for pieces, the pawn's file for pawn captures.
    Normal { role: Role, file: Option<File>, rank: Option<Rank>, capture: bool, to: Square, promotion: Option<Role> },
    /// `O-O` or `O-O-O`. In Chess960 the side of the rook decides, wherever
    /// the king and rook start.
    Castle(CastlingSide),
}

/// Why text does not name exactly one legal move.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SanError {
    #[error("not SAN: {0:?} (expected a move like e4, Nbd7, exd6, e8=Q or O-O)")]
    Syntax(String),
    #[error("illegal move {san:?}: no legal move in {fen} matches it")]
    Illegal { san: String, fen: String },
    #[error(
        "ambiguous move {san:?}: several legal moves in {fen} match it; name the file, rank or square it starts from"
    )]
    Ambiguous { san: String, fen: String },
}

impl San {
    /// The SAN of `m`, which must be legal in `pos`: only the other legal
    /// moves of the same role to the same square decide the disambiguation.
    pub fn from_move(pos: &Position, m: Move) -> San {
        match m {
            Move::Castle { king, rook } => San::Castle(CastlingSide::of(king, rook)),
            Move::EnPassant { from, to } => San::Normal {
                role: Role::Pawn,
                file: Some(from.file()),
                rank: None,
                capture: true,
                to,
                promotion: None,
            },
            Move::Normal { role: Role::Pawn, from, capture, to, promotion } => San::Normal {
                role: Role::Pawn,
                file: capture.map(|_| from.file()),
                rank: None,
                capture: capture.is_some(),
                to,
                promotion,
            },
            Move::Normal { role, from, capture, to, promotion } => {
                let (mut rivals, mut rival_on_file, mut rival_on_rank) = (false, false, false);
                for other in pos.legal_moves() {
                    if let Move::Normal { role: r, from: f, to: t, .. } = other {
                        if r == role && t == to && f != from {
                            rivals = true;
                            rival_on_file |= f.file() == from.file();
                            rival_on_rank |= f.rank() == from.rank();
                        }
                    }
                }
                // The file when it tells the pieces apart, else the rank,
                // else both.
                let needs_file = rivals && (rival_on_rank || !rival_on_file);
                San::Normal {
                    role,
                    file: needs_file.then_some(from.file()),
                    rank: rival_on_file.then_some(from.rank()),
                    capture: capture.is_some(),
                    to,
                    promotion,
                }
            }
        }
    }

    /// The one legal move in `pos` this SAN names.
    pub fn to_move(self, pos: &Position) -> Result<Move, SanError> {
        self.find_move(pos, &self.to_string())
    }

    /// Like [`San::to_move`], naming `text` in errors.
    fn find_move(self, pos: &Position, text: &str) -> Result<Move, SanError> {
        let mut found = None;
        for m in pos.legal_moves() {
            if self.matches(m) {
                if found.is_some() {
                    return Err(SanError::Ambiguous { san: text.to_owned(), fen: pos.fen() });
                }
                found = Some(m);
            }
        }
        found.ok_or_else(|| SanError::Illegal { san: text.to_owned(), fen: pos.fen() })
    }

    /// Whether `m` fits this SAN. The capture mark is not checked, as
    /// python-chess does not check it: a fog-of-war player cannot always know
    /// whether the destination holds a piece. A pawn move without a file is a
    /// push.
    fn matches(self, m: Move) -> bool {
        match (self, m) {
            (San::Castle(side), Move::Castle { king, rook }) => CastlingSide::of(king, rook) == side,
            (San::Castle(_), _) | (San::Normal { .. }, Move::Castle { .. }) => false,
            (San::Normal { role, file, rank, capture: _, to, promotion }, m) => {
                let from = m.from();
                m.role() == role
                    && m.to() == to
                    && m.promotion() == promotion
                    && file.is_none_or(|f| f == from.file())
                    && rank.is_none_or(|r| r == from.rank())
                    && (role != Role::Pawn || file.is_some() || from.file() == to.file())
            }
        }
    }
}

impl fmt::Display for San {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            San::Castle(CastlingSide::KingSide) => f.write_str("O-O"),
            San::Castle(CastlingSide::QueenSide) => f.write_str("O-O-O"),
            San::Normal { role, file, rank, capture, to, promotion } => {
                if role != Role::Pawn {
                    write!(f, "{}", role.upper_char())?;
                }
                if let Some(file) = file {
                    write!(f, "{}", file.char())?;
                }
                if let Some(rank) = rank {
                    write!(f, "{}", rank.char())?;
                }
                if capture {
                    f.write_str("x")?;
                }
                write!(f, "{to}")?;
                if let Some(promotion) = promotion {
                    write!(f, "={}", promotion.upper_char())?;
                }
                Ok(())
            }
        }
    }
}

/// Parses SAN, ignoring trailing `+`, `#`, `!` and `?`. Castling may be
/// written with zeros; a promotion with or without `=`.
impl FromStr for San {
    type Err = SanError;

    fn from_str(text: &str) -> Result<San, SanError> {
        let syntax = || SanError::Syntax(text.to_owned());
        let body = text.trim_end_matches(['+', '#', '!', '?']);
        match body {
            "O-O" | "0-0" => return Ok(San::Castle(CastlingSide::KingSide)),
            "O-O-O" | "0-0-0" => return Ok(San::Castle(CastlingSide::QueenSide)),
            _ => {}
        }
        if !body.is_ascii() {
            return Err(syntax());
        }

        let (body, promotion) = match body.as_bytes() {
            [.., b'=', letter] => (&body[..body.len() - 2], Some(promotion_role(*letter).ok_or_else(syntax)?)),
            [.., letter] => match promotion_role(*letter) {
                Some(role) => (&body[..body.len() - 1], Some(role)),
                None => (body, None),
            },
            [] => return Err(syntax()),
        };
        let Some(split) = body.len().checked_sub(2) else {
            return Err(syntax());
        };
        let to: Square = body[split..].parse().map_err(|_| syntax())?;

        let mut head = body[..split].chars().peekable();
        let role = match head.peek().copied().and_then(piece_role) {
            Some(role) => {
                head.next();
                role
            }
            None => Role::Pawn,
        };
        let file = head.next_if(|c| File::from_char(*c).is_some()).and_then(File::from_char);
        let rank = head.next_if(|c| Rank::from_char(*c).is_some()).and_then(Rank::from_char);
        let capture = head.next_if_eq(&'x').is_some();
        let pawn_capture_without_file = role == Role::Pawn && capture && file.is_none();
        if head.next().is_some() || (promotion.is_some() && role != Role::Pawn) || pawn_capture_without_file {
            return Err(syntax());
        }
        Ok(San::Normal { role, file, rank, capture, to, promotion })
    }
}

/// The piece a SAN move starts with; pawns have no letter.
fn piece_role(c: char) -> Option<Role> {
    match c {
        'N' => Some(Role::Knight),
        'B' => Some(Role::Bishop),
        'R' => Some(Role::Rook),
        'Q' => Some(Role::Queen),
        'K' => Some(Role::King),
        _ => None,
    }
}

fn promotion_role(letter: u8) -> Option<Role> {
    piece_role(char::from(letter)).filter(|&role| role != Role::King)
}

impl Position {
    /// The SAN of the legal move `m`, with `#` or `+` as this variant sees
    /// it. Standard: `#` for checkmate, `+` for check. Atomic: `#` when the
    /// move explodes the enemy king or checkmates, `+` for check (connected
    /// kings are never in check). Fog of war has no check: `#` only when the
    /// move captures the enemy king.
    pub fn san(&self, m: Move) -> String {
        debug_assert!(self.is_legal(m), "{m:?} is not legal in {}", self.fen());
        let mut text = San::from_move(self, m).to_string();
        let mut child = *self;
        child.play_unchecked(m);
        if child.board().king_of(child.turn()).is_none() {
            text.push('#');
        } else if child.is_check() {
            text.push(if child.legal_moves().is_empty() { '#' } else { '+' });
        }
        text
    }

    /// The one legal move `text` names in SAN (see [`San`]'s `FromStr` for
    /// what is accepted).
    pub fn parse_san(&self, text: &str) -> Result<Move, SanError> {
        text.parse::<San>()?.find_move(self, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Variant;

    const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq -";
    const CHESS960: &str = "8/8/8/8/8/8/2k5/rR4KR w KQ -";

    fn position(fen: &str, variant: Variant) -> Position {
        Position::from_fen(fen, variant).unwrap_or_else(|e| panic!("{fen}: {e}"))
    }

    /// Every legal move's SAN, sorted, joined by spaces.
    fn all_san(pos: &Position) -> String {
        let mut sans: Vec<String> = pos.legal_moves().into_iter().map(|m| pos.san(m)).collect();
        sans.sort();
        sans.join(" ")
    }

    fn san_of_uci(pos: &Position, uci: &str) -> String {
        let m = pos.parse_uci(&uci.parse().unwrap()).unwrap_or_else(|| panic!("{uci} is not legal"));
        pos.san(m)
    }

    #[test]
    fn disambiguates_by_file() {
        let pos = position("4k3/8/8/8/8/8/8/1N2KN2 w - -", Variant::Standard);
        assert_eq!(all_san(&pos), "Kd1 Kd2 Ke2 Kf2 Na3 Nbd2 Nc3 Ne3 Nfd2 Ng3 Nh2");
    }

    #[test]
    fn disambiguates_by_rank() {
        let pos = position("4k3/8/8/R7/8/8/8/R3K3 w - -", Variant::Standard);
        assert_eq!(
            all_san(&pos),
            "Kd1 Kd2 Ke2 Kf1 Kf2 R1a2 R1a3 R1a4 R5a2 R5a3 R5a4 Ra6 Ra7 Ra8+ Rb1 Rb5 Rc1 Rc5 Rd1 Rd5 Re5+ Rf5 Rg5 Rh5"
        );
    }

    #[test]
    fn disambiguates_by_square() {
        let pos = position("4k3/8/8/8/8/Q7/8/Q1Q1K3 w - -", Variant::Standard);
        assert_eq!(san_of_uci(&pos, "a1b2"), "Qa1b2");
        assert_eq!(san_of_uci(&pos, "a3b2"), "Q3b2");
        assert_eq!(san_of_uci(&pos, "c1b2"), "Qcb2");
        assert_eq!(
            all_san(&pos),
            "Kd1 Kd2 Ke2 Kf1 Kf2 Q1a2 Q3a2 Q3b2 Q3c3 Qa1b2 Qa1c3 Qa4+ Qa5 Qa6 Qa7 Qa8+ Qab1 Qac5 Qae3+ Qb3 Qb4 \
             Qc2 Qc4 Qc6+ Qc7 Qc8+ Qcb1 Qcb2 Qcc3 Qcc5 Qce3+ Qd1 Qd2 Qd3 Qd4 Qd6 Qe5+ Qe7+ Qf3 Qf4 Qf6 Qf8+ Qg3 \
             Qg5 Qg7 Qh3 Qh6 Qh8+"
        );
        assert_eq!(pos.parse_san("Qa1b2").ok(), pos.parse_uci(&"a1b2".parse().unwrap()));
    }

    #[test]
    fn ignores_pinned_pieces_when_disambiguating() {
        let pos = position("4k3/8/8/b7/8/2N5/8/4K1N1 w - -", Variant::Standard);
        assert_eq!(all_san(&pos), "Kd1 Kd2 Ke2 Kf1 Kf2 Ne2 Nf3 Nh3");
        // Fog of war has no pins: both knights reach e2.
        let fog = position("4k3/8/8/b7/8/2N5/8/4K1N1 w - -", Variant::Fog);
        assert_eq!(san_of_uci(&fog, "g1e2"), "Nge2");
    }

    #[test]
    fn writes_promotions_with_and_without_capture() {
        let pos = position("1r2k3/2P5/8/8/8/8/8/4K3 w - -", Variant::Standard);
        assert_eq!(all_san(&pos), "Kd1 Kd2 Ke2 Kf1 Kf2 c8=B c8=N c8=Q+ c8=R+ cxb8=B cxb8=N cxb8=Q+ cxb8=R+");
        let knight = Move::Normal {
            role: Role::Pawn,
            from: Square::C7,
            capture: Some(Role::Rook),
            to: Square::B8,
            promotion: Some(Role::Knight),
        };
        assert_eq!(pos.parse_san("cxb8=N"), Ok(knight));
        assert_eq!(pos.parse_san("cxb8N"), Ok(knight));
    }

    #[test]
    fn writes_en_passant_as_pawn_capture() {
        let pos = position("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2", Variant::Standard);
        let m = Move::EnPassant { from: Square::E5, to: Square::D6 };
        assert_eq!(pos.san(m), "exd6");
        assert_eq!(pos.parse_san("exd6"), Ok(m));
        assert_eq!(all_san(&pos), "Kd1 Kd2 Ke2 Kf1 Kf2 e6 exd6");
    }

    #[test]
    fn writes_standard_castling() {
        let pos = position("r3k2r/8/8/8/8/8/8/R3K2R w KQkq -", Variant::Standard);
        let short = Move::Castle { king: Square::E1, rook: Square::H1 };
        let long = Move::Castle { king: Square::E1, rook: Square::A1 };
        assert_eq!(pos.san(short), "O-O");
        assert_eq!(pos.san(long), "O-O-O");
        assert_eq!(pos.parse_san("O-O"), Ok(short));
        assert_eq!(pos.parse_san("0-0"), Ok(short));
        assert_eq!(pos.parse_san("O-O-O+"), Ok(long));
        assert_eq!(pos.parse_san("0-0-0"), Ok(long));
    }

    #[test]
    fn writes_chess960_castling_by_rook_side() {
        let pos = position(CHESS960, Variant::Atomic);
        let short = Move::Castle { king: Square::G1, rook: Square::H1 };
        let long = Move::Castle { king: Square::G1, rook: Square::B1 };
        assert_eq!(pos.san(short), "O-O");
        assert_eq!(pos.san(long), "O-O-O");
        assert_eq!(pos.parse_san("O-O"), Ok(short));
        assert_eq!(pos.parse_san("0-0-0"), Ok(long));
        assert_eq!(all_san(&pos), "Kf1 Kf2 Kg2 Kh2 O-O O-O-O Rc1+ Rd1 Re1 Rf1 Rh2+ Rh3 Rh4 Rh5 Rh6 Rh7 Rh8 Rxa1");
    }

    #[test]
    fn marks_standard_check_and_mate() {
        let fools_mate = position("rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2", Variant::Standard);
        assert_eq!(san_of_uci(&fools_mate, "d8h4"), "Qh4#");
        assert_eq!(san_of_uci(&fools_mate, "d8g5"), "Qg5");
        let rook = position("4k3/8/8/8/8/8/8/R4K2 w - -", Variant::Standard);
        assert_eq!(san_of_uci(&rook, "a1a8"), "Ra8+");
    }

    #[test]
    fn marks_atomic_explosions_checks_and_mates() {
        let kiwipete = position(KIWIPETE, Variant::Atomic);
        // The explosion on f7 or d7 takes the king on e8 with it.
        assert_eq!(san_of_uci(&kiwipete, "e5f7"), "Nxf7#");
        assert_eq!(san_of_uci(&kiwipete, "e5d7"), "Nxd7#");
        assert_eq!(san_of_uci(&kiwipete, "e5g6"), "Nxg6");

        let back_rank = position("6k1/5ppp/8/8/8/8/8/R5K1 w - -", Variant::Atomic);
        assert_eq!(san_of_uci(&back_rank, "a1a8"), "Ra8#");
        assert_eq!(san_of_uci(&back_rank, "a1a7"), "Ra7");

        let chess960 = position(CHESS960, Variant::Atomic);
        assert_eq!(san_of_uci(&chess960, "h1h2"), "Rh2+");

        // Connected kings are never in check.
        let connected = position("8/8/8/8/8/3k4/3K4/R7 w - -", Variant::Atomic);
        assert_eq!(san_of_uci(&connected, "a1a3"), "Ra3");
    }

    #[test]
    fn marks_fog_king_captures_only() {
        let king_capture = position("4k3/8/8/8/8/8/8/4RK2 w - -", Variant::Fog);
        assert_eq!(san_of_uci(&king_capture, "e1e8"), "Rxe8#");
        let rook = position("4k3/8/8/8/8/8/8/R4K2 w - -", Variant::Fog);
        assert_eq!(san_of_uci(&rook, "a1a8"), "Ra8");
        let kiwipete = position(KIWIPETE, Variant::Fog);
        assert_eq!(san_of_uci(&kiwipete, "e5f7"), "Nxf7");
    }

    #[test]
    fn matches_python_chess_on_kiwipete() {
        let standard = "Bb5 Bc1 Bc4 Bd1 Bd3 Be3 Bf1 Bf4 Bg5 Bh6 Bxa6 Kd1 Kf1 Na4 Nb1 Nb5 Nc4 Nc6 Nd1 Nd3 Ng4 Nxd7 \
                        Nxf7 Nxg6 O-O O-O-O Qd3 Qe3 Qf4 Qf5 Qg3 Qg4 Qh5 Qxf6 Qxh3 Rb1 Rc1 Rd1 Rf1 Rg1 a3 a4 b3 d6 \
                        dxe6 g3 g4 gxh3";
        assert_eq!(all_san(&position(KIWIPETE, Variant::Standard)), standard);
        let atomic = standard.replace("Nxd7", "Nxd7#").replace("Nxf7", "Nxf7#");
        assert_eq!(all_san(&position(KIWIPETE, Variant::Atomic)), atomic);
    }

    #[test]
    fn round_trips_every_legal_move() {
        let fens = [
            crate::STARTING_FEN,
            KIWIPETE,
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq -",
            "4k3/8/8/8/8/Q7/8/Q1Q1K3 w - -",
            "1r2k3/2P5/8/8/8/8/8/4K3 w - -",
            "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2",
            "rnbqkb1r/pp1p1pPp/8/2p1pP2/1P1P4/3P3P/P1P1P3/RNBQKBNR w KQkq e6 0 1",
        ];
        for variant in Variant::ALL {
            for fen in fens {
                let pos = position(fen, variant);
                for m in pos.legal_moves() {
                    let san = pos.san(m);
                    assert_eq!(pos.parse_san(&san), Ok(m), "{san} in {fen} ({variant})");
                    assert_eq!(San::from_move(&pos, m).to_move(&pos), Ok(m), "{san} in {fen} ({variant})");
                }
            }
        }
        let pos = position(CHESS960, Variant::Atomic);
        for m in pos.legal_moves() {
            assert_eq!(pos.parse_san(&pos.san(m)), Ok(m));
        }
    }

    #[test]
    fn parses_annotations_and_prints_canonical_text() {
        let cases = [
            ("e4", "e4"),
            ("Nf3!?", "Nf3"),
            ("Qh4#", "Qh4"),
            ("exd5+!", "exd5"),
            ("Nbd7??", "Nbd7"),
            ("R1a3", "R1a3"),
            ("Qa1b2", "Qa1b2"),
            ("e8Q", "e8=Q"),
            ("bxa1=N+", "bxa1=N"),
            ("0-0", "O-O"),
            ("O-O-O#", "O-O-O"),
        ];
        for (text, canonical) in cases {
            let san: San = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(san.to_string(), canonical);
        }
        let pos = Position::new(Variant::Standard);
        assert_eq!(pos.parse_san("Nf3!?").map(|m| m.to()), Ok(Square::F3));
        // The capture mark is not checked.
        assert_eq!(pos.parse_san("Nxf3"), pos.parse_san("Nf3"));
    }

    #[test]
    fn rejects_text_that_is_not_san() {
        for text in [
            "", "+", "!?", "e", "e9", "i4", "Nz3", "nf3", "Pe4", "xd5", "Nf3=Q", "e8=K", "e8=", "O-O-O-O", " e4",
            "e4 ", "Ng1-f3",
        ] {
            let err = text.parse::<San>().expect_err(text);
            assert_eq!(err, SanError::Syntax(text.to_owned()));
            assert!(err.to_string().contains(&format!("{text:?}")), "{err}");
        }
        let pos = Position::new(Variant::Standard);
        assert_eq!(pos.parse_san("Nf3=Q"), Err(SanError::Syntax("Nf3=Q".to_owned())));
    }

    #[test]
    fn rejects_illegal_moves() {
        let start = Position::new(Variant::Standard);
        for text in ["e5", "Nf6", "Ke2", "O-O", "O-O-O", "exd3", "Ng1e2+"] {
            match start.parse_san(text) {
                Err(SanError::Illegal { san, .. }) => assert_eq!(san, text),
                other => panic!("{text}: {other:?}"),
            }
        }
        let err = start.parse_san("e5").unwrap_err();
        assert_eq!(err.to_string(), format!("illegal move \"e5\": no legal move in {} matches it", start.fen()));

        // A promotion must name its piece.
        let promotion = position("1r2k3/2P5/8/8/8/8/8/4K3 w - -", Variant::Standard);
        assert!(matches!(promotion.parse_san("c8"), Err(SanError::Illegal { .. })));
        // A pawn move without a file is a push, never a capture.
        let capture = position("4k3/8/8/3p4/4P3/8/8/4K3 w - -", Variant::Standard);
        assert!(matches!(capture.parse_san("d5"), Err(SanError::Illegal { .. })));
        assert!(capture.parse_san("exd5").is_ok());
    }

    #[test]
    fn rejects_ambiguous_moves() {
        let cases = [
            ("4k3/8/8/8/8/8/8/1N2KN2 w - -", "Nd2"),
            ("4k3/8/8/R7/8/8/8/R3K3 w - -", "Ra3"),
            ("4k3/8/8/8/8/Q7/8/Q1Q1K3 w - -", "Qb2"),
            ("4k3/8/8/8/8/Q7/8/Q1Q1K3 w - -", "Qab2"),
            ("4k3/8/8/8/8/Q7/8/Q1Q1K3 w - -", "Q1b2"),
        ];
        for (fen, text) in cases {
            let pos = position(fen, Variant::Standard);
            let err = pos.parse_san(text).unwrap_err();
            assert_eq!(err, SanError::Ambiguous { san: text.to_owned(), fen: pos.fen() });
            assert!(err.to_string().starts_with(&format!("ambiguous move {text:?}")), "{err}");
        }
    }
}
