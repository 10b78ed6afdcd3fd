//! Never leak the fog: over many random fog-of-war games, every payload the
//! service would send (each move event and each full state, for each seat
//! and for spectators) shows only what that audience may see. A seat's
//! board holds pieces only on squares it sees, and exactly the true pieces
//! there; it learns the opponent's moves only as "a move was played";
//! spectators see no pieces and no moves; and once the game ends everyone
//! gets the whole game. Between moves, random takebacks (always refused),
//! draw offers and answers, and players gone and back show no more.

mod support;

use std::str::FromStr;
use std::time::Duration;

use fogblast_game_service::audience::{event_for_all, state_for, Viewer};
use fogblast_game_service::commands::{apply, Command, Outcome};
use fogblast_game_service::create::{new_record, NewGame};
use fogblast_game_service::refusal::CommandError;
use fogblast_game_service::{LiveGame, Timeouts};
use fogblast_proto::game::event_payload::Kind;
use fogblast_proto::game::{
    watch_event, ColorChoice, EventPayload, GameState, MoveEvent, OfferAction, Status, Variant as WireVariant,
};
use fogblast_proto::ids::{GameId, PlayerId};
use fogblast_rules::{Bitboard, Color, Fen, Position, Square, Variant};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const WHITE: &str = "white-player";
const BLACK: &str = "black-player";

fn player(color: Color) -> PlayerId {
    PlayerId::parse(if color == Color::White { WHITE } else { BLACK }).unwrap()
}

fn new_fog_game(rng: &mut StdRng) -> LiveGame {
    let spec = NewGame {
        player: player(Color::White),
        name: "w".into(),
        variant: Variant::Fog,
        chess960: false,
        chess960_position: None,
        color: ColorChoice::ChooseWhite,
        clock: None,
        computer: None,
        rated: false,
        tournament: String::new(),
    };
    let (record, _) = new_record(&GameId::parse("fog1").unwrap(), "CODE2345", &spec, 1_000, rng);
    let live = LiveGame::from_record(record).unwrap();
    let joined =
        apply(&live, Command::Join { player: player(Color::Black), name: "b".into() }, 1_000, &Timeouts::default());
    match joined.unwrap() {
        Outcome::Applied(applied) => applied.live,
        other => panic!("join did nothing: {other:?}"),
    }
}

fn squares(names: &[String]) -> Bitboard {
    names.iter().fold(Bitboard::EMPTY, |acc, name| acc | Square::from_str(name).expect("a square name"))
}

/// The pieces a FEN shows, as (square, piece char) pairs.
fn shown(fen: &str) -> Vec<(Square, char)> {
    let setup = Fen::from_str(fen).expect("payload FENs parse").0;
    setup.board.pieces().map(|(sq, piece)| (sq, piece.char())).collect()
}

/// A seat's board: exactly the true pieces on the squares it sees, nothing elsewhere.
fn check_seat_board(truth: &Position, color: Color, fen: &str, visible: &[String]) {
    let visible = squares(visible);
    assert_eq!(visible, truth.visible_squares(color), "visible squares differ from the rules' view");
    for (sq, piece) in shown(fen) {
        assert!(visible.contains(sq), "{color:?} is shown a piece on hidden {sq}: {fen}");
        assert_eq!(truth.board().piece_at(sq).map(|p| p.char()), Some(piece), "wrong piece on {sq}");
    }
    for sq in visible {
        if let Some(piece) = truth.board().piece_at(sq) {
            assert!(shown(fen).contains(&(sq, piece.char())), "{color:?} does not see its visible {sq}");
        }
    }
}

