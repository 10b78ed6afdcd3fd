//! What the matchmaker tells players and gateways through the bus, as the
//! typed notices of `fogblast.notices.v1`: a pairing, a seek gone without
//! one, a pairing given up, and the lobby after each change. Gateways write
//! the WebSocket frames (`paired`, `seek_cancelled`, `error`, `lobby`); the
//! matchmaker only says what happened.

use bytes::Bytes;
use fogblast_proto::error::ErrorCode;
use fogblast_proto::game::{ClockSettings, Color};
use fogblast_proto::notices::{
    player_notice, LobbyChanged, Opponent, Paired, PairingFailed, PlayerNotice, SeekCancelled,
};
use prost::Message;

use crate::core::to_board;
use crate::pool::PoolKey;
use crate::store::{BoardRecord, PendingPairing};

fn encode(notice: player_notice::Notice) -> Bytes {
    Bytes::from(PlayerNotice { notice: Some(notice) }.encode_to_vec())
}

/// One side's notice of a pairing: the game, their colour, the pool's
/// settings and the opponent.
pub fn paired(pairing: &PendingPairing, pool: &PoolKey, white: bool) -> Bytes {
    let (me, opponent) = if white { (&pairing.white, &pairing.black) } else { (&pairing.black, &pairing.white) };
    encode(player_notice::Notice::Paired(Paired {
        game_id: pairing.game.clone(),
        color: if white { Color::White } else { Color::Black } as i32,
        variant: pool.variant as i32,
        clock: pool.clock.map(|(initial_ms, increment_ms)| ClockSettings { initial_ms, increment_ms }),
        rated: pool.rated,
        rating: me.rating,
        opponent: Some(Opponent {
            player_id: opponent.player.clone(),
            name: opponent.name.clone(),
            rating: opponent.rating,
        }),
        tournament_id: String::new(),
    }))
}

/// Tells a player their seek is gone without a pairing.
pub fn seek_cancelled(reason: &str) -> Bytes {
    encode(player_notice::Notice::SeekCancelled(SeekCancelled { reason: reason.to_owned() }))
}

/// Tells a player their pairing was given up.
pub fn pairing_failed(code: ErrorCode, message: &str) -> Bytes {
    encode(player_notice::Notice::PairingFailed(PairingFailed { code: code as i32, message: message.to_owned() }))
}

/// The lobby at `version`: every open board, in the order given.
pub fn lobby(version: u64, boards: &[BoardRecord]) -> Bytes {
    Bytes::from(LobbyChanged { version, open: boards.iter().map(to_board).collect() }.encode_to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SeatPlan;
    use fogblast_proto::game::{ColorChoice, Variant};

    fn seat(player: &str, rating: u32) -> SeatPlan {
        SeatPlan { seek: "s".into(), player: player.into(), name: format!("{player}!"), rating, waited_ms: 5 }
    }

    fn read(bytes: Bytes) -> player_notice::Notice {
        PlayerNotice::decode(bytes).unwrap().notice.unwrap()
    }

    #[test]
    fn paired_notices_name_the_game_the_colour_and_the_opponent() {
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
        let player_notice::Notice::Paired(white) = read(paired(&pairing, &pool, true)) else { panic!("not paired") };
        assert_eq!((white.game_id.as_str(), white.color(), white.variant()), ("g1", Color::White, Variant::Atomic));
        assert_eq!((white.rating, white.opponent.as_ref().unwrap().player_id.as_str()), (1500, "b1"));
        assert_eq!(white.clock, Some(ClockSettings { initial_ms: 180_000, increment_ms: 2_000 }));
        let player_notice::Notice::Paired(black) = read(paired(&pairing, &pool, false)) else { panic!("not paired") };
        assert_eq!((black.color(), black.opponent.unwrap().rating), (Color::Black, 1500));
    }

    #[test]
    fn lobby_notices_carry_the_version_and_every_board() {
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
            address: "192.0.2.1".into(),
        };
        let lobby = LobbyChanged::decode(lobby(7, &[board])).unwrap();
        assert_eq!((lobby.version, lobby.open.len()), (7, 1));
        let open = &lobby.open[0];
        assert_eq!(
            (open.code.as_str(), open.variant(), open.color()),
            ("ABCDEFGH", Variant::Fog, ColorChoice::ChooseRandom)
        );
        assert_eq!(open.clock, None);
        assert_eq!(open.address, "", "the creator's address stays in the matchmaker");
    }
}
