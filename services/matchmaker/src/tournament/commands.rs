//! The tournament commands any replica serves: create, list, look, join,
//! pause and withdraw. Each checks its input and makes one atomic change
//! in the store; the driver (`driver.rs`) does the rest.

use std::sync::Arc;

use fogblast_bus::EventBus;
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::game::{ClockSettings, Variant};
use fogblast_proto::ids::PlayerId;
use fogblast_proto::matchmaker::{
    CreateTournamentRequest, GetTournamentRequest, SwissBoard, SwissRound, Tournament, TournamentGame,
    TournamentPlayerRequest, TournamentStanding,
};
use fogblast_proto::notices::{tournament_subject, TournamentChanged, TOURNAMENTS_SUBJECT};
use fogblast_tournament::arena::standing_order;
use fogblast_tournament::tiebreak::RoundResult;
use prost::Message;
use rand::Rng;

use super::redis::presence_word;
use super::{Entrant, Joined, Presence, Snapshot, Stage, Status, System, TournamentRecord, TournamentStore};
use crate::games::Games;
use crate::pool::{variant_from_name, variant_name};
use crate::ratings::Ratings;
use crate::store::StoreError;

/// The longest name, in characters.
pub const MAX_NAME_CHARS: usize = 30;
/// The longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 400;
/// Tournaments one player may create in an hour.
pub const CREATIONS_PER_HOUR: usize = 3;
/// How far ahead a player's tournament may start.
const MAX_START_AHEAD_MS: u64 = 7 * 24 * 3600 * 1000;
/// How long finished tournaments stay listed.
const FINISHED_LISTED_MS: u64 = 24 * 3600 * 1000;
/// A Swiss's rounds, as on lichess.
pub const SWISS_ROUNDS: std::ops::RangeInclusive<u32> = 3..=100;
/// The longest wait between a Swiss's rounds, seconds.
pub const MAX_ROUND_INTERVAL_S: u32 = 86_400;

/// A Swiss's estimated length in minutes, for listing it: each round's
/// game at forty moves a side, then the wait.
pub fn swiss_minutes(rounds: u32, clock: (u32, u32), round_interval_s: u32) -> u32 {
    let round_ms = 2 * (u64::from(clock.0) + 40 * u64::from(clock.1)) + u64::from(round_interval_s) * 1000;
    (u64::from(rounds) * round_ms).div_ceil(60_000).min(u64::from(u32::MAX)) as u32
}

/// How a request's `system` pairs, with a Swiss's rounds and wait checked.
fn checked_system(request: &CreateTournamentRequest, limits: Limits) -> Result<System, ServiceError> {
    match request.system.as_str() {
        "" | "arena" => {
            let Limits { min_minutes, max_minutes } = limits;
            if !(min_minutes..=max_minutes).contains(&request.minutes) {
                return Err(bad(format!("an arena lasts {min_minutes} to {max_minutes} minutes")));
            }
            Ok(System::Arena)
        }
        "swiss" => {
            if !SWISS_ROUNDS.contains(&request.rounds) {
                return Err(bad(format!("a Swiss has {} to {} rounds", SWISS_ROUNDS.start(), SWISS_ROUNDS.end())));
            }
            if request.round_interval_s > MAX_ROUND_INTERVAL_S {
                return Err(bad("the wait between rounds is 0 to 86400 seconds"));
            }
            Ok(System::Swiss)
        }
        other => Err(bad(format!("{other:?}: a tournament is an arena or a swiss"))),
    }
}

/// The settings a tournament may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub min_minutes: u32,
    pub max_minutes: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { min_minutes: 10, max_minutes: 720 }
    }
}

/// The tournaments of one matchmaker replica.
#[derive(Debug)]
pub struct Tournaments {
    pub(crate) store: Arc<dyn TournamentStore>,
    pub(crate) bus: Arc<dyn EventBus>,
    pub(crate) games: Arc<dyn Games>,
    pub(crate) ratings: Ratings,
    pub(crate) replica: String,
    pub(crate) limits: Limits,
    pub(crate) schedule: Vec<super::schedule::Scheduled>,
}

