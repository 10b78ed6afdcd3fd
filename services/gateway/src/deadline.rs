//! A deadline on every call to the matchmaker and the rating service. Their
//! channels connect lazily and tonic gives a request no timeout of its own,
//! so a frozen peer (stopped, partitioned, its sockets still open) would
//! leave the call, and the client waiting on it, hanging for good; after
//! the deadline the client is told `unavailable` and may try again.

use std::future::Future;
use std::time::Duration;

use fogblast_proto::error::{ErrorCode, ServiceError};

/// `call` to `service`, or `unavailable` once `limit` has passed.
pub async fn within<T>(
    limit: Duration,
    service: &str,
    call: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
) -> Result<T, ServiceError> {
    match tokio::time::timeout(limit, call).await {
        Ok(Ok(answer)) => Ok(answer.into_inner()),
        Ok(Err(status)) => Err(ServiceError::from_status(&status)),
        Err(_) => Err(ServiceError::new(
            ErrorCode::Unavailable,
            format!("the {service} did not answer within {} ms: try again later", limit.as_millis()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_call_that_never_answers_is_unavailable_after_its_deadline() {
        let hung = std::future::pending::<Result<tonic::Response<()>, tonic::Status>>();
        let error = within(Duration::from_millis(50), "matchmaker", hung).await.unwrap_err();
        assert_eq!(error.code, ErrorCode::Unavailable);
        assert_eq!(error.message, "the matchmaker did not answer within 50 ms: try again later");
    }

    #[tokio::test]
    async fn an_answer_or_a_refusal_passes_through() {
        let answered = within(Duration::from_secs(1), "matchmaker", async { Ok(tonic::Response::new(7)) }).await;
        assert_eq!(answered.unwrap(), 7);
        let refused =
            within::<()>(Duration::from_secs(1), "matchmaker", async { Err(tonic::Status::not_found("no such seek")) })
                .await;
        assert_eq!(refused.unwrap_err().code, ErrorCode::NotFound);
    }
}
