//! Whole games through an in-process sandbox: two game shards and two
//! gateways, the services' own `run()` on loopback, with players on
//! different gateways. An atomic game is played to an explosion
//! and every player must see every move and the end; a fog-of-war game is
//! played to a king capture while spectators watch, and no frame may show
//! a seat a piece it cannot see, or a spectator any piece or move, until
//! the end lifts the fog. The lines are found with the rules crate, which
//! also says what every frame must show.

use crate::support::{find_line, fog_view, pieces, play, positions, start_game, strings, t, Client};
use fogblast_rules::{Color, Fen, Variant, WinReason};
use fogblast_sandbox::Sandbox;
use serde_json::{json, Value};

/// The versions of `frames` rise strictly.
fn assert_rising(name: &str, frames: &[Value]) {
    let versions: Vec<u64> = frames.iter().map(|f| f["v"].as_u64().expect("a version")).collect();
    assert!(versions.windows(2).all(|w| w[0] < w[1]), "{name}: versions not rising: {versions:?}");
}

#[tokio::test]
async fn atomic_game_to_an_explosion() {
    let cluster = Sandbox::builder().shards(2).gateways(2).embedded().start().await.expect("the sandbox starts");
    let line = find_line(Variant::Atomic, WinReason::KingExploded, 6, 40);
    let boards = positions(Variant::Atomic, &line.moves);
    let mut white = Client::join("white", cluster.gateway(0), None).await;
    let mut black = Client::join("black", cluster.gateway(1), None).await;
    let game = start_game(&mut white, &mut black, "atomic").await;
    play(&mut white, &mut black, &game, &line.moves, 0, line.moves.len()).await;

    for player in [&mut white, &mut black] {
        let end = player.expect("end").await;
        let moves = player.moves();
        assert_eq!(moves.len(), line.moves.len(), "{}: one move frame per move", player.name);
        for (ply, frame) in moves.iter().enumerate() {
            assert_eq!(frame["game"], game.as_str());
            assert_eq!(frame["ply"], ply, "{}: {frame}", player.name);
            assert_eq!(frame["uci"], line.moves[ply].as_str(), "{}: {frame}", player.name);
            let fen = Fen::from_position(&boards[ply + 1]).to_string();
            assert_eq!(frame["fen"], fen.as_str(), "{}: the position after ply {ply}", player.name);
            // The seat to move next is sent its legal moves, until the game ends.
            let after = &boards[ply + 1];
            let to_move = if after.turn() == Color::White { "white" } else { "black" };
            if player.name == to_move && ply + 1 < line.moves.len() {
                let mut expected: Vec<String> = after
                    .legal_moves()
                    .iter()
                    .map(|m| m.to_uci(fogblast_rules::CastlingMode::Standard).to_string())
                    .collect();
                let mut sent = strings(&frame["legal"]);
                expected.sort();
                sent.sort();
                assert_eq!(sent, expected, "{}: legal moves after ply {ply}", player.name);
            } else {
                assert!(frame.get("legal").is_none(), "{}: legal moves while not to move: {frame}", player.name);
            }
        }
        assert!(moves.last().unwrap()["exploded"].as_array().is_some_and(|e| !e.is_empty()), "the last move explodes");
        assert_rising(&player.name, &moves);
        assert!(end["v"].as_u64() > moves.last().unwrap()["v"].as_u64(), "the end follows the last move");
        let end_at = player.log.iter().position(|f| t(f) == "end").unwrap();
        let last_move_at = player.log.iter().rposition(|f| t(f) == "move").unwrap();
        assert!(last_move_at < end_at, "{}: the end frame comes after the last move", player.name);
        assert_eq!(end["game"], game.as_str());
        assert_eq!(end["reason"], "explosion", "{end}");
        assert_eq!(end["result"], line.result, "{end}");
        assert_eq!(strings(&end["moves"]), line.moves, "{end}");
        assert_eq!(end["fen"], line.fen.as_str(), "{end}");
    }

    // The game is over for good: another move is refused.
    white.send(json!({ "t": "move", "game": game, "uci": "a2a3", "ply": line.moves.len(), "id": "late" })).await;
    let refused = white.expect_error_for("late").await;
    assert!(["game_over", "stale_ply", "not_your_turn"].contains(&refused["code"].as_str().unwrap()), "{refused}");
}

