//! The command layer on its own, where time is whatever the test says: a
//! clock that runs only for the side to move, lag compensated within the
//! quota, a move that arrives after the flag, the timeouts that end games
//! nobody plays, offers and presence, reported and by lease.

use fogblast_game_service::commands::{apply, apply_in_place, Command, Event, InPlace, Outcome};
use fogblast_game_service::create::{new_record, NewGame};
use fogblast_game_service::deadlines::next_due;
use fogblast_game_service::refusal::CommandError;
use fogblast_game_service::{audience, LiveGame, Timeouts, Viewer};
use fogblast_proto::error::ErrorCode;
use fogblast_proto::game::{ChatRoom, ClockSettings, ColorChoice, EndReason, OfferAction, Status};
use fogblast_proto::ids::{GameId, PlayerId};
use fogblast_rules::{Color, Variant};
use rand::rngs::StdRng;
use rand::SeedableRng;

const START: u64 = 1_000_000;

fn id(name: &str) -> PlayerId {
    PlayerId::parse(name).unwrap()
}

fn timeouts() -> Timeouts {
    Timeouts { no_start_ms: 30_000, open_game_ms: 600_000, claim_after_ms: 20_000, abandon_ms: 300_000 }
}

/// A game between "w" and "b", joined at `START`.
fn game(variant: Variant, clock: Option<(u32, u32)>) -> LiveGame {
    let spec = NewGame {
        player: id("w"),
        name: "w".into(),
        variant,
        chess960: false,
        chess960_position: None,
        color: ColorChoice::ChooseWhite,
        clock: clock.map(|(initial_ms, increment_ms)| ClockSettings { initial_ms, increment_ms }),
        computer: None,
        rated: false,
        tournament: String::new(),
    };
    let (record, _) =
        new_record(&GameId::parse("g1").unwrap(), "ABCDEFGH", &spec, START, &mut StdRng::seed_from_u64(1));
    applied(apply(
        &LiveGame::from_record(record).unwrap(),
        Command::Join { player: id("b"), name: "b".into() },
        START,
        &timeouts(),
    ))
}

fn applied(outcome: Result<Outcome, CommandError>) -> LiveGame {
    match outcome.expect("the command is accepted") {
        Outcome::Applied(applied) => {
            assert!(applied.refusal.is_none(), "refused: {:?}", applied.refusal);
            applied.live
        }
        other => panic!("nothing applied: {other:?}"),
    }
}

fn play(live: &LiveGame, player: &str, uci: &str, at: u64, lag_ms: u32) -> LiveGame {
    let command = Command::Move { player: id(player), uci: uci.into(), ply: live.ply() as u32, lag_ms, waited_ms: 0 };
    applied(apply(live, command, at, &timeouts()))
}

fn remaining(live: &LiveGame, color: Color) -> u64 {
    live.seat(color).remaining_ms
}

#[test]
fn the_clock_starts_after_both_first_moves_and_only_the_side_to_move_runs() {
    let live = game(Variant::Standard, Some((60_000, 2_000)));
    let live = play(&live, "w", "e2e4", START + 10_000, 0);
    let live = play(&live, "b", "e7e5", START + 25_000, 0);
    // First moves are free.
    assert_eq!((remaining(&live, Color::White), remaining(&live, Color::Black)), (60_000, 60_000));
    let live = play(&live, "w", "g1f3", START + 28_000, 0);
    assert_eq!(remaining(&live, Color::White), 60_000 - 3_000 + 2_000);
    assert_eq!(remaining(&live, Color::Black), 60_000, "black's clock did not run during white's move");
    let state = live.clock_at(START + 29_500).unwrap();
    assert_eq!((state.white_ms, state.black_ms), (59_000, 58_500), "only black runs now");
    assert_eq!(live.record.clock_ms, vec![60_000, 60_000, 59_000]);
}

#[test]
fn measured_lag_is_given_back_within_the_quota() {
    let live = game(Variant::Standard, Some((60_000, 0)));
    let live = play(&live, "w", "e2e4", START, 0);
    let live = play(&live, "b", "e7e5", START, 0);
    let quota = live.seat(Color::White).lag_quota_ms;
    assert_eq!(quota, 3 * 390);
    let live = play(&live, "w", "g1f3", START + 5_000, 300);
    assert_eq!(remaining(&live, Color::White), 60_000 - 4_700, "300 ms of lag handed back");
    assert_eq!(live.seat(Color::White).lag_quota_ms, quota - 300 + 390);
    // Claiming more than the quota gets only the quota.
    let live = play(&live, "b", "b8c6", START + 5_000, 0);
    let quota = live.seat(Color::White).lag_quota_ms;
    let live = play(&live, "w", "f1c4", START + 10_000, 60_000);
    assert_eq!(remaining(&live, Color::White), 60_000 - 4_700 - (5_000 - quota.min(1_000)));
}

