//! Fogblast's games written as lichess's Bot and Board API writes them:
//! variants, speeds, statuses, `gameFull`, `gameState`, the event stream's
//! games and challenges. A seat's view only: in fog of war the moves it may
//! not know are `????` and the position is the fogged one.

use fogblast_proto::game::{Audience, ClockSettings, Color, EndReason, GameState, Level, Player, Status, Variant};
use fogblast_proto::notices::Challenge;
use serde_json::{json, Value};

use super::ApiError;

/// A move the receiver may not know, in `moves`.
pub const HIDDEN_MOVE: &str = "????";

/// What lichess writes for a side without a clock.
const NO_CLOCK_MS: u64 = 2_147_483_647;

/// The variant a lichess key names, and whether it is Chess960.
pub fn parse_variant(key: Option<&str>) -> Result<(Variant, bool), ApiError> {
    let key = key.unwrap_or("standard");
    let (variant, chess960) = fogblast_rules::Variant::from_lichess_key(key).ok_or_else(|| {
        ApiError::bad(format!("variant {key:?} is not played here: standard, chess960, atomic or fogOfWar"))
    })?;
    Ok((variant.into(), chess960))
}

pub fn variant(variant: Variant, chess960: bool) -> Value {
    // A variant left unset is written as standard.
    let variant = fogblast_rules::Variant::try_from(variant).unwrap_or(fogblast_rules::Variant::Standard);
    json!({
        "key": variant.lichess_key(chess960),
        "name": variant.lichess_name(chess960),
        "short": variant.lichess_short_name(chess960),
    })
}

fn perf(variant: Variant, chess960: bool, clock: Option<&ClockSettings>) -> Value {
    match fogblast_rules::Variant::try_from(variant).unwrap_or(fogblast_rules::Variant::Standard) {
        fogblast_rules::Variant::Standard if !chess960 => json!({ "name": capitalized(speed(clock)) }),
        variant => json!({ "name": variant.lichess_name(chess960) }),
    }
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
}

/// Lichess's speed of a clock: by the estimated game length, initial time
/// plus 40 increments.
pub fn speed(clock: Option<&ClockSettings>) -> &'static str {
    let Some(clock) = clock else { return "correspondence" };
    let estimate_s = (u64::from(clock.initial_ms) + 40 * u64::from(clock.increment_ms)) / 1000;
    match estimate_s {
        0..29 => "ultraBullet",
        29..179 => "bullet",
        179..479 => "blitz",
        479..1499 => "rapid",
        _ => "classical",
    }
}

/// Lichess's aiLevel of a computer level, and back (1 to 8).
pub fn ai_level(level: Level) -> u32 {
    match level {
        Level::Easy => 1,
        Level::Medium => 4,
        Level::Hard | Level::Unspecified => 8,
    }
}

pub fn level_of(ai_level: u32) -> Result<Level, ApiError> {
    match ai_level {
        1..=3 => Ok(Level::Easy),
        4..=6 => Ok(Level::Medium),
        7..=8 => Ok(Level::Hard),
        _ => Err(ApiError::bad("level must be from 1 to 8")),
    }
}

/// Lichess's status name of a game, and its id.
pub fn status(state: &GameState) -> (&'static str, u32) {
    match state.status() {
        Status::Waiting | Status::Unspecified => ("created", 10),
        Status::Playing => ("started", 20),
        Status::Ended => match state.reason() {
            EndReason::Aborted => ("aborted", 25),
            EndReason::Checkmate => ("mate", 30),
            EndReason::Resign => ("resign", 31),
            EndReason::Stalemate => ("stalemate", 32),
            EndReason::Abandoned => ("timeout", 33),
            EndReason::Threefold | EndReason::FiftyMoves | EndReason::InsufficientMaterial | EndReason::Agreement => {
                ("draw", 34)
            }
            EndReason::Timeout => ("outoftime", 35),
            EndReason::Explosion | EndReason::KingCaptured | EndReason::NoMoves | EndReason::Unspecified => {
                ("variantEnd", 60)
            }
        },
    }
}

fn winner(state: &GameState) -> Option<&'static str> {
    match state.result.as_str() {
        "1-0" => Some("white"),
        "0-1" => Some("black"),
        _ => None,
    }
}

/// The receiver's colour, when it is seated.
pub fn seat(state: &GameState) -> Option<&'static str> {
    match state.audience() {
        Audience::WhiteSeat => Some("white"),
        Audience::BlackSeat => Some("black"),
        _ => None,
    }
}

fn moves(state: &GameState) -> Vec<&str> {
    state.moves.iter().map(|m| m.uci.as_deref().unwrap_or(HIDDEN_MOVE)).collect()
}