#[tokio::test]
async fn fog_game_to_a_king_capture_under_watch() {
    let cluster = Sandbox::builder().shards(2).gateways(2).embedded().start().await.expect("the sandbox starts");
    let line = find_line(Variant::Fog, WinReason::KingCaptured, 10, 80);
    let boards = positions(Variant::Fog, &line.moves);
    let mut white = Client::join("white", cluster.gateway(0), None).await;
    let mut black = Client::join("black", cluster.gateway(1), None).await;
    let game = start_game(&mut white, &mut black, "fog").await;
    // One spectator shares a gateway (and its feed) with each seat.
    let mut spectators = Vec::new();
    for (i, gateway) in [cluster.gateway(0), cluster.gateway(1)].into_iter().enumerate() {
        let mut spectator = Client::join(&format!("spectator-{i}"), gateway, None).await;
        spectator.send(json!({ "t": "watch", "game": game })).await;
        let state = spectator.expect("state").await;
        assert_eq!((state["you"].as_str(), state["status"].as_str()), (Some("spectator"), Some("playing")), "{state}");
        spectators.push(spectator);
    }
    play(&mut white, &mut black, &game, &line.moves, 0, line.moves.len()).await;

    for (seat, player) in [(Color::White, &mut white), (Color::Black, &mut black)] {
        let end = player.expect("end").await;
        let moves = player.moves();
        assert_eq!(moves.len(), line.moves.len(), "{}: one move frame per move", player.name);
        for (ply, frame) in moves.iter().enumerate() {
            assert_eq!(frame["ply"], ply);
            let mover = if ply % 2 == 0 { Color::White } else { Color::Black };
            if mover == seat {
                assert_eq!(frame["uci"], line.moves[ply].as_str(), "{}: its own move, {frame}", player.name);
            } else {
                assert_eq!(frame["uci"], Value::Null, "{}: the opponent's move is hidden, {frame}", player.name);
                assert!(
                    frame.get("san").is_none_or(Value::is_null),
                    "{}: no SAN of a hidden move, {frame}",
                    player.name
                );
            }
            let shown = pieces(frame["fen"].as_str().expect("a fen"));
            let visible = strings(&frame["visible"]);
            for square in shown.keys() {
                assert!(visible.contains(square), "{}: a piece on {square}, which it cannot see: {frame}", player.name);
            }
            // Exactly what the rules let this seat see, no more, no less.
            let (expected, expected_visible) = fog_view(&boards[ply + 1], seat);
            assert_eq!(shown, expected, "{}: the pieces after ply {ply}", player.name);
            assert_eq!(visible, expected_visible, "{}: the visible squares after ply {ply}", player.name);
        }
        assert_rising(&player.name, &moves);
        assert_eq!(end["reason"], "king_captured", "{end}");
        assert_eq!(end["result"], line.result, "{end}");
        assert_eq!(strings(&end["moves"]), line.moves, "the fog lifts at the end: {end}");
        assert_eq!(end["fen"], line.fen.as_str(), "{end}");
    }

    for spectator in &mut spectators {
        let end = spectator.expect("end").await;
        let end_at = spectator.log.iter().position(|f| t(f) == "end").unwrap();
        for frame in &spectator.log[..end_at] {
            if let Some(fen) = frame.get("fen").and_then(Value::as_str) {
                assert!(pieces(fen).is_empty(), "{}: a piece before the end: {frame}", spectator.name);
            }
            assert!(frame.get("uci").is_none_or(Value::is_null), "{}: a move before the end: {frame}", spectator.name);
            assert!(frame.get("san").is_none_or(Value::is_null), "{}: a move before the end: {frame}", spectator.name);
            let no_moves = frame["moves"].as_array().is_none_or(|m| m.iter().all(Value::is_null));
            assert!(no_moves, "{}: a move before the end: {frame}", spectator.name);
            for key in ["visible", "exploded", "lost"] {
                assert!(strings(&frame[key]).is_empty(), "{}: squares before the end: {frame}", spectator.name);
            }
        }
        let moves: Vec<Value> = spectator.moves();
        assert!(moves.len() <= line.moves.len(), "{}: at most one frame per move", spectator.name);
        assert_rising(&spectator.name, &moves);
        assert_eq!(end["reason"], "king_captured", "{end}");
        assert_eq!(end["result"], line.result, "{end}");
        assert_eq!(strings(&end["moves"]), line.moves, "{}: the whole move list at the end", spectator.name);
        assert_eq!(end["fen"], line.fen.as_str(), "{}: the final position at the end", spectator.name);
    }

    // Once over, the game shows everything to anyone.
    let (status, state) = crate::support::api_game(cluster.gateway(1), &game).await;
    assert_eq!(status, 200, "{state}");
    assert_eq!(state["status"], "ended", "{state}");
    assert_eq!(strings(&state["moves"]), line.moves, "{state}");
}

