//! Who a bot is and who else is around, in lichess's shapes: the account
//! with its ratings (`perfs`), its games in progress, a token's test, the
//! status and public data of players, and the bots online.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use fogblast_proto::game::{GetStateRequest, Status};
use fogblast_proto::ids::PlayerId;
use fogblast_proto::notices::OnlineAsk;
use fogblast_proto::rating::{Profile, ProfileRequest};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::{lichess, ApiError, ApiResult, Bot};
use crate::Gateway;

/// The scopes every Fogblast token carries: a token may do whatever its
/// player may.
const SCOPES: &str = "bot:play,board:play,challenge:read,challenge:write";

/// The most tokens one `POST /api/token/test` may hold.
const MAX_TOKENS_TESTED: usize = 32;

/// The keys of the standard rating in lichess's `perfs`: each speed, and Chess960.
const STANDARD_PERFS: [&str; 7] =
    ["ultraBullet", "bullet", "blitz", "rapid", "classical", "correspondence", "chess960"];

/// The player's ratings as lichess's `perfs`, keyed as lichess keys them:
/// standard under each speed and Chess960, atomic, and fog of war under
/// its key and under the name a challenge's `perf` gives it.
pub fn perfs(profile: Option<&Profile>) -> Value {
    let mut perfs = Map::new();
    for rating in profile.map_or(&[][..], |p| p.ratings.as_slice()) {
        let perf = json!({
            "games": rating.rated_games,
            "rating": rating.rating.round() as i64,
            "rd": rating.deviation.round() as i64,
            "prog": 0,
            "prov": rating.provisional,
        });
        let keys = match fogblast_rules::Variant::try_from(rating.variant()) {
            Ok(fogblast_rules::Variant::Standard) | Err(_) => STANDARD_PERFS.map(str::to_owned).to_vec(),
            Ok(variant) => vec![variant.lichess_key(false).to_owned(), variant.lichess_name(false).to_lowercase()],
        };
        for key in keys {
            perfs.insert(key, perf.clone());
        }
    }
    Value::Object(perfs)
}

/// The player's profile from the archive; `None` when the archive is not
/// configured or does not answer (a player's ratings are then left out,
/// not made up).
async fn profile(gateway: &Gateway, player: &str) -> Option<Profile> {
    let mut client = gateway.rating.clone()?;
    let request = ProfileRequest { player_id: player.to_owned() };
    let call = tokio::time::timeout(gateway.config.settings.rating_timeout(), client.get_profile(request));
    call.await.ok()?.ok().map(tonic::Response::into_inner)
}

fn user(id: &str, profile: Option<&Profile>) -> Value {
    json!({
        "id": id,
        "username": id,
        "title": "BOT",
        "perfs": perfs(profile),
        "count": { "all": profile.map_or(0, |p| p.games) },
        "disabled": false,
        "tosViolation": false,
    })
}

/// `GET /api/account`: who the token belongs to, with its ratings.
pub async fn account(State(gateway): State<Arc<Gateway>>, bot: Bot) -> ApiResult {
    let profile = profile(&gateway, bot.player.as_str()).await;
    Ok(bot.answer(Json(user(bot.player.as_str(), profile.as_ref()))))
}

/// `GET /api/user/{id}`: a player's public data. Nobody blocks anybody here.
pub async fn public_data(State(gateway): State<Arc<Gateway>>, bot: Bot, Path(id): Path<String>) -> ApiResult {
    let player = PlayerId::parse(&id).map_err(|_| ApiError::new(StatusCode::NOT_FOUND, format!("no player {id:?}")))?;
    let profile = profile(&gateway, player.as_str()).await;
    let mut data = user(player.as_str(), profile.as_ref());
    data["blocking"] = json!(false);
    Ok(bot.answer(Json(data)))
}

#[derive(Debug, Deserialize)]
pub struct PlayingQuery {
    nb: Option<usize>,
}

/// `GET /api/account/playing`: the bot's games being played, as the event
/// stream's `gameStart` writes them.
pub async fn playing(State(gateway): State<Arc<Gateway>>, bot: Bot, Query(query): Query<PlayingQuery>) -> ApiResult {
    let most = query.nb.unwrap_or(9).clamp(1, 50);
    let mut now_playing = Vec::new();
    for game in gateway.router.seats_of(&bot.player).await? {
        let request = GetStateRequest { game_id: game.to_string(), player_id: bot.player.to_string() };
        let Ok(state) = gateway.router.get_state(request).await else { continue };
        if state.status() == Status::Playing {
            now_playing.push(lichess::event_game(&state, "friend"));
        }
        if now_playing.len() == most {
            break;
        }
    }
    Ok(bot.answer(Json(json!({ "nowPlaying": now_playing }))))
}

