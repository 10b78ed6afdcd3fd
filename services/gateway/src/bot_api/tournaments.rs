//! Arena tournaments through lichess's tournament API, so berserk's
//! `tournaments` calls and tools written for lichess work here: the list,
//! one tournament with a page of its standings, its results as ndjson,
//! and (with a token) creating, joining and withdrawing. The matchmaker
//! owns tournaments; this is its face in lichess's shapes.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap};
use axum::response::IntoResponse;
use axum::Json;
use fogblast_proto::game::ClockSettings;
use fogblast_proto::matchmaker::{
    CreateTournamentRequest, GetTournamentRequest, Tournament, TournamentPlayerRequest, TournamentStanding,
};
use serde::Deserialize;
use serde_json::{json, Value};

use super::{lichess, ok, ApiError, ApiResult, Bot, Params};
use crate::deadline::within;
use crate::Gateway;

pub(super) const MATCHMAKER: &str = "matchmaker";

/// Standings on one page of `GET /api/tournament/{id}`, as on lichess.
const PAGE: u32 = 10;

pub(super) fn client(
    gateway: &Gateway,
) -> Result<fogblast_proto::matchmaker::matchmaker_client::MatchmakerClient<tonic::transport::Channel>, ApiError> {
    gateway.matchmaker.client().map_err(ApiError::from)
}

fn status_code(status: &str) -> u32 {
    match status {
        "created" => 10,
        "started" => 20,
        _ => 30,
    }
}

fn clock_json(clock: Option<&ClockSettings>) -> Value {
    let clock = clock.copied().unwrap_or_default();
    json!({ "limit": clock.initial_ms / 1000, "increment": clock.increment_ms / 1000 })
}

/// A tournament's summary, as lichess lists it.
fn summary(t: &Tournament) -> Value {
    let variant = lichess::variant(t.variant(), t.chess960);
    let perf_key = variant["key"].clone();
    json!({
        "id": t.id,
        "createdBy": if t.created_by.is_empty() { "fogblast" } else { t.created_by.as_str() },
        "system": if t.system == "swiss" { "swiss" } else { "arena" },
        "minutes": t.minutes,
        "clock": clock_json(t.clock.as_ref()),
        "rated": t.rated,
        "fullName": format!("{} {}", t.name, if t.system == "swiss" { "Swiss" } else { "Arena" }),
        "name": t.name,
        "description": t.description,
        "nbPlayers": t.players,
        "variant": variant,
        "startsAt": t.starts_ms,
        "finishesAt": t.ends_ms,
        "status": status_code(&t.status),
        "perf": { "key": perf_key, "name": variant["name"] },
        "secondsToStart": t.starts_ms.saturating_sub(t.now_ms) / 1000,
        "berserkable": true,
        "hasMaxRating": false,
    })
}

fn player_line(s: &TournamentStanding) -> Value {
    let scores: String = s.sheet.iter().map(u32::to_string).collect();
    json!({
        "name": s.name.as_str(),
        "id": s.player_id,
        "rank": s.rank,
        "rating": s.rating,
        "score": s.score,
        "sheet": { "scores": scores, "fire": s.fire },
        "nbGames": s.games,
        "wins": s.wins,
        "berserks": s.berserks,
        "withdraw": s.presence != "active",
    })
}

/// One tournament with a page of its standings.
fn full(t: &Tournament, page: u32) -> Value {
    let mut out = summary(t);
    out["isStarted"] = json!(t.status != "created");
    out["isFinished"] = json!(t.status == "finished");
    out["secondsToFinish"] = json!(t.ends_ms.saturating_sub(t.now_ms.max(t.starts_ms)) / 1000);
    out["standing"] = json!({ "page": page, "players": t.standings.iter().map(player_line).collect::<Vec<_>>() });
    out["nbGames"] = json!(t.games);
    out["playing"] = json!(t
        .playing
        .iter()
        .map(|g| json!({ "id": g.game_id, "white": g.white, "black": g.black }))
        .collect::<Vec<_>>());
    if t.status == "finished" {
        let podium: Vec<Value> = t.standings.iter().filter(|s| s.rank <= 3).map(player_line).collect();
        out["podium"] = json!(podium);
    }
    if let Some(me) = &t.me {
        out["me"] = json!({ "rank": me.rank, "withdraw": me.presence != "active", "gameId": me.playing });
    }
    out
}

