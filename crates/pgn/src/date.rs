//! UTC calendar dates and times for the `Date`, `UTCDate` and `UTCTime`
//! tags, from and to unix milliseconds. The proleptic Gregorian calendar
//! is a few lines of arithmetic (Howard Hinnant's `days_from_civil`), not
//! worth a date crate.

const MS_PER_DAY: u64 = 86_400_000;

/// A UTC date and time of day, to the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DateTime {
    pub year: u64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

impl DateTime {
    /// The UTC date and time of `ms` after the unix epoch, milliseconds
    /// dropped.
    pub fn from_unix_ms(ms: u64) -> DateTime {
        let days = ms / MS_PER_DAY;
        let seconds = (ms % MS_PER_DAY / 1000) as u32;
        // Days since 0000-03-01, so that leap days end the year.
        let z = days + 719_468;
        let era = z / 146_097;
        let doe = z % 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = yoe + era * 400 + u64::from(month <= 2);
        DateTime { year, month, day, hour: seconds / 3600, minute: seconds / 60 % 60, second: seconds % 60 }
    }

    /// Unix milliseconds of this date and time; `None` before 1970 or for
    /// a day the month does not have.
    pub fn to_unix_ms(self) -> Option<u64> {
        let DateTime { year, month, day, hour, minute, second } = self;
        if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
            return None;
        }
        if hour > 23 || minute > 59 || second > 59 {
            return None;
        }
        // Inverse of `from_unix_ms`, years counted from March.
        let y = if month <= 2 { year.checked_sub(1)? } else { year };
        let era = y / 400;
        let yoe = y % 400;
        let mp = u64::from(if month > 2 { month - 3 } else { month + 9 });
        let doy = (153 * mp + 2) / 5 + u64::from(day) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = era.checked_mul(146_097)?.checked_add(doe)?.checked_sub(719_468)?;
        let seconds = u64::from(hour * 3600 + minute * 60 + second);
        days.checked_mul(MS_PER_DAY)?.checked_add(seconds * 1000)
    }

    /// `YYYY.MM.DD`, as the `Date` and `UTCDate` tags write it.
    pub fn pgn_date(self) -> String {
        format!("{:04}.{:02}.{:02}", self.year, self.month, self.day)
    }

    /// `HH:MM:SS`, as the `UTCTime` tag writes it.
    pub fn pgn_time(self) -> String {
        format!("{:02}:{:02}:{:02}", self.hour, self.minute, self.second)
    }

    /// Reads a `YYYY.MM.DD` date and an `HH:MM:SS` time; `None` if either
    /// has unknown (`?`) or malformed parts.
    pub fn parse(date: &str, time: &str) -> Option<DateTime> {
        let mut date_parts = date.split('.');
        let mut time_parts = time.split(':');
        let next = |parts: &mut std::str::Split<'_, char>| -> Option<u64> {
            let text = parts.next()?;
            if text.is_empty() || text.len() > 12 || !text.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            text.parse().ok()
        };
        let year = next(&mut date_parts)?;
        let month = u32::try_from(next(&mut date_parts)?).ok()?;
        let day = u32::try_from(next(&mut date_parts)?).ok()?;
        let hour = u32::try_from(next(&mut time_parts)?).ok()?;
        let minute = u32::try_from(next(&mut time_parts)?).ok()?;
        let second = u32::try_from(next(&mut time_parts)?).ok()?;
        if date_parts.next().is_some() || time_parts.next().is_some() {
            return None;
        }
        Some(DateTime { year, month, day, hour, minute, second })
    }
}

fn days_in_month(year: u64, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> String {
        let dt = DateTime::from_unix_ms(ms);
        format!("{} {}", dt.pgn_date(), dt.pgn_time())
    }

    #[test]
    fn known_instants() {
        assert_eq!(at(0), "1970.01.01 00:00:00");
        assert_eq!(at(951_782_400_000), "2000.02.29 00:00:00");
        assert_eq!(at(1_709_251_199_999), "2024.02.29 23:59:59");
        assert_eq!(at(1_714_566_896_789), "2024.05.01 12:34:56");
        assert_eq!(at(4_102_444_800_000), "2100.01.01 00:00:00");
    }

    #[test]
    fn round_trips_to_the_second() {
        let mut ms = 0u64;
        while ms < 8_000_000_000_000 {
            let dt = DateTime::from_unix_ms(ms);
            assert_eq!(dt.to_unix_ms(), Some(ms / 1000 * 1000), "{ms}");
            assert_eq!(DateTime::parse(&dt.pgn_date(), &dt.pgn_time()), Some(dt));
            ms += 3_333_333_337;
        }
    }

    #[test]
    fn rejects_impossible_dates() {
        for (date, time) in [("2023.02.29", "00:00:00"), ("2024.13.01", "00:00:00"), ("1969.12.31", "23:59:59")] {
            assert_eq!(DateTime::parse(date, time).and_then(DateTime::to_unix_ms), None, "{date} {time}");
        }
        assert_eq!(DateTime::parse("????.??.??", "00:00:00"), None);
        assert_eq!(DateTime::parse("2024.01.01", "12:00"), None);
        assert_eq!(DateTime::parse("2024.01.01.1", "12:00:00"), None);
    }
}