#[test]
fn the_time_a_move_spent_on_its_way_is_not_charged_and_the_opponent_s_clock_starts_at_the_commit() {
    let live = game(Variant::Standard, Some((60_000, 0)));
    let live = play(&live, "w", "e2e4", START, 0);
    let live = play(&live, "b", "e7e5", START, 0);
    // White moved 2 s into its turn; a failover kept the move on its way 1.5 s.
    let command = Command::Move { player: id("w"), uci: "g1f3".into(), ply: 2, lag_ms: 0, waited_ms: 1_500 };
    let live = applied(apply(&live, command, START + 3_500, &timeouts()));
    assert_eq!(remaining(&live, Color::White), 60_000 - 2_000);
    assert_eq!(live.record.turn_started_ms, START + 3_500, "black sees the move only now");
    // No more than the cap is handed back, and never time from before the turn.
    let command = Command::Move { player: id("b"), uci: "b8c6".into(), ply: 3, lag_ms: 0, waited_ms: u32::MAX };
    let live = applied(apply(&live, command, START + 3_500 + 30_000, &timeouts()));
    assert_eq!(remaining(&live, Color::Black), 60_000 - (30_000 - 10_000));
    let command = Command::Move { player: id("w"), uci: "f1c4".into(), ply: 4, lag_ms: 0, waited_ms: 9_000 };
    let live = applied(apply(&live, command, START + 33_500 + 4_000, &timeouts()));
    assert_eq!(remaining(&live, Color::White), 58_000, "a move on its way longer than the turn costs nothing");
}

#[test]
fn a_move_after_the_flag_fell_ends_the_game_on_time_and_is_refused() {
    let live = game(Variant::Atomic, Some((60_000, 0)));
    let live = play(&live, "w", "e2e4", START, 0);
    let live = play(&live, "b", "e7e5", START, 0);
    let late = Command::Move { player: id("w"), uci: "g1f3".into(), ply: 2, lag_ms: 0, waited_ms: 0 };
    let Outcome::Applied(result) = apply(&live, late, START + 61_000 + 1_200, &timeouts()).unwrap() else {
        panic!("the flag is recorded")
    };
    assert_eq!(result.refusal, Some(CommandError::FlagFell));
    assert_eq!(CommandError::FlagFell.error_code(), ErrorCode::GameOver);
    assert_eq!(result.live.status(), Status::Ended);
    assert_eq!(result.live.record.reason(), EndReason::Timeout);
    assert_eq!(result.live.record.result, "0-1");
    assert_eq!(result.live.ply(), 2, "the late move is not played");
    assert_eq!(remaining(&result.live, Color::White), 0);
}

#[test]
fn the_timer_flags_at_the_deadline_plus_the_lag_that_could_still_count() {
    let live = game(Variant::Standard, Some((60_000, 0)));
    let live = play(&live, "w", "e2e4", START, 0);
    let live = play(&live, "b", "e7e5", START, 0);
    let due = next_due(&live, &timeouts()).unwrap();
    assert_eq!(due, START + 60_000 + 1_000);
    assert!(matches!(apply(&live, Command::Tick, due - 1, &timeouts()), Ok(Outcome::Unchanged)));
    let flagged = applied(apply(&live, Command::Tick, due, &timeouts()));
    assert_eq!((flagged.record.result.as_str(), flagged.record.reason()), ("0-1", EndReason::Timeout));
    assert_eq!(next_due(&flagged, &timeouts()), None);
}

