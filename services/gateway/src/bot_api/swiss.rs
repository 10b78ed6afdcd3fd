//! Swiss tournaments through lichess's Swiss API, so berserk's Swiss calls
//! work here: creating one (`/api/swiss/new/{team}`, the team ignored),
//! reading it, its results as ndjson, its games as PGN, its TRF export
//! (FIDE's Tournament Report File), and joining and withdrawing. The
//! matchmaker owns the event; this is its face in lichess's shapes, with
//! a few fields of our own (each round's pairings, both tie-breaks).

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap};
use axum::response::IntoResponse;
use axum::Json;
use fogblast_proto::game::{ClockSettings, Variant};
use fogblast_proto::matchmaker::{CreateTournamentRequest, SwissRound, Tournament, TournamentStanding};
use serde::Deserialize;
use serde_json::{json, Value};

use super::tournaments::{client, display_name, player_request, standings, MATCHMAKER};
use super::{lichess, ok, ApiError, ApiResult, Bot, Params};
use crate::deadline::within;
use crate::Gateway;

/// A Swiss's rounds, as lichess offers them.
const ROUNDS: std::ops::RangeInclusive<u32> = 3..=100;

/// The event `id` if it is a Swiss, with `count` standings from the top.
async fn swiss(gateway: &Gateway, id: &str, count: u32, player: Option<&str>) -> Result<Tournament, ApiError> {
    let t = standings(gateway, id, 1, count, player).await?;
    if t.system != "swiss" {
        return Err(ApiError::new(axum::http::StatusCode::NOT_FOUND, format!("no Swiss tournament {id:?}")));
    }
    Ok(t)
}

/// A time as lichess writes it in Swiss answers: `2026-12-05T18:00:00Z`.
fn iso(ms: u64) -> String {
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let (h, m, s) = (secs / 3600 % 24, secs / 60 % 60, secs % 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}Z")
}

/// lichess's variant key, with `atomic960` besides.
fn variant_key(t: &Tournament) -> &'static str {
    match (t.variant(), t.chess960) {
        (Variant::Atomic, true) => "atomic960",
        (Variant::Atomic, false) => "atomic",
        (Variant::Fog, _) => "fogOfWar",
        (_, true) => "chess960",
        _ => "standard",
    }
}

fn round_json(round: &SwissRound) -> Value {
    json!({
        "round": round.round,
        "boards": round.boards.iter().map(|b| json!({ "id": b.game_id, "white": b.white, "black": b.black, "result": b.result })).collect::<Vec<_>>(),
        "bye": Some(round.bye.as_str()).filter(|b| !b.is_empty()),
        "absent": round.absent,
        "chess960Position": round.chess960_position,
        "complete": round.complete,
    })
}

/// A Swiss as lichess's `GET /api/swiss/{id}` gives it, with its rounds.
fn info(t: &Tournament) -> Value {
    let clock = t.clock.unwrap_or_default();
    let ongoing = t.swiss_rounds.last().map_or(0, |r| r.boards.iter().filter(|b| b.result.is_empty()).count());
    let mut out = json!({
        "id": t.id,
        "createdBy": if t.created_by.is_empty() { "fogblast" } else { t.created_by.as_str() },
        "startsAt": iso(t.starts_ms),
        "name": t.name,
        "description": t.description,
        "clock": { "limit": clock.initial_ms / 1000, "increment": clock.increment_ms / 1000 },
        "variant": variant_key(t),
        "round": t.round,
        "nbRounds": t.rounds,
        "roundInterval": t.round_interval_s,
        "nbPlayers": t.players,
        "nbOngoing": ongoing,
        "status": t.status,
        "rated": t.rated,
        "rounds": t.swiss_rounds.iter().map(round_json).collect::<Vec<_>>(),
        "standing": t.standings.iter().map(result_line).collect::<Vec<_>>(),
    });
    if t.next_round_ms > 0 {
        out["nextRound"] = json!({ "at": iso(t.next_round_ms), "in": t.next_round_ms.saturating_sub(t.now_ms) / 1000 });
    }
    if let Some(me) = &t.me {
        out["me"] = json!({ "rank": me.rank, "withdraw": me.presence != "active", "gameId": me.playing });
    }
    out
}

