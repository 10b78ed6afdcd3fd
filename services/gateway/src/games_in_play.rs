//! The games being played now, for watching: the page's "Watch" section
//! and TV, `GET /api/tv/games` and lichess's `GET /api/tv/channels`.
//!
//! The list comes from the game service's index of games in play (any
//! shard answers for all of them, from the store), read at most once per
//! [`LIST_FRESH`] per gateway however many viewers ask, and ordered by the
//! players' ratings, which are read from the rating service once per player
//! per [`RATING_FRESH`]. An entry holds who plays what, never the position:
//! a fog game is listed as any other, and watching it shows what a
//! spectator may see.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::{GameInPlay, Level, Player, Variant as WireVariant};
use fogblast_proto::rating::ProfileRequest;
use fogblast_protocol::{TimeControl, Variant};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::deadline::within;
use crate::Gateway;

/// How long a list read from the game service is served again.
const LIST_FRESH: Duration = Duration::from_secs(2);
/// How long a player's ratings read from the rating service are used.
const RATING_FRESH: Duration = Duration::from_secs(120);
/// How long a player the rating service has no rating for stays unrated
/// before being asked again: their first rated game may end any time.
const UNRATED_FRESH: Duration = Duration::from_secs(10);
/// How long one list waits for ratings: a slow or absent rating service
/// delays the list by this much at most, its players unrated until a
/// later list reads them.
const RATINGS_WAIT: Duration = Duration::from_millis(1500);
/// Ratings read at once from the rating service.
const RATING_READS_AT_ONCE: usize = 8;
/// The most ratings read for one list: players beyond them count as new
/// players until a later list reads theirs.
const RATING_READS_PER_LIST: usize = 400;
/// The rating of a player with none in the variant (Glicko-2's start).
const UNRATED: f64 = 1500.0;
/// The most games `GET /api/tv/games` answers with.
const MOST_LISTED: usize = 100;

/// A player's rating in one variant, as the list shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rated {
    pub rating: f64,
    pub provisional: bool,
}

/// A game in play with its players' ratings in its variant.
#[derive(Clone, Debug)]
pub struct Watched {
    pub game: GameInPlay,
    pub white: Option<Rated>,
    pub black: Option<Rated>,
}

impl Watched {
    /// What the game is ranked by: the mean rating of the people playing
    /// it (an unrated player counts as 1500; the computer is left out).
    pub fn rank(&self) -> f64 {
        let seats = [(&self.game.white, self.white), (&self.game.black, self.black)];
        let people: Vec<f64> = seats
            .iter()
            .filter(|(player, _)| player.as_ref().is_some_and(|p| !p.computer))
            .map(|(_, rated)| rated.map_or(UNRATED, |r| r.rating))
            .collect();
        if people.is_empty() {
            return 0.0;
        }
        people.iter().sum::<f64>() / people.len() as f64
    }
}

/// Best first: by rank, then the game started last, then by id.
pub fn ordered(mut games: Vec<Watched>) -> Vec<Watched> {
    games.sort_by(|a, b| {
        b.rank()
            .total_cmp(&a.rank())
            .then_with(|| b.game.started_at_ms.cmp(&a.game.started_at_ms))
            .then_with(|| a.game.game_id.cmp(&b.game.game_id))
    });
    games
}

/// A player's ratings by variant (the wire enum's number), and when they were read.
type ReadRatings = (Instant, HashMap<i32, Rated>);

/// Whether ratings read at `at` are to be read again.
fn stale((at, by_variant): &ReadRatings) -> bool {
    at.elapsed() >= if by_variant.is_empty() { UNRATED_FRESH } else { RATING_FRESH }
}

#[derive(Default)]
pub struct GamesInPlay {
    /// The last list and when it was read; the lock is held while a new
    /// one is read, so viewers asking at once share one read.
    list: tokio::sync::Mutex<Option<(Instant, Arc<Vec<Watched>>)>>,
    /// Each player's ratings per variant, and when they were read.
    ratings: Mutex<HashMap<String, ReadRatings>>,
}

impl std::fmt::Debug for GamesInPlay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GamesInPlay").finish_non_exhaustive()
    }
}

