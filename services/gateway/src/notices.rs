//! The notices other services send players through the bus
//! (`fogblast.notices.v1`), written as the protocol's frames. Publishers say
//! what happened; the gateway is the one place that knows how a frame looks,
//! so `paired`, `seek_cancelled`, `error`, `rating` and `lobby` are written
//! here with the typed frames of `fogblast-protocol`, like every other frame.

use fogblast_proto::matchmaker::Board;
use fogblast_proto::notices::{player_notice, LobbyChanged, Paired, PlayerNotice, RatingChanged};
use fogblast_protocol::convert::{color, color_choice};
use fogblast_protocol::{ColorChoice, LobbyFrame, OpenBoard, PairedOpponent, ServerFrame, TimeControl, Variant};
use prost::Message;

/// The frame for a player's notice as it arrived on `player.<id>`; `None`
/// for a payload that is not one, or a notice this gateway cannot write.
pub fn player_frame(payload: &[u8]) -> Option<ServerFrame> {
    let notice = PlayerNotice::decode(payload).ok()?.notice?;
    match notice {
        player_notice::Notice::Paired(paired) => paired_frame(paired),
        player_notice::Notice::SeekCancelled(cancelled) => {
            Some(ServerFrame::SeekCancelled { cancelled: None, reason: Some(cancelled.reason), id: None })
        }
        player_notice::Notice::PairingFailed(failed) => Some(ServerFrame::error(failed.code(), failed.message, None)),
        player_notice::Notice::RatingChanged(changed) => Some(rating_frame(changed)),
        // The bot API's events (`bot_api`): the WebSocket protocol has no frame for them.
        player_notice::Notice::Challenge(_)
        | player_notice::Notice::ChallengeGone(_)
        | player_notice::Notice::GameStarted(_) => None,
    }
}

fn paired_frame(paired: Paired) -> Option<ServerFrame> {
    let opponent = paired.opponent.as_ref()?;
    Some(ServerFrame::Paired {
        color: color(paired.color())?,
        variant: Variant::from(paired.variant()),
        clock: paired.clock.map(TimeControl::from),
        rated: paired.rated,
        rating: paired.rating,
        opponent: PairedOpponent {
            id: opponent.player_id.clone(),
            name: opponent.name.clone(),
            rating: opponent.rating,
        },
        tournament: Some(paired.tournament_id).filter(|id| !id.is_empty()),
        game: paired.game_id,
    })
}

/// Ratings are shown rounded, and the change is the difference of the two
/// shown values, so a player adding it up gets the number on the screen.
fn rating_frame(changed: RatingChanged) -> ServerFrame {
    let rating = changed.rating.round();
    ServerFrame::Rating {
        variant: Variant::from(changed.variant()),
        rating: rating as i64,
        deviation: changed.deviation.round() as i64,
        provisional: changed.provisional,
        diff: (rating - changed.previous_rating.round()) as i64,
        game: changed.game_id,
    }
}

/// A lobby notice as it arrived on `lobby`, with its version; `None` for a
/// payload that is not one.
pub fn lobby_notice(payload: &[u8]) -> Option<(u64, LobbyFrame)> {
    let lobby = LobbyChanged::decode(payload).ok()?;
    Some((lobby.version, lobby_frame(lobby.version, &lobby.open)))
}

/// The `lobby` frame of the boards at `version`, in the order given.
pub fn lobby_frame(version: u64, boards: &[Board]) -> LobbyFrame {
    LobbyFrame { v: version, open: boards.iter().map(open_board).collect(), id: None }
}