/// A player's line, as lichess's Swiss results give it: points in whole
/// points, `tieBreak` the Sonneborn-Berger, and Buchholz besides.
fn result_line(s: &TournamentStanding) -> Value {
    json!({
        "rank": s.rank,
        "points": f64::from(s.score) / 2.0,
        "tieBreak": f64::from(s.sonneborn_berger_x4) / 4.0,
        "buchholz": f64::from(s.buchholz_x2) / 2.0,
        "sonnebornBerger": f64::from(s.sonneborn_berger_x4) / 4.0,
        "rating": s.rating,
        "username": s.name,
        "id": s.player_id,
        "absent": s.presence != "active",
    })
}

/// `GET /api/swiss`: Swiss events to come, running, and finished in the
/// last day, `{created, started, finished}` (the page's list; lichess
/// lists Swiss events by team instead).
pub async fn list(State(gateway): State<Arc<Gateway>>) -> ApiResult {
    let timeout = gateway.config.settings.matchmaker_timeout();
    let listed = gateway.tournament_views.list(&gateway.bus, &gateway.matchmaker, timeout).await?;
    let swiss = listed.iter().filter(|t| t.system == "swiss");
    let by = |status: &str| -> Vec<Value> { swiss.clone().filter(|t| t.status == status).map(info).collect() };
    Ok(Json(json!({ "created": by("created"), "started": by("started"), "finished": by("finished") })).into_response())
}

/// `GET /api/swiss/{id}`.
pub async fn get(State(gateway): State<Arc<Gateway>>, Path(id): Path<String>, headers: HeaderMap) -> ApiResult {
    let player = super::bearer(&headers).and_then(|t| gateway.signer.verify(t)).map(|v| v.player.to_string());
    let t = swiss(&gateway, &id, 200, player.as_deref()).await?;
    Ok(Json(info(&t)).into_response())
}

#[derive(Debug, Deserialize)]
pub struct ResultsQuery {
    nb: Option<u32>,
}

/// `GET /api/swiss/{id}/results?nb=`: the standings as ndjson.
pub async fn results(
    State(gateway): State<Arc<Gateway>>,
    Path(id): Path<String>,
    Query(query): Query<ResultsQuery>,
) -> ApiResult {
    let t = swiss(&gateway, &id, query.nb.unwrap_or(200).clamp(1, 200), None).await?;
    let lines: String = t.standings.iter().map(|s| format!("{}\n", result_line(s))).collect();
    Ok(([(header::CONTENT_TYPE, "application/x-ndjson")], lines).into_response())
}

/// `GET /swiss/{id}.trf`: the event in FIDE's Tournament Report File format.
pub async fn trf(State(gateway): State<Arc<Gateway>>, Path(file): Path<String>) -> ApiResult {
    let Some(id) = file.strip_suffix(".trf") else {
        return Err(ApiError::new(axum::http::StatusCode::NOT_FOUND, "no such file"));
    };
    let t = swiss(&gateway, id, 200, None).await?;
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], report_file(&t)).into_response())
}

/// One player's result in one round, as TRF writes it: opponent's number
/// (0000 for none), colour, result.
fn trf_round(round: &SwissRound, player: &str, number: &dyn Fn(&str) -> usize) -> String {
    if round.bye == player {
        return "0000 - U".to_owned();
    }
    let Some(board) = round.boards.iter().find(|b| b.white == player || b.black == player) else {
        return "0000 - Z".to_owned();
    };
    let white = board.white == player;
    let opponent = if white { &board.black } else { &board.white };
    let (points, forfeit) =
        match board.result.split_once(' ').map_or((board.result.as_str(), false), |(r, _)| (r, true)) {
            ("1-0", f) => (if white { "1" } else { "0" }, f),
            ("0-1", f) => (if white { "0" } else { "1" }, f),
            ("1/2-1/2", f) => ("=", f),
            ("0-0", _) => ("0", true),
            _ => (" ", false),
        };
    let result = match (points, forfeit) {
        ("1", true) => "+",
        ("0", true) => "-",
        (points, _) => points,
    };
    format!("{:04} {} {result}", number(opponent), if white { "w" } else { "b" })
}