impl Tournaments {
    /// The tournaments of replica `replica`, on `store`, making their games
    /// through `games` and telling changes on `bus`.
    pub fn new(
        store: Arc<dyn TournamentStore>,
        bus: Arc<dyn EventBus>,
        games: Arc<dyn Games>,
        replica: &str,
        limits: Limits,
    ) -> Tournaments {
        let ratings = Ratings::new(None).expect("no rating service needs no address");
        Tournaments { store, bus, games, ratings, replica: replica.to_owned(), limits, schedule: Vec::new() }
    }

    pub fn store(&self) -> &Arc<dyn TournamentStore> {
        &self.store
    }
}

fn bad(message: impl Into<String>) -> ServiceError {
    ServiceError::new(ErrorCode::BadRequest, message)
}

pub(crate) fn unavailable(error: StoreError) -> ServiceError {
    ServiceError::new(ErrorCode::Unavailable, format!("the tournament store: {error}"))
}

fn not_found(id: &str) -> ServiceError {
    ServiceError::new(ErrorCode::NotFound, format!("no tournament {id:?}"))
}

/// Text shown to players: no control characters (a description may have
/// line breaks), at most `max` characters. Markup is kept as text: every
/// client shows it escaped.
fn checked_text(what: &str, text: &str, min: usize, max: usize, lines: bool) -> Result<String, ServiceError> {
    let text = text.trim();
    let count = text.chars().count();
    if count < min || count > max {
        return Err(bad(format!("a tournament {what} is {min} to {max} characters")));
    }
    if text.chars().any(|c| c.is_control() && !(lines && c == '\n')) {
        return Err(bad(format!("a tournament {what} has no control characters")));
    }
    Ok(text.to_owned())
}

fn checked_clock(clock: Option<&ClockSettings>) -> Result<(u32, u32), ServiceError> {
    let clock = clock.ok_or_else(|| bad("an arena has a clock"))?;
    if !(60_000..=3_600_000).contains(&clock.initial_ms) || clock.initial_ms % 1000 != 0 {
        return Err(bad("initial time is 1 to 60 whole minutes' worth of seconds"));
    }
    if clock.increment_ms > 60_000 || clock.increment_ms % 1000 != 0 {
        return Err(bad("increment is 0 to 60 whole seconds"));
    }
    Ok((clock.initial_ms, clock.increment_ms))
}

fn new_id() -> String {
    let mut rng = rand::rng();
    (0..8).map(|_| char::from(b"abcdefghijkmnpqrstuvwxyz23456789"[rng.random_range(0..32)])).collect()
}

impl Tournaments {
    /// Tells gateways that tournament `id` changed (and the list too, when
    /// `listed`): they read it again once, whatever their viewers.
    pub(crate) async fn changed(&self, id: &str, version: u64, listed: bool) {
        let notice = TournamentChanged { tournament_id: id.to_owned(), version }.encode_to_vec();
        let mut subjects = vec![tournament_subject(id)];
        if listed {
            subjects.push(TOURNAMENTS_SUBJECT.to_owned());
        }
        for subject in subjects {
            if let Err(error) = self.bus.publish(&subject, Vec::new(), notice.clone().into()).await {
                tracing::debug!(tournament = %id, %error, "a tournament change was not told");
            }
        }
    }

    /// A player's (or, with no player, the operator's) new tournament.
    pub async fn create(&self, request: &CreateTournamentRequest) -> Result<Tournament, ServiceError> {
        let record = self.checked_record(request).await?;
        if !request.player_id.is_empty() {
            self.refuse_floods(&request.player_id).await?;
        }
        if !self.store.create(&record).await.map_err(unavailable)? {
            return Err(ServiceError::new(ErrorCode::Conflict, format!("tournament {} exists", record.id)));
        }
        tracing::info!(tournament = %record.id, name = %record.name, by = %record.created_by, "tournament created");
        let view = self.view(&record.id, 0, 0, None).await?;
        self.changed(&record.id, view.version, true).await;
        self.publish_public(&super::public::created(&record, view.now_ms)).await;
        Ok(view)
    }

