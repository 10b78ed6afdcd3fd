//! The operator's schedule of tournaments: for example an atomic 3+0 arena
//! every hour, a fog of war 5+3 arena every day at 18:00 UTC and an atomic
//! 3+2 Swiss every week. Each scheduled event's id is fixed by its entry
//! and its start, so every replica makes the same ones and the store's
//! create-if-absent makes each exactly once.
//!
//! The schedule is one setting (`--tournament-schedule`): entries separated
//! by `;`, each `name|variant|clock|length|every[@offset]`, where `variant`
//! is `standard`, `atomic`, `fog` or `atomic960`, `clock` is
//! `<minutes>+<seconds>`, `length` is an arena's minutes or a Swiss's
//! `<rounds>r` with an optional wait between rounds `/<seconds>s` (the
//! default 60), `every` is `<n>h` or `<n>d`, and the offset is `HH:MM`
//! (UTC) into the period, e.g.
//! `Hourly Atomic|atomic|3+0|57|1h;Daily Fog|fog|5+3|120|1d@18:00;`
//! `Weekly Swiss|atomic|3+2|7r/30s|7d@18:00`.

use fogblast_proto::game::Variant;

use super::{System, TournamentRecord};
use crate::pool::{variant_from_name, variant_name};

const HOUR_MS: u64 = 3_600_000;

/// One entry of the schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scheduled {
    pub name: String,
    pub variant: Variant,
    /// Initial time and increment, ms.
    pub clock: (u32, u32),
    /// Standard or atomic from Chess960 start positions.
    pub chess960: bool,
    /// An arena's length, or a Swiss's estimated length.
    pub minutes: u32,
    pub system: System,
    /// A Swiss's rounds and wait between rounds (s).
    pub rounds: u32,
    pub round_interval_s: u32,
    pub every_ms: u64,
    pub offset_ms: u64,
}

fn entry(text: &str) -> Result<Scheduled, String> {
    let fields: Vec<&str> = text.split('|').map(str::trim).collect();
    let [name, variant, clock, length, every] = fields.as_slice() else {
        return Err(format!("{text:?}: an entry is name|variant|clock|length|every[@HH:MM]"));
    };
    let count = name.chars().count();
    if !(2..=30).contains(&count) || name.chars().any(char::is_control) {
        return Err(format!("{name:?}: a name is 2 to 30 characters"));
    }
    let (variant, chess960) = match *variant {
        "atomic960" => (Variant::Atomic, true),
        other => {
            (variant_from_name(other).ok_or_else(|| format!("{other:?}: standard, atomic, fog or atomic960"))?, false)
        }
    };
    let (initial, increment) =
        clock.split_once('+').ok_or_else(|| format!("{clock:?}: a clock is <minutes>+<seconds>"))?;
    let initial: u32 = initial.parse().map_err(|_| format!("{clock:?}: minutes as a whole number"))?;
    let increment: u32 = increment.parse().map_err(|_| format!("{clock:?}: seconds as a whole number"))?;
    if !(1..=60).contains(&initial) || increment > 60 {
        return Err(format!("{clock:?}: 1 to 60 minutes and 0 to 60 seconds"));
    }
    let clock = (initial * 60_000, increment * 1000);
    let (system, rounds, round_interval_s, minutes) = length_of(length, clock)?;
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
        clock,
        chess960,
        minutes,
        system,
        rounds,
        round_interval_s,
        every_ms,
        offset_ms,
    })
}

/// An entry's length: an arena's minutes, or a Swiss's `<rounds>r[/<s>s]`
/// with its estimated minutes.
fn length_of(length: &str, clock: (u32, u32)) -> Result<(System, u32, u32, u32), String> {
    if let Some(swiss) = length.strip_suffix('r').map(|r| (r, "60s")).or_else(|| length.split_once("r/")) {
        let (rounds, wait) = swiss;
        let rounds: u32 = rounds.parse().map_err(|_| format!("{length:?}: rounds as a whole number"))?;
        let wait: u32 = wait
            .strip_suffix('s')
            .and_then(|w| w.parse().ok())
            .ok_or_else(|| format!("{length:?}: a Swiss is <rounds>r or <rounds>r/<seconds>s"))?;
        let rounds_allowed = super::commands::SWISS_ROUNDS;
        if !rounds_allowed.contains(&rounds) || wait > super::commands::MAX_ROUND_INTERVAL_S {
            return Err(format!("{length:?}: 3 to 100 rounds, 0 to 86400 seconds between them"));
        }
        let minutes = super::commands::swiss_minutes(rounds, clock, wait);
        return Ok((System::Swiss, rounds, wait, minutes));
    }
    let minutes: u32 = length.parse().map_err(|_| format!("{length:?}: minutes as a whole number"))?;
    if !(10..=720).contains(&minutes) {
        return Err(format!("{minutes}: an arena lasts 10 to 720 minutes"));
    }
    Ok((System::Arena, 0, 0, minutes))
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

/// The events of `entries` that start after `now_ms` and within `ahead_ms`
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
                chess960: entry.chess960,
                clock: entry.clock,
                rated: true,
                starts_ms: starts,
                minutes: entry.minutes,
                system: entry.system,
                rounds: entry.rounds,
                round_interval_s: entry.round_interval_s,
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
            ("Hourly|chess|3+0|57|1h", "standard, atomic, fog or atomic960"),
            ("Weekly|atomic|3+2|2r|7d", "3 to 100 rounds"),
            ("Weekly|atomic|3+2|7r/30m|7d", "<rounds>r/<seconds>s"),
            ("Hourly|atomic|3+2|7r|1h", "overlap"),
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

    #[test]
    fn a_weekly_swiss_is_scheduled_with_its_rounds() {
        let entries = parse("Weekly Swiss|atomic|3+2|7r/30s|7d@18:00;Atomic960 Swiss|atomic960|3+2|5r|1d").unwrap();
        assert_eq!((entries[0].system, entries[0].rounds, entries[0].round_interval_s), (System::Swiss, 7, 30));
        assert!(!entries[0].chess960);
        assert_eq!((entries[1].rounds, entries[1].round_interval_s, entries[1].chess960), (5, 60, true));
        let now = 1_800_000_000_000;
        let due = due(&entries, now, 8 * 24 * HOUR_MS);
        let weekly: Vec<_> = due.iter().filter(|t| t.name == "Weekly Swiss").collect();
        assert_eq!(weekly.len(), 1, "one Swiss a week");
        assert_eq!((weekly[0].system, weekly[0].rounds, weekly[0].variant.as_str()), (System::Swiss, 7, "atomic"));
        assert_eq!(weekly[0].starts_ms % (24 * HOUR_MS), 18 * HOUR_MS);
        assert!(due.iter().filter(|t| t.name == "Atomic960 Swiss").all(|t| t.chess960 && t.system == System::Swiss));
    }
}
