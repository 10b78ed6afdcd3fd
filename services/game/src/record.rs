//! A live game: the record the store keeps, together with the rules' replay
//! of its moves, so commands are checked against a real position while
//! only the compact record is ever written. Also the translations between
//! the rules' types and the contract's enums.

use fogblast_proto::game::{ClockState, Color as WireColor, EndReason, GameInPlay, Status};
use fogblast_proto::ids::PlayerId;
use fogblast_proto::record::{GameRecord, Seat};
use fogblast_rules::{Color, DrawReason, Fen, Game, Outcome, Position, Variant, WinReason};

/// A stored record that cannot be replayed: written by a newer or broken
/// build. The game is refused rather than guessed at.
#[derive(Debug, thiserror::Error)]
#[error("game record {game}: {reason}")]
pub struct CorruptRecord {
    pub game: String,
    pub reason: String,
}

#[derive(Clone, Debug)]
pub struct LiveGame {
    pub record: GameRecord,
    pub game: Game,
}

impl LiveGame {
    pub fn from_record(record: GameRecord) -> Result<LiveGame, CorruptRecord> {
        let corrupt = |reason: String| CorruptRecord { game: record.game_id.clone(), reason };
        let variant = Variant::try_from(record.variant()).map_err(|_| corrupt("unknown variant".into()))?;
        let initial = Position::from_fen(&record.initial_fen, variant).map_err(|e| corrupt(e.to_string()))?;
        let mut game = Game::new(initial);
        for (ply, uci) in record.moves.iter().enumerate() {
            game.play_uci(uci).map_err(|e| corrupt(format!("move {ply} ({uci}): {e}")))?;
        }
        Ok(LiveGame { record, game })
    }

    pub fn variant(&self) -> Variant {
        self.game.position().variant()
    }

    pub fn ply(&self) -> usize {
        self.game.ply()
    }

    pub fn status(&self) -> Status {
        self.record.status()
    }

    /// The side whose draw offer stands.
    pub fn draw_offer(&self) -> Option<Color> {
        color_from_wire(self.record.draw_offer())
    }

    pub fn set_draw_offer(&mut self, by: Option<Color>) {
        self.record.draw_offer = wire_color_or_none(by);
    }

    /// The side whose takeback request stands.
    pub fn takeback_offer(&self) -> Option<Color> {
        color_from_wire(self.record.takeback_offer())
    }

    pub fn set_takeback_offer(&mut self, by: Option<Color>) {
        self.record.takeback_offer = wire_color_or_none(by);
    }

    /// The side whose rematch offer stands.
    pub fn rematch_offer(&self) -> Option<Color> {
        color_from_wire(self.record.rematch_offer())
    }

    pub fn set_rematch_offer(&mut self, by: Option<Color>) {
        self.record.rematch_offer = wire_color_or_none(by);
    }

    pub fn seat(&self, color: Color) -> &Seat {
        let seat = match color {
            Color::White => &self.record.white,
            Color::Black => &self.record.black,
        };
        seat.as_ref().expect("records are created with both seats")
    }

    pub fn seat_mut(&mut self, color: Color) -> &mut Seat {
        let seat = match color {
            Color::White => &mut self.record.white,
            Color::Black => &mut self.record.black,
        };
        seat.get_or_insert_with(Seat::default)
    }

    pub fn player_id(&self, color: Color) -> &str {
        self.seat(color).player.as_ref().map_or("", |p| p.id.as_str())
    }

    pub fn is_computer(&self, color: Color) -> bool {
        self.seat(color).player.as_ref().is_some_and(|p| p.computer)
    }

    /// When a game between people is aborted because a side has not made
    /// its first move, as store time; `None` once both have moved, and
    /// always against the computer, which waits for its human (one who
    /// leaves is covered by the abandonment rule).
    pub fn first_move_due_ms(&self, no_start_ms: u64) -> Option<u64> {
        let against_computer = Color::ALL.into_iter().any(|c| self.is_computer(c));
        (self.status() == Status::Playing && self.ply() < 2 && !against_computer)
            .then(|| self.record.turn_started_ms + no_start_ms)
    }

    /// When an open game nobody joined is aborted, as store time.
    pub fn open_game_due_ms(&self, open_game_ms: u64) -> Option<u64> {
        (self.status() == Status::Waiting).then(|| self.record.created_at_ms.saturating_add(open_game_ms))
    }

    /// Since when both seats have been away, as store time: each is the
    /// computer, reported gone (or its lease lapsed), or never reported at
    /// all (a bot or a player that only sends commands); and since the
    /// game's last move, which someone made. `None` while a person is here.
    pub fn both_away_since_ms(&self) -> Option<u64> {
        let away_since = |color: Color| {
            let seat = self.seat(color);
            let away = seat.gone_since_ms != 0 || self.is_computer(color) || !seat.presence_reported;
            away.then_some(seat.gone_since_ms)
        };
        Some(away_since(Color::White)?.max(away_since(Color::Black)?).max(self.record.turn_started_ms))
    }

