//! The reader must survive whatever players upload: random bytes, random
//! soups of PGN fragments, every truncation of a real file, random edits
//! of one, and odd FEN starts all give games or an error that points into
//! the text, and never a panic or a hang.

mod common;

use common::{random_game, Coverage};
use fogblast_pgn::{games, read_game, read_games, write_games};
use fogblast_rules::{Position, Variant, STARTING_FEN};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Pieces of PGN, whole and broken, for soups and edits.
const FRAGMENTS: &[&str] = &[
    "[",
    "]",
    "\"",
    "\\",
    "{",
    "}",
    "(",
    ")",
    "1.",
    "12...",
    ".",
    " ",
    "\n",
    "\r\n",
    "\t",
    "e4",
    "e5",
    "Nf3",
    "Nbd7",
    "O-O",
    "0-0-0",
    "exd6",
    "e8=Q",
    "e8Q",
    "Kxe8#",
    "1-0",
    "0-1",
    "1/2-1/2",
    "*",
    "$",
    "$12",
    "!?",
    "??",
    ";",
    "%",
    "[%clk 0:01:00]",
    "[%clk",
    "[%clk 99999999999:99:99.999999]",
    "Event",
    "[Event \"x\"]",
    "[Variant \"Atomic\"]",
    "[Variant \"Fog of War\"]",
    "[Variant \"Chess960\"]",
    "[Result \"1-0\"]",
    "[FEN \"8/8/8/8/8/8/8/8 w - - 0 1\"]",
    "[FEN \"4k3/8/8/8/8/8/8/4K3 w - - 0 4294967295\"]",
    "[FEN \"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 4294967295 4294967295\"]",
    "€",
    "é",
    "\u{feff}",
    "\0",
    "99999999999",
    "K",
    "x",
    "#",
    "+",
    "=",
    "-",
    "/",
    "<>",
    "--",
    "Z0",
];

/// Reads `text` every way there is; an error must point inside it.
fn survive(text: &str) {
    let lines = text.bytes().filter(|&b| b == b'\n').count() + 1;
    if let Err(err) = read_games(text) {
        assert!(err.game >= 1, "{err}");
        assert!((1..=lines).contains(&err.line), "{err} (the text has {lines} lines): {text:?}");
        assert!(!err.to_string().is_empty());
    }
    let _ = read_game(text);
    assert!(games(text).filter(Result::is_err).count() <= 1, "the iterator ends after an error");
}

fn soup(rng: &mut StdRng, len: usize) -> String {
    (0..len).map(|_| FRAGMENTS[rng.random_range(0..FRAGMENTS.len())]).collect()
}

fn real_file(rng: &mut StdRng) -> String {
    let mut coverage = Coverage::default();
    let records: Vec<_> = (0..6).map(|i| random_game(rng, Variant::ALL[i % 3], false, &mut coverage).record).collect();
    let mut text = write_games(&records).unwrap();
    text.push_str("\n{ c } 1. e4 (1. d4 { x } d5 (1... Nf6)) 1... e5!? $3 2. Nf3 ; rest\n% esc\n*\n");
    text
}

#[test]
fn random_bytes() {
    let mut rng = StdRng::seed_from_u64(1);
    for _ in 0..3000 {
        let len = rng.random_range(0..300);
        let bytes: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        survive(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn random_soups_of_pgn_fragments() {
    let mut rng = StdRng::seed_from_u64(2);
    for _ in 0..5000 {
        let len = rng.random_range(0..80);
        survive(&soup(&mut rng, len));
    }
}

#[test]
fn every_truncation_of_a_real_file() {
    let mut rng = StdRng::seed_from_u64(3);
    let text = real_file(&mut rng);
    assert!(read_games(&text).is_ok());
    let mut ends: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    // Every cut in the first 3000 characters, then every seventh.
    ends = ends.into_iter().enumerate().filter(|&(n, _)| n < 3000 || n % 7 == 0).map(|(_, i)| i).collect();
    for end in ends {
        survive(&text[..end]);
        survive(&text[end..]);
    }
}

#[test]
fn random_edits_of_a_real_file() {
    let mut rng = StdRng::seed_from_u64(4);
    let original = real_file(&mut rng).into_bytes();
    for _ in 0..3000 {
        let mut bytes = original.clone();
        for _ in 0..rng.random_range(1..6) {
            let at = rng.random_range(0..=bytes.len());
            match rng.random_range(0..4) {
                0 => {
                    let end = (at + rng.random_range(1..40)).min(bytes.len());
                    bytes.drain(at..end);
                }
                1 => {
                    let fragment = FRAGMENTS[rng.random_range(0..FRAGMENTS.len())];
                    bytes.splice(at..at, fragment.bytes());
                }
                2 if at < bytes.len() => bytes[at] = rng.random(),
                _ => {
                    let end = (at + rng.random_range(1..200)).min(bytes.len());
                    let copy = bytes[at..end].to_vec();
                    let to = rng.random_range(0..=bytes.len());
                    bytes.splice(to..to, copy);
                }
            }
        }
        survive(&String::from_utf8_lossy(&bytes));
    }
}

/// Mangled FEN starts, with random legal SAN after those that parse.
#[test]
fn odd_starting_positions() {
    let mut rng = StdRng::seed_from_u64(5);
    let alphabet = b"pnbrqkPNBRQK12345678/ wb-KQkqABCDEFGHabcdefgh0123456789";
    let mut parsed = 0;
    for _ in 0..3000 {
        let mut fen = STARTING_FEN.as_bytes().to_vec();
        for _ in 0..rng.random_range(1..4) {
            let at = rng.random_range(0..fen.len());
            fen[at] = if fen[at].is_ascii_alphabetic() && rng.random_bool(0.8) {
                // Keeps the board's shape: another piece on the square.
                b"pnbrqkPNBRQK"[rng.random_range(0..12)]
            } else {
                alphabet[rng.random_range(0..alphabet.len())]
            };
        }
        let fen = String::from_utf8(fen).unwrap();
        let variant = Variant::ALL[rng.random_range(0..3)];
        let mut text = format!("[Variant \"{}\"]\n[FEN \"{fen}\"]\n\n", variant.name());
        if let Ok(mut pos) = Position::from_fen(&fen, variant) {
            parsed += 1;
            for _ in 0..rng.random_range(0..30) {
                let legal = pos.legal_moves();
                if legal.is_empty() {
                    break;
                }
                let m = legal[rng.random_range(0..legal.len())];
                text.push_str(&pos.san(m));
                text.push(' ');
                pos.play_unchecked(m);
            }
            let game = read_game(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert_eq!(game.initial, Position::from_fen(&fen, variant).unwrap());
        }
        survive(&text);
    }
    eprintln!("{parsed} of 3000 mangled FENs were positions");
    assert!(parsed > 300, "{parsed}");
}