/// The whole event as a TRF (FIDE's TRF16): one `001` line a player, their
/// starting number by rating at entry, then each round's result.
pub fn report_file(t: &Tournament) -> String {
    let mut by_rating: Vec<&TournamentStanding> = t.standings.iter().collect();
    by_rating.sort_by_key(|s| (std::cmp::Reverse(s.rating), s.player_id.clone()));
    let number = |player: &str| by_rating.iter().position(|s| s.player_id == player).map_or(0, |i| i + 1);
    let mut out = format!("012 {}\n022 Fogblast\n042 {}\n", t.name.replace('\n', " "), &iso(t.starts_ms)[..10]);
    out.push_str(&format!("062 {}\n092 Individual: Swiss-System (FIDE Dutch)\nXXR {}\n", t.players, t.rounds));
    for (i, s) in by_rating.iter().enumerate() {
        let name: String = s.name.chars().filter(|c| !c.is_control()).take(33).collect();
        let points = format!("{:.1}", f64::from(s.score) / 2.0);
        out.push_str(&format!(
            "001 {:>4}      {name:<33} {:>4} {:>3} {:>11} {:>10} {points:>4} {:>4}",
            i + 1,
            s.rating.min(9999),
            "",
            "",
            "",
            s.rank
        ));
        for round in &t.swiss_rounds {
            out.push_str("  ");
            out.push_str(&trf_round(round, &s.player_id, &number));
        }
        out.push('\n');
    }
    out
}

/// `GET /api/swiss/{id}/games`: every game of the event played and
/// archived, as PGN, round by round.
pub async fn games(State(gateway): State<Arc<Gateway>>, Path(id): Path<String>) -> ApiResult {
    let t = swiss(&gateway, &id, 1, None).await?;
    let mut pgn = String::new();
    for board in t.swiss_rounds.iter().flat_map(|r| &r.boards) {
        if board.result.is_empty() || board.result.contains("forfeit") {
            continue;
        }
        let game = crate::archive_api::pgn_text(&gateway, &board.game_id).await.map_err(ApiError::from)?;
        pgn.push_str(game.trim_end());
        pgn.push_str("\n\n");
    }
    Ok(([(header::CONTENT_TYPE, "application/x-chess-pgn; charset=utf-8")], pgn).into_response())
}

/// A Swiss's variant from lichess's keys, with `atomic960` besides.
fn parse_variant(key: Option<&str>) -> Result<(Variant, bool), ApiError> {
    match key {
        Some("atomic960") => Ok((Variant::Atomic, true)),
        other => lichess::parse_variant(other),
    }
}

/// `POST /api/swiss/new/{team}`: a new Swiss (`name`, `clock.limit` and
/// `clock.increment` in seconds, `nbRounds`, `startsAt` in ms,
/// `roundInterval` in seconds, `variant`, `rated`, `description`). Teams
/// are not kept: any team id is taken.
pub async fn create(
    State(gateway): State<Arc<Gateway>>,
    bot: Bot,
    Path(_team): Path<String>,
    params: Params,
) -> ApiResult {
    let (variant, chess960) = parse_variant(params.get("variant"))?;
    let limit = params.number("clock.limit")?.ok_or_else(|| ApiError::bad("clock.limit is needed"))?;
    let increment = params.number("clock.increment")?.ok_or_else(|| ApiError::bad("clock.increment is needed"))?;
    let rounds = params.number("nbRounds")?.ok_or_else(|| ApiError::bad("nbRounds is needed"))?;
    if !ROUNDS.contains(&rounds) {
        return Err(ApiError::bad("nbRounds must be 3 to 100"));
    }
    let starts_ms = params
        .get("startsAt")
        .map(|s| s.parse::<u64>().map_err(|_| ApiError::bad("startsAt must be a time in ms")))
        .transpose()?;
    gateway.may_create_game(bot.ip)?;
    let request = CreateTournamentRequest {
        player_id: bot.player.to_string(),
        name: params.get("name").unwrap_or("Fogblast Swiss").to_owned(),
        description: params.get("description").unwrap_or_default().to_owned(),
        variant: variant as i32,
        chess960,
        clock: Some(ClockSettings {
            initial_ms: limit.saturating_mul(1000),
            increment_ms: increment.saturating_mul(1000),
        }),
        rated: params.get("rated").is_none_or(|r| r != "false"),
        starts_ms: starts_ms.unwrap_or(0),
        minutes: 0,
        system: "swiss".to_owned(),
        rounds,
        round_interval_s: params.number("roundInterval")?.unwrap_or(60),
    };
    let timeout = gateway.config.settings.matchmaker_timeout();
    let t = within(timeout, MATCHMAKER, client(&gateway)?.create_tournament(request)).await?;
    Ok(bot.answer(Json(info(&t))))
}

