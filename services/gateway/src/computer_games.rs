//! The games against the computer each address started on this gateway,
//! over the WebSocket or the Bot API. With the seats its sockets hold (the
//! feeds know those), they make one count per address, so the cap on live
//! computer games holds on both paths: a bot that plays by HTTP requests
//! never follows its games, and would otherwise never be counted.
//!
//! An entry is only a claim that the game may still be live: one that
//! ended where no socket here saw it is found out by asking the game
//! service, which only happens when an address reaches the cap.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Duration;

use fogblast_proto::ids::GameId;
use tokio::time::Instant;

/// Addresses kept before entries older than [`STALE`] are swept out.
const ADDRESSES_KEPT: usize = 10_000;

/// An entry this old is dropped when the map is swept: by then a game
/// nobody plays has been ended by the game service's deadlines.
const STALE: Duration = Duration::from_secs(6 * 3600);

/// A game asked about is not asked about again for this long: an address
/// at the cap that keeps asking for more must not turn each refusal into
/// calls to the game service.
const RECHECK_AFTER: Duration = Duration::from_secs(5);

#[derive(Debug)]
struct Started {
    game: GameId,
    at: Instant,
    checked: Option<Instant>,
}

#[derive(Debug, Default)]
pub struct ComputerGames {
    started: Mutex<HashMap<IpAddr, Vec<Started>>>,
}

impl ComputerGames {
    /// Notes that `ip` started `game` against the computer.
    pub fn started(&self, ip: IpAddr, game: GameId) {
        let mut started = self.started.lock().expect("computer games lock");
        if started.len() > ADDRESSES_KEPT {
            started.retain(|_, games| {
                games.retain(|s| s.at.elapsed() < STALE);
                !games.is_empty()
            });
        }
        let games = started.entry(ip).or_default();
        if !games.iter().any(|s| s.game == game) {
            games.push(Started { game, at: Instant::now(), checked: None });
        }
    }

    /// The games `ip` started here, other than `except`.
    pub fn of(&self, ip: IpAddr, except: Option<&GameId>) -> Vec<GameId> {
        let started = self.started.lock().expect("computer games lock");
        let games = started.get(&ip).map(Vec::as_slice).unwrap_or_default();
        games.iter().map(|s| &s.game).filter(|g| Some(*g) != except).cloned().collect()
    }

    /// Of the games `ip` started here (other than `except`), those not
    /// asked about lately; each counts as asked about from now.
    pub fn to_check(&self, ip: IpAddr, except: Option<&GameId>) -> Vec<GameId> {
        let mut started = self.started.lock().expect("computer games lock");
        let Some(games) = started.get_mut(&ip) else { return Vec::new() };
        let now = Instant::now();
        games
            .iter_mut()
            .filter(|s| Some(&s.game) != except && s.checked.is_none_or(|at| now - at >= RECHECK_AFTER))
            .map(|s| {
                s.checked = Some(now);
                s.game.clone()
            })
            .collect()
    }

    /// Forgets `game`, known to have ended.
    pub fn ended(&self, ip: IpAddr, game: &GameId) {
        let mut started = self.started.lock().expect("computer games lock");
        if let Some(games) = started.get_mut(&ip) {
            games.retain(|s| s.game != *game);
            if games.is_empty() {
                started.remove(&ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn games_are_kept_per_address_once_each_until_they_end() {
        let games = ComputerGames::default();
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        let (a, b) = (GameId::parse("g-a").unwrap(), GameId::parse("g-b").unwrap());
        games.started(ip, a.clone());
        games.started(ip, a.clone());
        games.started(ip, b.clone());
        assert_eq!(games.of(ip, None), vec![a.clone(), b.clone()]);
        assert_eq!(games.of(ip, Some(&a)), vec![b.clone()]);
        assert!(games.of("192.0.2.2".parse().unwrap(), None).is_empty());
        assert_eq!(games.to_check(ip, Some(&b)), vec![a.clone()]);
        assert!(games.to_check(ip, Some(&b)).is_empty(), "asked about a moment ago");
        assert_eq!(games.to_check(ip, None), vec![b.clone()]);
        games.ended(ip, &a);
        games.ended(ip, &b);
        assert!(games.of(ip, None).is_empty());
        assert!(games.started.lock().unwrap().is_empty(), "an address with no games is forgotten");
    }
}
