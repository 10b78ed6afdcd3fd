//! The WebSocket frames the matchmaker sends through the bus: gateways
//! forward whatever arrives on `player.<id>` to that player's sockets and
//! whatever arrives on `lobby` to the sockets that asked for the lobby, so
//! these are written here exactly as clients read them (the contract's
//! `paired` and `lobby`, plus the documented extensions).

use serde_json::{json, Value};

use crate::pool::PoolKey;
use crate::store::{BoardRecord, PendingPairing, SeatPlan};

/// The bus subject of a player's notifications.
pub fn player_subject(player: &str) -> String {
    format!("player.{player}")
}

/// The bus subject of lobby frames.
pub const LOBBY_SUBJECT: &str = "lobby";

fn clock_json(clock: Option<(u32, u32)>) -> Value {
    match clock {
        Some((initial_ms, increment_ms)) => json!({"initial_ms": initial_ms, "increment_ms": increment_ms}),
        None => Value::Null,
    }
}

fn seat_json(seat: &SeatPlan) -> Value {
    json!({"id": seat.player, "name": seat.name, "rating": seat.rating})
}

/// `paired` for one side of a pairing: the contract's `game` and `color`,
/// plus the pool's settings and the opponent.
pub fn paired(pairing: &PendingPairing, pool: &PoolKey, white: bool) -> String {
    let (me, opponent) = if white { (&pairing.white, &pairing.black) } else { (&pairing.black, &pairing.white) };
    json!({
        "t": "paired",
        "game": pairing.game,
        "color": if white { "white" } else { "black" },
        "variant": crate::pool::variant_name(pool.variant),
        "clock": clock_json(pool.clock),
        "rated": pool.rated,
        "rating": me.rating,
        "opponent": seat_json(opponent),
    })
    .to_string()
}

/// Tells a player their seek is gone without a pairing.
pub fn seek_cancelled(reason: &str) -> String {
    json!({"t": "seek_cancelled", "reason": reason}).to_string()
}

/// An `error` frame for a player whose pairing failed.
pub fn error(code: &str, message: &str) -> String {
    json!({"t": "error", "code": code, "message": message}).to_string()
}

/// One board as the `lobby` frame lists it.
pub fn board_json(board: &BoardRecord) -> Value {
    json!({
        "game": board.game,
        "code": board.code,
        "variant": board.variant,
        "clock": clock_json(board.clock),
        "color": board.color,
        "rating": board.rating,
        "rated": board.rated,
        "player": board.player,
        "name": board.name,
    })
}

/// `{"t":"lobby","v":N,"open":[...]}`.
pub fn lobby(version: u64, boards: &[BoardRecord]) -> String {
    let open: Vec<Value> = boards.iter().map(board_json).collect();
    json!({"t": "lobby", "v": version, "open": open}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fogblast_proto::game::Variant;

    fn seat(player: &str, rating: u32) -> SeatPlan {
        SeatPlan { seek: "s".into(), player: player.into(), name: format!("{player}!"), rating, waited_ms: 5 }
    }

    #[test]
    fn paired_frames_name_the_game_the_colour_and_the_opponent() {
        let pairing = PendingPairing {
            id: "x".into(),
            white: seat("w1", 1500),
            black: seat("b1", 1600),
            paired_ms: 1,
            stage: crate::store::Stage::Joined,
            game: "g1".into(),
            code: "C".into(),
        };
        let pool = PoolKey { variant: Variant::Atomic, clock: Some((180_000, 2_000)), rated: true };
        let white: Value = serde_json::from_str(&paired(&pairing, &pool, true)).unwrap();
        assert_eq!(white["t"], "paired");
        assert_eq!(white["game"], "g1");
        assert_eq!(white["color"], "white");
        assert_eq!(white["opponent"]["id"], "b1");
        assert_eq!(white["clock"]["increment_ms"], 2000);
        let black: Value = serde_json::from_str(&paired(&pairing, &pool, false)).unwrap();
        assert_eq!((black["color"].as_str(), black["opponent"]["rating"].as_u64()), (Some("black"), Some(1500)));
    }

    #[test]
    fn lobby_frames_list_the_contract_fields() {
        let board = BoardRecord {
            game: "g".into(),
            code: "ABCDEFGH".into(),
            variant: "fog".into(),
            clock: None,
            color: "random".into(),
            rated: false,
            player: "p".into(),
            name: "n".into(),
            rating: 1500,
            opened_ms: 1,
            expires_ms: 2,
        };
        let frame: Value = serde_json::from_str(&lobby(7, &[board])).unwrap();
        assert_eq!(frame["t"], "lobby");
        assert_eq!(frame["v"], 7);
        let open = &frame["open"][0];
        for field in ["code", "variant", "clock", "color", "rating"] {
            assert!(open.get(field).is_some(), "{field}");
        }
        assert!(open["clock"].is_null());
    }
}