/// `POST /api/token/test`: the body is tokens separated by commas; each is
/// answered with its player and scopes, or `null`.
pub async fn test_tokens(State(gateway): State<Arc<Gateway>>, request: axum::extract::Request) -> ApiResult {
    let body = axum::body::to_bytes(request.into_body(), super::MAX_BODY).await.map_err(|_| {
        ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, format!("a body is at most {} bytes", super::MAX_BODY))
    })?;
    let text = std::str::from_utf8(&body).map_err(|_| ApiError::bad("the body is tokens separated by commas"))?;
    let tokens: Vec<&str> = text.split(',').map(str::trim).filter(|t| !t.is_empty()).collect();
    if tokens.len() > MAX_TOKENS_TESTED {
        return Err(ApiError::bad(format!("at most {MAX_TOKENS_TESTED} tokens at once")));
    }
    let mut answers = Map::new();
    for token in tokens {
        let answer = gateway.signer.verify(token).map_or(
            Value::Null,
            |verified| json!({ "userId": verified.player.as_str(), "scopes": SCOPES, "expires": Value::Null }),
        );
        answers.insert(token.to_owned(), answer);
    }
    Ok(Json(Value::Object(answers)).into_response())
}

#[derive(Debug, Deserialize)]
pub struct StatusQuery {
    ids: String,
}

/// `GET /api/users/status?ids=a,b`: whether each is online, on any gateway.
pub async fn status(State(gateway): State<Arc<Gateway>>, bot: Bot, Query(query): Query<StatusQuery>) -> ApiResult {
    let ids: Vec<String> =
        query.ids.split(',').map(str::trim).filter(|id| PlayerId::parse(id).is_ok()).map(str::to_owned).collect();
    if ids.len() > crate::online::MAX_ASKED {
        return Err(ApiError::bad(format!("at most {} ids", crate::online::MAX_ASKED)));
    }
    let ask = OnlineAsk { player_ids: ids.clone(), ..Default::default() };
    let online = crate::online::ask(gateway.bus.as_ref(), ask)
        .await
        .map_err(|e| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.message().to_owned()))?;
    let users: Vec<Value> =
        ids.iter().map(|id| json!({ "id": id, "name": id, "title": "BOT", "online": online.contains(id) })).collect();
    Ok(bot.answer(Json(users)))
}

#[derive(Debug, Deserialize)]
pub struct OnlineBotsQuery {
    nb: Option<u32>,
}

/// `GET /api/bot/online?nb=`: bots with an open event stream, as ndjson.
pub async fn online_bots(
    State(gateway): State<Arc<Gateway>>,
    bot: Bot,
    Query(query): Query<OnlineBotsQuery>,
) -> ApiResult {
    let most = query.nb.unwrap_or(50).clamp(1, 300);
    let ask = OnlineAsk { bots: most, ..Default::default() };
    let online = crate::online::ask(gateway.bus.as_ref(), ask)
        .await
        .map_err(|e| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.message().to_owned()))?;
    let mut lines = String::new();
    for id in online.iter().take(most as usize) {
        lines.push_str(&user(id, None).to_string());
        lines.push('\n');
    }
    let mut headers = HeaderMap::new();
    headers.insert(header::CONTENT_TYPE, "application/x-ndjson".parse().expect("a valid header"));
    Ok(bot.answer((headers, lines)))
}

#[cfg(test)]
mod tests {
    use fogblast_proto::game::Variant;
    use fogblast_proto::rating::VariantRating;

    use super::*;

    #[test]
    fn perfs_are_keyed_as_lichess_keys_them() {
        let rating =
            |variant: Variant, rating: f64| VariantRating { variant: variant as i32, rating, ..Default::default() };
        let profile = Profile {
            ratings: vec![
                rating(Variant::Standard, 1400.0),
                rating(Variant::Atomic, 1500.0),
                rating(Variant::Fog, 1600.0),
            ],
            ..Default::default()
        };
        let perfs = perfs(Some(&profile));
        let mut keys: Vec<_> = perfs.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        let mut expected = STANDARD_PERFS.to_vec();
        expected.extend(["atomic", "fog of war", "fogOfWar"]);
        expected.sort_unstable();
        assert_eq!(keys, expected);
        assert_eq!((perfs["blitz"]["rating"].as_i64(), perfs["chess960"]["rating"].as_i64()), (Some(1400), Some(1400)));
        assert_eq!(perfs["atomic"]["rating"], 1500);
        assert_eq!(
            (perfs["fogOfWar"]["rating"].as_i64(), perfs["fog of war"]["rating"].as_i64()),
            (Some(1600), Some(1600))
        );
    }
}
