//! Clock comments, `[%clk H:MM:SS]`, as lichess and python-chess write and
//! read them: the mover's remaining time after a move.

/// `H:MM:SS` for `ms`, the way lichess writes `[%clk]`: whole seconds,
/// rounded down so a player is never shown more time than they had.
pub(crate) fn format_clock(ms: u64) -> String {
    let seconds = ms / 1000;
    format!("{}:{:02}:{:02}", seconds / 3600, seconds / 60 % 60, seconds % 60)
}

/// Milliseconds of an `H:MM:SS` or `H:MM:SS.fff` clock (fractions beyond
/// milliseconds are dropped); `None` if it is malformed or overflows.
pub(crate) fn parse_clock(text: &str) -> Option<u64> {
    let mut parts = text.split(':');
    let (hours, minutes, seconds) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let (whole, fraction) = seconds.split_once('.').unwrap_or((seconds, ""));
    let digits = |s: &str| !s.is_empty() && s.len() <= 12 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(hours) || !digits(minutes) || !digits(whole) {
        return None;
    }
    if !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let millis =
        fraction.bytes().chain(std::iter::repeat(b'0')).take(3).fold(0, |acc, b| acc * 10 + u64::from(b - b'0'));
    let (h, m, s): (u64, u64, u64) = (hours.parse().ok()?, minutes.parse().ok()?, whole.parse().ok()?);
    h.checked_mul(3600)?.checked_add(m.checked_mul(60)?)?.checked_add(s)?.checked_mul(1000)?.checked_add(millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_lichess() {
        assert_eq!(format_clock(598_000), "0:09:58");
        assert_eq!(format_clock(598_999), "0:09:58");
        assert_eq!(format_clock(0), "0:00:00");
        assert_eq!(format_clock(36_000_000), "10:00:00");
        assert_eq!(format_clock(3_723_000), "1:02:03");
    }

    #[test]
    fn parses_whole_and_fractional_seconds() {
        assert_eq!(parse_clock("0:09:58"), Some(598_000));
        assert_eq!(parse_clock("1:02:03.5"), Some(3_723_500));
        assert_eq!(parse_clock("0:00:01.23456"), Some(1_234));
        assert_eq!(parse_clock("0:00:07."), Some(7_000));
        assert_eq!(parse_clock("10:00:00"), Some(36_000_000));
        for bad in ["", "9:58", "0:09:58:00", "a:09:58", "0:09:5x", "0:09:58.x", "-1:00:00", "9999999999999:00:00"] {
            assert_eq!(parse_clock(bad), None, "{bad:?}");
        }
    }
}
