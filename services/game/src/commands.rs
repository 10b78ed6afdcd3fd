//! What each command does to a game, decided without I/O: given the live
//! game, the store's time and the command, either a refusal
//! ([`CommandError`]), or the new record and the events it makes. The shard commits the result;
//! nothing here can half-apply.

use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::command::Action;
use fogblast_proto::game::{ChatLine, ChatRoom, ClockState, EndReason, OfferAction, Status};
use fogblast_proto::ids::{GameId, PlayerId};
use fogblast_proto::record::GameRecord;
use fogblast_rules::{CastlingMode, Color, MoveEffects, Position, Variant};

use crate::clock::{self, LagPolicy};
use crate::config::Timeouts;
use crate::create;
use crate::deadlines::{self, Deadlines};
use crate::record::{color_to_wire, end_reason, result_for, LiveGame};
use crate::refusal::CommandError;

/// Draw offers each seat may make in a game.
pub const DRAW_OFFERS_PER_SEAT: u32 = 5;

/// Takeback requests to a person each seat may make in a game.
pub const TAKEBACK_REQUESTS_PER_SEAT: u32 = 5;

/// The longest chat line, in characters (lichess's limit).
pub const MAX_CHAT_CHARS: usize = 140;

/// The chat lines a game keeps (both rooms together) for whoever arrives
/// later; older ones are only in the events that carried them.
pub const CHAT_LINES_KEPT: usize = 40;

/// Chat lines each person may write in a game, all rooms together.
pub const CHAT_LINES_PER_PLAYER: u32 = 200;

/// The time one `give_time` adds to the opponent's clock (lichess's 15 s).
pub const GIVEN_TIME_MS: u64 = 15_000;

/// A clock is not given time past this.
pub const MOST_TIME_ON_A_CLOCK_MS: u64 = 3 * 60 * 60 * 1000;

/// The longest UCI move: `e7e8q`.
const MAX_UCI_LEN: usize = 5;

/// A player's command, or the shard's own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Join {
        player: PlayerId,
        name: String,
    },
    Move {
        player: PlayerId,
        uci: String,
        ply: u32,
        lag_ms: u32,
        /// How long the move was on its way inside Fogblast.
        waited_ms: u32,
    },
    /// The computer seat's move, made for the position at `ply`.
    ComputerMove {
        uci: String,
        ply: u32,
    },
    Resign {
        player: PlayerId,
    },
    Abort {
        player: PlayerId,
    },
    Draw {
        player: PlayerId,
        action: OfferAction,
    },
    Takeback {
        player: PlayerId,
        action: OfferAction,
    },
    ClaimVictory {
        player: PlayerId,
    },
    /// `new_game` is the id the rematch gets once agreed.
    Rematch {
        player: PlayerId,
        new_game: String,
    },
    /// Declines the opponent's standing rematch offer.
    DeclineRematch {
        player: PlayerId,
    },
    /// `lease_ms` (with `connected`, if not 0): gone that long from now
    /// unless reported again.
    Presence {
        player: PlayerId,
        connected: bool,
        lease_ms: u64,
    },
    /// A line in the players' room (seated people only) or the
    /// spectators' room (anyone following the game).
    Chat {
        player: PlayerId,
        room: ChatRoom,
        text: String,
    },
    /// Halves the player's own time and drops their increment, in a
    /// tournament game with a clock, before their first move.
    Berserk {
        player: PlayerId,
    },
    /// Adds [`GIVEN_TIME_MS`] to the opponent's clock.
    GiveTime {
        player: PlayerId,
    },
    /// Whatever has fallen due: a flag, an abort, an abandoned game.
    Tick,
}

impl Command {
    /// The command, with `inside` more of a move's time spent inside
    /// Fogblast (waiting in the shard for its turn at the game, or for the
    /// store) added to what it carried: none of it is the mover's.
    pub fn waited_also(mut self, inside: std::time::Duration) -> Command {
        if let Command::Move { waited_ms, .. } = &mut self {
            let inside = u32::try_from(inside.as_millis()).unwrap_or(u32::MAX);
            *waited_ms = waited_ms.saturating_add(inside);
        }
        self
    }