    /// When a game in play that both seats are away from ends (abandoned,
    /// or aborted before both moved), as store time. The one rule for the
    /// timer that sets the deadline and the tick that acts on it.
    pub fn abandon_due_ms(&self, abandon_ms: u64) -> Option<u64> {
        if self.status() != Status::Playing {
            return None;
        }
        self.both_away_since_ms().map(|since| since.saturating_add(abandon_ms))
    }

    /// The seat `player` holds. A player seated on both sides (impossible
    /// through the service, but cheap to answer) gets the side to move.
    pub fn color_of(&self, player: &PlayerId) -> Option<Color> {
        let turn = self.game.position().turn();
        [turn, !turn].into_iter().find(|&c| !self.is_computer(c) && self.player_id(c) == player.as_str())
    }

    /// The people seated (not the computer), as ids.
    pub fn people(&self) -> Vec<PlayerId> {
        [Color::White, Color::Black]
            .into_iter()
            .filter(|&c| !self.is_computer(c))
            .filter_map(|c| PlayerId::parse(self.player_id(c)).ok())
            .collect()
    }

    /// The clocks run once both sides have made their first move.
    pub fn clock_running(&self) -> bool {
        self.record.clock.is_some() && self.status() == Status::Playing && self.ply() >= 2
    }

    /// Whose clock runs now, if any.
    pub fn running_side(&self) -> Option<Color> {
        self.clock_running().then(|| self.game.position().turn())
    }

    /// The clocks as they stand at `now_ms`, or `None` for a game without one.
    pub fn clock_at(&self, now_ms: u64) -> Option<ClockState> {
        self.record.clock?;
        let mut white_ms = self.seat(Color::White).remaining_ms;
        let mut black_ms = self.seat(Color::Black).remaining_ms;
        let running = self.running_side();
        if let Some(side) = running {
            let elapsed = now_ms.saturating_sub(self.record.turn_started_ms);
            let side_ms = if side == Color::White { &mut white_ms } else { &mut black_ms };
            *side_ms = side_ms.saturating_sub(elapsed);
        }
        Some(ClockState { white_ms, black_ms, running: wire_color_or_none(running) })
    }

    /// The game's entry in the store's index of games being played
    /// (`fogblast.game.v1.GameInPlay`, encoded) while it is played, with
    /// both seats taken; `None` before it starts and once it ends. It says
    /// who plays what, never where the pieces stand.
    pub fn in_play_entry(&self) -> Option<Vec<u8>> {
        if self.status() != Status::Playing {
            return None;
        }
        let record = &self.record;
        let player = |color: Color| self.seat(color).player.clone();
        let entry = GameInPlay {
            game_id: record.game_id.clone(),
            variant: record.variant,
            chess960: record.chess960,
            rated: record.rated,
            clock: record.clock,
            white: player(Color::White),
            black: player(Color::Black),
            started_at_ms: record.started_at_ms,
            tournament_id: record.tournament_id.clone(),
        };
        Some(prost::Message::encode_to_vec(&entry))
    }

    pub fn fen(&self) -> String {
        Fen::from_position(self.game.position()).to_string()
    }
}

pub fn color_to_wire(color: Color) -> WireColor {
    match color {
        Color::White => WireColor::White,
        Color::Black => WireColor::Black,
    }
}

pub fn color_from_wire(color: WireColor) -> Option<Color> {
    match color {
        WireColor::White => Some(Color::White),
        WireColor::Black => Some(Color::Black),
        WireColor::Unspecified => None,
    }
}

pub fn wire_color_or_none(color: Option<Color>) -> i32 {
    color.map_or(WireColor::Unspecified, color_to_wire) as i32
}

/// The end reason the contract names for an outcome by the rules.
pub fn end_reason(outcome: Outcome) -> EndReason {
    match outcome {
        Outcome::Decisive { reason, .. } => match reason {
            WinReason::Checkmate => EndReason::Checkmate,
            WinReason::KingExploded => EndReason::Explosion,
            WinReason::KingCaptured => EndReason::KingCaptured,
            WinReason::Timeout => EndReason::Timeout,
        },
        Outcome::Draw { reason } => match reason {
            DrawReason::Stalemate => EndReason::Stalemate,
            DrawReason::NoMoves => EndReason::NoMoves,
            DrawReason::InsufficientMaterial => EndReason::InsufficientMaterial,
            DrawReason::ThreefoldRepetition => EndReason::Threefold,
            DrawReason::FiftyMoves => EndReason::FiftyMoves,
            DrawReason::TimeoutVsInsufficientMaterial => EndReason::Timeout,
        },
    }
}

/// `1-0`, `0-1` or `1/2-1/2` for a win by `winner`, or a draw.
pub fn result_for(winner: Option<Color>) -> &'static str {
    match winner {
        Some(Color::White) => "1-0",
        Some(Color::Black) => "0-1",
        None => "1/2-1/2",
    }
}
