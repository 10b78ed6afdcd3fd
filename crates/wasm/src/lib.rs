//! Fogblast's rules and computer player for the browser, so a game against
//! the computer needs no server. The page talks to the module in JSON: one
//! request in, one answer out (see [`handle`]). The same code runs natively
//! in tests, which compare its answers with the wasm build's.
//!
//! Requests (`op` names the operation):
//! - `chess960`: the Chess960 start `number` (0-959) of a `variant`
//!   (standard or atomic) → its `fen`.
//! - `position`: the game so far (`variant`, `initial_fen`, `moves`, and
//!   `chess960: true` for a Chess960 game, whose castling moves are then
//!   written king-takes-rook, `e1h1`, as the server writes them) →
//!   its FEN, side to move, legal moves, SAN of every move, the squares the
//!   last move exploded, the checked king, and the outcome if it is over.
//!   In fog of war, `view` (`white` or `black`) names the player: the answer
//!   is then cut as the server cuts that seat's frames (fogged squares
//!   empty, `visible`, `lost`, the opponent's moves unknown) until the end;
//!   `all` asks for the whole game, once the fog has lifted.
//! - `replay`: every position of a game whose moves are all known
//!   (`variant`, `initial_fen`, `moves`) → `plies`, one per position from
//!   the start: its FEN, the SAN of the move that led to it, the squares
//!   that move exploded and the checked king. The page steps through a
//!   finished game with it and names the moves a `state` frame lists.
//! - `check`: the king in check in one position (`variant`, `fen`), or
//!   null; never in fog of war, where nobody is told of check.
//! - `why`: why a move (`variant`, `fen`, `uci`) is refused: `reason`
//!   names the rule it breaks (see [`refusal::Reason`]), or is `legal`.
//! - `blast`: what an atomic capture (`variant`, `fen`, `uci`) would blow
//!   up: `squares`, and `own_king` / `their_king` when a king is among
//!   them (see [`blast`]); nothing for a move that captures nothing.
//! - `best`: the computer's move at a `level` with a `seed`, exactly as the
//!   server's engine pool searches it with no clock. In fog of war the
//!   engine is given only its own side's observations, as on the server.
//! - `search`: a fixed-depth search without noise (`fen`, `depth`): the
//!   best move (`uci`), its `score` for the side to move, and the line the
//!   engine expects (`pv`, starting with that move); for the analysis
//!   board, for comparing this build with the native engine, and for
//!   benchmarks.
//! - `pgn`: the game as PGN (`result`, `white`, `black`, `started_at_ms`).
//!
//! Every answer is an object with `ok: true`, or `ok: false` and an `error`.

pub mod blast;
mod exports;
#[cfg(not(target_arch = "wasm32"))]
pub mod node;
pub mod refusal;

use std::cell::RefCell;
use std::sync::atomic::AtomicBool;

use fogblast_engine::{best_fog_move, FogObservation, Level, Limits, Searcher};
use fogblast_pgn::{GameRecord, GameResult};
use fogblast_rules::{
    Bitboard, CastlingMode, Color, DrawReason, Fen, Game, Move, Outcome, Position, Setup, Uci, Variant, WinReason,
};
use serde::Deserialize;
use serde_json::{json, Value};

/// The transposition table's size in the page, in MiB.
const HASH_MB: usize = 16;

thread_local! {
    /// One searcher for the page, kept across moves like the server's.
    static SEARCHER: RefCell<Searcher> = RefCell::new(Searcher::new(HASH_MB));
}

#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Request {
    Chess960 {
        variant: String,
        number: u32,
    },
    Position(GameSpec),
    Best {
        #[serde(flatten)]
        game: GameSpec,
        level: String,
        #[serde(default)]
        seed: u64,
    },
    Replay(GameSpec),
    Check {
        variant: String,
        fen: String,
    },
    Search {
        variant: String,
        fen: String,
        depth: u32,
    },
    Why {
        variant: String,
        fen: String,
        uci: String,
    },
    Blast {
        variant: String,
        fen: String,
        uci: String,
    },
    Pgn {
        #[serde(flatten)]
        game: GameSpec,
        #[serde(default)]
        result: String,
        #[serde(default)]
        white: String,
        #[serde(default)]
        black: String,
        started_at_ms: Option<u64>,
    },
}

