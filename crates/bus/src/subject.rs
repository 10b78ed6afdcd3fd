//! NATS subject rules, shared by both adapters so that [`crate::MemoryBus`]
//! routes exactly like a NATS server would: a filter that works in
//! `fogblast up` must mean the same thing in production.
//!
//! Subjects are `.`-separated tokens. In a pattern, `*` stands for exactly
//! one token and `>` (last token only) for one or more remaining tokens.

use crate::BusError;

/// The durable streams. Publishing outside them is refused (on NATS no
/// stream would answer, so the in-process bus refuses too), and a durable
/// consumer reads one of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stream {
    /// The site's own: finished games, which the rating service must get
    /// every one of, and the analysis queue (requests the engine pool
    /// takes, results the archive keeps).
    Site,
    /// The public events (docs/events.md), of games and of tournaments: a
    /// message or two for every move, so kept apart, with bounds and a
    /// duplicate window of their own, where their volume can never push out
    /// a finished game not yet rated.
    Public,
}

impl Stream {
    pub(crate) const ALL: [Stream; 2] = [Stream::Site, Stream::Public];

    /// The subjects the stream holds.
    pub(crate) fn subjects(self) -> &'static [&'static str] {
        match self {
            Stream::Site => &["games.finished.>", "analysis.>"],
            Stream::Public => &["games.public.>", "tournaments.public.>"],
        }
    }

    /// The stream holding every subject `filter` matches: a subject's own
    /// stream, or the one a consumer with that filter reads.
    pub(crate) fn covering(filter: &str) -> Option<Stream> {
        Stream::ALL.into_iter().find(|stream| stream.subjects().iter().any(|subjects| covers(subjects, filter)))
    }

    /// The stream holding `subject`, or why a durable message cannot go there.
    pub(crate) fn for_message(subject: &str) -> Result<Stream, BusError> {
        Stream::covering(subject).ok_or_else(|| {
            BusError::new(format!("no durable stream holds subject {subject:?} (only {})", Stream::listed()))
        })
    }

    /// The stream a consumer of `filter` reads, or why no durable consumer can.
    pub(crate) fn for_consumer(filter: &str) -> Result<Stream, BusError> {
        Stream::covering(filter).ok_or_else(|| {
            BusError::new(format!(
                "a durable consumer reads one stream: {filter:?} is not within one of {}",
                Stream::listed()
            ))
        })
    }

    fn listed() -> String {
        Stream::ALL.iter().flat_map(|stream| stream.subjects()).copied().collect::<Vec<_>>().join(", ")
    }
}

/// The header JetStream deduplicates by. The bus owns it: it is set from the
/// `message_id` argument and surfaced through `Delivery::message_id`, never
/// in `Message::headers`, so a caller forwarding headers cannot clash.
pub(crate) const MSG_ID_HEADER: &str = "Nats-Msg-Id";

/// Whether `subject` (no wildcards) is matched by `pattern`.
pub(crate) fn matches(pattern: &str, subject: &str) -> bool {
    // A subject without wildcards is a filter matching itself alone.
    covers(pattern, subject)
}

/// Whether every subject `filter` matches is matched by `pattern` (both
/// may have wildcards).
pub(crate) fn covers(pattern: &str, filter: &str) -> bool {
    let mut pattern = pattern.split('.');
    let mut filter = filter.split('.');
    loop {
        match (pattern.next(), filter.next()) {
            // `>` needs at least one token to swallow, hence the `Some`.
            (Some(">"), Some(_)) => return true,
            (Some("*"), Some(token)) if token != ">" => {}
            (Some(p), Some(f)) if p == f && p != "*" && p != ">" => {}
            (None, None) => return true,
            _ => return false,
        }
    }
}