    /// The shard's command for `player`'s `action` in `game`, its arguments
    /// checked.
    pub fn of_action(player: PlayerId, action: Action, game: &GameId) -> Result<Command, ServiceError> {
        Ok(match action {
            Action::Move(m) => {
                if m.uci.len() > MAX_UCI_LEN {
                    return Err(bad(format!("{:?} is not a UCI move", m.uci)));
                }
                Command::Move { player, uci: m.uci, ply: m.ply, lag_ms: m.lag_ms, waited_ms: m.waited_ms }
            }
            Action::Resign(_) => Command::Resign { player },
            Action::Abort(_) => Command::Abort { player },
            Action::ClaimVictory(_) => Command::ClaimVictory { player },
            Action::Draw(offer) => Command::Draw { player, action: offer_action(offer.action)? },
            Action::Takeback(offer) => Command::Takeback { player, action: offer_action(offer.action)? },
            Action::Rematch(_) => {
                Command::Rematch { player, new_game: create::rematch_id(game.as_str()).into_string() }
            }
            Action::DeclineRematch(_) => Command::DeclineRematch { player },
            Action::Presence(p) => Command::Presence { player, connected: p.connected, lease_ms: p.lease_ms },
            Action::Chat(line) => {
                // Checked again by the rule; refused here before a lock or a read.
                if line.text.len() > 4 * MAX_CHAT_CHARS {
                    return Err(bad(format!("a chat line is at most {} characters", MAX_CHAT_CHARS)));
                }
                let room = line.room();
                Command::Chat { player, room, text: line.text }
            }
            Action::Berserk(_) => Command::Berserk { player },
            Action::GiveTime(_) => Command::GiveTime { player },
        })
    }
}

/// The action's name, for metrics and traces (the `rpc` label each had
/// as a call of its own, so dashboards and alerts read on).
pub fn action_kind(action: &Action) -> &'static str {
    match action {
        Action::Move(_) => "make_move",
        Action::Resign(_) => "resign",
        Action::Abort(_) => "abort",
        Action::ClaimVictory(_) => "claim_victory",
        Action::Draw(_) => "draw",
        Action::Takeback(_) => "takeback",
        Action::Rematch(_) => "rematch",
        Action::DeclineRematch(_) => "decline_rematch",
        Action::Presence(_) => "report_presence",
        Action::Chat(_) => "chat",
        Action::Berserk(_) => "berserk",
        Action::GiveTime(_) => "give_time",
    }
}

/// A refusal of a command's arguments, before the game is touched.
pub(crate) fn bad(message: impl Into<String>) -> ServiceError {
    ServiceError::new(ErrorCode::BadRequest, message)
}

fn offer_action(value: i32) -> Result<OfferAction, ServiceError> {
    match OfferAction::try_from(value) {
        Ok(OfferAction::Unspecified) | Err(_) => Err(bad("action must be offer, accept or decline")),
        Ok(action) => Ok(action),
    }
}

/// Something that happened, before it is cut into each audience's view.
#[derive(Clone, Debug)]
pub enum Event {
    Moved {
        ply: u32,
        uci: String,
        san: String,
        effects: MoveEffects,
        after: Position,
        clock: Option<ClockState>,
    },
    Ended {
        clock: Option<ClockState>,
    },
    Offer {
        takeback: bool,
        action: OfferAction,
        by: Color,
    },
    Seated {
        color: Color,
    },
    Presence {
        color: Color,
        gone: bool,
        claim_in_ms: u64,
    },
    /// The position changed other than by a move.
    Reset,
    Rematch {
        by: Color,
        game_id: String,
    },
    /// `by` declined the opponent's rematch offer.
    RematchDeclined {
        by: Color,
    },
    Chat(ChatLine),
    /// `color` went berserk; `clock` is the clocks after it.
    Berserk {
        color: Color,
        clock: Option<ClockState>,
    },
    /// `by` gave the opponent time; `clock` is the clocks after it.
    TimeGiven {
        by: Color,
        clock: Option<ClockState>,
    },
}

/// What a command changed.
#[derive(Debug)]
pub struct Applied {
    pub live: LiveGame,
    pub events: Vec<Event>,
    /// Committed with the events, then returned to the caller: a move that
    /// arrived after its player's flag fell ends the game on time and is
    /// still refused.
    pub refusal: Option<CommandError>,
    /// Both sides agreed to a rematch: this game must be created first.
    pub rematch: bool,
}

/// A command's result.
#[derive(Debug)]
pub enum Outcome {
    Applied(Box<Applied>),
    /// The same move was already played at that ply: a resend. Answer as
    /// before, change nothing.
    AlreadyPlayed,
    /// Nothing to do (a tick with nothing due, a presence already known).
    Unchanged,
}