#[derive(Debug, Deserialize)]
struct GameSpec {
    variant: String,
    #[serde(default)]
    initial_fen: String,
    #[serde(default)]
    moves: Vec<String>,
    /// Fog of war: the player the answer is for.
    #[serde(default)]
    view: Option<String>,
    /// A Chess960 game: castling is written king-takes-rook.
    #[serde(default)]
    chess960: bool,
}

impl GameSpec {
    fn castling_mode(&self) -> CastlingMode {
        CastlingMode::for_game(self.chess960)
    }
}

/// Answers one JSON request with one JSON answer.
pub fn handle(request: &str) -> String {
    let answer = match serde_json::from_str::<Request>(request) {
        Ok(request) => answer(request),
        Err(e) => Err(format!("bad request: {e}")),
    };
    match answer {
        Ok(mut value) => {
            value["ok"] = Value::Bool(true);
            value.to_string()
        }
        Err(error) => json!({ "ok": false, "error": error }).to_string(),
    }
}

fn answer(request: Request) -> Result<Value, String> {
    match request {
        Request::Chess960 { variant, number } => {
            let variant = parse_variant(&variant)?;
            let position = Position::chess960(number, variant).map_err(|e| e.to_string())?;
            Ok(json!({ "fen": position.fen() }))
        }
        Request::Position(spec) => {
            if spec.variant == Variant::Fog.name() && spec.view.is_none() {
                return Err("a fog-of-war position needs `view`: the player it is shown to".into());
            }
            let (game, last) = replay(&spec)?;
            Ok(describe(&game, last, &spec))
        }
        Request::Best { game: spec, level, seed } => {
            let level: Level = level.parse().map_err(|e| format!("{e}"))?;
            let (game, _) = replay(&spec)?;
            if let Some(outcome) = game.outcome() {
                return Err(format!("the game is over ({})", reason_name(outcome)));
            }
            if game.position().variant() == Variant::Fog {
                // Only what the side to move has seen goes to the engine.
                let observation = FogObservation::from_game(&game, game.position().turn());
                let limits = level.fog_limits(None, None, seed);
                let report =
                    best_fog_move(&observation, &limits, &AtomicBool::new(false)).map_err(|e| e.to_string())?;
                return Ok(json!({ "uci": report.best.to_string(), "score": report.score, "nodes": report.nodes }));
            }
            let limits = level.limits(None, None, seed);
            let report = search(game.position(), game.history_keys(), &limits);
            let best = report.best.ok_or("no move to play")?;
            Ok(json!({
                "uci": best.to_uci(spec.castling_mode()).to_string(),
                "score": report.score, "depth": report.depth, "nodes": report.nodes,
            }))
        }
        Request::Replay(spec) => replay_all(&spec),
        Request::Check { variant, fen } => {
            let variant = parse_variant(&variant)?;
            let position = Position::from_fen(&fen, variant).map_err(|e| format!("fen {fen:?}: {e}"))?;
            Ok(json!({ "check": checked_king(&position) }))
        }
        Request::Why { variant, fen, uci } => {
            let variant = parse_variant(&variant)?;
            let position = Position::from_fen(&fen, variant).map_err(|e| format!("fen {fen:?}: {e}"))?;
            let uci: Uci = uci.parse().map_err(|e| format!("uci {uci:?}: {e}"))?;
            Ok(refusal::why(&position, &uci))
        }
        Request::Blast { variant, fen, uci } => {
            let variant = parse_variant(&variant)?;
            let position = Position::from_fen(&fen, variant).map_err(|e| format!("fen {fen:?}: {e}"))?;
            let uci: Uci = uci.parse().map_err(|e| format!("uci {uci:?}: {e}"))?;
            Ok(blast::blast(&position, &uci))
        }
        Request::Search { variant, fen, depth } => {
            let variant = parse_variant(&variant)?;
            let position = Position::from_fen(&fen, variant).map_err(|e| format!("fen {fen:?}: {e}"))?;
            let limits = Limits { depth: Some(depth.clamp(1, 64)), ..Limits::default() };
            // A fresh table, so the answer depends on the position alone.
            SEARCHER.with(|s| s.borrow_mut().clear());
            let report = search(&position, &[], &limits);
            let pv: Vec<String> = report.pv.iter().map(|m| m.to_uci(CastlingMode::Standard).to_string()).collect();
            Ok(json!({
                "uci": report.best.map(|m| m.to_uci(CastlingMode::Standard).to_string()),
                "score": report.score, "depth": report.depth, "nodes": report.nodes, "pv": pv,
            }))
        }
        Request::Pgn { game: spec, result, white, black, started_at_ms } => {
            let variant = parse_variant(&spec.variant)?;
            let result = if result.is_empty() {
                GameResult::from_outcome(replay(&spec)?.0.outcome())
            } else {
                result.parse().map_err(|e| format!("{e}"))?
            };
            let record = GameRecord {
                event: format!("Casual {} game against the computer", variant.name()),
                site: "Fogblast, offline".into(),
                started_at_ms,
                white,
                black,
                result,
                variant,
                initial_fen: (!spec.initial_fen.trim().is_empty()).then(|| spec.initial_fen.clone()),
                chess960: spec.chess960,
                moves: spec.moves.clone(),
                termination: "Normal".into(),
                ..GameRecord::default()
            };
            let pgn = fogblast_pgn::write_game(&record).map_err(|e| e.to_string())?;
            Ok(json!({ "pgn": pgn }))
        }
    }
}

