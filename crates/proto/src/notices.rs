//! `fogblast.notices.v1` and the bus subjects it travels on. The matchmaker
//! and the rating service publish these notices, and gateways subscribe to
//! the same subjects to render them as WebSocket frames, so the subject
//! names live here, next to the messages, where both sides find them.

pub use crate::generated::fogblast::notices::v1::*;

/// The subject of one player's notices ([`PlayerNotice`]).
pub fn player_subject(player: &str) -> String {
    format!("{PLAYER_SUBJECT_PREFIX}{player}")
}

/// The subject a challenge's answers travel on ([`ChallengeAnswer`]), heard
/// by the gateway that holds the challenge.
pub fn challenge_subject(challenge: &str) -> String {
    format!("challenge.{challenge}")
}

/// The subject on which a player's event stream, as it opens, asks the
/// gateways holding challenges to that player to announce them again.
/// The message is empty.
pub fn pending_challenges_subject(player: &str) -> String {
    format!("challenges.to.{player}")
}

/// The subject a tournament's changes are told on ([`TournamentChanged`]).
pub fn tournament_subject(tournament: &str) -> String {
    format!("tournament.{tournament}")
}

/// The subject every tournament's creation and start or end is told on.
pub const TOURNAMENTS_SUBJECT: &str = "tournaments";

/// What every player subject starts with: subscribe to
/// `format!("{PLAYER_SUBJECT_PREFIX}*")` to hear every player.
pub const PLAYER_SUBJECT_PREFIX: &str = "player.";

/// The subject of the lobby's snapshots ([`LobbyChanged`]).
pub const LOBBY_SUBJECT: &str = "lobby";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_player_subject_is_one_token_under_the_prefix() {
        let subject = player_subject("7xzp6rfsvr99yl6w");
        assert_eq!(subject, "player.7xzp6rfsvr99yl6w");
        assert_eq!(subject.strip_prefix(PLAYER_SUBJECT_PREFIX), Some("7xzp6rfsvr99yl6w"));
    }
}
