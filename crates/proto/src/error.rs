//! The one error vocabulary: every refusal a service gives carries an
//! [`ErrorCode`], which maps to a gRPC status code, an HTTP status and the
//! WebSocket `error` code, so a client always learns what went wrong in the
//! same words whichever edge it came through.

use prost::Message;
use tonic::{Code, Status};

pub use crate::game::ErrorCode;
use crate::game::{ErrorDetail, Refusal};

impl ErrorCode {
    /// The code as the WebSocket protocol spells it.
    pub fn as_ws_code(self) -> &'static str {
        match self {
            ErrorCode::Unspecified | ErrorCode::Internal => "internal",
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::NotFound => "not_found",
            ErrorCode::NotYourTurn => "not_your_turn",
            ErrorCode::NotYourGame => "not_your_game",
            ErrorCode::IllegalMove => "illegal_move",
            ErrorCode::StalePly => "stale_ply",
            ErrorCode::GameOver => "game_over",
            ErrorCode::Unavailable | ErrorCode::NotOwner => "unavailable",
            ErrorCode::Conflict => "conflict",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::UnknownType => "unknown_type",
            ErrorCode::NotAllowed => "not_allowed",
        }
    }

    /// The code a WebSocket `error` frame names; `unavailable` reads back as
    /// [`ErrorCode::Unavailable`] and `internal` as [`ErrorCode::Internal`],
    /// the codes a client cannot tell apart.
    pub fn from_ws_code(code: &str) -> Option<ErrorCode> {
        Some(match code {
            "internal" => ErrorCode::Internal,
            "bad_request" => ErrorCode::BadRequest,
            "not_found" => ErrorCode::NotFound,
            "not_your_turn" => ErrorCode::NotYourTurn,
            "not_your_game" => ErrorCode::NotYourGame,
            "illegal_move" => ErrorCode::IllegalMove,
            "stale_ply" => ErrorCode::StalePly,
            "game_over" => ErrorCode::GameOver,
            "unavailable" => ErrorCode::Unavailable,
            "conflict" => ErrorCode::Conflict,
            "rate_limited" => ErrorCode::RateLimited,
            "unauthorized" => ErrorCode::Unauthorized,
            "unknown_type" => ErrorCode::UnknownType,
            "not_allowed" => ErrorCode::NotAllowed,
            _ => return None,
        })
    }

    pub fn grpc_code(self) -> Code {
        match self {
            ErrorCode::BadRequest | ErrorCode::IllegalMove | ErrorCode::UnknownType => Code::InvalidArgument,
            ErrorCode::NotFound => Code::NotFound,
            ErrorCode::NotYourGame => Code::PermissionDenied,
            ErrorCode::NotYourTurn | ErrorCode::GameOver | ErrorCode::Conflict | ErrorCode::NotAllowed => {
                Code::FailedPrecondition
            }
            ErrorCode::StalePly => Code::Aborted,
            ErrorCode::NotOwner | ErrorCode::Unavailable => Code::Unavailable,
            ErrorCode::RateLimited => Code::ResourceExhausted,
            ErrorCode::Unauthorized => Code::Unauthenticated,
            ErrorCode::Unspecified | ErrorCode::Internal => Code::Internal,
        }
    }

    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::BadRequest | ErrorCode::IllegalMove | ErrorCode::UnknownType => 400,
            ErrorCode::Unauthorized => 401,
            ErrorCode::NotYourGame | ErrorCode::NotAllowed => 403,
            ErrorCode::NotFound => 404,
            ErrorCode::NotYourTurn | ErrorCode::GameOver | ErrorCode::Conflict | ErrorCode::StalePly => 409,
            ErrorCode::RateLimited => 429,
            ErrorCode::NotOwner | ErrorCode::Unavailable => 503,
            ErrorCode::Unspecified | ErrorCode::Internal => 500,
        }
    }

    /// The code a bare status implies, for statuses that carry no detail
    /// (transport failures, deadlines).
    fn from_grpc_code(code: Code) -> ErrorCode {
        match code {
            Code::InvalidArgument | Code::OutOfRange => ErrorCode::BadRequest,
            Code::NotFound => ErrorCode::NotFound,
            Code::PermissionDenied => ErrorCode::NotYourGame,
            Code::FailedPrecondition | Code::AlreadyExists => ErrorCode::Conflict,
            Code::Aborted => ErrorCode::StalePly,
            Code::ResourceExhausted => ErrorCode::RateLimited,
            Code::Unauthenticated => ErrorCode::Unauthorized,
            // A connection that broke mid-call surfaces as `Unknown`, and one
            // a draining shard closed (HTTP/2 GOAWAY, "h2 protocol error")
            // as `Internal`: the service itself always sends its detail, so
            // a bare status is the transport's, worth retrying elsewhere.
            Code::Unavailable | Code::DeadlineExceeded | Code::Cancelled | Code::Unknown | Code::Internal => {
                ErrorCode::Unavailable
            }
            _ => ErrorCode::Internal,
        }
    }
}

