//! The operator's schedule of arenas: for example an atomic 3+0 arena every
//! hour and a fog of war 5+3 arena every day at 18:00 UTC. Each scheduled
//! arena's id is fixed by its entry and its start, so every replica makes
//! the same ones and the store's create-if-absent makes each exactly once.
//!
//! The schedule is one setting (`--tournament-schedule`): entries separated
//! by `;`, each `name|variant|clock|minutes|every[@offset]`, where `clock`
//! is `<minutes>+<seconds>`, `every` is `<n>h` or `<n>d`, and the offset is
//! `HH:MM` (UTC) into the period, e.g.
//! `Hourly Atomic|atomic|3+0|57|1h;Daily Fog|fog|5+3|120|1d@18:00`.

use fogblast_proto::game::Variant;

use super::TournamentRecord;
use crate::pool::{variant_from_name, variant_name};

const HOUR_MS: u64 = 3_600_000;

/// One entry of the schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scheduled {
    pub name: String,
    pub variant: Variant,
    /// Initial time and increment, ms.
    pub clock: (u32, u32),
    pub minutes: u32,
    pub every_ms: u64,
    pub offset_ms: u64,
}

fn entry(text: &str) -> Result<Scheduled, String> {
    let fields: Vec<&str> = text.split('|').map(str::trim).collect();
    let [name, variant, clock, minutes, every] = fields.as_slice() else {
        return Err(format!("{text:?}: an entry is name|variant|clock|minutes|every[@HH:MM]"));
    };
    let count = name.chars().count();
    if !(2..=30).contains(&count) || name.chars().any(char::is_control) {
        return Err(format!("{name:?}: a name is 2 to 30 characters"));
    }
    let variant = variant_from_name(variant).ok_or_else(|| format!("{variant:?}: standard, atomic or fog"))?;
    let (initial, increment) =
        clock.split_once('+').ok_or_else(|| format!("{clock:?}: a clock is <minutes>+<seconds>"))?;
    let initial: u32 = initial.parse().map_err(|_| format!("{clock:?}: minutes as a whole number"))?;
    let increment: u32 = increment.parse().map_err(|_| format!("{clock:?}: seconds as a whole number"))?;
    if !(1..=60).contains(&initial) || increment > 60 {
        return Err(format!("{clock:?}: 1 to 60 minutes and 0 to 60 seconds"));
    }
    let minutes: u32 = minutes.parse().map_err(|_| format!("{minutes:?}: minutes as a whole number"))?;
    if !(10..=720).contains(&minutes) {
        return Err(format!("{minutes}: an arena lasts 10 to 720 minutes"));
    }
    let (period, offset) = every.split_once('@').map_or((*every, None), |(p, o)| (p, Some(o)));
    let every_ms = match period.split_at(period.len().saturating_sub(1)) {
        (n, "h") => n.parse::<u64>().ok().map(|n| n * HOUR_MS),
        (n, "d") => n.parse::<u64>().ok().map(|n| n * 24 * HOUR_MS),
        _ => None,
    }
    .filter(|ms| *ms > 0)
    .ok_or_else(|| format!("{period:?}: every <n>h or <n>d"))?;
    let offset_ms = match offset {
        None => 0,
        Some(at) => {
            let (h, m) = at.split_once(':').ok_or_else(|| format!("{at:?}: an offset is HH:MM"))?;
            let (h, m): (u64, u64) = (h.parse().map_err(|_| "hours")?, m.parse().map_err(|_| "minutes")?);
            if m >= 60 {
                return Err(format!("{at:?}: minutes under 60"));
            }
            (h * 60 + m) * 60_000
        }
    };
    if offset_ms >= every_ms {
        return Err(format!("{every:?}: the offset falls outside the period"));
    }
    if u64::from(minutes) * 60_000 >= every_ms {
        return Err(format!("{name:?}: {minutes} minutes every {period} would overlap the next one"));
    }
    Ok(Scheduled {
        name: (*name).to_owned(),
        variant,
        clock: (initial * 60_000, increment * 1000),
        minutes,
        every_ms,
        offset_ms,
    })
}