#[test]
fn games_nobody_starts_or_joins_are_aborted() {
    let live = game(Variant::Fog, None);
    assert_eq!(next_due(&live, &timeouts()), Some(START + 30_000));
    let aborted = applied(apply(&live, Command::Tick, START + 30_000, &timeouts()));
    assert_eq!((aborted.record.result.as_str(), aborted.record.reason()), ("*", EndReason::Aborted));

    let spec = NewGame {
        player: id("w"),
        name: String::new(),
        variant: Variant::Atomic,
        chess960: true,
        chess960_position: None,
        color: ColorChoice::ChooseRandom,
        clock: None,
        computer: None,
        rated: true,
        tournament: String::new(),
    };
    let (record, _) =
        new_record(&GameId::parse("g2").unwrap(), "ABCDEFGH", &spec, START, &mut StdRng::seed_from_u64(2));
    let open = LiveGame::from_record(record).unwrap();
    assert_eq!(open.status(), Status::Waiting);
    assert_eq!(next_due(&open, &timeouts()), Some(START + 600_000));
    let expired = applied(apply(&open, Command::Tick, START + 600_000, &timeouts()));
    assert_eq!(expired.record.reason(), EndReason::Aborted);
}

#[test]
fn a_gone_opponent_can_be_claimed_against_only_after_the_announced_time() {
    let live = game(Variant::Atomic, None);
    let live = play(&live, "w", "e2e4", START, 0);
    let live = play(&live, "b", "e7e5", START, 0);
    let gone =
        apply(&live, Command::Presence { player: id("b"), connected: false, lease_ms: 0 }, START + 1_000, &timeouts());
    let Outcome::Applied(gone) = gone.unwrap() else { panic!("presence recorded") };
    assert!(matches!(gone.events[..], [Event::Presence { color: Color::Black, gone: true, claim_in_ms: 20_000 }]));
    let live = gone.live;
    // Reporting it again changes nothing.
    let again =
        apply(&live, Command::Presence { player: id("b"), connected: false, lease_ms: 0 }, START + 2_000, &timeouts());
    assert!(matches!(again, Ok(Outcome::Unchanged)));
    let early = apply(&live, Command::ClaimVictory { player: id("w") }, START + 20_999, &timeouts()).unwrap_err();
    assert_eq!(early, CommandError::ClaimTooEarly { wait_ms: 1 });
    assert_eq!(early.error_code(), ErrorCode::Conflict);
    let won = applied(apply(&live, Command::ClaimVictory { player: id("w") }, START + 21_000, &timeouts()));
    assert_eq!((won.record.result.as_str(), won.record.reason()), ("1-0", EndReason::Abandoned));
}

fn present(live: &LiveGame, player: &str, at: u64, lease_ms: u64) -> Result<Outcome, CommandError> {
    apply(live, Command::Presence { player: id(player), connected: true, lease_ms }, at, &timeouts())
}

#[test]
fn a_presence_lease_that_lapses_makes_the_seat_gone_since_it_lapsed() {
    let live = game(Variant::Atomic, None);
    let live = play(&live, "w", "e2e4", START, 0);
    let live = play(&live, "b", "e7e5", START, 0);
    let live = applied(present(&live, "w", START, 5_000));
    let live = applied(present(&live, "b", START, 5_000));
    // The sweep is asked to look when a lease would lapse.
    assert_eq!(next_due(&live, &timeouts()), Some(START + 5_000));
    // A renewal moves the lapse later, without an event.
    let renewed = present(&live, "b", START + 3_000, 5_000).unwrap();
    let Outcome::Applied(renewed) = renewed else { panic!("the renewal is stored") };
    assert!(renewed.events.is_empty(), "{:?}", renewed.events);
    let live = applied(present(&renewed.live, "w", START + 3_000, 5_000));
    assert_eq!(next_due(&live, &timeouts()), Some(START + 8_000));
    let present_yet = apply(&live, Command::ClaimVictory { player: id("w") }, START + 7_999, &timeouts()).unwrap_err();
    assert_eq!(present_yet, CommandError::OpponentPresent);

    // Black's gateway stops renewing; white's keeps going.
    let live = applied(present(&live, "w", START + 6_000, 5_000));
    let lapsed = apply(&live, Command::Tick, START + 8_200, &timeouts()).unwrap();
    let Outcome::Applied(lapsed) = lapsed else { panic!("the lapse is recorded") };
    assert!(
        matches!(lapsed.events[..], [Event::Presence { color: Color::Black, gone: true, claim_in_ms: 19_800 }]),
        "{:?}",
        lapsed.events
    );
    let live = lapsed.live;
    let early = apply(&live, Command::ClaimVictory { player: id("w") }, START + 27_999, &timeouts()).unwrap_err();
    assert_eq!(early, CommandError::ClaimTooEarly { wait_ms: 1 });
    let won = applied(apply(&live, Command::ClaimVictory { player: id("w") }, START + 28_000, &timeouts()));
    assert_eq!((won.record.result.as_str(), won.record.reason()), ("1-0", EndReason::Abandoned));
}