/// A seat's legal moves: the true legal moves when it is to move in a game
/// being played, none otherwise; every one lands on a square it sees.
fn check_legal(truth: &Position, playing: bool, color: Color, legal: &[String]) {
    if !playing || truth.turn() != color {
        assert!(legal.is_empty(), "{color:?} was sent moves while not to move: {legal:?}");
        return;
    }
    let mut expected: Vec<String> =
        truth.legal_moves().iter().map(|m| m.to_uci(fogblast_rules::CastlingMode::Standard).to_string()).collect();
    let mut sent = legal.to_vec();
    expected.sort();
    sent.sort();
    assert_eq!(sent, expected, "{color:?} was sent the wrong legal moves");
    let seen = truth.visible_squares(color);
    for uci in legal {
        let to = Square::from_str(&uci[2..4]).expect("a destination square");
        assert!(seen.contains(to), "{color:?}'s legal move {uci} lands on hidden {to}");
    }
}

fn check_spectator_board(fen: &str, visible: &[String]) {
    assert!(shown(fen).is_empty(), "spectators were shown pieces: {fen}");
    assert!(visible.is_empty(), "spectators were told visible squares");
}

fn move_event(payload: &Option<EventPayload>) -> &MoveEvent {
    match payload.as_ref().and_then(|p| p.kind.as_ref()) {
        Some(Kind::Move(event)) => event,
        other => panic!("expected a move event, got {other:?}"),
    }
}

fn check_state(live: &LiveGame, state: &GameState, viewer: Viewer) {
    let truth = live.game.position();
    if live.status() == Status::Ended {
        assert_eq!(state.fen, live.fen(), "the fog lifts at the end");
        assert!(state.moves.iter().all(|m| m.uci.is_some()), "the whole move list at the end");
        return;
    }
    match viewer {
        Viewer::Seat(color) => {
            check_seat_board(truth, color, &state.fen, &state.visible);
            check_legal(truth, live.status() == Status::Playing, color, &state.legal);
            for (ply, view) in state.moves.iter().enumerate() {
                let mover = if ply.is_multiple_of(2) { Color::White } else { Color::Black };
                assert_eq!(view.uci.is_some(), mover == color, "ply {ply} known to {color:?}?");
            }
        }
        Viewer::Spectator => {
            check_spectator_board(&state.fen, &state.visible);
            assert!(state.legal.is_empty(), "spectators were sent legal moves");
            assert!(state.moves.iter().all(|m| m.uci.is_none()), "spectators were told a move");
        }
    }
}

/// Plays one random fog game through the command layer, checking every payload.
/// Commands other than moves between two moves (takebacks, draw offers
/// and answers, a player gone and back), each followed by every viewer's
/// state as a resume would send it: a takeback is refused without a trace,
/// and nothing shows a seat more than it sees at that ply.
fn probe_between_moves(live: &mut LiveGame, version: &mut u64, rng: &mut StdRng, now: u64, timeouts: &Timeouts) {
    for _ in 0..rng.random_range(0..4) {
        if live.status() != Status::Playing {
            return;
        }
        let seat = if rng.random_bool(0.5) { Color::White } else { Color::Black };
        let action = [OfferAction::Offer, OfferAction::Accept, OfferAction::Decline][rng.random_range(0..3)];
        let command = match rng.random_range(0..3) {
            0 => Command::Takeback { player: player(seat), action },
            // Accepting a draw would end the game: offers and refusals only.
            1 => Command::Draw {
                player: player(seat),
                action: if action == OfferAction::Accept { OfferAction::Decline } else { action },
            },
            _ => Command::Presence { player: player(seat), connected: rng.random_bool(0.5), lease_ms: 0 },
        };
        let takeback = matches!(command, Command::Takeback { .. });
        match apply(live, command, now, timeouts) {
            Err(refusal) if takeback => assert_eq!(refusal, CommandError::NoTakebacksInFog),
            Err(_) | Ok(Outcome::AlreadyPlayed | Outcome::Unchanged) => {}
            Ok(Outcome::Applied(applied)) => {
                assert!(!takeback, "a takeback was applied in fog of war");
                *live = applied.live;
                for (i, event) in applied.events.iter().enumerate() {
                    let audience = event_for_all(live, event, *version + 1 + i as u64, now, timeouts);
                    for (payload, viewer) in [
                        (&audience.white, Viewer::Seat(Color::White)),
                        (&audience.black, Viewer::Seat(Color::Black)),
                        (&audience.spectators, Viewer::Spectator),
                    ] {
                        match payload.as_ref().and_then(|p| p.kind.as_ref()) {
                            Some(Kind::State(state)) => check_state(live, state, viewer),
                            Some(Kind::Offer(_) | Kind::Presence(_)) | None => {}
                            // Offering a draw while the opponent's offer
                            // stands agrees to it: the fog lifts at the end.
                            Some(Kind::End(_)) => assert_eq!(live.status(), Status::Ended),
                            other => panic!("{other:?} from a command that is not a move"),
                        }
                    }
                }
                *version += applied.events.len() as u64;
            }
        }
        for viewer in Viewer::ALL {
            check_state(live, &state_for(live, *version, viewer, now, timeouts), viewer);
        }
    }
}

