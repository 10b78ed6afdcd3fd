//! One attempt at a command, decided without I/O: from the game as the
//! shard holds it (or just read it) and the store's time, whether to
//! answer at once, read the game again, or commit a changed game. The
//! shard carries the decision out ([`super::Shard::execute`]).

use std::sync::Arc;

use fogblast_proto::error::ServiceError;

use super::cache::Cached;
use super::{record_request, recorded, recorded_refusal, Done};
use crate::commands::{self, Changes, Command, InPlace};
use crate::config::Timeouts;
use crate::record::LiveGame;

/// The game a command started from: held in the slot since an earlier
/// commit, or read from the store for this attempt.
#[derive(Debug)]
pub(super) enum Start {
    Held(Cached),
    Read(Cached),
}

/// What one attempt at a command comes to.
#[derive(Debug)]
pub(super) enum Decision {
    /// Refused on the game as just read: it goes back into the slot as it
    /// was, and nothing is confirmed.
    Refused { keep: Cached, refusal: ServiceError },
    /// Done before (a request recorded, a move resent) or nothing to do:
    /// `keep` goes back into the slot; once the store confirms what the
    /// answer comes from is durable, it is given. `republish` asks the
    /// public events up to that version to be published again, as the
    /// first answer (and its events) may have been lost.
    Answered { keep: Cached, answer: Result<Done, ServiceError>, republish: Option<u64> },
    /// Only a commit checks a held game against the store, and a shard
    /// whose view of membership lagged may have had it written since: a
    /// refusal or a no-op is decided again on a fresh read.
    ReadAgain,
    /// Commit `live`, changed from `from_version`.
    Commit(Box<Proposal>),
}

/// A changed game to commit.
#[derive(Debug)]
pub(super) struct Proposal {
    pub(super) live: LiveGame,
    pub(super) from_version: u64,
    pub(super) was_ended: bool,
    pub(super) changes: Changes,
}

/// Decides `command` (named `request_id`, empty for none) on the game at
/// store time `now`. The game is changed in place, copied only while
/// something else shares it: a held game is never kept for a refusal (it
/// is read again), and a game just read is shared with the slot to keep.
pub(super) fn decide(start: Start, command: Command, request_id: &str, now: u64, timeouts: &Timeouts) -> Decision {
    let (cached, as_read) = match start {
        Start::Held(cached) => (cached, None),
        Start::Read(cached) => {
            let as_read = Arc::clone(&cached.live);
            (cached, Some(as_read))
        }
    };
    if let Some(applied) = recorded(&cached.live.record, request_id) {
        let answer = match recorded_refusal(applied) {
            Some(refusal) => Err(refusal),
            None => Ok(Done { version: applied.version, live: cached.live.clone() }),
        };
        let republish = Some(applied.version);
        return Decision::Answered { keep: cached, answer, republish };
    }
    let version = cached.version;
    let was_ended = cached.live.status() == fogblast_proto::game::Status::Ended;
    let mut live = Arc::unwrap_or_clone(cached.live);
    let outcome = commands::apply_in_place(&mut live, command, now, timeouts);
    let (outcome, as_read) = match (outcome, as_read) {
        (Ok(InPlace::Changed(changes)), _) => {
            let mut proposal = Proposal { live, from_version: version, was_ended, changes };
            proposal.record_request(request_id);
            return Decision::Commit(Box::new(proposal));
        }
        (_, None) => return Decision::ReadAgain,
        (outcome, Some(as_read)) => (outcome, as_read),
    };
    let keep = Cached { live: as_read, version };
    match outcome {
        Err(refused) => Decision::Refused { keep, refusal: refused.into() },
        Ok(outcome) => {
            let resent = matches!(outcome, InPlace::AlreadyPlayed);
            let answer = Ok(Done { version, live: keep.live.clone() });
            Decision::Answered { keep, answer, republish: resent.then_some(version) }
        }
    }
}

impl Proposal {
    /// Records `request_id` (if any) in the game with the command's
    /// outcome, at the version the commit will give it.
    fn record_request(&mut self, request_id: &str) {
        if request_id.is_empty() {
            return;
        }
        let version = self.from_version + self.changes.events.len() as u64;
        let refusal = self.changes.refusal.as_ref().map(|refusal| ServiceError::from(refusal.clone()));
        record_request(&mut self.live.record, request_id, version, refusal.as_ref());
    }
}

#[cfg(test)]
mod tests {
    use fogblast_proto::error::ErrorCode;
    use fogblast_proto::game::ColorChoice;
    use fogblast_proto::ids::{GameId, PlayerId};
    use fogblast_rules::Variant;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    use super::*;
    use crate::create::{new_record, NewGame};