#[test]
fn a_claim_sees_a_lapsed_lease_before_the_sweep_does() {
    let live = game(Variant::Atomic, None);
    let live = play(&live, "w", "e2e4", START, 0);
    let live = play(&live, "b", "e7e5", START, 0);
    let live = applied(present(&live, "b", START, 1_000));
    let won = applied(apply(&live, Command::ClaimVictory { player: id("w") }, START + 21_000, &timeouts()));
    assert_eq!(won.record.reason(), EndReason::Abandoned);
}

#[test]
fn a_game_whose_two_leases_lapsed_is_abandoned_after_the_abandon_time() {
    let live = game(Variant::Standard, None);
    let live = play(&live, "w", "e2e4", START, 0);
    let live = play(&live, "b", "e7e5", START, 0);
    let live = applied(present(&live, "w", START, 2_000));
    let live = applied(present(&live, "b", START + 1_000, 2_000));
    let live = applied(apply(&live, Command::Tick, START + 2_000, &timeouts()));
    assert_eq!(live.status(), Status::Playing, "only white's lease lapsed");
    let live = applied(apply(&live, Command::Tick, START + 3_000, &timeouts()));
    assert_eq!(next_due(&live, &timeouts()), Some(START + 3_000 + 300_000), "gone since black's lease lapsed");
    let ended = applied(apply(&live, Command::Tick, START + 303_000, &timeouts()));
    assert_eq!((ended.record.result.as_str(), ended.record.reason()), ("1/2-1/2", EndReason::Abandoned));
}

/// The game is left alone until `next_due` says, and a tick then ends it
/// as `reason` says: the deadline and the tick that acts on it agree.
fn ends_exactly_when_due(live: &LiveGame, due: u64, reason: EndReason) {
    assert_eq!(next_due(live, &timeouts()), Some(due));
    assert!(matches!(apply(live, Command::Tick, due - 1, &timeouts()), Ok(Outcome::Unchanged)), "ended early");
    let ended = applied(apply(live, Command::Tick, due, &timeouts()));
    assert_eq!((ended.status(), ended.record.reason()), (Status::Ended, reason));
    assert_eq!(next_due(&ended, &timeouts()), None);
}

#[test]
fn an_untimed_game_played_by_commands_alone_is_abandoned_after_its_last_move() {
    // No socket or game stream ever followed it: no presence was reported.
    let live = game(Variant::Standard, None);
    let live = play(&live, "w", "e2e4", START + 1_000, 0);
    let live = play(&live, "b", "e7e5", START + 2_000, 0);
    ends_exactly_when_due(&live, START + 2_000 + 300_000, EndReason::Abandoned);
    let live = play(&live, "w", "g1f3", START + 250_000, 0);
    ends_exactly_when_due(&live, START + 250_000 + 300_000, EndReason::Abandoned);
}

/// "w" as white against the computer at Easy, made at `START`.
fn computer_game(clock: Option<ClockSettings>) -> LiveGame {
    let spec = NewGame {
        player: id("w"),
        name: "w".into(),
        variant: Variant::Atomic,
        chess960: false,
        chess960_position: None,
        color: ColorChoice::ChooseWhite,
        clock,
        computer: Some(fogblast_proto::game::Level::Easy),
        rated: false,
        tournament: String::new(),
    };
    let (record, _) =
        new_record(&GameId::parse("g3").unwrap(), "ABCDEFGH", &spec, START, &mut StdRng::seed_from_u64(3));
    LiveGame::from_record(record).unwrap()
}

#[test]
fn a_computer_game_whose_player_never_moves_nor_follows_it_is_aborted() {
    let live = computer_game(None);
    assert_eq!(live.status(), Status::Playing);
    ends_exactly_when_due(&live, START + 300_000, EndReason::Aborted);
}