/// `give_time` from one player: both hear that the opponent's clock is
/// 15 s fuller, the giver's own clock untouched, and a state read after it
/// says the same; a game without a clock refuses it with `not_allowed`
/// and changes nothing.
#[tokio::test]
async fn time_given_reaches_both_players_clocks() {
    let cluster = Sandbox::builder().shards(2).gateways(2).embedded().start().await.expect("the sandbox starts");
    let mut white = Client::join("white", cluster.gateway(0), None).await;
    let mut black = Client::join("black", cluster.gateway(1), None).await;
    let game = crate::support::start_game_with_clock(&mut white, &mut black, "atomic", Some((60_000, 0))).await;
    let joined = version_in(&black, &game);
    black.send(json!({ "t": "give_time", "game": game, "id": "gift" })).await;
    for player in [&mut white, &mut black] {
        let gift = |f: &Value| t(f) == "time_given" && f["v"].as_u64() == Some(joined + 1);
        let given = player.expect_where("the gift", gift).await;
        assert_eq!((given["game"].as_str(), given["by"].as_str()), (Some(game.as_str()), Some("black")), "{given}");
        assert_eq!(given["clock"]["white_ms"], 75_000, "{}: {given}", player.name);
        assert_eq!(given["clock"]["black_ms"], 60_000, "{}: {given}", player.name);
    }
    black.send(json!({ "t": "watch", "game": game })).await;
    let state =
        black.expect_where("a state after the gift", |f| t(f) == "state" && f["v"].as_u64() == Some(joined + 1)).await;
    assert_eq!(
        (state["clock"]["white_ms"].as_u64(), state["clock"]["black_ms"].as_u64()),
        (Some(75_000), Some(60_000))
    );

    let untimed = start_game(&mut white, &mut black, "standard").await;
    let joined = version_in(&black, &untimed);
    white.send(json!({ "t": "give_time", "game": untimed, "id": "none" })).await;
    let refused = white.expect_error_for("none").await;
    assert_eq!(refused["code"], "not_allowed", "{refused}");
    white.send(json!({ "t": "move", "game": untimed, "uci": "e2e4", "ply": 0 })).await;
    let first = white.expect_where("the first move", |f| t(f) == "move" && f["game"] == untimed.as_str()).await;
    assert_eq!(first["v"].as_u64(), Some(joined + 1), "the refusal made no event");
}

/// A player on the Board API hears a gift of time at once: its game
/// stream sends a `gameState` with the new clock, as after a move.
#[tokio::test]
async fn time_given_reaches_a_board_api_stream_as_a_game_state() {
    let cluster = Sandbox::builder().embedded().start().await.expect("the sandbox starts");
    let mut white = Client::join("white", cluster.gateway(0), None).await;
    let mut black = Client::join("black", cluster.gateway(0), None).await;
    let game = crate::support::start_game_with_clock(&mut white, &mut black, "atomic", Some((60_000, 0))).await;
    let url = format!("http://{}/api/board/game/stream/{game}", cluster.gateway(0));
    let answer = reqwest::Client::new().get(url).bearer_auth(&black.token).send().await.expect("the stream opens");
    assert_eq!(answer.status(), 200);
    let mut lines = NdjsonLines { answer, buffer: Vec::new() };
    let full = lines.next_where(|line| line["type"] == "gameFull").await;
    assert_eq!(full["state"]["btime"], 60_000, "{full}");
    white.send(json!({ "t": "give_time", "game": game, "id": "gift" })).await;
    white.expect_where("the gift", |f| t(f) == "time_given").await;
    let state = lines.next_where(|line| line["type"] == "gameState").await;
    assert_eq!((state["wtime"].as_u64(), state["btime"].as_u64()), (Some(60_000), Some(75_000)), "{state}");
    assert_eq!(state["status"], "started", "{state}");
}

/// The JSON lines of a streamed answer, keep-alive blank lines skipped.
struct NdjsonLines {
    answer: reqwest::Response,
    buffer: Vec<u8>,
}

impl NdjsonLines {
    /// The next line that `wanted` accepts, read within the tests' wait.
    async fn next_where(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        let read = async {
            loop {
                while let Some(end) = self.buffer.iter().position(|&b| b == b'\n') {
                    let line: Vec<u8> = self.buffer.drain(..=end).collect();
                    let Ok(value) = serde_json::from_slice::<Value>(&line) else { continue };
                    if wanted(&value) {
                        return value;
                    }
                }
                let chunk = self.answer.chunk().await.expect("the stream reads").expect("the stream stays open");
                self.buffer.extend_from_slice(&chunk);
            }
        };
        tokio::time::timeout(crate::support::WAIT, read).await.expect("the line came within the wait")
    }
}

/// The latest version `client` has heard of in `game`.
fn version_in(client: &Client, game: &str) -> u64 {
    client.log.iter().filter(|f| f["game"] == game).filter_map(|f| f["v"].as_u64()).max().expect("a frame of the game")
}