    async fn checked_record(&self, request: &CreateTournamentRequest) -> Result<TournamentRecord, ServiceError> {
        if !request.player_id.is_empty() {
            PlayerId::parse(&request.player_id).map_err(|e| bad(e.to_string()))?;
        }
        let name = checked_text("name", &request.name, 2, MAX_NAME_CHARS, false)?;
        let description = checked_text("description", &request.description, 0, MAX_DESCRIPTION_CHARS, true)?;
        let variant = match Variant::try_from(request.variant) {
            Ok(Variant::Unspecified) | Err(_) => return Err(bad("variant must be standard, atomic or fog")),
            Ok(variant) => variant,
        };
        if request.chess960 && variant == Variant::Fog {
            return Err(bad("Chess960 starting positions are for standard and atomic only"));
        }
        let clock = checked_clock(request.clock.as_ref())?;
        let system = checked_system(request, self.limits)?;
        let (rounds, round_interval_s, minutes) = match system {
            System::Arena => (0, 0, request.minutes),
            System::Swiss => {
                let minutes = swiss_minutes(request.rounds, clock, request.round_interval_s);
                (request.rounds, request.round_interval_s, minutes)
            }
        };
        let now = self.store.now_ms().await.map_err(unavailable)?;
        let starts_ms = if request.starts_ms == 0 { now + 60_000 } else { request.starts_ms };
        if starts_ms + 60_000 < now || starts_ms > now + MAX_START_AHEAD_MS {
            return Err(bad("a tournament starts from now to a week ahead"));
        }
        Ok(TournamentRecord {
            id: new_id(),
            name,
            description,
            variant: variant_name(variant).to_owned(),
            chess960: request.chess960,
            clock,
            rated: request.rated,
            starts_ms,
            minutes,
            system,
            rounds,
            round_interval_s,
            created_by: request.player_id.clone(),
            created_ms: now,
        })
    }

    /// At most [`CREATIONS_PER_HOUR`] tournaments a player made in the last
    /// hour, and one not yet finished at a time.
    async fn refuse_floods(&self, player: &str) -> Result<(), ServiceError> {
        let now = self.store.now_ms().await.map_err(unavailable)?;
        let listed = self.store.list(now.saturating_sub(3_600_000)).await.map_err(unavailable)?;
        let theirs: Vec<_> = listed.iter().filter(|(r, _, _)| r.created_by == player).collect();
        let recent = theirs.iter().filter(|(r, _, _)| r.created_ms + 3_600_000 > now).count();
        let open = theirs.iter().filter(|(_, status, _)| *status != Status::Finished).count();
        if recent >= CREATIONS_PER_HOUR || open >= 1 {
            return Err(ServiceError::new(
                ErrorCode::RateLimited,
                "you may have one tournament at a time, and make three an hour",
            ));
        }
        Ok(())
    }

    pub async fn list(&self) -> Result<Vec<Tournament>, ServiceError> {
        let now = self.store.now_ms().await.map_err(unavailable)?;
        let listed = self.store.list(now.saturating_sub(FINISHED_LISTED_MS)).await.map_err(unavailable)?;
        Ok(listed
            .into_iter()
            .map(|(record, status, players)| Tournament {
                players: players as u32,
                now_ms: now,
                next_round_ms: if record.system == System::Swiss && status == Status::Created {
                    record.starts_ms
                } else {
                    0
                },
                ..header(&record, status)
            })
            .collect())
    }

    pub async fn get(&self, request: &GetTournamentRequest) -> Result<Tournament, ServiceError> {
        let me = Some(request.player_id.as_str()).filter(|p| !p.is_empty());
        self.view(&request.tournament_id, request.from_rank, request.count, me).await
    }

    async fn view(&self, id: &str, from_rank: u32, count: u32, me: Option<&str>) -> Result<Tournament, ServiceError> {
        let snapshot = self.store.snapshot(id).await.map_err(unavailable)?.ok_or_else(|| not_found(id))?;
        Ok(view(&snapshot, from_rank, count, me))
    }

    pub async fn join(&self, request: &TournamentPlayerRequest) -> Result<Tournament, ServiceError> {
        let player = PlayerId::parse(&request.player_id).map_err(|e| bad(e.to_string()))?;
        let name = checked_text("player name", &request.name, 0, MAX_NAME_CHARS, false)?;
        let snapshot = self
            .store
            .snapshot(&request.tournament_id)
            .await
            .map_err(unavailable)?
            .ok_or_else(|| not_found(&request.tournament_id))?;
        let variant = variant_from_name(&snapshot.record.variant).unwrap_or(Variant::Atomic);
        let given = Some(request.rating).filter(|r| *r > 0);
        let rating = self.ratings.rating(player.as_str(), variant, given).await;
        let entrant = Entrant { name, rating, joined_ms: snapshot.now_ms };
        match self.store.join(&request.tournament_id, player.as_str(), &entrant).await.map_err(unavailable)? {
            Joined::Already => {}
            Joined::Joined => self.changed(&request.tournament_id, 0, false).await,
            Joined::NoSuchTournament => return Err(not_found(&request.tournament_id)),
            Joined::Finished => {
                return Err(ServiceError::new(ErrorCode::Conflict, "the tournament is over"));
            }
        }
        self.view(&request.tournament_id, 0, 0, Some(player.as_str())).await
    }