/// What a command applied in place made, besides the changed game.
#[derive(Debug)]
pub struct Changes {
    pub events: Vec<Event>,
    /// As [`Applied::refusal`].
    pub refusal: Option<CommandError>,
    /// As [`Applied::rematch`].
    pub rematch: bool,
}

/// The result of a command applied in place.
#[derive(Debug)]
pub enum InPlace {
    /// The game was changed; commit it with these events.
    Changed(Changes),
    /// As [`Outcome::AlreadyPlayed`]: the game is as it was.
    AlreadyPlayed,
    /// As [`Outcome::Unchanged`]: the game is as it was.
    Unchanged,
}

/// Applies `command` at store time `now_ms` to a copy of `live`.
pub fn apply(live: &LiveGame, command: Command, now_ms: u64, timeouts: &Timeouts) -> Result<Outcome, CommandError> {
    let mut live = live.clone();
    Ok(match apply_in_place(&mut live, command, now_ms, timeouts)? {
        InPlace::Changed(Changes { events, refusal, rematch }) => {
            Outcome::Applied(Box::new(Applied { live, events, refusal, rematch }))
        }
        InPlace::AlreadyPlayed => Outcome::AlreadyPlayed,
        InPlace::Unchanged => Outcome::Unchanged,
    })
}

/// Applies `command` at store time `now_ms` to `live` itself, without a
/// copy. Only a change is ever made to it: when the game is already played
/// or nothing is due it is left as it was. A refusal may leave part of the
/// command applied (a claim first marks the seats whose presence lapsed),
/// so after one the caller must throw `live` away.
pub fn apply_in_place(
    live: &mut LiveGame,
    command: Command,
    now_ms: u64,
    timeouts: &Timeouts,
) -> Result<InPlace, CommandError> {
    let mut next = Next { live, events: Vec::new(), now_ms, refusal: None, rematch: false };
    let changed = match command {
        Command::Join { player, name } => next.join(player, name)?,
        Command::Move { player, uci, ply, lag_ms, waited_ms } => {
            let color = next.seated_color(&player)?;
            match next.check_ply(color, &uci, ply)? {
                PlyCheck::Resend => return Ok(InPlace::AlreadyPlayed),
                PlyCheck::Fresh => next.play(color, &uci, u64::from(lag_ms), u64::from(waited_ms))?,
            }
        }
        Command::ComputerMove { uci, ply } => {
            let color = next.live.game.position().turn();
            if !next.live.is_computer(color) || ply as usize != next.live.ply() || next.live.status() != Status::Playing
            {
                return Ok(InPlace::Unchanged);
            }
            next.play(color, &uci, 0, 0)?
        }
        Command::Resign { player } => {
            let color = next.seated_color(&player)?;
            next.require_playing()?;
            next.end(Some(!color), EndReason::Resign)
        }
        Command::Abort { player } => next.abort(&player)?,
        Command::Draw { player, action } => next.draw(&player, action)?,
        Command::Takeback { player, action } => next.takeback(&player, action)?,
        Command::ClaimVictory { player } => next.claim_victory(&player, timeouts)?,
        Command::Rematch { player, new_game } => next.rematch(&player, new_game)?,
        Command::DeclineRematch { player } => next.decline_rematch(&player)?,
        Command::Presence { player, connected, lease_ms } => next.presence(&player, connected, lease_ms, timeouts),
        Command::Chat { player, room, text } => next.chat(&player, room, &text)?,
        Command::Berserk { player } => next.berserk(&player)?,
        Command::GiveTime { player } => next.give_time(&player, timeouts)?,
        Command::Tick => next.tick(timeouts),
    };
    if !changed {
        return Ok(InPlace::Unchanged);
    }
    Ok(InPlace::Changed(Changes { events: next.events, refusal: next.refusal, rematch: next.rematch }))
}

enum PlyCheck {
    Fresh,
    Resend,
}

struct Next<'a> {
    live: &'a mut LiveGame,
    events: Vec<Event>,
    now_ms: u64,
    refusal: Option<CommandError>,
    rematch: bool,
}