#[test]
fn a_followed_seat_holds_the_game_open_until_it_is_reported_gone() {
    let live = game(Variant::Standard, None);
    let live = play(&live, "w", "e2e4", START, 0);
    let live = play(&live, "b", "e7e5", START, 0);
    // White's socket follows the game (present with no lease); black only sends moves.
    let live = applied(present(&live, "w", START + 1_000, 0));
    assert_eq!(next_due(&live, &timeouts()), None, "white is here");
    let gone = Command::Presence { player: id("w"), connected: false, lease_ms: 0 };
    let live = applied(apply(&live, gone, START + 9_000, &timeouts()));
    ends_exactly_when_due(&live, START + 9_000 + 300_000, EndReason::Abandoned);
    // Moves still coming, from players no socket follows: the game is not left.
    let moved = play(&live, "w", "d2d4", START + 200_000, 0);
    ends_exactly_when_due(&moved, START + 200_000 + 300_000, EndReason::Abandoned);
    // A report of a seat that was never reported is stored, even when it changes nothing else.
    let live = play(&moved, "b", "d7d5", START + 210_000, 0);
    let first = present(&live, "b", START + 210_000, 0).unwrap();
    assert!(matches!(first, Outcome::Applied(_)), "the first report of a seat is committed");
}

#[test]
fn a_player_back_after_a_lapse_is_present_again() {
    let live = game(Variant::Atomic, None);
    let live = play(&live, "w", "e2e4", START, 0);
    let live = applied(present(&live, "b", START, 1_000));
    let live = applied(apply(&live, Command::Tick, START + 1_000, &timeouts()));
    let back = present(&live, "b", START + 2_000, 1_000).unwrap();
    let Outcome::Applied(back) = back else { panic!("back is recorded") };
    assert!(matches!(back.events[..], [Event::Presence { color: Color::Black, gone: false, .. }]));
    let present_again = apply(&back.live, Command::ClaimVictory { player: id("w") }, START + 2_500, &timeouts());
    assert_eq!(present_again.unwrap_err(), CommandError::OpponentPresent);
}

#[test]
fn a_move_answers_the_opponents_draw_offer_and_offering_back_accepts() {
    let live = game(Variant::Standard, None);
    let live = play(&live, "w", "e2e4", START, 0);
    let offer = Command::Draw { player: id("w"), action: OfferAction::Offer };
    let live = applied(apply(&live, offer.clone(), START, &timeouts()));
    assert_eq!(live.record.draw_offer, 1);
    let live = play(&live, "b", "e7e5", START, 0);
    assert_eq!(live.record.draw_offer, 0, "black's move declined the offer");
    let live = applied(apply(&live, offer, START, &timeouts()));
    let accept_by_offer = Command::Draw { player: id("b"), action: OfferAction::Offer };
    let drawn = applied(apply(&live, accept_by_offer, START, &timeouts()));
    assert_eq!((drawn.record.result.as_str(), drawn.record.reason()), ("1/2-1/2", EndReason::Agreement));
}

/// A command applied in place that comes to nothing must leave the game
/// exactly as it was: the shard keeps that very game, uncommitted.
#[test]
fn a_command_applied_in_place_that_changes_nothing_leaves_the_game_as_it_was() {
    let live = game(Variant::Atomic, Some((60_000, 2_000)));
    let live = play(&live, "w", "e2e4", START + 1_000, 0);
    let live = play(&live, "b", "e7e5", START + 2_000, 0);
    let live = applied(present(&live, "b", START + 2_100, 5_000));
    let same_lease = Command::Presence { player: id("b"), connected: true, lease_ms: 5_000 };
    let nothing = [
        // A resend of the move at ply 0.
        (Command::Move { player: id("w"), uci: "e2e4".into(), ply: 0, lag_ms: 0, waited_ms: 0 }, START + 2_500),
        // Nothing due yet.
        (Command::Tick, START + 2_500),
        // The same lease renewed at the same moment.
        (same_lease, START + 2_100),
        // No computer in this game.
        (Command::ComputerMove { uci: "g1f3".into(), ply: 2 }, START + 2_500),
        // The control: white reported gone does change the game.
        (Command::Presence { player: id("w"), connected: false, lease_ms: 0 }, START + 2_600),
    ];
    let mut seen_unchanged = 0;
    for (i, (command, at)) in nothing.into_iter().enumerate() {
        let mut changed = live.clone();
        let outcome = apply_in_place(&mut changed, command.clone(), at, &timeouts()).unwrap();
        match outcome {
            InPlace::Changed(_) => {
                assert_eq!(i, 4, "{command:?} changed the game");
                assert_ne!(changed.record, live.record);
                continue;
            }
            InPlace::AlreadyPlayed | InPlace::Unchanged => seen_unchanged += 1,
        }
        assert_eq!(changed.record, live.record, "{command:?} left a change behind");
        assert_eq!((changed.fen(), changed.ply()), (live.fen(), live.ply()), "{command:?} moved the position");
    }
    assert_eq!(seen_unchanged, 4);
}