fn search(position: &Position, history: &[u64], limits: &Limits) -> fogblast_engine::SearchReport {
    SEARCHER
        .with(|searcher| searcher.borrow_mut().search(position, history, limits, &AtomicBool::new(false), &mut |_| {}))
}

fn parse_variant(name: &str) -> Result<Variant, String> {
    Variant::from_name(name).ok_or_else(|| format!("variant {name:?}: expected standard, atomic or fog"))
}

/// The effects of the last move a client draws.
struct LastMove {
    exploded: Bitboard,
    /// Every piece the move removed, by colour (fog of war's lost pieces).
    removed: [Bitboard; 2],
    mover: Color,
}

fn replay(spec: &GameSpec) -> Result<(Game, Option<LastMove>), String> {
    let mut game = initial_game(spec)?;
    let mut last = None;
    for (ply, text) in spec.moves.iter().enumerate() {
        let m = parse_move(game.position(), ply, text)?;
        let effects = game.play(m).map_err(|e| format!("moves[{ply}] {text}: {e}"))?;
        last = Some(LastMove::of(&effects));
    }
    Ok((game, last))
}

/// The game at its starting position, before any of `spec`'s moves.
fn initial_game(spec: &GameSpec) -> Result<Game, String> {
    let variant = parse_variant(&spec.variant)?;
    let initial = if spec.initial_fen.trim().is_empty() {
        Position::new(variant)
    } else {
        Position::from_fen(&spec.initial_fen, variant).map_err(|e| format!("initial_fen: {e}"))?
    };
    Ok(Game::new(initial))
}

/// The legal move `text` (UCI, castling in either spelling) names at `ply`.
fn parse_move(position: &Position, ply: usize, text: &str) -> Result<Move, String> {
    let uci: Uci = text.parse().map_err(|e| format!("moves[{ply}] {text:?}: {e}"))?;
    position.parse_uci(&uci).ok_or_else(|| format!("moves[{ply}] {text} is not legal here"))
}

impl LastMove {
    fn of(effects: &fogblast_rules::MoveEffects) -> LastMove {
        let mut exploded = Bitboard::EMPTY;
        if effects.explosion.is_some() {
            for &(sq, _) in effects.captured.iter().chain(effects.exploded.iter()) {
                exploded |= sq;
            }
        }
        let removed = [Color::White, Color::Black]
            .map(|color| effects.removed_pieces_of(color).fold(Bitboard::EMPTY, |all, (sq, _)| all | sq));
        LastMove { exploded, removed, mover: effects.mover }
    }
}