fn play_and_check(seed: u64, max_plies: usize) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut live = new_fog_game(&mut rng);
    let mut version = 1;
    let timeouts = Timeouts::default();
    for ply in 0..max_plies {
        if live.status() != Status::Playing {
            break;
        }
        probe_between_moves(&mut live, &mut version, &mut rng, 2_000 + ply as u64, &timeouts);
        if live.status() != Status::Playing {
            break;
        }
        let before = *live.game.position();
        let moves = before.legal_moves();
        // Prefer captures now and then, so games reach losses in the fog.
        let captures: Vec<_> = moves.iter().filter(|m| before.board().occupied().contains(m.to())).collect();
        let m = if !captures.is_empty() && rng.random_bool(0.5) {
            *captures[rng.random_range(0..captures.len())]
        } else {
            moves[rng.random_range(0..moves.len())]
        };
        let mover = before.turn();
        let uci = m.to_uci(fogblast_rules::CastlingMode::Standard).to_string();
        let command =
            Command::Move { player: player(mover), uci: uci.clone(), ply: ply as u32, lag_ms: 0, waited_ms: 0 };
        let Outcome::Applied(applied) = apply(&live, command, 2_000 + ply as u64, &timeouts).unwrap() else {
            panic!("a legal move was not applied");
        };
        live = applied.live;
        let truth = *live.game.position();
        for (i, event) in applied.events.iter().enumerate() {
            let v = version + 1 + i as u64;
            let audience = event_for_all(&live, event, v, 3_000, &timeouts);
            match audience.white.as_ref().and_then(|p| p.kind.as_ref()) {
                Some(Kind::Move(_)) => {
                    let [white, black] = [&audience.white, &audience.black].map(move_event);
                    let spectators = move_event(&audience.spectators);
                    let (own, other) = if mover == Color::White { (white, black) } else { (black, white) };
                    assert_eq!(own.uci.as_deref(), Some(uci.as_str()), "the mover sees its own move");
                    assert_eq!(other.uci, None, "the opponent learned the move text");
                    assert_eq!(other.san, None, "the opponent learned the move in SAN");
                    assert_eq!(spectators.uci, None, "spectators learned the move");
                    check_seat_board(&truth, mover, &own.fen, &own.visible);
                    check_seat_board(&truth, !mover, &other.fen, &other.visible);
                    check_spectator_board(&spectators.fen, &spectators.visible);
                    let playing = live.status() == Status::Playing;
                    check_legal(&truth, playing, mover, &own.legal);
                    check_legal(&truth, playing, !mover, &other.legal);
                    assert!(spectators.legal.is_empty(), "spectators were sent legal moves");
                    assert!(own.lost.is_empty() && spectators.lost.is_empty());
                    assert!(own.exploded.is_empty() && other.exploded.is_empty() && spectators.exploded.is_empty());
                    // Lost squares: only the receiver's own pieces, only where it no longer sees.
                    let hidden = !truth.visible_squares(!mover);
                    for sq in squares(&other.lost) {
                        assert!(hidden.contains(sq), "a lost piece flagged on a square still seen");
                        assert_eq!(before.board().color_at(sq), Some(!mover), "flagged a square it had no piece on");
                    }
                }
                Some(Kind::End(end)) => {
                    assert_eq!(end.moves, live.record.moves, "the end event carries the whole game");
                    assert_eq!(end.fen, live.fen());
                    assert_eq!(audience.white, audience.black);
                    assert_eq!(audience.white, audience.spectators);
                }
                other => panic!("unexpected event after a move: {other:?}"),
            }
        }
        version += applied.events.len() as u64;
        for viewer in Viewer::ALL {
            check_state(&live, &state_for(&live, version, viewer, 3_000, &timeouts), viewer);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn fog_payloads_never_show_a_hidden_square(seed in any::<u64>()) {
        play_and_check(seed, 300);
    }
}

#[test]
fn many_fixed_games_reach_their_end_without_a_leak() {
    for seed in 0..40 {
        play_and_check(seed, 600);
    }
}

/// The same checks on what a shard actually sends: random fog games played
/// through real shards on Redis, every payload of every event read back
/// from a Watch stream and judged against the game replayed from the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fog_payloads_on_the_wire_never_show_a_hidden_square() {
    let backend = support::Backend::distributed("fog-wire");
    let _a = support::ShardProcess::start(&backend, "a", support::test_config()).await;
    let _b = support::ShardProcess::start(&backend, "b", support::test_config()).await;
    let router = support::Router::new(&backend).await;
    let mut rng = StdRng::seed_from_u64(99);
    for _ in 0..6 {
        let (game, _) = router.start_game(WireVariant::Fog, WHITE, BLACK, None).await;
        let mut truth = fogblast_rules::Game::new(Position::new(Variant::Fog));
        while truth.outcome().is_none() && truth.ply() < 300 {
            let moves = truth.position().legal_moves();
            let m = moves[rng.random_range(0..moves.len())];
            let player = if truth.ply().is_multiple_of(2) { WHITE } else { BLACK };
            let uci = m.to_uci(fogblast_rules::CastlingMode::Standard).to_string();
            router.make_move(&game, player, &uci, truth.ply() as u32).await.unwrap();
            truth.play(m).unwrap();
        }
        let ended = truth.outcome().is_some();
        let plies = truth.ply();
        // The seat event and one event per move, plus the end if it came.
        let expected = 1 + plies + usize::from(ended);
        let events = router.watch_events(&game, 1, expected, Duration::from_secs(5)).await;
        assert_eq!(events.len(), expected, "every event arrives");
        let mut replay = fogblast_rules::Game::new(Position::new(Variant::Fog));
        for event in events {
            let Some(watch_event::Kind::Event(audience)) = event.kind else { panic!("no snapshot expected") };
            let Some(Kind::Move(white)) = audience.white.as_ref().and_then(|p| p.kind.clone()) else { continue };
            let mover = replay.position().turn();
            let uci = truth.moves()[replay.ply()].to_uci(fogblast_rules::CastlingMode::Standard).to_string();
            replay.play_uci(&uci).unwrap();
            let after = *replay.position();
            let black = move_event(&audience.black).clone();
            let spectators = move_event(&audience.spectators).clone();
            let (own, other) = if mover == Color::White { (&white, &black) } else { (&black, &white) };
            assert_eq!(own.uci.as_deref(), Some(uci.as_str()));
            assert_eq!((other.uci.as_ref(), spectators.uci.as_ref()), (None, None), "a move text leaked");
            check_seat_board(&after, mover, &own.fen, &own.visible);
            check_seat_board(&after, !mover, &other.fen, &other.visible);
            check_spectator_board(&spectators.fen, &spectators.visible);
        }
        assert_eq!(replay.ply(), plies, "every move was checked");
        if !ended {
            let spectator = router.state(&game, "").await;
            check_spectator_board(&spectator.fen, &spectator.visible);
            assert!(spectator.moves.iter().all(|m| m.uci.is_none()));
        }
    }
}