/// Applying in place changes the game the way the copying form does.
#[test]
fn a_move_applied_in_place_makes_the_same_game_as_a_copy() {
    let live = game(Variant::Atomic, Some((60_000, 2_000)));
    let mut in_place = live.clone();
    let mut copied = live;
    for (ply, (player, uci)) in [("w", "e2e4"), ("b", "d7d5"), ("w", "e4d5")].into_iter().enumerate() {
        let at = START + 1_000 * (ply as u64 + 1);
        let command = Command::Move { player: id(player), uci: uci.into(), ply: ply as u32, lag_ms: 0, waited_ms: 0 };
        let InPlace::Changed(changes) = apply_in_place(&mut in_place, command.clone(), at, &timeouts()).unwrap() else {
            panic!("{uci} changed nothing");
        };
        copied = play(&copied, player, uci, at, 0);
        assert_eq!(changes.events.len(), 1);
        assert_eq!(in_place.record, copied.record);
        assert_eq!(in_place.fen(), copied.fen());
    }
}

fn chat(live: &LiveGame, player: &str, room: ChatRoom, text: &str) -> Result<Outcome, CommandError> {
    apply(live, Command::Chat { player: id(player), room, text: text.into() }, START + 1_000, &timeouts())
}

/// The players' room is the seats' alone; the spectators' room anyone's.
/// A line is 1 to 140 characters, kept with the last few in the record,
/// and each seat's lines are counted against its budget.
#[test]
fn chat_lines_go_to_their_room_and_bad_ones_change_nothing() {
    let live = game(Variant::Fog, None);
    assert_eq!(chat(&live, "spectator1", ChatRoom::Players, "hi").unwrap_err(), CommandError::NotSeated);
    assert_eq!(chat(&live, "w", ChatRoom::Players, "   ").unwrap_err(), CommandError::ChatText);
    assert_eq!(chat(&live, "w", ChatRoom::Players, &"x".repeat(141)).unwrap_err(), CommandError::ChatText);
    assert_eq!(chat(&live, "w", ChatRoom::Unspecified, "hi").unwrap_err(), CommandError::UnknownChatRoom);
    let Outcome::Applied(said) = chat(&live, "w", ChatRoom::Players, " good luck ").unwrap() else { panic!() };
    let [Event::Chat(line)] = said.events.as_slice() else { panic!("one chat event: {:?}", said.events) };
    assert_eq!((line.text.as_str(), line.player_id.as_str(), line.name.as_str()), ("good luck", "w", "w"));
    assert_eq!(said.live.seat(Color::White).chat_lines, 1);
    let seen = audience::event_for_all(&said.live, &said.events[0], 3, START, &timeouts());
    assert!(seen.white.is_some() && seen.black.is_some(), "both seats read the players' room");
    assert!(seen.spectators.is_none(), "spectators never read the players' room");
    let spectator_state = fogblast_game_service::state_for(&said.live, 3, Viewer::Spectator, START, &timeouts());
    assert!(spectator_state.chat.is_empty(), "nor find it in a state: {:?}", spectator_state.chat);
    let Outcome::Applied(watched) = chat(&said.live, "spectator1", ChatRoom::Spectators, "hello").unwrap() else {
        panic!()
    };
    let seen = audience::event_for_all(&watched.live, &watched.events[0], 4, START, &timeouts());
    assert!(seen.white.is_some() && seen.spectators.is_some(), "everyone reads the spectators' room");
    let mut live = watched.live;
    for n in 0..60 {
        live = applied(chat(&live, "b", ChatRoom::Players, &format!("line {n}")));
    }
    assert_eq!(live.record.chat.len(), fogblast_game_service::commands::CHAT_LINES_KEPT);
    assert_eq!(live.record.chat.last().unwrap().text, "line 59");
}