impl GamesInPlay {
    /// The games being played, best first.
    pub async fn current(&self, gateway: &Gateway) -> Result<Arc<Vec<Watched>>, ServiceError> {
        let mut list = self.list.lock().await;
        if let Some((read_at, games)) = list.as_ref() {
            if read_at.elapsed() < LIST_FRESH {
                return Ok(games.clone());
            }
        }
        let games = gateway.router.games_in_play().await?;
        self.read_ratings(gateway, &games).await;
        let ratings = self.ratings.lock().expect("ratings lock");
        let rated = |player: &Option<Player>, variant: i32| {
            let id = player.as_ref().filter(|p| !p.computer)?.id.as_str();
            ratings.get(id).and_then(|(_, by_variant)| by_variant.get(&variant).copied())
        };
        let watched = games
            .into_iter()
            .map(|game| Watched {
                white: rated(&game.white, game.variant),
                black: rated(&game.black, game.variant),
                game,
            })
            .collect();
        drop(ratings);
        let games = Arc::new(ordered(watched));
        *list = Some((Instant::now(), games.clone()));
        Ok(games)
    }

    /// Reads the ratings of the people in `games` not read lately. A
    /// rating service that does not answer leaves them unrated for now.
    async fn read_ratings(&self, gateway: &Gateway, games: &[GameInPlay]) {
        let Some(client) = gateway.rating.clone() else { return };
        let wanted: Vec<String> = {
            let ratings = self.ratings.lock().expect("ratings lock");
            let mut wanted: Vec<String> = games
                .iter()
                .flat_map(|g| [&g.white, &g.black])
                .filter_map(|p| p.as_ref().filter(|p| !p.computer && !p.id.is_empty()))
                .filter(|p| ratings.get(&p.id).is_none_or(stale))
                .map(|p| p.id.clone())
                .collect();
            wanted.sort();
            wanted.dedup();
            wanted.truncate(RATING_READS_PER_LIST);
            wanted
        };
        let timeout = gateway.config.settings.rating_timeout();
        let read = futures::stream::iter(wanted)
            .map(|player| {
                let mut client = client.clone();
                async move {
                    let request = ProfileRequest { player_id: player.clone() };
                    (player, within(timeout, "rating service", client.get_profile(request)).await)
                }
            })
            .buffer_unordered(RATING_READS_AT_ONCE)
            .take_until(tokio::time::sleep(RATINGS_WAIT))
            .collect::<Vec<_>>()
            .await;
        let now = Instant::now();
        let mut ratings = self.ratings.lock().expect("ratings lock");
        // Players not seen for long are forgotten, so the map stays small.
        ratings.retain(|_, (at, _)| at.elapsed() < RATING_FRESH * 4);
        for (player, profile) in read {
            let by_variant = match profile {
                Ok(profile) => profile
                    .ratings
                    .iter()
                    .map(|r| (r.variant, Rated { rating: r.rating, provisional: r.provisional }))
                    .collect(),
                // No game archived yet: unrated, and not asked again at once.
                Err(error) if error.code == ErrorCode::NotFound => HashMap::new(),
                Err(_) => continue,
            };
            ratings.insert(player, (now, by_variant));
        }
    }
}

/// A seat as the list shows it.
fn seat_value(player: Option<&Player>, rated: Option<Rated>) -> Value {
    let Some(player) = player else { return Value::Null };
    if player.computer {
        let level = fogblast_protocol::convert::level(Level::try_from(player.level).unwrap_or_default());
        return json!({ "computer": true, "name": player.name, "level": level });
    }
    json!({
        "id": player.id,
        "name": player.name,
        "rating": rated.map(|r| r.rating.round() as i64),
        "provisional": rated.is_none_or(|r| r.provisional),
    })
}

/// One game of the list as JSON.
pub fn watched_value(watched: &Watched) -> Value {
    let game = &watched.game;
    json!({
        "game": game.game_id,
        "variant": Variant::from(WireVariant::try_from(game.variant).unwrap_or_default()),
        "chess960": game.chess960,
        "rated": game.rated,
        "time_control": game.clock.map(TimeControl::from),
        "started_ms": game.started_at_ms,
        "tournament": Some(game.tournament_id.as_str()).filter(|id| !id.is_empty()),
        "players": {
            "white": seat_value(game.white.as_ref(), watched.white),
            "black": seat_value(game.black.as_ref(), watched.black),
        },
    })
}

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    /// Only games of this variant (`standard`, `atomic`, `fog`).
    variant: Option<String>,
    /// The most games (1 to 100; 20 unless given).
    nb: Option<usize>,
}