/// Reads a schedule; an empty one has no entries.
pub fn parse(spec: &str) -> Result<Vec<Scheduled>, String> {
    let entries: Vec<Scheduled> =
        spec.split(';').map(str::trim).filter(|e| !e.is_empty()).map(entry).collect::<Result<_, _>>()?;
    for (i, a) in entries.iter().enumerate() {
        if entries[..i].iter().any(|b| b.name == a.name) {
            return Err(format!("{:?} is scheduled twice", a.name));
        }
    }
    Ok(entries)
}

/// The id of an entry's arena starting at `starts_ms`: the same on every replica.
fn id(entry: &Scheduled, starts_ms: u64) -> String {
    let slug: String = entry
        .name
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    let slug: String = slug.chars().take(24).collect();
    format!("{slug}-{}", starts_ms / 60_000)
}

/// The arenas of `entries` that start after `now_ms` and within `ahead_ms`
/// of it, as they are to be created.
pub fn due(entries: &[Scheduled], now_ms: u64, ahead_ms: u64) -> Vec<TournamentRecord> {
    let mut due = Vec::new();
    for entry in entries {
        let period_start = (now_ms.saturating_sub(entry.offset_ms) / entry.every_ms) * entry.every_ms;
        let mut starts = period_start + entry.offset_ms;
        while starts <= now_ms {
            starts += entry.every_ms;
        }
        while starts <= now_ms + ahead_ms {
            due.push(TournamentRecord {
                id: id(entry, starts),
                name: entry.name.clone(),
                description: String::new(),
                variant: variant_name(entry.variant).to_owned(),
                chess960: false,
                clock: entry.clock,
                rated: true,
                starts_ms: starts,
                minutes: entry.minutes,
                created_by: String::new(),
                created_ms: now_ms,
            });
            starts += entry.every_ms;
        }
    }
    due
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedule_reads_and_names_each_arena_by_its_start() {
        let entries = parse("Hourly Atomic|atomic|3+0|57|1h; Daily Fog|fog|5+3|120|1d@18:00").unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[1].clock, (300_000, 3_000));
        assert_eq!(entries[1].offset_ms, 18 * HOUR_MS);
        let now = 1_800_000_000_000 / HOUR_MS * HOUR_MS + 10 * 60_000;
        let due = due(&entries, now, 2 * HOUR_MS);
        let hourly: Vec<_> = due.iter().filter(|t| t.name == "Hourly Atomic").collect();
        assert_eq!(hourly.len(), 2, "the next two hours' arenas");
        assert_eq!(hourly[0].starts_ms, now - 10 * 60_000 + HOUR_MS);
        assert_eq!(hourly[0].id, format!("hourly-atomic-{}", hourly[0].starts_ms / 60_000));
        let again = super::due(&entries, now + 1_000, 2 * HOUR_MS);
        assert_eq!(again[0].id, hourly[0].id, "every replica, every pass: the same ids");
        assert!(due.iter().all(|t| t.starts_ms > now && t.ends_ms() > t.starts_ms));
    }

    #[test]
    fn overlapping_or_malformed_schedules_are_refused() {
        for (bad, why) in [
            ("Hourly|atomic|3+0|60|1h", "overlap"),
            ("Hourly|atomic|3+0|90|1h", "overlap"),
            ("Arena|atomic|3+0|57|1h;Arena|fog|3+0|57|1h", "twice"),
            ("Hourly|chess|3+0|57|1h", "standard, atomic or fog"),
            ("Hourly|atomic|3|57|1h", "clock"),
            ("Hourly|atomic|3+0|57|1w", "every"),
            ("Hourly|atomic|3+0|57|1h@01:00", "outside"),
            ("Hourly|atomic|3+0|57", "entry"),
        ] {
            let error = parse(bad).unwrap_err();
            assert!(error.contains(why), "{bad}: {error}");
        }
        assert_eq!(parse("").unwrap(), vec![]);
    }
}