/// A tournament game between "w" and "b" with a 60+2 clock.
fn tournament_game() -> LiveGame {
    let spec = NewGame {
        player: id("w"),
        name: "w".into(),
        variant: Variant::Atomic,
        chess960: false,
        chess960_position: None,
        color: ColorChoice::ChooseWhite,
        clock: Some(ClockSettings { initial_ms: 60_000, increment_ms: 2_000 }),
        computer: None,
        rated: false,
        tournament: "arena-1".into(),
    };
    let (record, _) =
        new_record(&GameId::parse("g2").unwrap(), "ABCDEFGH", &spec, START, &mut StdRng::seed_from_u64(1));
    let live = LiveGame::from_record(record).unwrap();
    applied(apply(&live, Command::Join { player: id("b"), name: "b".into() }, START, &timeouts()))
}

fn berserk(live: &LiveGame, player: &str) -> Result<Outcome, CommandError> {
    apply(live, Command::Berserk { player: id(player) }, START + 500, &timeouts())
}

/// Berserk halves the player's own time and drops their increment, only in
/// a tournament game with a clock and only before their first move.
#[test]
fn berserk_halves_the_time_and_drops_the_increment_before_the_first_move_only() {
    let plain = game(Variant::Atomic, Some((60_000, 2_000)));
    assert_eq!(berserk(&plain, "w").unwrap_err(), CommandError::NoBerserk);
    let live = tournament_game();
    assert_eq!(berserk(&live, "nobody").unwrap_err(), CommandError::NotSeated);
    let Outcome::Applied(went) = berserk(&live, "w").unwrap() else { panic!("applied") };
    assert!(matches!(went.events.as_slice(), [Event::Berserk { color: Color::White, .. }]), "{:?}", went.events);
    let live = went.live;
    assert!(live.seat(Color::White).berserk);
    assert_eq!((remaining(&live, Color::White), remaining(&live, Color::Black)), (30_000, 60_000));
    assert!(matches!(berserk(&live, "w").unwrap(), Outcome::Unchanged), "a second berserk changes nothing");
    let live = play(&live, "w", "e2e4", START + 1_000, 0);
    let live = play(&live, "b", "e7e5", START + 2_000, 0);
    assert_eq!(berserk(&live, "b").unwrap_err(), CommandError::BerserkAfterFirstMove);
    let live = play(&live, "w", "g1f3", START + 5_000, 0);
    assert_eq!(remaining(&live, Color::White), 30_000 - 3_000, "no increment for the berserk side");
    let live = play(&live, "b", "b8c6", START + 6_000, 0);
    assert_eq!(remaining(&live, Color::Black), 60_000 - 1_000 + 2_000, "the other side keeps its increment");
    let ended = applied(apply(&live, Command::Resign { player: id("b") }, START + 7_000, &timeouts()));
    let rematch = Command::Rematch { player: id("w"), new_game: "g3".into() };
    assert_eq!(apply(&ended, rematch, START + 8_000, &timeouts()).unwrap_err(), CommandError::RematchInTournament);
    let finished = fogblast_game_service::finished_event(&ended);
    assert_eq!(finished.tournament_id, "arena-1");
    assert!(finished.white.unwrap().berserk && !finished.black.unwrap().berserk);
}

/// Along random games (moves, presence with and without leases, time
/// passing), the time the sweep is woken at is exactly when the tick acts:
/// a tick a millisecond before it changes nothing, and a tick at it
/// changes the game. A rule that only one of them read would break this
/// in one direction or the other.
#[test]
fn the_sweep_wakes_a_game_exactly_when_its_tick_has_something_to_do() {
    use rand::{Rng, RngCore};
    let mut rng = StdRng::seed_from_u64(39);
    let mut ticks_acting = 0;
    for round in 0..60 {
        let clock = [None, Some((60_000, 0)), Some((60_000, 2_000))][round % 3];
        let mut live = game([Variant::Standard, Variant::Atomic, Variant::Fog][round % 3], clock);
        let mut now = START;
        for _ in 0..40 {
            if let Some(due) = next_due(&live, &timeouts()) {
                if due > now {
                    assert!(
                        matches!(apply(&live, Command::Tick, due - 1, &timeouts()), Ok(Outcome::Unchanged)),
                        "a tick before the deadline at {due} acted"
                    );
                }
                let at = due.max(now);
                match apply(&live, Command::Tick, at, &timeouts()) {
                    Ok(Outcome::Applied(_)) => ticks_acting += 1,
                    other => panic!("the sweep woke the game at {at} for nothing: {other:?}"),
                }
            }
            if live.status() == Status::Ended {
                break;
            }
            now += rng.random_range(0..40_000u64);
            let player = if rng.random_bool(0.5) { "w" } else { "b" };
            let command = if rng.random_bool(0.7) {
                let moves = live.game.position().legal_moves();
                if moves.is_empty() {
                    break;
                }
                let uci = moves[rng.next_u32() as usize % moves.len()]
                    .to_uci(fogblast_rules::CastlingMode::Standard)
                    .to_string();
                let turn = if live.game.position().turn() == Color::White { "w" } else { "b" };
                Command::Move { player: id(turn), uci, ply: live.ply() as u32, lag_ms: 0, waited_ms: 0 }
            } else {
                let lease_ms = [0, 5_000, 30_000][rng.random_range(0..3)];
                Command::Presence { player: id(player), connected: rng.random_bool(0.6), lease_ms }
            };
            if let Ok(Outcome::Applied(applied)) = apply(&live, command, now, &timeouts()) {
                live = applied.live;
            }
        }
    }
    assert!(ticks_acting > 30, "deadlines were reached: {ticks_acting}");
}