/// `GET /api/tv/games`: the games being played, best first.
pub async fn list(State(gateway): State<Arc<Gateway>>, Query(query): Query<ListQuery>) -> Response {
    let variant = match query.variant.as_deref().map(str::parse::<Variant>) {
        None => None,
        Some(Ok(variant)) => Some(variant),
        Some(Err(_)) => {
            let error = ServiceError::new(ErrorCode::BadRequest, "variant: standard, atomic or fog");
            return crate::http::error_response(&error);
        }
    };
    let nb = query.nb.unwrap_or(20).clamp(1, MOST_LISTED);
    match gateway.games_in_play.current(&gateway).await {
        Ok(games) => {
            let listed: Vec<Value> = games
                .iter()
                .filter(|w| {
                    variant
                        .is_none_or(|v| Variant::from(WireVariant::try_from(w.game.variant).unwrap_or_default()) == v)
                })
                .take(nb)
                .map(watched_value)
                .collect();
            Json(json!({ "games": listed })).into_response()
        }
        Err(error) => crate::http::error_response(&error),
    }
}

/// The channel a game shows on besides `best`, as lichess names its TV
/// channels: by variant, with chess960 and the computer apart.
fn channels_of(watched: &Watched) -> Vec<&'static str> {
    let game = &watched.game;
    let mut channels = vec!["best"];
    if [&game.white, &game.black].iter().any(|p| p.as_ref().is_some_and(|p| p.computer)) {
        channels.push("computer");
    } else if game.chess960 {
        channels.push("chess960");
    }
    channels.push(match WireVariant::try_from(game.variant).unwrap_or_default() {
        WireVariant::Atomic => "atomic",
        WireVariant::Fog => "fogOfWar",
        _ => "standard",
    });
    channels
}

/// `GET /api/tv/channels`, as lichess answers it: for each channel with a
/// game, its best game and that game's higher-rated player.
pub async fn channels(State(gateway): State<Arc<Gateway>>) -> Response {
    let games = match gateway.games_in_play.current(&gateway).await {
        Ok(games) => games,
        Err(error) => return crate::http::error_response(&error),
    };
    let mut channels = Map::new();
    for watched in games.iter() {
        for channel in channels_of(watched) {
            if channels.contains_key(channel) {
                continue;
            }
            let seats = [("white", &watched.game.white, watched.white), ("black", &watched.game.black, watched.black)];
            let Some((color, player, rated)) = seats
                .into_iter()
                .filter_map(|(color, player, rated)| Some((color, player.as_ref()?, rated)))
                .max_by(|a, b| {
                    let rating = |s: &(&str, &Player, Option<Rated>)| {
                        if s.1.computer {
                            f64::MIN
                        } else {
                            s.2.map_or(UNRATED, |r| r.rating)
                        }
                    };
                    rating(a).total_cmp(&rating(b))
                })
            else {
                continue;
            };
            let id = if player.computer { String::new() } else { player.id.clone() };
            channels.insert(
                channel.to_owned(),
                json!({
                    "user": { "id": id, "name": player.name },
                    "rating": rated.map(|r| r.rating.round() as i64),
                    "gameId": watched.game.game_id,
                    "color": color,
                }),
            );
        }
    }
    Json(Value::Object(channels)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn person(id: &str) -> Option<Player> {
        Some(Player { id: id.to_owned(), name: id.to_uppercase(), computer: false, level: 0 })
    }

    fn watched(id: &str, started: u64, white: Option<f64>, black: Option<f64>) -> Watched {
        let rated = |r: Option<f64>| r.map(|rating| Rated { rating, provisional: false });
        Watched {
            game: GameInPlay {
                game_id: id.to_owned(),
                variant: WireVariant::Atomic as i32,
                white: person("w"),
                black: person("b"),
                started_at_ms: started,
                ..GameInPlay::default()
            },
            white: rated(white),
            black: rated(black),
        }
    }

    #[test]
    fn games_are_ordered_by_their_players_ratings_then_by_the_latest_start() {
        let games = vec![
            watched("low", 1, Some(1400.0), Some(1450.0)),
            watched("high", 1, Some(2000.0), Some(1900.0)),
            watched("unrated-old", 1, None, None),
            watched("unrated-new", 2, None, None),
            watched("mixed", 1, Some(1800.0), None),
        ];
        let order: Vec<String> = ordered(games).into_iter().map(|w| w.game.game_id).collect();
        assert_eq!(order, ["high", "mixed", "unrated-new", "unrated-old", "low"]);
    }

    #[test]
    fn the_computer_counts_for_nothing_in_a_rank() {
        let mut against_computer = watched("c", 1, Some(1700.0), None);
        against_computer.game.black =
            Some(Player { id: String::new(), name: "Computer".into(), computer: true, level: 3 });
        assert_eq!(against_computer.rank(), 1700.0);
        assert_eq!(channels_of(&against_computer), ["best", "computer", "atomic"]);
    }
}
