//! Why a command was refused, as a type: each refusal names its reason and
//! the contract's code follows from it (`error_code`), so the functional
//! core never chooses a code and a message apart, and tests can match the
//! reason rather than its wording.

use fogblast_proto::error::{ErrorCode, ServiceError};

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("you do not hold a seat in this game")]
    NotSeated,
    #[error("the game is over")]
    GameOver,
    #[error("your time ran out before the move arrived")]
    FlagFell,
    #[error("the game has not started: a seat is free")]
    NotStarted,
    #[error("this game has no free seat")]
    NoFreeSeat,
    #[error("you cannot join your own game")]
    OwnGame,
    #[error("ply {ply} was already played; the game is at ply {played}")]
    PlyPlayed { ply: usize, played: usize },
    #[error("the game is at ply {played}, not {ply}")]
    PlyAhead { ply: usize, played: usize },
    #[error("it is not your turn")]
    NotYourTurn,
    #[error("{uci:?} is not UCI: {reason}")]
    NotUci { uci: String, reason: String },
    #[error("{uci} is not a legal move here")]
    IllegalMove { uci: String },
    #[error("both sides have moved: resign or offer a draw instead")]
    TooLateToAbort,
    #[error("your draw offer already stands")]
    DrawOfferStands,
    #[error("there is no draw offer to answer")]
    NoDrawOffer,
    #[error("action must be offer, accept or decline")]
    UnknownDrawAction,
    #[error("you have no move to take back")]
    NothingToTakeBack,
    #[error("your takeback request already stands")]
    TakebackRequestStands,
    #[error("there is no takeback request to answer")]
    NoTakebackRequest,
    #[error("action must be request, accept or decline")]
    UnknownTakebackAction,
    #[error("your opponent is still here")]
    OpponentPresent,
    #[error("you may claim in {wait_ms} ms")]
    ClaimTooEarly { wait_ms: u64 },
    #[error("a rematch is offered once the game is over")]
    RematchBeforeEnd,
    #[error("the rematch has started")]
    RematchStarted,
    #[error("your rematch offer already stands")]
    RematchOfferStands,
    #[error("there is no rematch offer to decline")]
    NoRematchOffer,
    #[error("fog of war has no takebacks: taking a move back would show what the fog hid")]
    NoTakebacksInFog,
    #[error("the computer plays every game out: play on, or resign")]
    ComputerPlaysOn,
    #[error("you have made {limit} {what} in this game; no more are allowed")]
    OfferBudgetSpent { what: &'static str, limit: u32 },
    #[error("a chat line is 1 to {max} characters", max = crate::commands::MAX_CHAT_CHARS)]
    ChatText,
    #[error("room must be players or spectators")]
    UnknownChatRoom,
    #[error("berserk is for tournament games with a clock")]
    NoBerserk,
    #[error("berserk only before your first move")]
    BerserkAfterFirstMove,
    #[error("a tournament pairs its players again: there is no rematch")]
    RematchInTournament,
    #[error("time is given only in games with a clock against a person, outside tournaments")]
    NoTimeToGive,
    #[error("your opponent's clock already holds the most time it may")]
    ClockFull,
}

impl CommandError {
    /// The contract's code for this refusal (docs/game-service.md, "Errors").
    pub fn error_code(&self) -> ErrorCode {
        use CommandError::*;
        match self {
            NotSeated => ErrorCode::NotYourGame,
            GameOver | FlagFell => ErrorCode::GameOver,
            NotYourTurn => ErrorCode::NotYourTurn,
            PlyPlayed { .. } | PlyAhead { .. } => ErrorCode::StalePly,
            NotUci { .. } | UnknownDrawAction | UnknownTakebackAction | ChatText | UnknownChatRoom => {
                ErrorCode::BadRequest
            }
            IllegalMove { .. } => ErrorCode::IllegalMove,
            NoTakebacksInFog => ErrorCode::NotAllowed,
            OfferBudgetSpent { .. } => ErrorCode::RateLimited,
            NotStarted
            | NoFreeSeat
            | OwnGame
            | TooLateToAbort
            | DrawOfferStands
            | NoDrawOffer
            | NothingToTakeBack
            | TakebackRequestStands
            | NoTakebackRequest
            | OpponentPresent
            | ClaimTooEarly { .. }
            | RematchBeforeEnd
            | RematchStarted
            | RematchOfferStands
            | NoRematchOffer
            | ComputerPlaysOn
            | BerserkAfterFirstMove
            | RematchInTournament => ErrorCode::Conflict,
            NoBerserk | NoTimeToGive => ErrorCode::NotAllowed,
            ClockFull => ErrorCode::Conflict,
        }
    }
}

impl From<CommandError> for ServiceError {
    fn from(refusal: CommandError) -> ServiceError {
        ServiceError::new(refusal.error_code(), refusal.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_becomes_its_code_and_its_reason() {
        let error = ServiceError::from(CommandError::PlyAhead { ply: 7, played: 5 });
        assert_eq!(error.code, ErrorCode::StalePly);
        assert_eq!(error.message, "the game is at ply 5, not 7");
        assert_eq!(ServiceError::from(CommandError::FlagFell).code, ErrorCode::GameOver);
        assert_eq!(ServiceError::from(CommandError::OwnGame).code, ErrorCode::Conflict);
    }
}