impl Next<'_> {
    fn record(&mut self) -> &mut GameRecord {
        &mut self.live.record
    }

    fn seated_color(&self, player: &PlayerId) -> Result<Color, CommandError> {
        self.live.color_of(player).map_or_else(|| Err(CommandError::NotSeated), Ok)
    }

    fn require_playing(&self) -> Result<(), CommandError> {
        match self.live.status() {
            Status::Playing => Ok(()),
            Status::Ended => Err(CommandError::GameOver),
            _ => Err(CommandError::NotStarted),
        }
    }

    fn berserk(&mut self, player: &PlayerId) -> Result<bool, CommandError> {
        let color = self.seated_color(player)?;
        if self.live.record.tournament_id.is_empty() || self.live.record.clock.is_none() {
            return Err(CommandError::NoBerserk);
        }
        if self.live.status() == Status::Ended {
            return Err(CommandError::GameOver);
        }
        if self.moves_by(color) > 0 {
            return Err(CommandError::BerserkAfterFirstMove);
        }
        let seat = self.live.seat_mut(color);
        if seat.berserk {
            return Ok(false);
        }
        seat.berserk = true;
        seat.remaining_ms /= 2;
        let clock = self.live.clock_at(self.now_ms);
        self.events.push(Event::Berserk { color, clock });
        Ok(true)
    }

    /// Adds [`GIVEN_TIME_MS`] to the opponent's clock, running or not, and
    /// tells everyone the new clocks. Not against the computer, nor
    /// in a tournament, where the time is part of the contest.
    fn give_time(&mut self, player: &PlayerId, timeouts: &Timeouts) -> Result<bool, CommandError> {
        let color = self.seated_color(player)?;
        self.require_playing()?;
        if self.live.record.clock.is_none()
            || !self.live.record.tournament_id.is_empty()
            || self.live.is_computer(!color)
        {
            return Err(CommandError::NoTimeToGive);
        }
        // A flag that fell ends the game, whether or not the sweep has seen it.
        if self.flag_if_fallen(&Deadlines::of(self.live, timeouts)) {
            self.refusal = Some(CommandError::GameOver);
            return Ok(true);
        }
        let shown = self.clock_state().map_or(0, |c| if color == Color::White { c.black_ms } else { c.white_ms });
        if shown + GIVEN_TIME_MS > MOST_TIME_ON_A_CLOCK_MS {
            return Err(CommandError::ClockFull);
        }
        self.live.seat_mut(!color).remaining_ms += GIVEN_TIME_MS;
        let clock = self.clock_state();
        self.events.push(Event::TimeGiven { by: color, clock });
        Ok(true)
    }

    /// A chat line, kept with the last few and sent to the room's readers.
    /// It carries the writer's id and name and the text, nothing from the
    /// board.
    fn chat(&mut self, player: &PlayerId, room: ChatRoom, text: &str) -> Result<bool, CommandError> {
        let text = text.trim();
        if text.is_empty() || text.chars().count() > MAX_CHAT_CHARS {
            return Err(CommandError::ChatText);
        }
        let seat = self.live.color_of(player);
        match room {
            ChatRoom::Players if seat.is_none() => return Err(CommandError::NotSeated),
            ChatRoom::Unspecified => return Err(CommandError::UnknownChatRoom),
            _ => {}
        }
        // Spectators' lines are held back by the gateways' budgets alone.
        if let Some(color) = seat {
            let written = &mut self.live.seat_mut(color).chat_lines;
            if *written >= CHAT_LINES_PER_PLAYER {
                return Err(CommandError::OfferBudgetSpent { what: "chat lines", limit: CHAT_LINES_PER_PLAYER });
            }
            *written += 1;
        }
        let name =
            seat.and_then(|c| self.live.seat(c).player.as_ref()).map_or_else(|| player.to_string(), |p| p.name.clone());
        let line = ChatLine { room: room as i32, text: text.to_owned(), player_id: player.to_string(), name };
        let chat = &mut self.record().chat;
        chat.push(line.clone());
        if chat.len() > CHAT_LINES_KEPT {
            chat.drain(..chat.len() - CHAT_LINES_KEPT);
        }
        self.events.push(Event::Chat(line));
        Ok(true)
    }

    fn join(&mut self, player: PlayerId, name: String) -> Result<bool, CommandError> {
        if self.live.status() != Status::Waiting {
            return Err(CommandError::NoFreeSeat);
        }
        if self.live.color_of(&player).is_some() {
            return Err(CommandError::OwnGame);
        }
        let color = Color::ALL
            .into_iter()
            .find(|&c| self.live.player_id(c).is_empty() && !self.live.is_computer(c))
            .map_or_else(|| Err(CommandError::NoFreeSeat), Ok)?;
        let seat_player = self.live.seat_mut(color).player.get_or_insert_with(Default::default);
        seat_player.id = player.into_string();
        seat_player.name = name;
        let now = self.now_ms;
        let record = self.record();
        record.set_status(Status::Playing);
        record.started_at_ms = now;
        record.turn_started_ms = now;
        self.events.push(Event::Seated { color });
        Ok(true)
    }

    fn check_ply(&self, color: Color, uci: &str, ply: u32) -> Result<PlyCheck, CommandError> {
        let played = self.live.ply();
        let ply = ply as usize;
        if ply < played {
            let initial_turn = self.live.game.initial().turn();
            let mover = if ply.is_multiple_of(2) { initial_turn } else { !initial_turn };
            let same = self.live.record.moves.get(ply).is_some_and(|m| same_uci(m, uci, self.live, ply));
            if mover == color && same {
                return Ok(PlyCheck::Resend);
            }
            return Err(CommandError::PlyPlayed { ply, played });
        }
        if ply > played {
            return Err(CommandError::PlyAhead { ply, played });
        }
        Ok(PlyCheck::Fresh)
    }

    fn play(&mut self, color: Color, uci: &str, lag_ms: u64, waited_ms: u64) -> Result<bool, CommandError> {
        self.require_playing()?;
        if self.live.game.position().turn() != color {
            return Err(CommandError::NotYourTurn);
        }
        let position = *self.live.game.position();
        let parsed: fogblast_rules::Uci = uci.parse().map_err(|e: fogblast_rules::ParseUciError| {
            CommandError::NotUci { uci: uci.to_owned(), reason: e.to_string() }
        })?;
        let Some(m) = position.parse_uci(&parsed) else {
            return Err(CommandError::IllegalMove { uci: uci.to_owned() });
        };
        // Settle the mover's clock first: a move after the flag fell loses on
        // time. The clock stops when the gateway read the move, so a failover
        // or a retry on the way is not charged to the mover.
        if self.live.clock_running() {
            let moved_at = clock::moved_at_ms(self.now_ms, waited_ms);
            let started = self.live.record.turn_started_ms;
            let seat = self.live.seat(color);
            let time = clock::time_spent(moved_at.saturating_sub(started), lag_ms, seat.lag_quota_ms);
            if time.spent_ms >= seat.remaining_ms {
                self.flag(color);
                self.refusal = Some(CommandError::FlagFell);
                return Ok(true);
            }
            let settings = self.live.record.clock.unwrap_or_default();
            let policy = LagPolicy::for_clock(&settings);
            let seat = self.live.seat_mut(color);
            let increment = if seat.berserk { 0 } else { u64::from(settings.increment_ms) };
            seat.remaining_ms = seat.remaining_ms - time.spent_ms + increment;
            seat.lag_quota_ms = clock::next_quota(&policy, seat.lag_quota_ms, time.compensated_ms);
        }
        let san = position.san(m);
        let effects = self.live.game.play(m).map_err(|_| CommandError::IllegalMove { uci: uci.to_owned() })?;
        let uci_text = m.to_uci(castling_mode(self.live)).text();
        let remaining = self.live.seat(color).remaining_ms;
        let now = self.now_ms;
        let record = self.record();
        record.moves.push(uci_text.clone());
        record.clock_ms.push(remaining);
        record.turn_started_ms = now;
        // A move answers any offer the opponent left standing.
        if self.live.draw_offer() != Some(color) {
            self.live.set_draw_offer(None);
        }
        self.live.set_takeback_offer(None);
        let ply = self.live.ply() as u32 - 1;
        let after = *self.live.game.position();
        let clock = self.clock_state();
        self.events.push(Event::Moved { ply, uci: uci_text, san, effects, after, clock });
        if let Some(outcome) = self.live.game.outcome() {
            self.end(outcome.winner(), end_reason(outcome));
        }
        Ok(true)
    }

    /// The side to move ran out of time: it loses, or draws when the
    /// opponent could not have won.
    fn flag(&mut self, color: Color) {
        self.live.seat_mut(color).remaining_ms = 0;
        let outcome = self.live.game.position().outcome_on_timeout(color);
        self.end(outcome.winner(), EndReason::Timeout);
    }

    /// Flags the running side if its flag in `due` has fallen by now.
    fn flag_if_fallen(&mut self, due: &Deadlines) -> bool {
        match due.flag {
            Some((side, at)) if self.now_ms >= at => {
                self.flag(side);
                true
            }
            _ => false,
        }
    }

    fn end(&mut self, winner: Option<Color>, reason: EndReason) -> bool {
        self.settle_running_clock();
        let now = self.now_ms;
        let record = self.record();
        record.set_status(Status::Ended);
        record.result = if reason == EndReason::Aborted { "*".to_owned() } else { result_for(winner).to_owned() };
        record.set_reason(reason);
        record.ended_at_ms = now;
        record.turn_started_ms = 0;
        self.live.set_draw_offer(None);
        self.live.set_takeback_offer(None);
        let clock = self.clock_state();
        self.events.push(Event::Ended { clock });
        true
    }

    /// Charges the running side the time it used, so a finished game keeps
    /// the clocks as they stood at the end.
    fn settle_running_clock(&mut self) {
        if let Some(side) = self.live.running_side() {
            let elapsed = self.now_ms.saturating_sub(self.live.record.turn_started_ms);
            let seat = self.live.seat_mut(side);
            seat.remaining_ms = seat.remaining_ms.saturating_sub(elapsed);
            self.live.record.turn_started_ms = self.now_ms;
        }
    }

    fn clock_state(&self) -> Option<ClockState> {
        self.live.clock_at(self.now_ms)
    }

    fn abort(&mut self, player: &PlayerId) -> Result<bool, CommandError> {
        let color = self.seated_color(player)?;
        match self.live.status() {
            Status::Ended => return Err(CommandError::GameOver),
            Status::Playing if self.moves_by(color) > 0 && self.moves_by(!color) > 0 => {
                return Err(CommandError::TooLateToAbort);
            }
            _ => {}
        }
        Ok(self.end(None, EndReason::Aborted))
    }

    fn moves_by(&self, color: Color) -> usize {
        let initial_turn = self.live.game.initial().turn();
        let plies = self.live.ply();
        if color == initial_turn {
            plies.div_ceil(2)
        } else {
            plies / 2
        }
    }

    fn draw(&mut self, player: &PlayerId, action: OfferAction) -> Result<bool, CommandError> {
        let color = self.seated_color(player)?;
        self.require_playing()?;
        let standing = self.live.draw_offer();
        match action {
            OfferAction::Offer if standing == Some(!color) => self.agree_draw(color),
            OfferAction::Offer if standing == Some(color) => Err(CommandError::DrawOfferStands),
            // The computer plays every game out: an offer to it would change
            // nothing, so it is refused rather than committed and declined.
            OfferAction::Offer if self.live.is_computer(!color) => Err(CommandError::ComputerPlaysOn),
            OfferAction::Offer => {
                let seat = self.live.seat_mut(color);
                if seat.draw_offers >= DRAW_OFFERS_PER_SEAT {
                    return Err(CommandError::OfferBudgetSpent { what: "draw offers", limit: DRAW_OFFERS_PER_SEAT });
                }
                seat.draw_offers += 1;
                self.events.push(Event::Offer { takeback: false, action, by: color });
                self.live.set_draw_offer(Some(color));
                Ok(true)
            }
            OfferAction::Accept if standing == Some(!color) => self.agree_draw(color),
            OfferAction::Decline if standing == Some(!color) => {
                self.live.set_draw_offer(None);
                self.events.push(Event::Offer { takeback: false, action, by: color });
                Ok(true)
            }
            OfferAction::Accept | OfferAction::Decline => Err(CommandError::NoDrawOffer),
            OfferAction::Unspecified => Err(CommandError::UnknownDrawAction),
        }
    }

    fn agree_draw(&mut self, color: Color) -> Result<bool, CommandError> {
        self.events.push(Event::Offer { takeback: false, action: OfferAction::Accept, by: color });
        Ok(self.end(None, EndReason::Agreement))
    }

    fn takeback(&mut self, player: &PlayerId, action: OfferAction) -> Result<bool, CommandError> {
        let color = self.seated_color(player)?;
        self.require_playing()?;
        if self.live.variant() == Variant::Fog {
            return Err(CommandError::NoTakebacksInFog);
        }
        let standing = self.live.takeback_offer();
        match action {
            OfferAction::Offer => {
                if self.moves_by(color) == 0 {
                    return Err(CommandError::NothingToTakeBack);
                }
                if standing == Some(color) {
                    return Err(CommandError::TakebackRequestStands);
                }
                if standing.is_none() && !self.live.is_computer(!color) {
                    // A request the opponent must answer; the computer's
                    // grant takes a real move back, and is not counted.
                    let seat = self.live.seat_mut(color);
                    if seat.takeback_requests >= TAKEBACK_REQUESTS_PER_SEAT {
                        return Err(CommandError::OfferBudgetSpent {
                            what: "takeback requests",
                            limit: TAKEBACK_REQUESTS_PER_SEAT,
                        });
                    }
                    seat.takeback_requests += 1;
                }
                self.events.push(Event::Offer { takeback: true, action, by: color });
                if standing == Some(!color) {
                    // Both asked: the first request is the one granted.
                    self.events.push(Event::Offer { takeback: true, action: OfferAction::Accept, by: color });
                    self.take_back_for(!color);
                } else if self.live.is_computer(!color) {
                    self.events.push(Event::Offer { takeback: true, action: OfferAction::Accept, by: !color });
                    self.take_back_for(color);
                } else {
                    self.live.set_takeback_offer(Some(color));
                }
                Ok(true)
            }
            OfferAction::Accept if standing == Some(!color) => {
                self.events.push(Event::Offer { takeback: true, action, by: color });
                self.take_back_for(!color);
                Ok(true)
            }
            OfferAction::Decline if standing == Some(!color) => {
                self.live.set_takeback_offer(None);
                self.events.push(Event::Offer { takeback: true, action, by: color });
                Ok(true)
            }
            OfferAction::Accept | OfferAction::Decline => Err(CommandError::NoTakebackRequest),
            OfferAction::Unspecified => Err(CommandError::UnknownTakebackAction),
        }
    }

    /// Takes back `requester`'s last move and any reply to it, so it is the
    /// requester's turn again. Clocks keep the time already used.
    fn take_back_for(&mut self, requester: Color) {
        self.settle_running_clock();
        let plies = if self.live.game.position().turn() == requester { 2 } else { 1 };
        self.live.game.undo(plies);
        let keep = self.live.ply();
        let now = self.now_ms;
        let record = self.record();
        record.moves.truncate(keep);
        record.clock_ms.truncate(keep);
        record.turn_started_ms = now;
        self.live.set_takeback_offer(None);
        self.live.set_draw_offer(None);
        self.events.push(Event::Reset);
    }

    fn claim_victory(&mut self, player: &PlayerId, timeouts: &Timeouts) -> Result<bool, CommandError> {
        let color = self.seated_color(player)?;
        self.require_playing()?;
        // A lease that lapsed counts even if the sweep has not seen it yet.
        self.lapse(Deadlines::of(self.live, timeouts).lease, timeouts);
        let gone_since = self.live.seat(!color).gone_since_ms;
        if gone_since == 0 {
            return Err(CommandError::OpponentPresent);
        }
        let claim_at = gone_since + timeouts.claim_after_ms;
        if self.now_ms < claim_at {
            return Err(CommandError::ClaimTooEarly { wait_ms: claim_at - self.now_ms });
        }
        if self.moves_by(Color::White) == 0 || self.moves_by(Color::Black) == 0 {
            return Ok(self.end(None, EndReason::Aborted));
        }
        Ok(self.end(Some(color), EndReason::Abandoned))
    }

    fn rematch(&mut self, player: &PlayerId, new_game: String) -> Result<bool, CommandError> {
        let color = self.seated_color(player)?;
        if !self.live.record.tournament_id.is_empty() {
            return Err(CommandError::RematchInTournament);
        }
        if self.live.status() != Status::Ended {
            return Err(CommandError::RematchBeforeEnd);
        }
        if !self.live.record.rematch_game_id.is_empty() {
            return Err(CommandError::RematchStarted);
        }
        let standing = self.live.rematch_offer();
        if standing == Some(color) {
            return Err(CommandError::RematchOfferStands);
        }
        if standing == Some(!color) || self.live.is_computer(!color) {
            self.live.record.rematch_game_id = new_game.clone();
            self.rematch = true;
            self.events.push(Event::Rematch { by: color, game_id: new_game });
        } else {
            self.live.set_rematch_offer(Some(color));
            self.events.push(Event::Rematch { by: color, game_id: String::new() });
        }
        Ok(true)
    }

    fn decline_rematch(&mut self, player: &PlayerId) -> Result<bool, CommandError> {
        let color = self.seated_color(player)?;
        if !self.live.record.rematch_game_id.is_empty() {
            return Err(CommandError::RematchStarted);
        }
        if self.live.rematch_offer() != Some(!color) {
            return Err(CommandError::NoRematchOffer);
        }
        self.live.set_rematch_offer(None);
        self.events.push(Event::RematchDeclined { by: color });
        Ok(true)
    }

    fn presence(&mut self, player: &PlayerId, connected: bool, lease_ms: u64, timeouts: &Timeouts) -> bool {
        let Some(color) = self.live.color_of(player) else { return false };
        if self.live.status() == Status::Ended {
            return false;
        }
        let now = self.now_ms;
        let seat = self.live.seat_mut(color);
        let first_report = !seat.presence_reported;
        seat.presence_reported = true;
        let until = if lease_ms == 0 { 0 } else { now.saturating_add(lease_ms) };
        match (connected, seat.gone_since_ms) {
            // A renewal: no event, but the new expiry is stored, so the
            // game's next owner knows it too.
            (true, 0) => {
                let renewed = seat.present_until_ms != until;
                seat.present_until_ms = until;
                renewed || first_report
            }
            (false, since) if since != 0 => first_report,
            (true, _) => {
                seat.gone_since_ms = 0;
                seat.present_until_ms = until;
                self.events.push(Event::Presence { color, gone: false, claim_in_ms: 0 });
                true
            }
            (false, _) => {
                seat.gone_since_ms = now;
                seat.present_until_ms = 0;
                self.events.push(Event::Presence { color, gone: true, claim_in_ms: timeouts.claim_after_ms });
                true
            }
        }
    }

    /// Seats whose presence lease ran out without a renewal (their gateway
    /// died, or lost the game service) count as gone since it ran out, as
    /// if reported gone then: the opponent hears it, with the time left to
    /// a claim.
    fn lapse(&mut self, leases: [Option<u64>; 2], timeouts: &Timeouts) -> bool {
        let now = self.now_ms;
        let mut lapsed = false;
        for (color, until) in [Color::White, Color::Black].into_iter().zip(leases) {
            let Some(until) = until.filter(|&until| now >= until) else { continue };
            let seat = self.live.seat_mut(color);
            seat.gone_since_ms = until;
            seat.present_until_ms = 0;
            let claim_in_ms = (until + timeouts.claim_after_ms).saturating_sub(now);
            self.events.push(Event::Presence { color, gone: true, claim_in_ms });
            lapsed = true;
        }
        lapsed
    }

    /// Acts on whatever fell due by [`Deadlines::of`], the rules the
    /// sweep's wake-up time comes from too.
    fn tick(&mut self, timeouts: &Timeouts) -> bool {
        let now = self.now_ms;
        let due = Deadlines::of(self.live, timeouts);
        if deadlines::passed(due.open_game, now) {
            return self.end(None, EndReason::Aborted);
        }
        if self.flag_if_fallen(&due) {
            return true;
        }
        let lapsed = self.lapse(due.lease, timeouts);
        // A seat that lapsed is away now, which may bring the end of an
        // abandoned game forward.
        let due = if lapsed { Deadlines::of(self.live, timeouts) } else { due };
        if deadlines::passed(due.first_move, now) {
            return self.end(None, EndReason::Aborted) || lapsed;
        }
        if deadlines::passed(due.abandon, now) {
            let not_started = self.moves_by(Color::White) == 0 || self.moves_by(Color::Black) == 0;
            let reason = if not_started { EndReason::Aborted } else { EndReason::Abandoned };
            return self.end(None, reason) || lapsed;
        }
        lapsed
    }
}

pub(crate) fn castling_mode(live: &LiveGame) -> CastlingMode {
    CastlingMode::for_game(live.record.chess960)
}

/// Whether a resent move names the one stored at `ply`, however the client
/// spelled castling.
fn same_uci(stored: &str, sent: &str, live: &LiveGame, ply: usize) -> bool {
    if stored == sent {
        return true;
    }
    let mut replay = fogblast_rules::Game::new(*live.game.initial());
    for uci in &live.record.moves[..ply] {
        if replay.play_uci(uci).is_err() {
            return false;
        }
    }
    let position = replay.position();
    let parse = |text: &str| text.parse::<fogblast_rules::Uci>().ok().and_then(|u| position.parse_uci(&u));
    matches!((parse(stored), parse(sent)), (Some(a), Some(b)) if a == b)
}

/// The colour the contract uses, for events.
pub fn wire(color: Color) -> i32 {
    color_to_wire(color) as i32
}