/// Checks a subject the way a NATS server would reject it, so the in-process
/// bus fails on the same inputs. Wildcards are allowed only in patterns, and
/// `>` only as the last token.
pub(crate) fn validate(subject: &str, pattern: bool) -> Result<(), BusError> {
    let invalid = |why: &str| Err(BusError::new(format!("invalid subject {subject:?}: {why}")));
    if subject.chars().any(char::is_whitespace) {
        return invalid("contains whitespace");
    }
    let tokens: Vec<&str> = subject.split('.').collect();
    for (i, token) in tokens.iter().enumerate() {
        match *token {
            "" => return invalid("empty token"),
            "*" | ">" if !pattern => return invalid("wildcards are only allowed in filters"),
            ">" if i + 1 != tokens.len() => return invalid("`>` must be the last token"),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_patterns_match_only_themselves() {
        assert!(matches("games.finished.atomic", "games.finished.atomic"));
        assert!(!matches("games.finished.atomic", "games.finished.fog"));
        assert!(!matches("games.finished", "games.finished.atomic"));
        assert!(!matches("games.finished.atomic", "games.finished"));
    }

    #[test]
    fn star_matches_exactly_one_token() {
        assert!(matches("player.*", "player.42"));
        assert!(!matches("player.*", "player"));
        assert!(!matches("player.*", "player.42.moves"));
        assert!(matches("player.*.moves", "player.42.moves"));
        assert!(!matches("player.*.moves", "player.42.chat"));
        assert!(matches("*", "anything"));
    }

    #[test]
    fn tail_wildcard_needs_at_least_one_token() {
        assert!(matches("games.>", "games.finished.atomic"));
        assert!(matches("games.>", "games.started"));
        assert!(!matches("games.>", "games"));
        assert!(!matches("games.finished.>", "games.started.atomic"));
        assert!(matches(">", "a.b.c"));
    }

    #[test]
    fn a_filter_is_covered_only_by_a_pattern_matching_all_it_matches() {
        assert!(covers("games.finished.>", "games.finished.>"));
        assert!(covers("games.finished.>", "games.finished.atomic"));
        assert!(covers("games.finished.>", "games.finished.*.x"));
        assert!(covers("games.public.>", "games.public.json.*.move"));
        assert!(!covers("games.finished.>", "games.>"));
        assert!(!covers("games.finished.>", "games.*.atomic"));
        assert!(!covers("games.finished.>", "games.finished"));
        assert!(covers("games.*", "games.finished"));
        assert!(!covers("games.*", "games.>"));
        assert!(!covers("games.finished", "games.*"));
    }

    #[test]
    fn each_durable_subject_lives_in_one_stream() {
        assert_eq!(Stream::covering("games.finished.atomic"), Some(Stream::Site));
        assert_eq!(Stream::covering("games.public.pb.fog.move"), Some(Stream::Public));
        assert_eq!(Stream::covering("games.started.atomic"), None);
        assert_eq!(Stream::covering("player.1"), None);
        assert_eq!(Stream::covering("games.finished.>"), Some(Stream::Site));
        assert_eq!(Stream::covering("games.public.json.atomic.*"), Some(Stream::Public));
        assert_eq!(Stream::covering("tournaments.public.json.standings"), Some(Stream::Public));
        assert_eq!(Stream::covering("tournaments.public.>"), Some(Stream::Public));
        assert_eq!(Stream::covering("games.>"), None, "a filter across both streams");
    }

    #[test]
    fn tokens_are_compared_whole() {
        // A prefix of a token is not a match: `game` must not catch `games`.
        assert!(!matches("game.>", "games.finished"));
        assert!(!matches("games.fin*", "games.finished"));
    }

    #[test]
    fn validation_mirrors_the_server() {
        assert!(validate("games.finished.atomic", false).is_ok());
        assert!(validate("games.*.>", true).is_ok());
        assert!(validate("games.*", false).is_err());
        assert!(validate("games.>.x", true).is_err());
        assert!(validate("games..x", true).is_err());
        assert!(validate("", true).is_err());
        assert!(validate("games.x y", false).is_err());
    }
}