fn give_time(live: &LiveGame, player: &str, at: u64) -> Result<Outcome, CommandError> {
    apply(live, Command::GiveTime { player: id(player) }, at, &timeouts())
}

/// Time given goes on the opponent's clock, running or not, and everyone
/// hears the new clocks; never past the cap, never against
/// the computer, in a tournament or a game without a clock, and never to
/// a side whose flag has already fallen.
#[test]
fn time_given_goes_on_the_opponents_clock_within_its_limits() {
    use fogblast_game_service::commands::{GIVEN_TIME_MS, MOST_TIME_ON_A_CLOCK_MS};
    let live = game(Variant::Atomic, Some((60_000, 0)));
    assert_eq!(give_time(&live, "nobody", START).unwrap_err(), CommandError::NotSeated);
    let Outcome::Applied(given) = give_time(&live, "w", START + 100).unwrap() else { panic!("applied") };
    assert!(
        matches!(given.events.as_slice(), [Event::TimeGiven { by: Color::White, clock: Some(c) }] if c.black_ms == 75_000),
        "{:?}",
        given.events
    );
    assert_eq!((remaining(&given.live, Color::White), remaining(&given.live, Color::Black)), (60_000, 75_000));
    // On the running clock of the side to move: it runs on from more.
    let live = play(&given.live, "w", "e2e4", START + 1_000, 0);
    let live = play(&live, "b", "e7e5", START + 2_000, 0);
    let live = applied(give_time(&live, "b", START + 12_000));
    let clock = live.clock_at(START + 12_000).unwrap();
    assert_eq!((clock.white_ms, clock.black_ms), (60_000 + GIVEN_TIME_MS - 10_000, 75_000));
    // The flag of the side to move fell before the gift: the game ends on time.
    let Outcome::Applied(late) = give_time(&live, "b", START + 84_000).unwrap() else { panic!("flagged") };
    assert_eq!(late.refusal, Some(CommandError::GameOver));
    assert_eq!((late.live.status(), late.live.record.reason()), (Status::Ended, EndReason::Timeout));
    assert_eq!(give_time(&late.live, "b", START + 85_000).unwrap_err(), CommandError::GameOver);
    // Never past the cap.
    let mut full = live.clone();
    full.seat_mut(Color::White).remaining_ms = MOST_TIME_ON_A_CLOCK_MS;
    assert_eq!(give_time(&full, "b", START + 12_000).unwrap_err(), CommandError::ClockFull);
    // Nor without a clock, in a tournament, or to the computer.
    let untimed = game(Variant::Atomic, None);
    assert_eq!(give_time(&untimed, "w", START).unwrap_err(), CommandError::NoTimeToGive);
    assert_eq!(give_time(&tournament_game(), "w", START).unwrap_err(), CommandError::NoTimeToGive);
    let against_the_computer = computer_game(Some(ClockSettings { initial_ms: 60_000, increment_ms: 0 }));
    assert_eq!(give_time(&against_the_computer, "w", START).unwrap_err(), CommandError::NoTimeToGive);
    assert_eq!(CommandError::NoTimeToGive.error_code(), ErrorCode::NotAllowed);
}