/// Every position of the game from its start, for the `replay` op.
fn replay_all(spec: &GameSpec) -> Result<Value, String> {
    let mut game = initial_game(spec)?;
    let ply_of = |game: &Game, san: Value, exploded: Bitboard| {
        json!({
            "fen": game.position().fen(),
            "san": san,
            "exploded": exploded.into_iter().map(|sq| sq.to_string()).collect::<Vec<_>>(),
            "check": checked_king(game.position()),
        })
    };
    let mut plies = vec![ply_of(&game, Value::Null, Bitboard::EMPTY)];
    for (ply, text) in spec.moves.iter().enumerate() {
        let m = parse_move(game.position(), ply, text)?;
        let san = game.position().san(m);
        let effects = game.play(m).map_err(|e| format!("moves[{ply}] {text}: {e}"))?;
        plies.push(ply_of(&game, Value::from(san), LastMove::of(&effects).exploded));
    }
    Ok(json!({ "plies": plies }))
}

/// The square of the side to move's king when it is in check (never in
/// fog of war, whose rules have no check).
fn checked_king(position: &Position) -> Option<String> {
    if !position.is_check() {
        return None;
    }
    position.board().king_of(position.turn()).map(|sq| sq.to_string())
}

fn describe(game: &Game, last: Option<LastMove>, spec: &GameSpec) -> Value {
    let position = game.position();
    if position.variant() == Variant::Fog && game.outcome().is_none() {
        if let Some(viewer @ ("white" | "black")) = spec.view.as_deref() {
            return describe_fog(game, last, spec, viewer);
        }
    }
    let outcome = game.outcome();
    let legal: Vec<String> = if outcome.is_some() {
        Vec::new()
    } else {
        position.legal_moves().iter().map(|m| m.to_uci(spec.castling_mode()).to_string()).collect()
    };
    json!({
        "fen": position.fen(),
        "turn": if position.turn() == Color::White { "white" } else { "black" },
        "ply": spec.moves.len(),
        "legal": legal,
        "san": sans(game, spec),
        "exploded": last.map_or_else(Vec::new, |l| l.exploded.into_iter().map(|sq| sq.to_string()).collect()),
        "check": checked_king(position),
        "outcome": outcome.map(|o| json!({ "result": o.result_str(), "reason": reason_name(o) })),
    })
}

/// A fog-of-war game as `viewer` may see it while it runs: the same cut
/// the game service makes for that seat.
fn describe_fog(game: &Game, last: Option<LastMove>, spec: &GameSpec, viewer: &str) -> Value {
    let color = if viewer == "black" { Color::Black } else { Color::White };
    let position = game.position();
    let view = position.fog_view(color);
    let setup = Setup::from(&view);
    let legal: Vec<String> = if position.turn() == color {
        position.legal_moves().iter().map(|m| m.to_uci(CastlingMode::Standard).to_string()).collect()
    } else {
        Vec::new()
    };
    let initial_turn = game.initial().turn();
    let mine = |ply: usize| (if ply.is_multiple_of(2) { initial_turn } else { !initial_turn }) == color;
    let sans: Vec<Value> = sans(game, spec)
        .into_iter()
        .enumerate()
        .map(|(ply, san)| if mine(ply) { Value::from(san) } else { Value::Null })
        .collect();
    let moves: Vec<Value> = spec
        .moves
        .iter()
        .enumerate()
        .map(|(ply, uci)| if mine(ply) { Value::from(uci.clone()) } else { Value::Null })
        .collect();
    let lost = match last {
        Some(last) if last.mover != color => {
            let gone = last.removed[color.index()] & !view.visible;
            gone.into_iter().map(|sq| sq.to_string()).collect()
        }
        _ => Vec::new(),
    };
    json!({
        "fen": Fen(setup).to_string(),
        "turn": if position.turn() == Color::White { "white" } else { "black" },
        "ply": spec.moves.len(),
        "legal": legal,
        "san": sans,
        "moves": moves,
        "visible": view.visible.into_iter().map(|sq| sq.to_string()).collect::<Vec<_>>(),
        "lost": lost,
        "exploded": Vec::<String>::new(),
        "check": Value::Null,
        "outcome": Value::Null,
    })
}

/// SAN of every move, replayed from the start, with the variant's check
/// and mate marks (`+`, `#`) as the server writes them.
fn sans(game: &Game, spec: &GameSpec) -> Vec<String> {
    let mut position = *game.initial();
    let mut out = Vec::with_capacity(spec.moves.len());
    for text in &spec.moves {
        let Some(m) = text.parse::<Uci>().ok().and_then(|u| position.parse_uci(&u)) else { break };
        out.push(position.san(m));
        match position.play(m) {
            Ok((next, _)) => position = next,
            Err(_) => break,
        }
    }
    out
}