    pub async fn leave(
        &self,
        request: &TournamentPlayerRequest,
        presence: Presence,
    ) -> Result<Tournament, ServiceError> {
        let player = PlayerId::parse(&request.player_id).map_err(|e| bad(e.to_string()))?;
        let id = &request.tournament_id;
        if !self.store.set_presence(id, player.as_str(), presence).await.map_err(unavailable)? {
            self.store.snapshot(id).await.map_err(unavailable)?.ok_or_else(|| not_found(id))?;
            return Err(ServiceError::new(ErrorCode::Conflict, "you have not joined this tournament"));
        }
        self.changed(id, 0, false).await;
        self.view(id, 0, 0, Some(player.as_str())).await
    }
}

fn status_name(status: Status) -> &'static str {
    match status {
        Status::Created => "created",
        Status::Started => "started",
        Status::Finished => "finished",
    }
}

/// A tournament's settings and status, without standings.
pub fn header(record: &TournamentRecord, status: Status) -> Tournament {
    Tournament {
        id: record.id.clone(),
        name: record.name.clone(),
        description: record.description.clone(),
        variant: variant_from_name(&record.variant).unwrap_or(Variant::Unspecified) as i32,
        chess960: record.chess960,
        clock: Some(ClockSettings { initial_ms: record.clock.0, increment_ms: record.clock.1 }),
        rated: record.rated,
        starts_ms: record.starts_ms,
        ends_ms: record.ends_ms(),
        minutes: record.minutes,
        status: status_name(status).to_owned(),
        created_by: record.created_by.clone(),
        system: record.system.name().to_owned(),
        rounds: record.rounds,
        round_interval_s: record.round_interval_s,
        ..Tournament::default()
    }
}

/// Every player who joined, in standings order, with their line.
pub fn standings(snapshot: &Snapshot) -> Vec<TournamentStanding> {
    if snapshot.record.system == System::Swiss {
        return swiss_standings(snapshot);
    }
    let mut lines: Vec<TournamentStanding> = snapshot
        .joined
        .iter()
        .map(|(player, entrant)| {
            let standing = snapshot.standing.get(player).cloned().unwrap_or_default();
            let presence = snapshot.presence.get(player).copied().unwrap_or(Presence::Active);
            TournamentStanding {
                rank: 0,
                player_id: player.clone(),
                name: entrant.name.clone(),
                rating: entrant.rating,
                score: standing.sheet.score,
                fire: standing.sheet.on_fire(),
                sheet: standing.sheet.entries.iter().map(|e| e.points).collect(),
                wins: standing.sheet.wins() as u32,
                games: standing.sheet.entries.len() as u32,
                berserks: standing.berserks,
                presence: presence_word(presence).to_owned(),
                playing: standing.playing.clone().unwrap_or_default(),
                ..TournamentStanding::default()
            }
        })
        .collect();
    lines.sort_by(|a, b| standing_order((&a.player_id, a.score, a.rating), (&b.player_id, b.score, b.rating)));
    for (i, line) in lines.iter_mut().enumerate() {
        line.rank = i as u32 + 1;
    }
    lines
}

fn standing_line(snapshot: &Snapshot, player: &str, rank: u32) -> TournamentStanding {
    let entrant = snapshot.joined.get(player);
    let standing = snapshot.standing.get(player).cloned().unwrap_or_default();
    let presence = snapshot.presence.get(player).copied().unwrap_or(Presence::Active);
    TournamentStanding {
        rank,
        player_id: player.to_owned(),
        name: entrant.map_or_else(|| player.to_owned(), |e| e.name.clone()),
        rating: entrant.map_or(0, |e| e.rating),
        presence: presence_word(presence).to_owned(),
        playing: standing.playing.clone().unwrap_or_default(),
        ..TournamentStanding::default()
    }
}