/// `gameState`: the moves, clocks, status and offers.
pub fn game_state(state: &GameState) -> Value {
    let (white_ms, black_ms) = state.clock.as_ref().map_or((NO_CLOCK_MS, NO_CLOCK_MS), |c| (c.white_ms, c.black_ms));
    let increment = state.clock_settings.as_ref().map_or(0, |c| c.increment_ms);
    let mut out = json!({
        "type": "gameState",
        "moves": moves(state).join(" "),
        "wtime": white_ms,
        "btime": black_ms,
        "winc": increment,
        "binc": increment,
        "status": status(state).0,
        "wdraw": state.draw_offer() == Color::White,
        "bdraw": state.draw_offer() == Color::Black,
        "wtakeback": state.takeback_offer() == Color::White,
        "btakeback": state.takeback_offer() == Color::Black,
        // Fogblast's additions: the position as the receiver sees it and
        // its legal moves (fog of war: the squares it sees too).
        "fen": state.fen,
        "legal": state.legal,
    });
    if let Some(winner) = winner(state) {
        out["winner"] = json!(winner);
    }
    if state.variant() == Variant::Fog && state.status() != Status::Ended {
        out["visible"] = json!(state.visible);
    }
    out
}

fn player(player: Option<&Player>) -> Value {
    match player {
        None => Value::Null,
        Some(p) if p.computer => json!({ "aiLevel": ai_level(p.level()), "name": p.name }),
        Some(p) => json!({ "id": p.id, "name": p.id, "title": "BOT", "rating": 1500 }),
    }
}

fn initial_fen(state: &GameState) -> String {
    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    if state.initial_fen.is_empty() || state.initial_fen == START {
        "startpos".to_owned()
    } else {
        state.initial_fen.clone()
    }
}

/// `gameFull`: the game's settings and players, then its state.
pub fn game_full(state: &GameState) -> Value {
    let clock = state.clock_settings.as_ref();
    let mut full = json!({
        "type": "gameFull",
        "id": state.game_id,
        "variant": variant(state.variant(), state.chess960),
        "speed": speed(clock),
        "perf": perf(state.variant(), state.chess960, clock),
        "rated": state.rated,
        "white": player(state.white.as_ref()),
        "black": player(state.black.as_ref()),
        "initialFen": initial_fen(state),
        "createdAt": state.created_at_ms,
        "clock": clock.map(|c| json!({ "initial": c.initial_ms, "increment": c.increment_ms })),
        "state": game_state(state),
    });
    if !state.tournament_id.is_empty() {
        full["tournamentId"] = json!(state.tournament_id);
    }
    full
}

/// A `chatLine`: lichess names the rooms `player` and `spectator`.
pub fn chat_line(line: &fogblast_protocol::ChatLine) -> Value {
    json!({ "type": "chatLine", "room": room_key(line.room), "username": line.name, "text": line.text })
}

fn room_key(room: fogblast_protocol::ChatRoom) -> &'static str {
    match room {
        fogblast_protocol::ChatRoom::Players => "player",
        fogblast_protocol::ChatRoom::Spectators => "spectator",
    }
}

/// The room a lichess key names.
pub fn parse_room(key: Option<&str>) -> Result<fogblast_protocol::ChatRoom, ApiError> {
    match key {
        Some("player") => Ok(fogblast_protocol::ChatRoom::Players),
        Some("spectator") => Ok(fogblast_protocol::ChatRoom::Spectators),
        _ => Err(ApiError::bad("room must be player or spectator")),
    }
}

/// The game of a `gameStart` or `gameFinish` event, from the receiver's seat.
pub fn event_game(state: &GameState, source: &str) -> Value {
    let color = seat(state).unwrap_or("white");
    let theirs = if color == "white" { &state.black } else { &state.white };
    let opponent = match theirs {
        Some(p) if p.computer => json!({ "id": null, "username": p.name, "ai": ai_level(p.level()) }),
        Some(p) => json!({ "id": p.id, "username": p.id, "rating": 1500 }),
        None => Value::Null,
    };
    let my_turn = !state.legal.is_empty();
    let (name, id) = status(state);
    let seconds_left = state.clock.as_ref().map(|c| if color == "white" { c.white_ms } else { c.black_ms } / 1000);
    let clock = state.clock_settings.as_ref();
    let variant = variant(state.variant(), state.chess960);
    let perf = perf(state.variant(), state.chess960, clock)["name"].as_str().map(str::to_lowercase);
    let mut game = json!({
        "gameId": state.game_id,
        "fullId": state.game_id,
        "id": state.game_id,
        "color": color,
        "fen": state.fen,
        "hasMoved": state.moves.len() >= if color == "white" { 1 } else { 2 },
        "isMyTurn": my_turn,
        "lastMove": state.moves.last().map(|m| m.uci.as_deref().unwrap_or(HIDDEN_MOVE)).unwrap_or(""),
        "opponent": opponent,
        "perf": perf,
        "rated": state.rated,
        "secondsLeft": seconds_left,
        "source": source,
        "status": { "id": id, "name": name },
        "speed": speed(clock),
        "variant": { "key": variant["key"], "name": variant["name"] },
        "compat": { "bot": true, "board": true },
    });
    if let Some(winner) = winner(state) {
        game["winner"] = json!(winner);
    }
    game
}