/// A refusal with its code, a readable message and, for `NotOwner`, the
/// address of the shard that owns the game.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ServiceError {
    pub code: ErrorCode,
    /// What a client may read.
    pub message: String,
    pub owner: Option<String>,
    /// For a failure of the machinery (a shard, a store, a connection):
    /// what went wrong inside, naming addresses and the stores' own error
    /// text. For logs only; never sent to a client.
    pub detail: Option<String>,
}

/// The codes of failures inside, whose own text stays out of client messages.
fn is_failure(code: ErrorCode) -> bool {
    matches!(code, ErrorCode::Unavailable | ErrorCode::NotOwner | ErrorCode::Internal | ErrorCode::Unspecified)
}

/// What a client reads for a failure inside that arrived from another service.
fn failure_message(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::Unavailable | ErrorCode::NotOwner => "the service is unavailable right now: try again shortly",
        _ => "internal server error",
    }
}

impl ServiceError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ServiceError {
        ServiceError { code, message: message.into(), owner: None, detail: None }
    }

    /// A failure inside: `message` for clients, `detail` for the log.
    pub fn failure(code: ErrorCode, message: impl Into<String>, detail: impl Into<String>) -> ServiceError {
        ServiceError { code, message: message.into(), owner: None, detail: Some(detail.into()) }
    }

    /// The whole story, for a log line: the message and any detail.
    pub fn for_log(&self) -> String {
        match &self.detail {
            Some(detail) => format!("{}: {detail}", self.message),
            None => self.message.clone(),
        }
    }

    pub fn not_owner(owner: Option<String>) -> ServiceError {
        let message = match &owner {
            Some(addr) => format!("this shard does not own the game; {addr} does"),
            None => "this shard does not own the game and no live shard does".to_owned(),
        };
        ServiceError { code: ErrorCode::NotOwner, message, owner, detail: None }
    }

    pub fn into_status(self) -> Status {
        let detail = ErrorDetail { code: self.code as i32, owner: self.owner.unwrap_or_default() };
        Status::with_details(self.code.grpc_code(), self.message, detail.encode_to_vec().into())
    }

    /// The same refusal as [`ServiceError::into_status`], as a message of
    /// its own, for answers on a stream.
    pub fn into_refusal(self) -> Refusal {
        Refusal {
            detail: Some(ErrorDetail { code: self.code as i32, owner: self.owner.unwrap_or_default() }),
            message: self.message,
        }
    }

    /// Reads a refusal back, as [`ServiceError::from_status`] reads a status.
    pub fn from_refusal(refusal: Refusal) -> ServiceError {
        let detail = refusal.detail.unwrap_or_default();
        let code = ErrorCode::try_from(detail.code).unwrap_or(ErrorCode::Internal);
        let owner = Some(detail.owner).filter(|owner| !owner.is_empty());
        if is_failure(code) {
            ServiceError { code, message: failure_message(code).to_owned(), owner, detail: Some(refusal.message) }
        } else {
            ServiceError { code, message: refusal.message, owner, detail: None }
        }
    }

    /// The refusal a status carries. A failure inside (unavailable,
    /// internal) keeps the status's text as its detail only: that text
    /// names shards, stores and their errors, which no client should read.
    pub fn from_status(status: &Status) -> ServiceError {
        let (code, owner) = match ErrorDetail::decode(status.details()) {
            Ok(detail) if detail.code != 0 => (
                ErrorCode::try_from(detail.code).unwrap_or(ErrorCode::Internal),
                Some(detail.owner).filter(|owner| !owner.is_empty()),
            ),
            _ => (ErrorCode::from_grpc_code(status.code()), None),
        };
        if is_failure(code) {
            ServiceError {
                code,
                message: failure_message(code).to_owned(),
                owner,
                detail: Some(status.message().to_owned()),
            }
        } else {
            ServiceError { code, message: status.message().to_owned(), owner, detail: None }
        }
    }
}

