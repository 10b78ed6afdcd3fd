//! The caller's deadline. gRPC sends it as a relative `grpc-timeout` header;
//! tonic cancels the call when it runs out, so the pool answers a little
//! earlier, while the caller can still hear why.

use std::time::{Duration, Instant};

use tonic::metadata::MetadataMap;

/// Most time kept back from a deadline for the answer to travel.
const MAX_REPLY_MARGIN: Duration = Duration::from_millis(50);
/// Most time kept back from the answer's due time for a search to notice
/// its time is up (it looks at the clock every thousand nodes or so) and
/// to hand its move over.
const MAX_SEARCH_SLACK: Duration = Duration::from_millis(50);

/// When the answer must leave, for a call received at `received`, or `None`
/// when the caller set no deadline (or an unreadable one, which tonic also
/// ignores).
pub(crate) fn answer_by(metadata: &MetadataMap, received: Instant) -> Option<Instant> {
    let header = metadata.get("grpc-timeout")?;
    let Some(timeout) = header.to_str().ok().and_then(parse_grpc_timeout) else {
        tracing::debug!(header = ?header, "unreadable grpc-timeout ignored");
        return None;
    };
    let margin = (timeout / 10).min(MAX_REPLY_MARGIN);
    Some(received + (timeout - margin))
}

/// How long a search starting `now` may take so its answer is ready by `due`.
pub(crate) fn search_time(due: Instant, now: Instant) -> Duration {
    let left = due.saturating_duration_since(now);
    left - (left / 5).min(MAX_SEARCH_SLACK)
}

/// Parses a `grpc-timeout` value: up to eight digits and a unit
/// (`H`, `M`, `S`, `m`, `u`, `n`), as the gRPC HTTP/2 protocol defines it.
pub(crate) fn parse_grpc_timeout(text: &str) -> Option<Duration> {
    let digits = text.get(..text.len().checked_sub(1)?)?;
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let value: u64 = digits.parse().ok()?;
    Some(match &text[digits.len()..] {
        "H" => Duration::from_secs(value * 3600),
        "M" => Duration::from_secs(value * 60),
        "S" => Duration::from_secs(value),
        "m" => Duration::from_millis(value),
        "u" => Duration::from_micros(value),
        "n" => Duration::from_nanos(value),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_unit() {
        assert_eq!(parse_grpc_timeout("2H"), Some(Duration::from_secs(7200)));
        assert_eq!(parse_grpc_timeout("3M"), Some(Duration::from_secs(180)));
        assert_eq!(parse_grpc_timeout("10S"), Some(Duration::from_secs(10)));
        assert_eq!(parse_grpc_timeout("250m"), Some(Duration::from_millis(250)));
        assert_eq!(parse_grpc_timeout("99999999u"), Some(Duration::from_micros(99_999_999)));
        assert_eq!(parse_grpc_timeout("0n"), Some(Duration::ZERO));
    }

    #[test]
    fn rejects_malformed_values() {
        for text in ["", "m", "100", "123456789m", "-5m", "5x", "1.5S", "５m"] {
            assert_eq!(parse_grpc_timeout(text), None, "{text:?}");
        }
    }

    #[test]
    fn answers_before_the_deadline() {
        let mut metadata = MetadataMap::new();
        let now = Instant::now();
        assert_eq!(answer_by(&metadata, now), None);
        metadata.insert("grpc-timeout", "200m".parse().unwrap());
        assert_eq!(answer_by(&metadata, now), Some(now + Duration::from_millis(180)));
        metadata.insert("grpc-timeout", "60S".parse().unwrap());
        assert_eq!(answer_by(&metadata, now), Some(now + Duration::from_secs(60) - MAX_REPLY_MARGIN));
        metadata.insert("grpc-timeout", "soon".parse().unwrap());
        assert_eq!(answer_by(&metadata, now), None);
    }

    #[test]
    fn searches_end_before_the_answer_is_due() {
        let now = Instant::now();
        let ms = Duration::from_millis;
        assert_eq!(search_time(now + ms(100), now), ms(80));
        assert_eq!(search_time(now + ms(1000), now), ms(950));
        assert_eq!(search_time(now, now + ms(5)), Duration::ZERO);
    }
}