fn open_board(board: &Board) -> OpenBoard {
    OpenBoard {
        game: board.game_id.clone(),
        code: board.code.clone(),
        variant: Variant::from(board.variant()),
        clock: board.clock.map(TimeControl::from),
        // The matchmaker lists only boards whose creator chose a colour;
        // random is what an unset choice would have meant at the table.
        color: color_choice(board.color()).unwrap_or(ColorChoice::Random),
        rating: board.rating,
        rated: board.rated,
        player: board.player_id.clone(),
        name: board.name.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fogblast_proto::error::ErrorCode;
    use fogblast_proto::game::{ClockSettings, Color, ColorChoice as ProtoChoice, Variant as ProtoVariant};
    use fogblast_proto::notices::{Opponent, PairingFailed, SeekCancelled};

    fn player(notice: player_notice::Notice) -> String {
        let payload = PlayerNotice { notice: Some(notice) }.encode_to_vec();
        serde_json::to_string(&player_frame(&payload).expect("a frame")).unwrap()
    }

    // The expected strings are the examples of docs/protocol.md and
    // docs/matchmaker.md, byte for byte without their spaces.

    #[test]
    fn paired_is_written_as_documented() {
        let paired = Paired {
            game_id: "4vtrzhaexber".into(),
            color: Color::White as i32,
            variant: ProtoVariant::Atomic as i32,
            clock: Some(ClockSettings { initial_ms: 180_000, increment_ms: 2_000 }),
            rated: true,
            rating: 1562,
            opponent: Some(Opponent { player_id: "llrxnuj8w8x0wfhw".into(), name: "bob".into(), rating: 1604 }),
            tournament_id: String::new(),
        };
        assert_eq!(
            player(player_notice::Notice::Paired(paired)),
            r#"{"t":"paired","game":"4vtrzhaexber","color":"white","variant":"atomic","clock":{"initial_ms":180000,"increment_ms":2000},"rated":true,"rating":1562,"opponent":{"id":"llrxnuj8w8x0wfhw","name":"bob","rating":1604}}"#
        );
    }

    #[test]
    fn paired_without_a_clock_writes_null() {
        let paired = Paired {
            game_id: "g".into(),
            color: Color::Black as i32,
            variant: ProtoVariant::Fog as i32,
            clock: None,
            rated: false,
            rating: 1500,
            opponent: Some(Opponent { player_id: "o".into(), name: "n".into(), rating: 1490 }),
            tournament_id: String::new(),
        };
        assert_eq!(
            player(player_notice::Notice::Paired(paired)),
            r#"{"t":"paired","game":"g","color":"black","variant":"fog","clock":null,"rated":false,"rating":1500,"opponent":{"id":"o","name":"n","rating":1490}}"#
        );
    }

    #[test]
    fn a_pairing_without_a_colour_or_opponent_is_not_forwarded() {
        let paired = Paired { game_id: "g".into(), opponent: Some(Opponent::default()), ..Paired::default() };
        let payload = PlayerNotice { notice: Some(player_notice::Notice::Paired(paired)) }.encode_to_vec();
        assert_eq!(player_frame(&payload), None);
        let paired = Paired { game_id: "g".into(), color: Color::White as i32, ..Paired::default() };
        let payload = PlayerNotice { notice: Some(player_notice::Notice::Paired(paired)) }.encode_to_vec();
        assert_eq!(player_frame(&payload), None);
        assert_eq!(player_frame(b"{\"t\":\"paired\"}"), None, "JSON is not a notice");
    }

    #[test]
    fn an_expired_seek_is_written_as_documented() {
        let cancelled = SeekCancelled { reason: "expired".into() };
        assert_eq!(
            player(player_notice::Notice::SeekCancelled(cancelled)),
            r#"{"t":"seek_cancelled","reason":"expired"}"#
        );
    }

    #[test]
    fn a_failed_pairing_is_written_as_documented() {
        let failed = PairingFailed {
            code: ErrorCode::Unavailable as i32,
            message: "the paired game could not be started: seek again".into(),
        };
        assert_eq!(
            player(player_notice::Notice::PairingFailed(failed)),
            r#"{"t":"error","code":"unavailable","message":"the paired game could not be started: seek again"}"#
        );
    }

    #[test]
    fn a_rating_change_is_written_as_documented() {
        let changed = RatingChanged {
            game_id: "4vtrzhaexber".into(),
            variant: ProtoVariant::Atomic as i32,
            rating: 1561.6,
            deviation: 289.7,
            previous_rating: 1499.8,
            provisional: true,
        };
        assert_eq!(
            player(player_notice::Notice::RatingChanged(changed)),
            r#"{"t":"rating","variant":"atomic","rating":1562,"deviation":290,"provisional":true,"diff":62,"game":"4vtrzhaexber"}"#
        );
    }

    #[test]
    fn the_lobby_is_written_as_documented() {
        let board = Board {
            game_id: "eqnuuv7r462z".into(),
            code: "52R7AK6J".into(),
            variant: ProtoVariant::Standard as i32,
            clock: Some(ClockSettings { initial_ms: 300_000, increment_ms: 2_000 }),
            color: ProtoChoice::ChooseWhite as i32,
            rated: false,
            player_id: "7xzp6rfsvr99yl6w".into(),
            name: "alice".into(),
            rating: 1500,
            opened_ms: 1_700_000_000_000,
            address: String::new(),
        };
        let payload = LobbyChanged { version: 42, open: vec![board] }.encode_to_vec();
        let (version, frame) = lobby_notice(&payload).unwrap();
        assert_eq!(version, 42);
        assert_eq!(
            serde_json::to_string(&ServerFrame::Lobby(frame)).unwrap(),
            r#"{"t":"lobby","v":42,"open":[{"game":"eqnuuv7r462z","code":"52R7AK6J","variant":"standard","clock":{"initial_ms":300000,"increment_ms":2000},"color":"white","rating":1500,"rated":false,"player":"7xzp6rfsvr99yl6w","name":"alice"}]}"#
        );
        let empty = LobbyChanged { version: 43, open: vec![] }.encode_to_vec();
        let (_, frame) = lobby_notice(&empty).unwrap();
        assert_eq!(serde_json::to_string(&ServerFrame::Lobby(frame)).unwrap(), r#"{"t":"lobby","v":43,"open":[]}"#);
    }
}