/// `GET /api/tournament`: created, started and recently finished arenas.
pub async fn list(State(gateway): State<Arc<Gateway>>) -> ApiResult {
    let timeout = gateway.config.settings.matchmaker_timeout();
    let listed = gateway.tournament_views.list(&gateway.bus, &gateway.matchmaker, timeout).await?;
    let arenas = listed.iter().filter(|t| t.system != "swiss");
    let by = |status: &str| -> Vec<Value> { arenas.clone().filter(|t| t.status == status).map(summary).collect() };
    Ok(Json(json!({ "created": by("created"), "started": by("started"), "finished": by("finished") })).into_response())
}

#[derive(Debug, Deserialize)]
pub struct PageQuery {
    page: Option<u32>,
}

/// Standings from `from_rank`, `count` of them, and `player`'s own line:
/// from this gateway's view of the tournament when it holds them.
pub(super) async fn standings(
    gateway: &Gateway,
    id: &str,
    from_rank: u32,
    count: u32,
    player: Option<&str>,
) -> Result<Tournament, ApiError> {
    let timeout = gateway.config.settings.matchmaker_timeout();
    let view = gateway.tournament_views.view(&gateway.bus, &gateway.matchmaker, timeout, id).await?;
    let kept = crate::tournament_views::STANDINGS_KEPT;
    let mine = player.map(|p| view.standings.iter().find(|s| s.player_id == p).cloned());
    if from_rank + count - 1 > kept || mine.as_ref().is_some_and(Option::is_none) && view.players > kept {
        return fetch(gateway, id, from_rank, count, player.unwrap_or_default()).await;
    }
    let start = from_rank.saturating_sub(1) as usize;
    Ok(Tournament {
        standings: view.standings.iter().skip(start).take(count as usize).cloned().collect(),
        me: mine.flatten(),
        ..view
    })
}

async fn fetch(gateway: &Gateway, id: &str, from_rank: u32, count: u32, player: &str) -> Result<Tournament, ApiError> {
    let request = GetTournamentRequest { tournament_id: id.to_owned(), from_rank, count, player_id: player.to_owned() };
    let timeout = gateway.config.settings.matchmaker_timeout();
    Ok(within(timeout, MATCHMAKER, client(gateway)?.get_tournament(request)).await?)
}

/// `GET /api/tournament/{id}?page=N`: ten standings a page.
pub async fn get(
    State(gateway): State<Arc<Gateway>>,
    Path(id): Path<String>,
    Query(query): Query<PageQuery>,
    headers: HeaderMap,
) -> ApiResult {
    let page = query.page.unwrap_or(1).clamp(1, 10_000);
    let player = super::bearer(&headers).and_then(|t| gateway.signer.verify(t)).map(|v| v.player.to_string());
    let t = standings(&gateway, &id, (page - 1) * PAGE + 1, PAGE, player.as_deref()).await?;
    Ok(Json(full(&t, page)).into_response())
}

/// Standings read from the matchmaker at a time for `results`: the most
/// one request returns.
const RESULTS_PAGE: u32 = 200;

#[derive(Debug, Deserialize)]
pub struct ResultsQuery {
    nb: Option<u32>,
}

/// `GET /api/tournament/{id}/results?nb=`: the standings as ndjson, every
/// player by default as on lichess (`nb` caps them), read from the
/// matchmaker [`RESULTS_PAGE`] at a time.
pub async fn results(
    State(gateway): State<Arc<Gateway>>,
    Path(id): Path<String>,
    Query(query): Query<ResultsQuery>,
) -> ApiResult {
    let wanted = query.nb.unwrap_or(u32::MAX).max(1);
    let mut lines = String::new();
    let mut from_rank = 1;
    while from_rank <= wanted {
        let count = RESULTS_PAGE.min(wanted - from_rank + 1);
        let t = standings(&gateway, &id, from_rank, count, None).await?;
        for s in &t.standings {
            let line = json!({ "rank": s.rank, "score": s.score, "rating": s.rating, "username": s.name, "id": s.player_id,
                               "sheet": { "scores": s.sheet.iter().map(u32::to_string).collect::<String>() } });
            lines.push_str(&line.to_string());
            lines.push('\n');
        }
        if (t.standings.len() as u32) < count {
            break;
        }
        from_rank += count;
    }
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson")], lines).into_response())
}