impl From<ServiceError> for Status {
    fn from(error: ServiceError) -> Status {
        error.into_status()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_transport_failure_is_unavailable_but_the_services_internal_error_is_not() {
        let closed = Status::internal("h2 protocol error: http2 error");
        assert_eq!(ServiceError::from_status(&closed).code, ErrorCode::Unavailable);
        let ours = ServiceError::new(ErrorCode::Internal, "game g is unreadable").into_status();
        assert_eq!(ServiceError::from_status(&ours).code, ErrorCode::Internal);
    }

    #[test]
    fn a_status_carries_code_message_and_owner_both_ways() {
        let error = ServiceError::not_owner(Some("10.0.0.7:50052".to_owned()));
        let status = error.clone().into_status();
        assert_eq!(status.code(), Code::Unavailable);
        let read = ServiceError::from_status(&status);
        assert_eq!((read.code, read.owner), (error.code, error.owner));

        let refusal = ServiceError::new(ErrorCode::IllegalMove, "e2e5 is not a legal move here");
        assert_eq!(ServiceError::from_status(&refusal.clone().into_status()), refusal);
    }

    #[test]
    fn a_refusal_on_a_stream_reads_back_as_its_status_would() {
        for error in [
            ServiceError::not_owner(Some("http://10.0.0.7:50052".to_owned())),
            ServiceError::new(ErrorCode::IllegalMove, "e2e5 is not a legal move here"),
            ServiceError::new(ErrorCode::Unavailable, "the game store is unavailable: os error 111"),
        ] {
            let by_status = ServiceError::from_status(&error.clone().into_status());
            assert_eq!(ServiceError::from_refusal(error.into_refusal()), by_status);
        }
    }

    /// A failure inside says so to a client, and keeps the addresses and
    /// the stores' own error text for the log.
    #[test]
    fn a_failure_inside_reaches_clients_without_its_internals() {
        for status in [
            ServiceError::new(
                ErrorCode::Unavailable,
                "the game store is unavailable: Connection refused (os error 111)",
            )
            .into_status(),
            ServiceError::not_owner(Some("http://10.0.0.7:50052".to_owned())).into_status(),
            ServiceError::new(ErrorCode::Internal, "game g is unreadable: field 9 truncated").into_status(),
            Status::deadline_exceeded("shard at 10.0.0.7 too slow"),
        ] {
            let read = ServiceError::from_status(&status);
            for leak in ["10.0.0.7", "os error", "store", "field 9"] {
                assert!(!read.message.contains(leak), "{:?} shows {leak:?}", read.message);
            }
            assert_eq!(read.detail.as_deref(), Some(status.message()));
            assert!(read.for_log().contains(status.message()));
        }
    }

    #[test]
    fn every_code_has_a_websocket_name_and_an_http_status() {
        for code in 0..=15 {
            let code = ErrorCode::try_from(code).unwrap();
            assert!(!code.as_ws_code().is_empty());
            assert!((400..600).contains(&code.http_status()));
            let read = ErrorCode::from_ws_code(code.as_ws_code()).unwrap();
            assert_eq!(read.as_ws_code(), code.as_ws_code(), "{code:?}");
        }
        assert!(ErrorCode::try_from(16).is_err(), "a new code needs its names here");
        assert_eq!(ErrorCode::from_ws_code("no_such_code"), None);
    }
}