    const NOW: u64 = 1_000_000;

    fn timeouts() -> Timeouts {
        Timeouts { no_start_ms: 30_000, open_game_ms: 600_000, claim_after_ms: 20_000, abandon_ms: 300_000 }
    }

    fn id(name: &str) -> PlayerId {
        PlayerId::parse(name).unwrap()
    }

    /// A game between "w" and "b" at version 2, white to move.
    fn cached() -> Cached {
        let spec = NewGame {
            player: id("w"),
            name: "w".into(),
            variant: Variant::Atomic,
            chess960: false,
            chess960_position: None,
            color: ColorChoice::ChooseWhite,
            clock: None,
            computer: None,
            rated: false,
            tournament: String::new(),
        };
        let (record, _) = new_record(&GameId::parse("g1").unwrap(), "CODE", &spec, NOW, &mut StdRng::seed_from_u64(1));
        let mut live = LiveGame::from_record(record).unwrap();
        let join = Command::Join { player: id("b"), name: "b".into() };
        assert!(matches!(commands::apply_in_place(&mut live, join, NOW, &timeouts()), Ok(InPlace::Changed(_))));
        Cached { live: Arc::new(live), version: 2 }
    }

    fn white_plays(uci: &str, ply: u32) -> Command {
        Command::Move { player: id("w"), uci: uci.into(), ply, lag_ms: 0, waited_ms: 0 }
    }

    fn commit(decision: Decision) -> Proposal {
        match decision {
            Decision::Commit(proposal) => *proposal,
            other => panic!("not a commit: {other:?}"),
        }
    }

    #[test]
    fn a_change_is_proposed_with_its_request_recorded_at_the_version_it_will_have() {
        let proposal = commit(decide(Start::Held(cached()), white_plays("e2e4", 0), "r1", NOW, &timeouts()));
        assert_eq!((proposal.from_version, proposal.changes.events.len()), (2, 1));
        assert_eq!(proposal.live.record.moves, ["e2e4"]);
        let recorded = recorded(&proposal.live.record, "r1").expect("the request is recorded");
        assert_eq!((recorded.version, recorded.refused), (3, 0));
    }

    #[test]
    fn a_refusal_on_a_held_game_is_decided_again_on_a_fresh_read() {
        let decision = decide(Start::Held(cached()), white_plays("e2e5", 0), "", NOW, &timeouts());
        assert!(matches!(decision, Decision::ReadAgain), "{decision:?}");
    }

    #[test]
    fn a_refusal_on_a_game_just_read_keeps_it_as_read() {
        let read = cached();
        let decision = decide(Start::Read(read.clone()), white_plays("e2e5", 0), "r1", NOW, &timeouts());
        let Decision::Refused { keep, refusal } = decision else { panic!("not refused: {decision:?}") };
        assert_eq!(refusal.code, ErrorCode::IllegalMove);
        assert_eq!((keep.version, &keep.live.record), (2, &read.live.record));
        assert!(recorded(&keep.live.record, "r1").is_none());
    }

    #[test]
    fn a_recorded_request_is_answered_as_before_and_its_events_published_again() {
        let proposal = commit(decide(Start::Held(cached()), white_plays("e2e4", 0), "r1", NOW, &timeouts()));
        let after = Cached { live: Arc::new(proposal.live), version: 3 };
        // Sent again, even as another command, under the same request id.
        let decision = decide(Start::Held(after), white_plays("d2d4", 1), "r1", NOW + 5, &timeouts());
        let Decision::Answered { keep, answer, republish } = decision else { panic!("not answered: {decision:?}") };
        assert_eq!(answer.expect("the first answer").version, 3);
        assert_eq!((republish, keep.live.record.moves.len()), (Some(3), 1));
    }

    #[test]
    fn a_resent_move_changes_nothing_and_publishes_its_events_again() {
        let proposal = commit(decide(Start::Held(cached()), white_plays("e2e4", 0), "", NOW, &timeouts()));
        let after = Cached { live: Arc::new(proposal.live), version: 3 };
        let decision = decide(Start::Read(after), white_plays("e2e4", 0), "", NOW + 5, &timeouts());
        let Decision::Answered { answer, republish, .. } = decision else { panic!("not answered: {decision:?}") };
        assert_eq!((answer.expect("answered").version, republish), (3, Some(3)));
        // Nothing to do is answered without publishing anything again.
        let decision = decide(Start::Read(cached()), Command::Tick, "", NOW + 5, &timeouts());
        let Decision::Answered { republish, .. } = decision else { panic!("not answered: {decision:?}") };
        assert_eq!(republish, None);
    }
}