fn color_choice_name(choice: fogblast_proto::game::ColorChoice) -> &'static str {
    match choice {
        fogblast_proto::game::ColorChoice::ChooseWhite => "white",
        fogblast_proto::game::ColorChoice::ChooseBlack => "black",
        _ => "random",
    }
}

/// The colour the challenger plays: a random choice is drawn when the game
/// is made, and the challenge carries it.
fn final_color(challenge: &Challenge) -> &'static str {
    match challenge.challenger_color() {
        Color::Black => "black",
        _ => "white",
    }
}

/// A challenge as lichess writes it, from `me`'s side.
pub fn challenge(challenge: &Challenge, me: &str, base_url: &str) -> Value {
    let challenger_id = challenge.challenger.as_ref().map_or("", |c| c.player_id.as_str());
    let clock = challenge.clock.as_ref();
    let time_control = match clock {
        Some(c) => json!({
            "type": "clock",
            "limit": c.initial_ms / 1000,
            "increment": c.increment_ms / 1000,
            "show": format!("{}+{}", f64::from(c.initial_ms) / 60_000.0, c.increment_ms / 1000),
        }),
        None => json!({ "type": "unlimited" }),
    };
    json!({
        "id": challenge.id,
        "url": format!("{base_url}/g/{}", challenge.id),
        "status": "created",
        "challenger": { "id": challenger_id, "name": challenger_id, "title": "BOT", "rating": 1500, "online": true },
        "destUser": { "id": challenge.dest_id, "name": challenge.dest_id, "title": "BOT", "rating": 1500, "online": true },
        "variant": variant(challenge.variant(), challenge.chess960),
        "rated": challenge.rated,
        "speed": speed(clock),
        "timeControl": time_control,
        "color": color_choice_name(challenge.color()),
        // The challenger's colour once the game is made.
        "finalColor": final_color(challenge),
        "perf": perf(challenge.variant(), challenge.chess960, clock),
        "direction": if me == challenger_id { "out" } else { "in" },
        "gameId": challenge.game_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fogblast_proto::game::{ClockState, MoveView};

    #[test]
    fn speeds_follow_lichess_estimate() {
        let clock = |initial_s: u32, increment_s: u32| ClockSettings {
            initial_ms: initial_s * 1000,
            increment_ms: increment_s * 1000,
        };
        assert_eq!(speed(Some(&clock(15, 0))), "ultraBullet");
        assert_eq!(speed(Some(&clock(60, 0))), "bullet");
        assert_eq!(speed(Some(&clock(180, 2))), "blitz");
        assert_eq!(speed(Some(&clock(600, 0))), "rapid");
        assert_eq!(speed(Some(&clock(1800, 0))), "classical");
        assert_eq!(speed(None), "correspondence");
    }

    #[test]
    fn a_fog_seat_sees_hidden_moves_as_question_marks_and_no_more() {
        let state = GameState {
            game_id: "g".into(),
            variant: Variant::Fog as i32,
            audience: Audience::WhiteSeat as i32,
            status: Status::Playing as i32,
            moves: vec![MoveView { uci: Some("e2e4".into()) }, MoveView { uci: None }],
            fen: "8/8/8/8/4P3/8/PPPP1PPP/RNBQKBNR w KQ - 0 2".into(),
            visible: vec!["e5".into()],
            clock: Some(ClockState { white_ms: 1000, black_ms: 2000, ..Default::default() }),
            ..Default::default()
        };
        let out = game_state(&state);
        assert_eq!(out["moves"], "e2e4 ????");
        assert_eq!(out["wtime"], 1000);
        assert_eq!(out["visible"], json!(["e5"]));
        assert_eq!(out["status"], "started");
    }

    #[test]
    fn variant_keys_are_lichess_keys_and_fog_has_its_own() {
        assert_eq!(parse_variant(Some("atomic")).unwrap(), (Variant::Atomic, false));
        assert_eq!(parse_variant(Some("chess960")).unwrap(), (Variant::Standard, true));
        assert_eq!(parse_variant(None).unwrap(), (Variant::Standard, false));
        assert_eq!(parse_variant(Some("fogOfWar")).unwrap(), (Variant::Fog, false));
        assert!(parse_variant(Some("crazyhouse")).is_err());
        assert_eq!(variant(Variant::Fog, false)["key"], "fogOfWar");
    }

    #[test]
    fn an_ended_game_names_its_winner_and_lichess_status() {
        let state = GameState {
            status: Status::Ended as i32,
            reason: EndReason::Explosion as i32,
            result: "0-1".into(),
            ..Default::default()
        };
        let out = game_state(&state);
        assert_eq!(out["status"], "variantEnd");
        assert_eq!(out["winner"], "black");
    }
}
