//! When a game needs attention without a command, and what falls due
//! then. The store's due time (which wakes the sweep) and the tick (which
//! acts when woken) both read [`Deadlines::of`], so a rule changed here
//! changes both: the sweep never sleeps past a deadline the tick would act
//! on, nor wakes a game forever for one it would not.

use fogblast_proto::game::Status;
use fogblast_rules::Color;

use crate::clock;
use crate::config::Timeouts;
use crate::record::LiveGame;

/// How long after the computer's turn began another shard steps in to ask
/// the engine, when the owner that should have asked is gone.
pub const COMPUTER_RESCUE_MS: u64 = 3_000;

/// A game's deadlines, as store time; `None` for one that does not apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Deadlines {
    /// Waiting: the open game nobody joined is aborted.
    pub open_game: Option<u64>,
    /// The computer to move: the rescue for an owner that died (the owner
    /// itself asks the engine at once).
    pub computer_rescue: Option<u64>,
    /// The side whose clock runs, and when its flag falls.
    pub flag: Option<(Color, u64)>,
    /// The first moves not made: the game is aborted.
    pub first_move: Option<u64>,
    /// Both seats away: the game is abandoned (aborted before both moved).
    pub abandon: Option<u64>,
    /// When each seat's presence lease runs out without a renewal, white
    /// then black: the seat counts as gone from then.
    pub lease: [Option<u64>; 2],
}

impl Deadlines {
    pub fn of(live: &LiveGame, timeouts: &Timeouts) -> Deadlines {
        match live.status() {
            Status::Waiting => {
                Deadlines { open_game: live.open_game_due_ms(timeouts.open_game_ms), ..Deadlines::default() }
            }
            Status::Playing => {
                let record = &live.record;
                let turn = live.game.position().turn();
                let flag = live.running_side().map(|side| {
                    let seat = live.seat(side);
                    (side, clock::flag_at_ms(record.turn_started_ms, seat.remaining_ms, seat.lag_quota_ms))
                });
                let lease = |color: Color| {
                    let seat = live.seat(color);
                    (seat.gone_since_ms == 0 && seat.present_until_ms != 0).then_some(seat.present_until_ms)
                };
                Deadlines {
                    open_game: None,
                    computer_rescue: live.is_computer(turn).then(|| record.turn_started_ms + COMPUTER_RESCUE_MS),
                    flag,
                    first_move: live.first_move_due_ms(timeouts.no_start_ms),
                    abandon: live.abandon_due_ms(timeouts.abandon_ms),
                    lease: [lease(Color::White), lease(Color::Black)],
                }
            }
            _ => Deadlines::default(),
        }
    }

    /// The earliest deadline: when the sweep must wake the game.
    pub fn next(&self) -> Option<u64> {
        [self.open_game, self.computer_rescue, self.flag.map(|(_, at)| at), self.first_move, self.abandon]
            .into_iter()
            .chain(self.lease)
            .flatten()
            .min()
    }
}

/// Whether `deadline` has come at `now_ms`.
pub fn passed(deadline: Option<u64>, now_ms: u64) -> bool {
    deadline.is_some_and(|at| now_ms >= at)
}

/// When the game next needs attention without a command, as store time.
pub fn next_due(live: &LiveGame, timeouts: &Timeouts) -> Option<u64> {
    Deadlines::of(live, timeouts).next()
}