/// `POST /api/swiss/{id}/join` (and `name`, the web page's display name).
/// Joining again while in changes nothing; after a withdrawal it comes
/// back for the next round.
pub async fn join(State(gateway): State<Arc<Gateway>>, bot: Bot, Path(id): Path<String>, params: Params) -> ApiResult {
    swiss(&gateway, &id, 1, None).await?;
    let timeout = gateway.config.settings.matchmaker_timeout();
    let request = fogblast_proto::matchmaker::TournamentPlayerRequest {
        name: display_name(&bot, &params)?,
        ..player_request(&bot, id)
    };
    within(timeout, MATCHMAKER, client(&gateway)?.join_tournament(request)).await?;
    ok().map(|r| bot.answer(r))
}

/// `POST /api/swiss/{id}/withdraw`: not paired from the next round on; the
/// results so far stay. A game being played counts.
pub async fn withdraw(State(gateway): State<Arc<Gateway>>, bot: Bot, Path(id): Path<String>) -> ApiResult {
    swiss(&gateway, &id, 1, None).await?;
    let timeout = gateway.config.settings.matchmaker_timeout();
    within(timeout, MATCHMAKER, client(&gateway)?.withdraw_tournament(player_request(&bot, id))).await?;
    ok().map(|r| bot.answer(r))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fogblast_proto::matchmaker::SwissBoard;

    #[test]
    fn times_are_written_as_lichess_writes_them() {
        assert_eq!(iso(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso(1_796_493_600_000), "2026-12-05T18:00:00Z");
        assert_eq!(iso(951_782_400_000), "2000-02-29T00:00:00Z");
    }

    fn line(id: &str, rating: u32, score: u32, rank: u32) -> TournamentStanding {
        TournamentStanding {
            player_id: id.into(),
            name: id.to_uppercase(),
            rating,
            score,
            rank,
            presence: "active".into(),
            ..TournamentStanding::default()
        }
    }

    /// Three players, two rounds: the columns FIDE's TRF16 fixes, a bye, a
    /// forfeit and a late entry written with their codes.
    #[test]
    fn a_report_file_has_one_line_a_player_in_trf_columns() {
        let board = |white: &str, black: &str, result: &str| SwissBoard {
            game_id: format!("{white}{black}"),
            white: white.into(),
            black: black.into(),
            result: result.into(),
        };
        let t = Tournament {
            name: "Weekly <b>Swiss</b>".into(),
            starts_ms: 1_796_493_600_000,
            players: 3,
            rounds: 2,
            standings: vec![line("a", 2000, 3, 1), line("b", 1900, 2, 2), line("c", 1800, 1, 3)],
            swiss_rounds: vec![
                SwissRound {
                    round: 1,
                    boards: vec![board("a", "b", "1/2-1/2")],
                    absent: vec![],
                    ..SwissRound::default()
                },
                SwissRound {
                    round: 2,
                    boards: vec![board("c", "a", "0-1 forfeit")],
                    bye: "b".into(),
                    ..SwissRound::default()
                },
            ],
            ..Tournament::default()
        };
        let file = report_file(&t);
        let lines: Vec<&str> = file.lines().collect();
        assert_eq!(lines[0], "012 Weekly <b>Swiss</b>");
        assert!(lines.contains(&"042 2026-12-05"));
        let a = lines.iter().find(|l| l.starts_with("001    1")).unwrap();
        assert_eq!(&a[14..17], "A  ");
        assert_eq!(&a[48..52], "2000");
        assert_eq!(&a[80..84], " 1.5");
        assert_eq!(&a[85..89], "   1");
        assert_eq!(&a[91..99], "0002 w =");
        assert_eq!(&a[101..109], "0003 b +");
        let c = lines.iter().find(|l| l.starts_with("001    3")).unwrap();
        assert_eq!(&c[91..], "0000 - Z  0001 w -", "absent in round 1, lost by forfeit in round 2");
        let b = lines.iter().find(|l| l.starts_with("001    2")).unwrap();
        assert!(b.ends_with("0000 - U"), "the bye: {b}");
    }
}