/// A Swiss's standings: by points, Buchholz, Sonneborn-Berger; players not
/// yet in a round after them, by rating.
fn swiss_standings(snapshot: &Snapshot) -> Vec<TournamentStanding> {
    let ranked = super::swiss::standings(snapshot);
    let mut lines: Vec<TournamentStanding> = ranked
        .iter()
        .map(|s| {
            let rounds = snapshot.standing.get(&s.id).and_then(|l| l.swiss.as_ref()).map(|l| l.rounds.clone());
            let rounds = rounds.unwrap_or_default();
            let played = |r: &&RoundResult| matches!(r, RoundResult::Game { .. });
            let points = |r: &RoundResult| match r {
                RoundResult::Game { points_x2, .. } | RoundResult::Unplayed { points_x2 } => *points_x2,
            };
            TournamentStanding {
                score: s.points_x2,
                sheet: rounds.iter().map(points).collect(),
                wins: rounds.iter().filter(played).filter(|r| points(r) == 2).count() as u32,
                games: rounds.iter().filter(played).count() as u32,
                buchholz_x2: s.tiebreaks.first().copied().unwrap_or(0),
                sonneborn_berger_x4: s.tiebreaks.get(1).copied().unwrap_or(0),
                ..standing_line(snapshot, &s.id, s.rank)
            }
        })
        .collect();
    let mut waiting: Vec<&String> = snapshot.joined.keys().filter(|p| !ranked.iter().any(|s| &s.id == *p)).collect();
    waiting.sort_by_key(|p| (std::cmp::Reverse(snapshot.joined[*p].rating), (*p).clone()));
    let first = lines.len() as u32 + 1;
    lines.extend(waiting.into_iter().enumerate().map(|(i, p)| standing_line(snapshot, p, first + i as u32)));
    lines
}

/// A Swiss's rounds as clients see them.
fn swiss_rounds(snapshot: &Snapshot) -> Vec<SwissRound> {
    let Some(state) = &snapshot.swiss else { return Vec::new() };
    state
        .rounds
        .iter()
        .map(|round| SwissRound {
            round: round.pairing.round,
            boards: round
                .pairing
                .boards
                .iter()
                .zip(&round.games)
                .map(|(board, id)| SwissBoard {
                    game_id: id.clone(),
                    white: board.white.clone(),
                    black: board.black.clone(),
                    result: snapshot.games.get(id).map(super::swiss::board_result).unwrap_or_default(),
                })
                .collect(),
            bye: round.pairing.bye.clone().unwrap_or_default(),
            absent: round.pairing.not_paired.clone(),
            chess960_position: round.chess960_position,
            complete: round.recorded,
        })
        .collect()
}

/// The tournament as a client sees it: a page of standings from `from_rank`.
pub fn view(snapshot: &Snapshot, from_rank: u32, count: u32, me: Option<&str>) -> Tournament {
    let lines = standings(snapshot);
    let count = if count == 0 { 50 } else { count.min(200) } as usize;
    let start = from_rank.saturating_sub(1) as usize;
    let mine = me.and_then(|me| lines.iter().find(|l| l.player_id == me).cloned());
    let playing = lines
        .iter()
        .filter_map(|l| snapshot.games.get(&l.playing))
        .filter(|g| g.stage == Stage::Started)
        .fold(Vec::<TournamentGame>::new(), |mut games, g| {
            if !games.iter().any(|known| known.game_id == g.id) {
                games.push(TournamentGame { game_id: g.id.clone(), white: g.white.clone(), black: g.black.clone() });
            }
            games
        });
    Tournament {
        players: lines.len() as u32,
        version: snapshot.version,
        now_ms: snapshot.now_ms,
        standings: lines.into_iter().skip(start).take(count).collect(),
        me: mine,
        playing,
        games: snapshot.games.values().filter(|g| g.stage == Stage::Done && !g.result.is_empty()).count() as u32,
        round: snapshot.swiss.as_ref().map_or(0, |s| s.rounds.len() as u32),
        next_round_ms: match (snapshot.record.system, snapshot.status) {
            (System::Swiss, Status::Created | Status::Started) => super::swiss::next_round_ms(snapshot).unwrap_or(0),
            _ => 0,
        },
        swiss_rounds: swiss_rounds(snapshot),
        ..header(&snapshot.record, snapshot.status)
    }
}