/// The server's names for how a game ended (see the protocol's `end`).
fn reason_name(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Decisive { reason: WinReason::Checkmate, .. } => "checkmate",
        Outcome::Decisive { reason: WinReason::KingExploded, .. } => "explosion",
        Outcome::Decisive { reason: WinReason::KingCaptured, .. } => "king_captured",
        Outcome::Decisive { reason: WinReason::Timeout, .. } => "timeout",
        Outcome::Draw { reason: DrawReason::Stalemate | DrawReason::NoMoves } => "stalemate",
        Outcome::Draw { reason: DrawReason::InsufficientMaterial } => "insufficient_material",
        Outcome::Draw { reason: DrawReason::ThreefoldRepetition } => "threefold",
        Outcome::Draw { reason: DrawReason::FiftyMoves } => "fifty_moves",
        Outcome::Draw { reason: DrawReason::TimeoutVsInsufficientMaterial } => "timeout",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(request: Value) -> Value {
        serde_json::from_str(&handle(&request.to_string())).expect("answers are JSON")
    }

    #[test]
    fn a_search_gives_its_best_line_of_legal_moves() {
        let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
        let answer = call(json!({ "op": "search", "variant": "atomic", "fen": fen, "depth": 5 }));
        assert_eq!(answer["ok"], true, "{answer}");
        let pv: Vec<String> = answer["pv"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect();
        assert!(pv.len() >= 2, "a line past the best move: {pv:?}");
        assert_eq!(answer["uci"].as_str(), Some(pv[0].as_str()));
        // Every move of the line is legal where it is played.
        let line = call(json!({ "op": "position", "variant": "atomic", "initial_fen": fen, "moves": pv }));
        assert_eq!(line["ok"], true, "{line}");
        assert_eq!(line["san"].as_array().unwrap().len(), pv.len(), "{line}");
    }

    #[test]
    fn a_position_lists_legal_moves_and_san() {
        let answer = call(json!({ "op": "position", "variant": "atomic", "moves": ["e2e4", "d7d5"] }));
        assert_eq!(answer["ok"], true, "{answer}");
        assert_eq!(answer["turn"], "white");
        assert_eq!(answer["san"], json!(["e4", "d5"]));
        let legal: Vec<&str> = answer["legal"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert!(legal.contains(&"e4d5"), "{legal:?}");
        assert_eq!(legal.len(), 31, "{legal:?}");
    }

    #[test]
    fn a_chess960_start_is_made_by_number_and_castles_king_onto_rook() {
        let start = call(json!({ "op": "chess960", "variant": "atomic", "number": 0 }));
        assert_eq!(start["ok"], true, "{start}");
        let fen = start["fen"].as_str().unwrap();
        assert!(fen.starts_with("bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w "), "{fen}");
        let usual = call(json!({ "op": "chess960", "variant": "standard", "number": 518 }));
        assert!(usual["fen"].as_str().unwrap().starts_with("rnbqkbnr/pppppppp/"), "{usual}");
        for refused in [json!({ "variant": "fog", "number": 3 }), json!({ "variant": "atomic", "number": 960 })] {
            let mut request = refused.clone();
            request["op"] = json!("chess960");
            assert_eq!(call(request)["ok"], false, "{refused}");
        }
        // From that start, a game goes on with its own castling rights.
        let game = call(
            json!({ "op": "position", "variant": "atomic", "initial_fen": fen, "chess960": true, "moves": ["g2g3", "g7g6"] }),
        );
        assert_eq!(game["ok"], true, "{game}");
        assert_eq!(game["san"], json!(["g3", "g6"]));

        // Castling is king takes rook in a Chess960 game, two squares over otherwise.
        let open = "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1";
        let legal = |chess960: bool| -> Vec<String> {
            let answer =
                call(json!({ "op": "position", "variant": "standard", "initial_fen": open, "chess960": chess960 }));
            answer["legal"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect()
        };
        let fischer = legal(true);
        assert!(fischer.contains(&"e1h1".into()) && fischer.contains(&"e1a1".into()), "{fischer:?}");
        assert!(!fischer.contains(&"e1g1".into()), "{fischer:?}");
        let usual = legal(false);
        assert!(usual.contains(&"e1g1".into()) && usual.contains(&"e1c1".into()), "{usual:?}");
        // The PGN of a Chess960 game says so, with its start.
        let pgn = call(
            json!({ "op": "pgn", "variant": "standard", "initial_fen": fen, "chess960": true, "moves": ["g2g3"] }),
        );
        let text = pgn["pgn"].as_str().unwrap();
        assert!(text.contains("[FEN \"bbqnnrkr/") && text.contains("[Variant \"Chess960\"]"), "{text}");
    }

    #[test]
    fn an_explosion_is_reported_and_ends_the_game() {
        // 1. Nf3 f6 2. Ne5 a6?? 3. Nxd7: the blast on d7 takes the king on e8.
        let moves = ["g1f3", "f7f6", "f3e5", "a7a6", "e5d7"];
        let answer = call(json!({ "op": "position", "variant": "atomic", "moves": moves }));
        assert_eq!(answer["ok"], true, "{answer}");
        assert_eq!(answer["outcome"]["reason"], "explosion", "{answer}");
        assert_eq!(answer["outcome"]["result"], "1-0");
        assert!(answer["legal"].as_array().unwrap().is_empty());
        let exploded = answer["exploded"].as_array().unwrap();
        assert!(exploded.contains(&json!("e8")) && exploded.contains(&json!("d7")), "{answer}");
    }

    #[test]
    fn san_marks_check_and_mate_as_the_server_does() {
        // Fool's mate, and a check that is not mate.
        let mate = ["f2f3", "e7e5", "g2g4", "d8h4"];
        let answer = call(json!({ "op": "position", "variant": "standard", "moves": mate }));
        assert_eq!(answer["san"], json!(["f3", "e5", "g4", "Qh4#"]), "{answer}");
        let answer = call(json!({ "op": "position", "variant": "standard", "moves": ["e2e4", "f7f6", "d1h5"] }));
        assert_eq!(answer["san"][2], "Qh5+", "{answer}");
        // Atomic: the explosion that takes the king is mate.
        let moves = ["g1f3", "f7f6", "f3e5", "a7a6", "e5d7"];
        let answer = call(json!({ "op": "position", "variant": "atomic", "moves": moves }));
        assert_eq!(answer["san"][4], "Nxd7#", "{answer}");
    }

    #[test]
    fn a_replay_lists_every_position_with_its_blasts_and_checks() {
        let moves = ["g1f3", "f7f6", "f3e5", "a7a6", "e5d7"];
        let answer = call(json!({ "op": "replay", "variant": "atomic", "moves": moves }));
        assert_eq!(answer["ok"], true, "{answer}");
        let plies = answer["plies"].as_array().unwrap();
        assert_eq!(plies.len(), moves.len() + 1);
        assert_eq!(plies[0]["fen"], fogblast_rules::STARTING_FEN);
        assert!(plies[0]["san"].is_null());
        assert_eq!(plies[4]["exploded"], json!([]));
        let exploded = plies[5]["exploded"].as_array().unwrap();
        assert!(exploded.contains(&json!("e8")) && exploded.contains(&json!("d7")), "{answer}");
        assert_eq!(plies[5]["san"], "Nxd7#");
        let check = call(json!({ "op": "replay", "variant": "standard", "moves": ["e2e4", "f7f6", "d1h5"] }));
        assert_eq!(check["plies"][3]["check"], "e8", "{check}");
        assert!(check["plies"][2]["check"].is_null(), "{check}");
    }

    #[test]
    fn check_is_read_from_a_fen_except_in_fog() {
        let fen = "rnbqkbnr/ppppp1pp/5p2/7Q/4P3/8/PPPP1PPP/RNB1KBNR b KQkq - 1 2";
        assert_eq!(call(json!({ "op": "check", "variant": "standard", "fen": fen }))["check"], "e8");
        assert_eq!(call(json!({ "op": "check", "variant": "atomic", "fen": fen }))["check"], "e8");
        assert!(call(json!({ "op": "check", "variant": "fog", "fen": fen }))["check"].is_null());
        assert!(call(json!({ "op": "check", "variant": "standard", "fen": fogblast_rules::STARTING_FEN }))["check"]
            .is_null());
    }

    #[test]
    fn bad_requests_get_an_error_and_no_panic() {
        for request in [
            "not json",
            r#"{"op":"fly"}"#,
            r#"{"op":"position","variant":"fog"}"#,
            r#"{"op":"position","variant":"atomic","moves":["e2e5"]}"#,
            r#"{"op":"position","variant":"atomic","moves":["zz"]}"#,
            r#"{"op":"search","variant":"atomic","fen":"nonsense","depth":2}"#,
            r#"{"op":"check","variant":"atomic","fen":"nonsense"}"#,
            r#"{"op":"replay","variant":"atomic","moves":["e2e5"]}"#,
            r#"{"op":"best","variant":"atomic","level":"grandmaster"}"#,
        ] {
            let answer: Value = serde_json::from_str(&handle(request)).unwrap();
            assert_eq!(answer["ok"], false, "{request} → {answer}");
            assert!(answer["error"].as_str().is_some_and(|e| !e.is_empty()), "{answer}");
        }
    }

    #[test]
    fn the_computer_answers_with_a_legal_move_at_every_level() {
        for level in ["easy", "medium", "hard"] {
            let spec = json!({ "op": "best", "variant": "atomic", "moves": ["e2e4"], "level": level, "seed": 3 });
            let answer = call(spec);
            assert_eq!(answer["ok"], true, "{answer}");
            let position = call(json!({ "op": "position", "variant": "atomic", "moves": ["e2e4"] }));
            assert!(position["legal"].as_array().unwrap().contains(&answer["uci"]), "{level}: {answer}");
        }
    }

    #[test]
    fn a_fog_view_shows_only_what_the_player_sees() {
        let moves = ["e2e4", "e7e5", "d1h5"];
        let game = replay(&GameSpec {
            variant: "fog".into(),
            initial_fen: String::new(),
            moves: moves.iter().map(|m| m.to_string()).collect(),
            view: None,
            chess960: false,
        })
        .unwrap()
        .0;
        let truth = *game.position();
        for (viewer, color) in [("white", Color::White), ("black", Color::Black)] {
            let answer = call(json!({ "op": "position", "variant": "fog", "moves": moves, "view": viewer }));
            assert_eq!(answer["ok"], true, "{answer}");
            let seen = truth.visible_squares(color);
            let shown: Vec<String> =
                answer["visible"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect();
            assert_eq!(shown.len(), seen.count());
            let setup = answer["fen"].as_str().unwrap().parse::<Fen>().unwrap().0;
            for (sq, piece) in setup.board.pieces() {
                assert!(seen.contains(sq), "{viewer} is shown {sq}");
                assert_eq!(truth.board().piece_at(sq), Some(piece));
            }
            // The opponent's moves are unknown to each side.
            for (ply, uci) in answer["moves"].as_array().unwrap().iter().enumerate() {
                let own = (ply % 2 == 0) == (color == Color::White);
                assert_eq!(uci.is_null(), !own, "{viewer}: ply {ply} {uci}");
            }
            let to_move = color == truth.turn();
            assert_eq!(answer["legal"].as_array().unwrap().is_empty(), !to_move, "{viewer}: {answer}");
        }
    }

    #[test]
    fn the_fog_computer_plays_a_legal_move() {
        let moves = ["e2e4", "e7e5"];
        let answer = call(json!({ "op": "best", "variant": "fog", "moves": moves, "level": "easy", "seed": 5 }));
        assert_eq!(answer["ok"], true, "{answer}");
        let position = call(json!({ "op": "position", "variant": "fog", "moves": moves, "view": "white" }));
        assert!(position["legal"].as_array().unwrap().contains(&answer["uci"]), "{answer}");
    }

    #[test]
    fn a_finished_game_exports_as_pgn() {
        let moves = ["g1f3", "f7f6", "f3e5", "a7a6", "e5d7"];
        let answer = call(json!({
            "op": "pgn", "variant": "atomic", "moves": moves, "white": "You", "black": "Computer (easy)",
        }));
        assert_eq!(answer["ok"], true, "{answer}");
        let pgn = answer["pgn"].as_str().unwrap();
        assert!(pgn.contains("[Variant \"Atomic\"]"), "{pgn}");
        assert!(pgn.contains("[Result \"1-0\"]"), "{pgn}");
        assert!(pgn.contains("3. Nxd7#"), "{pgn}");
    }
}
