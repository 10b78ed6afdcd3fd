//! FEN and UCI as players, files and engines write them: round trips for
//! standard FEN, X-FEN and Shredder-FEN castling and four-field EPD; a
//! specific, readable error for every kind of malformed FEN and every
//! impossible position; and UCI moves, whose castling is read in both the
//! standard (`e1g1`) and the Chess960 (`e1h1`) form and printed per mode.

use fogblast_rules::{
    Bitboard, CastlingMode, Color, Fen, FenError, Game, GameError, Move, ParsePositionError, Position, PositionError,
    Role, Setup, Square, Uci, Variant, STARTING_FEN,
};

fn position(fen: &str, variant: Variant) -> Position {
    Position::from_fen(fen, variant).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

fn squares(names: &str) -> Bitboard {
    names.split_whitespace().map(|name| name.parse::<Square>().unwrap()).collect()
}

/// The syntax error `text` gives, after checking its message names the
/// problem with `needle`.
fn fen_error(text: &str, needle: &str) -> FenError {
    let err = text.parse::<Fen>().expect_err(text);
    let message = err.to_string();
    assert!(message.contains(needle), "{text:?}: {message:?} does not mention {needle:?}");
    let whole = Position::from_fen(text, Variant::Standard).expect_err(text);
    assert_eq!(whole, ParsePositionError::Fen(err.clone()));
    assert_eq!(whole.to_string(), format!("invalid FEN: {message}"));
    err
}

/// The chess error `fen` gives in `variant` though its syntax is fine,
/// after checking its message names the problem with `needle`.
fn position_error(fen: &str, variant: Variant, needle: &str) -> PositionError {
    let parsed: Fen = fen.parse().unwrap_or_else(|e| panic!("{fen}: {e}"));
    let err = parsed.into_position(variant).expect_err(fen);
    let message = err.to_string();
    assert!(message.contains(needle), "{fen}: {message:?} does not mention {needle:?}");
    assert_eq!(Position::from_fen(fen, variant), Err(ParsePositionError::Position(err.clone())));
    err
}

#[test]
fn standard_fen_round_trips() {
    for fen in [
        STARTING_FEN,
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        "r3k2r/8/8/8/8/8/8/R3K2R b Kq - 12 40",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "4k3/8/8/8/8/8/8/4K3 b - - 99 123456",
    ] {
        for variant in Variant::ALL {
            assert_eq!(position(fen, variant).fen(), fen, "{variant}");
        }
        let parsed: Fen = fen.parse().unwrap();
        assert_eq!(parsed.to_string(), fen);
        assert_eq!(Fen::from_position(&position(fen, Variant::Standard)), parsed);
    }
}

#[test]
fn epd_and_five_field_fen_default_the_clocks() {
    let epd = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -";
    assert_eq!(position(epd, Variant::Standard).fen(), STARTING_FEN);
    assert_eq!(position(epd, Variant::Standard), Position::new(Variant::Standard));
    let five = position("4k3/8/8/8/8/8/8/4K3 b - - 7", Variant::Fog);
    assert_eq!((five.halfmoves(), five.fullmoves()), (7, 1));
    assert_eq!(position(&format!("  {epd}   0  1 "), Variant::Atomic).fen(), STARTING_FEN, "extra spaces are fine");
}

#[test]
fn x_fen_writes_files_for_inner_rooks_only() {
    // Rooks on e and h with the king on b: the right on the inner rook
    // needs its file, the one on the outer rook is K/k.
    let inner = "1k2r2r/8/8/8/8/8/8/1K2R2R w Ee - 0 1";
    let pos = position(inner, Variant::Standard);
    assert_eq!(pos.castling_rooks(), squares("e1 e8"));
    assert_eq!(pos.fen(), inner);
    let outer = position("1k2r2r/8/8/8/8/8/8/1K2R2R w Hh - 0 1", Variant::Standard);
    assert_eq!(outer.castling_rooks(), squares("h1 h8"));
    assert_eq!(outer.fen(), "1k2r2r/8/8/8/8/8/8/1K2R2R w Kk - 0 1");
    assert_eq!(position("1k2r2r/8/8/8/8/8/8/1K2R2R w Kk - 0 1", Variant::Standard), outer, "K is the outermost rook");

    // Two rooks a side: the inner ones by file, king side first.
    let four = "rr2k1rr/8/8/8/8/8/8/RR2K1RR w BGbg - 0 1";
    assert_eq!(position(four, Variant::Standard).fen(), "rr2k1rr/8/8/8/8/8/8/RR2K1RR w GBgb - 0 1");
    assert_eq!(
        position("rr2k1rr/8/8/8/8/8/8/RR2K1RR w HAha - 0 1", Variant::Standard).fen(),
        four.replace("BGbg", "KQkq")
    );
}

#[test]
fn shredder_fen_writes_every_right_as_a_file() {
    let shredder = |fen: &str| Fen::from_position(&position(fen, Variant::Standard)).to_shredder_string();
    assert_eq!(shredder(STARTING_FEN), "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1");
    assert_eq!(shredder("1k2r2r/8/8/8/8/8/8/1K2R2R w Ee - 0 1"), "1k2r2r/8/8/8/8/8/8/1K2R2R w Ee - 0 1");
    assert_eq!(shredder("r3k2r/8/8/8/8/8/8/R3K2R b Kq - 12 40"), "r3k2r/8/8/8/8/8/8/R3K2R b Ha - 12 40");
    assert_eq!(shredder("4k3/8/8/8/8/8/8/4K3 w - - 0 1"), "4k3/8/8/8/8/8/8/4K3 w - - 0 1");
    assert_eq!(
        Fen::from_position(&Position::chess960(0, Variant::Standard).unwrap()).to_shredder_string(),
        "bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1"
    );
}

#[test]
fn every_chess960_start_round_trips_in_both_castling_notations() {
    for n in 0..960 {
        let pos = Position::chess960(n, Variant::Standard).unwrap();
        let x_fen = pos.fen();
        assert!(x_fen.contains(" w KQkq - 0 1"), "{n}: {x_fen}");
        assert_eq!(position(&x_fen, Variant::Standard), pos, "{n}: {x_fen}");
        let shredder = Fen::from_position(&pos).to_shredder_string();
        assert_eq!(position(&shredder, Variant::Standard), pos, "{n}: {shredder}");
    }
}

#[test]
fn empty_text_and_wrong_field_counts() {
    assert_eq!(fen_error("", "empty"), FenError::Empty);
    assert_eq!(fen_error(" \t ", "empty"), FenError::Empty);
    assert_eq!(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR", "1 fields"), FenError::FieldCount(1));
    assert_eq!(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w", "2 fields"), FenError::FieldCount(2));
    assert_eq!(fen_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq", "3 fields"), FenError::FieldCount(3));
    assert_eq!(fen_error(&format!("{STARTING_FEN} extra"), "7 fields"), FenError::FieldCount(7));
}

#[test]
fn malformed_boards() {
    let board_error = |board: &str, needle: &str| {
        let err = fen_error(&format!("{board} w - - 0 1"), needle);
        assert!(matches!(err, FenError::Board(_)), "{board}: {err:?}");
        assert!(err.to_string().starts_with("board field: "), "{err}");
    };
    board_error("rnbqkbnr/pppppppp/8/8/8/PPPPPPPP/RNBQKBNR", "found 7");
    board_error("rnbqkbnr/pppppppp/8/8/8/8/8/PPPPPPPP/RNBQKBNR", "found 9");
    board_error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/", "found 9");
    board_error("4k3/8/8/8/8/8/8/4K3p", "rank 1 has more than 8 squares");
    board_error("4k3/8/8/8/8/8/ppppppppp/4K3", "rank 2 has more than 8 squares");
    board_error("4k3/8/8/8/8/8/8/4K4", "rank 1 has more than 8 squares");
    board_error("4k3/8/8/8/8/8/7/4K3", "rank 2 has 7 squares, not 8");
    board_error("4k3/8//8/8/8/8/4K3", "rank 6 has 0 squares, not 8");
    board_error("4k3/8/8/8/8/8/44/4K3", "two digits in a row");
    board_error("4k3/8/8/8/8/8/8/3K13", "two digits in a row");
    board_error("4k3/8/8/8/8/8/8/4X3", "unexpected character 'X' in rank 1");
    board_error("4k3/8/8/8/8/8/8/4K2é", "unexpected character 'é'");
    board_error("4k3/8/8/8/9/8/8/4K3", "unexpected character '9' in rank 4");
    board_error("4k3/8/8/8/0/8/8/4K3", "unexpected character '0'");
}

#[test]
fn bad_turn() {
    for turn in ["x", "W", "white", "-"] {
        let fen = format!("4k3/8/8/8/8/8/8/4K3 {turn} - - 0 1");
        assert_eq!(fen_error(&fen, "turn field"), FenError::Turn(turn.to_owned()));
    }
}

#[test]
fn bad_castling_fields() {
    let castling_error = |board: &str, castling: &str, why: &str| {
        let fen = format!("{board} w {castling} - 0 1");
        let err = fen_error(&fen, why);
        assert!(matches!(&err, FenError::Castling(field, _) if field == castling), "{fen}: {err:?}");
        assert!(err.to_string().starts_with(&format!("castling field {castling:?}")), "{err}");
    };
    castling_error("4k3/8/8/8/8/8/8/4K3", "K", "no rook on that side of the king");
    castling_error("4k3/8/8/8/8/8/8/R3K3", "K", "no rook on that side of the king");
    castling_error("4k3/8/8/8/8/8/4K3/7R", "K", "a castling right needs the king on its back rank");
    castling_error("4k3/8/8/8/8/8/8/4K2R", "KK", "the same right twice");
    castling_error("4k3/8/8/8/8/8/8/4K2R", "KH", "the same right twice");
    castling_error("r3k2r/8/8/8/8/8/8/R3K2R", "KQkqK", "expected - or up to four");
    castling_error("4k3/8/8/8/8/8/8/4K2R", "Z", "unexpected character");
    castling_error("4k3/8/8/8/8/8/8/4K2R", "-K", "unexpected character");

    // A rook file is syntax; that no rook stands there is bad chess.
    let err = position_error("4k3/8/8/8/8/8/8/4K3 w H - 0 1", Variant::Standard, "castling right for h1");
    assert_eq!(err, PositionError::InvalidCastlingRight(Square::H1));
    // Two rights on one side of the king.
    let err = position_error("4k3/8/8/8/8/8/8/4K1RR w GH - 0 1", Variant::Standard, "castling right");
    assert!(matches!(err, PositionError::InvalidCastlingRight(_)), "{err:?}");
}

#[test]
fn bad_en_passant_fields() {
    for ep in ["e9", "i3", "33", "e", "e33", "E3"] {
        let fen = format!("4k3/8/8/8/8/8/8/4K3 w - {ep} 0 1");
        assert_eq!(fen_error(&fen, "en passant field"), FenError::EpSquare(ep.to_owned()));
    }
    for ep in ["e4", "e5", "a1", "h8"] {
        let fen = format!("4k3/8/8/8/8/8/8/4K3 w - {ep} 0 1");
        assert_eq!(fen_error(&fen, "third or sixth rank"), FenError::EpSquare(ep.to_owned()));
    }
}

#[test]
fn en_passant_must_follow_a_double_push() {
    let cases = [
        // No pawn on e5 that could have come from e7.
        ("4k3/8/8/8/8/8/8/4K3 w - e6 0 1", Square::E6),
        // Black to move: the square white's pawn skipped is on the third rank.
        ("4k3/8/8/4p3/8/8/8/4K3 b - e6 0 1", Square::E6),
        // The pawn's start square is occupied.
        ("4k3/4n3/8/3Pp3/8/8/8/4K3 w - e6 0 1", Square::E6),
        // The skipped square is occupied.
        ("4k3/8/4n3/3Pp3/8/8/8/4K3 w - e6 0 1", Square::E6),
        // The pawn on e4 is black's own.
        ("4k3/8/8/8/3Pp3/8/8/4K3 b - e3 0 1", Square::E3),
    ];
    for (fen, square) in cases {
        for variant in Variant::ALL {
            let err = position_error(fen, variant, "does not follow a double pawn push");
            assert_eq!(err, PositionError::InvalidEpSquare(square), "{fen} ({variant})");
        }
    }
    // Valid but useless: kept out of the position, so it prints as "-".
    let no_taker = position("4k3/8/8/4p3/8/8/8/4K3 w - e6 0 2", Variant::Standard);
    assert_eq!(no_taker.ep_square(), None);
    assert_eq!(no_taker.fen(), "4k3/8/8/4p3/8/8/8/4K3 w - - 0 2");
}

#[test]
fn bad_clocks() {
    for halfmoves in ["-1", "x", "1.5", "+1", "1e3", "١", "4294967296"] {
        let fen = format!("4k3/8/8/8/8/8/8/4K3 w - - {halfmoves} 1");
        assert_eq!(fen_error(&fen, "halfmove field"), FenError::Halfmoves(halfmoves.to_owned()));
    }
    for fullmoves in ["0", "-1", "x", "00", "2.0"] {
        let fen = format!("4k3/8/8/8/8/8/8/4K3 w - - 0 {fullmoves}");
        let err = fen_error(&fen, "fullmove field");
        assert_eq!(err, FenError::Fullmoves(fullmoves.to_owned()));
        assert!(err.to_string().contains("from 1"), "{err}");
    }
    // A setup built in code is checked too.
    let setup = Setup { fullmoves: 0, ..Setup::standard() };
    assert_eq!(Position::from_setup(setup, Variant::Standard), Err(PositionError::InvalidFullmoves));
    assert!(PositionError::InvalidFullmoves.to_string().contains("fullmove"));
}

#[test]
fn wrong_kings() {
    for variant in Variant::ALL {
        let err = position_error("4k3/8/8/8/8/8/8/3KK3 w - - 0 1", variant, "more than one king");
        assert_eq!(err, PositionError::TooManyKings(Color::White));
        let err = position_error("4k3/8/8/8/8/8/8/8 w - - 0 1", Variant::Standard, "white has no king");
        assert_eq!(err, PositionError::MissingKing(Color::White));
        let err = position_error("8/8/8/8/8/8/8/8 w - - 0 1", variant, "neither side has a king");
        assert_eq!(err, PositionError::NoKings);
    }
    let err = position_error("8/8/8/8/8/8/8/4K3 b - - 0 1", Variant::Standard, "black has no king");
    assert_eq!(err, PositionError::MissingKing(Color::Black));
    // Atomic and fog of war reach positions without one king: the game is over.
    for variant in [Variant::Atomic, Variant::Fog] {
        assert!(position("4k3/8/8/8/8/8/8/8 w - - 0 1", variant).outcome().is_some());
    }
}

#[test]
fn pawns_on_a_back_rank() {
    for (fen, square) in
        [("4k3/8/8/8/8/8/8/P3K3 w - - 0 1", Square::A1), ("4k2p/8/8/8/8/8/8/4K3 w - - 0 1", Square::H8)]
    {
        for variant in Variant::ALL {
            let err = position_error(fen, variant, "first or eighth rank");
            assert_eq!(err, PositionError::PawnOnBackRank(square), "{fen}");
            assert!(err.to_string().contains(&square.to_string()));
        }
    }
}

#[test]
fn the_side_not_to_move_must_not_be_in_check() {
    // Black to move while white's king stands attacked.
    for variant in [Variant::Standard, Variant::Atomic] {
        let err = position_error("4k3/8/8/8/8/8/4r3/4K3 b - - 0 1", variant, "king of white can already be taken");
        assert_eq!(err, PositionError::OppositeCheck(Color::Black, Color::White), "{variant}");
    }
    // The side to move may be in check, and fog of war has no check at all.
    assert!(position("4k3/8/8/8/8/8/4r3/4K3 w - - 0 1", Variant::Standard).is_check());
    assert!(Position::from_fen("4k3/8/8/8/8/8/4r3/4K3 b - - 0 1", Variant::Fog).is_ok());
    // Standard chess: kings side by side are an impossible position.
    let err = position_error("8/8/8/8/8/8/3k4/4K3 b - - 0 1", Variant::Standard, "can already be taken");
    assert_eq!(err, PositionError::OppositeCheck(Color::Black, Color::White));
}

#[test]
fn connected_kings_are_not_an_error_in_atomic() {
    for turn in ["w", "b"] {
        let fen = format!("8/8/8/8/8/8/3k4/4K3 {turn} - - 0 1");
        let pos = position(&fen, Variant::Atomic);
        assert!(pos.kings_connected());
        assert!(!pos.is_check());
        assert_eq!(pos.fen(), fen);
    }
    // A rook attack on a king touching the other king is no check either.
    let pos = position("8/8/8/8/8/8/3k4/r3K3 b - - 0 1", Variant::Atomic);
    assert!(!pos.is_check());
}

#[test]
fn uci_parses_and_prints() {
    let uci: Uci = "e2e4".parse().unwrap();
    assert_eq!(uci, Uci { from: Square::E2, to: Square::E4, promotion: None });
    assert_eq!(uci.to_string(), "e2e4");
    for (text, role) in
        [("e7e8q", Role::Queen), ("a2a1r", Role::Rook), ("b7a8b", Role::Bishop), ("h2g1n", Role::Knight)]
    {
        let uci: Uci = text.parse().unwrap();
        assert_eq!(uci.promotion, Some(role), "{text}");
        assert_eq!(uci.to_string(), text);
    }
}

#[test]
fn uci_rejects_malformed_text() {
    for text in [
        "", "e2", "e2e", "e2e9", "i2e4", "e0e4", "E2E4", "e2e2", "e7e8k", "e7e8p", "e7e8Q", "e7e8x", "e7e8qq", "e2e4 ",
        " e2e4", "e2-e4", "0000", "O-O", "é2e4", "e2é4", "e7e8é", "e2e4e5",
    ] {
        let err = text.parse::<Uci>().expect_err(text);
        assert_eq!(err.0, text);
        let message = err.to_string();
        assert!(message.contains("not a UCI move") && message.contains(&format!("{text:?}")), "{message}");
    }
}

#[test]
fn castling_reads_both_forms_and_prints_per_mode() {
    let pos = position("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", Variant::Standard);
    for (standard, chess960, rook) in [("e1g1", "e1h1", Square::H1), ("e1c1", "e1a1", Square::A1)] {
        let castle = Move::Castle { king: Square::E1, rook };
        assert_eq!(pos.parse_uci(&standard.parse().unwrap()), Some(castle), "{standard}");
        assert_eq!(pos.parse_uci(&chess960.parse().unwrap()), Some(castle), "{chess960}");
        assert_eq!(castle.to_uci(CastlingMode::Standard).to_string(), standard);
        assert_eq!(castle.to_uci(CastlingMode::Chess960).to_string(), chess960);
    }
    let black = position("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", Variant::Standard);
    let castle = black.parse_uci(&"e8g8".parse().unwrap()).unwrap();
    assert_eq!(castle, Move::Castle { king: Square::E8, rook: Square::H8 });
    assert_eq!(black.parse_uci(&"e8h8".parse().unwrap()), Some(castle));
    assert_eq!(castle.to_uci(CastlingMode::Standard).to_string(), "e8g8");
    assert_eq!(castle.to_uci(CastlingMode::Chess960).to_string(), "e8h8");

    let mut game = Game::new(pos);
    game.play_uci("e1h1").unwrap();
    game.play_uci("e8c8").unwrap();
    assert_eq!(game.uci_moves(CastlingMode::Standard), "e1g1 e8c8");
    assert_eq!(game.uci_moves(CastlingMode::Chess960), "e1h1 e8a8");
}

#[test]
fn chess960_castling_prints_king_takes_rook() {
    // King on b1: the king's destination would not say which rook castles.
    let pos = position("rk5r/8/8/8/8/8/8/RK5R w HAha - 0 1", Variant::Standard);
    for (text, rook) in [("b1h1", Square::H1), ("b1a1", Square::A1)] {
        let castle = pos.parse_uci(&text.parse().unwrap()).unwrap_or_else(|| panic!("{text}"));
        assert_eq!(castle, Move::Castle { king: Square::B1, rook });
        for mode in [CastlingMode::Standard, CastlingMode::Chess960] {
            assert_eq!(castle.to_uci(mode).to_string(), text, "{mode:?}");
        }
    }
    // King on e1 but the rook on g1: king takes rook, in both modes.
    let pos = position("4k3/8/8/8/8/8/8/4K1R1 w G - 0 1", Variant::Standard);
    let castle = pos.parse_uci(&"e1g1".parse().unwrap()).unwrap();
    assert_eq!(castle, Move::Castle { king: Square::E1, rook: Square::G1 });
    assert_eq!(castle.to_uci(CastlingMode::Standard).to_string(), "e1g1");
    assert_eq!(castle.to_uci(CastlingMode::Chess960).to_string(), "e1g1");
}

#[test]
fn parse_uci_returns_none_for_an_illegal_move() {
    let start = Position::new(Variant::Standard);
    for text in ["e2e5", "e7e5", "e1g1", "g1g3", "a2b3"] {
        assert_eq!(start.parse_uci(&text.parse().unwrap()), None, "{text}");
    }
    let promotion = position("8/P3k3/8/8/8/8/8/4K3 w - - 0 1", Variant::Standard);
    assert_eq!(promotion.parse_uci(&"a7a8".parse().unwrap()), None, "a promotion needs its letter");
    assert_eq!(
        promotion.parse_uci(&"a7a8n".parse().unwrap()),
        Some(Move::Normal {
            role: Role::Pawn,
            from: Square::A7,
            capture: None,
            to: Square::A8,
            promotion: Some(Role::Knight)
        })
    );
    assert_eq!(start.parse_uci(&"e2e3q".parse().unwrap()), None, "no promotion off the last rank");

    let mut game = Game::new(start);
    assert_eq!(game.play_uci("e2e5"), Err(GameError::UnknownMove("e2e5".to_owned())));
    assert!(matches!(game.play_uci("e2e9"), Err(GameError::Syntax(_))));
    assert_eq!(game.ply(), 0);
}

#[test]
fn clocks_at_their_limit_stay_readable() {
    let pos = position("4k3/8/8/8/8/8/8/4K3 b - - 4294967295 4294967295", Variant::Standard);
    let m = pos.parse_uci(&"e8d8".parse().unwrap()).unwrap();
    let (next, _) = pos.play(m).unwrap();
    assert_eq!(next.fen(), "3k4/8/8/8/8/8/8/4K3 w - - 4294967295 4294967295");
    assert_eq!(Position::from_fen(&next.fen(), Variant::Standard), Ok(next));
}

#[test]
fn every_square_and_move_is_named_by_its_file_and_rank() {
    for square in Square::all() {
        let spelled: String = [square.file().char(), square.rank().char()].into_iter().collect();
        assert_eq!(square.name(), spelled);
        assert_eq!(square.to_string(), spelled);
        assert_eq!(spelled.parse::<Square>().unwrap(), square);
        for promotion in [None, Some(Role::Queen), Some(Role::Knight)] {
            let uci = Uci { from: square, to: Square::all().rev().nth(square.index()).unwrap(), promotion };
            let text = uci.text();
            assert_eq!(text, uci.to_string());
            assert_eq!(text.len(), 4 + usize::from(promotion.is_some()));
            assert_eq!(text.parse::<Uci>().unwrap(), uci);
        }
    }
    assert_eq!(format!("{:>4}|", Square::all().next().unwrap()), "  a1|", "a square pads as text does");
}