/// Minutes as lichess writes a clock's time (`0.5`, `3`), as ms.
fn minutes_ms(params: &Params, key: &str) -> Result<Option<u32>, ApiError> {
    let Some(text) = params.get(key) else { return Ok(None) };
    let minutes: f64 = text.parse().map_err(|_| ApiError::bad(format!("{key} must be a number of minutes")))?;
    if !(0.0..=180.0).contains(&minutes) {
        return Err(ApiError::bad(format!("{key} must be 0 to 180 minutes")));
    }
    Ok(Some((minutes * 60_000.0).round() as u32))
}

/// `POST /api/tournament`: a new arena (`name`, `clockTime` in minutes,
/// `clockIncrement` in seconds, `minutes`, `variant`, `rated`, `startDate`
/// in ms or `waitMinutes`, `description`).
pub async fn create(State(gateway): State<Arc<Gateway>>, bot: Bot, params: Params) -> ApiResult {
    let (variant, chess960) = lichess::parse_variant(params.get("variant"))?;
    let initial_ms = minutes_ms(&params, "clockTime")?.ok_or_else(|| ApiError::bad("clockTime is needed"))?;
    let increment_ms = params.number("clockIncrement")?.unwrap_or(0).saturating_mul(1000);
    let minutes = params.number("minutes")?.ok_or_else(|| ApiError::bad("minutes is needed"))?;
    let start_date = params
        .get("startDate")
        .map(|s| s.parse::<u64>().map_err(|_| ApiError::bad("startDate must be a time in ms")))
        .transpose()?;
    let starts_ms = match (start_date, params.number("waitMinutes")?) {
        // Lichess takes ms; a time in seconds is taken too.
        (Some(start), _) => start * if start < 10_000_000_000 { 1000 } else { 1 },
        (None, Some(wait)) => now_ms() + u64::from(wait) * 60_000,
        (None, None) => 0,
    };
    gateway.may_create_game(bot.ip)?;
    let request = CreateTournamentRequest {
        player_id: bot.player.to_string(),
        name: params.get("name").unwrap_or("Fogblast").to_owned(),
        description: params.get("description").unwrap_or_default().to_owned(),
        variant: variant as i32,
        chess960,
        clock: Some(ClockSettings { initial_ms, increment_ms }),
        rated: params.get("rated").is_none_or(|r| r != "false"),
        starts_ms,
        minutes,
        ..CreateTournamentRequest::default()
    };
    let timeout = gateway.config.settings.matchmaker_timeout();
    let t = within(timeout, MATCHMAKER, client(&gateway)?.create_tournament(request)).await?;
    Ok(bot.answer(Json(full(&t, 1))))
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

pub(super) fn player_request(bot: &Bot, id: String) -> TournamentPlayerRequest {
    TournamentPlayerRequest { tournament_id: id, player_id: bot.player.to_string(), name: bot.name(), rating: 0 }
}

/// The name a player joins under: the page's display name when it sends
/// one (the same rule as a `hello`'s name), else the bot's username.
pub(super) fn display_name(bot: &Bot, params: &Params) -> Result<String, ApiError> {
    match params.get("name") {
        Some(name) if name.chars().count() > 30 || name.chars().any(char::is_control) => {
            Err(ApiError::bad("a name is at most 30 printable characters"))
        }
        Some(name) => Ok(name.to_owned()),
        None => Ok(bot.name()),
    }
}

/// `POST /api/tournament/{id}/join` (and `name`, the web page's display name).
pub async fn join(State(gateway): State<Arc<Gateway>>, bot: Bot, Path(id): Path<String>, params: Params) -> ApiResult {
    let timeout = gateway.config.settings.matchmaker_timeout();
    let request = TournamentPlayerRequest { name: display_name(&bot, &params)?, ..player_request(&bot, id) };
    within(timeout, MATCHMAKER, client(&gateway)?.join_tournament(request)).await?;
    ok().map(|r| bot.answer(r))
}

/// `POST /api/tournament/{id}/withdraw`: leaves an arena yet to start, or
/// takes a break in a running one (joining again comes back), as on lichess.
pub async fn withdraw(State(gateway): State<Arc<Gateway>>, bot: Bot, Path(id): Path<String>) -> ApiResult {
    let timeout = gateway.config.settings.matchmaker_timeout();
    let t = standings(&gateway, &id, 1, 1, None).await?;
    let mut rpc = client(&gateway)?;
    let request = player_request(&bot, id);
    if t.status == "created" {
        within(timeout, MATCHMAKER, rpc.withdraw_tournament(request)).await?;
    } else {
        within(timeout, MATCHMAKER, rpc.pause_tournament(request)).await?;
    }
    ok().map(|r| bot.answer(r))
}
