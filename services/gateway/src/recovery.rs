//! Recovery codes: a name that follows the player. A player asks for a code
//! (with their token), is shown it once, and types it into another browser,
//! which gets a token for the same player, and with it their games and
//! ratings, and their name. A new code replaces the old one; revoking makes
//! the code useless.
//!
//! A code is 130 random bits, written as 26 letters and digits in groups
//! of five (Crockford's base 32: no I, L, O or U, and those are read as
//! the digits they look like). Only its SHA-256 hash leaves the gateway:
//! the rating service keeps the hash with the player and name (Postgres,
//! or SQLite under `fogblast up`), so a copy of the database gives no code.
//! Redeeming is limited per address, so codes cannot be guessed by trying:
//! with 2^130 codes, a million tries a day find one in 10^27 years.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, State};
use axum::http::{header, HeaderMap};
use axum::response::Response;
use axum::Json;
use fogblast_proto::error::{ErrorCode, ServiceError};
use fogblast_proto::ids::PlayerId;
use fogblast_proto::rating::{RedeemRecoveryRequest, RevokeRecoveryRequest, SetRecoveryRequest};
use rand::Rng;
use serde::Deserialize;
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::deadline::within;
use crate::http::{client_ip, error_response, json_or_error};
use crate::Gateway;

/// Crockford's base 32.
const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// Characters in a code, 5 bits each.
const CODE_CHARS: usize = 26;
/// The longest name kept with a code, as the page's name field allows.
const MAX_NAME_CHARS: usize = 30;
const RATING: &str = "rating service";

/// A fresh code: `XXXXX-XXXXX-XXXXX-XXXXX-XXXXX-X`.
pub fn new_code(rng: &mut impl Rng) -> String {
    let chars: Vec<char> = (0..CODE_CHARS).map(|_| char::from(ALPHABET[rng.random_range(0..32)])).collect();
    chars.chunks(5).map(|group| group.iter().collect::<String>()).collect::<Vec<_>>().join("-")
}

/// The code as typed, in its one spelling: upper case, without spaces or
/// dashes, with the look-alikes read as digits. `None` unless it is a code's
/// length in the code's letters.
pub fn normalized(typed: &str) -> Option<String> {
    let mut code = String::with_capacity(CODE_CHARS);
    for c in typed.chars().filter(|c| !c.is_whitespace() && *c != '-') {
        let c = match c.to_ascii_uppercase() {
            'O' => '0',
            'I' | 'L' => '1',
            other => other,
        };
        if !c.is_ascii() || !ALPHABET.contains(&(c as u8)) {
            return None;
        }
        code.push(c);
    }
    (code.len() == CODE_CHARS).then_some(code)
}

/// What the rating service keeps of a (normalized) code.
pub fn code_hash(code: &str) -> String {
    let digest = Sha256::new().chain_update(b"fogblast recovery code\0").chain_update(code.as_bytes()).finalize();
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The player whose token the request carries (`Authorization: Bearer`).
pub(crate) fn bearer_player(gateway: &Gateway, headers: &HeaderMap) -> Result<PlayerId, ServiceError> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .ok_or_else(|| ServiceError::new(ErrorCode::Unauthorized, "send your token as Authorization: Bearer"))?;
    gateway
        .signer
        .verify(token.trim())
        .map(|verified| verified.player)
        .ok_or_else(|| ServiceError::new(ErrorCode::Unauthorized, "that token is not valid here"))
}

#[derive(Debug, Default, Deserialize)]
pub struct IssueBody {
    #[serde(default)]
    name: String,
}

/// `POST /api/recovery`: a new code for the token's player, carrying
/// `name`; any earlier code stops working. The code is in this answer only.
pub async fn issue(State(gateway): State<Arc<Gateway>>, headers: HeaderMap, body: Option<Json<IssueBody>>) -> Response {
    let result = async {
        let player = bearer_player(&gateway, &headers)?;
        let name: String = body.map(|Json(b)| b.name).unwrap_or_default().trim().chars().take(MAX_NAME_CHARS).collect();
        let code = new_code(&mut rand::rng());
        let request = SetRecoveryRequest {
            player_id: player.to_string(),
            name: name.clone(),
            code_hash: code_hash(&normalized(&code).expect("a fresh code reads")),
        };
        let timeout = gateway.config.settings.rating_timeout();
        within(timeout, RATING, gateway.rating_for("recovery codes need")?.set_recovery(request)).await?;
        Ok(json!({ "code": code, "player": player.as_str(), "name": name }))
    }
    .await;
    json_or_error(result)
}

/// `DELETE /api/recovery`: the token's player's code stops working.
pub async fn revoke(State(gateway): State<Arc<Gateway>>, headers: HeaderMap) -> Response {
    let result = async {
        let player = bearer_player(&gateway, &headers)?;
        let request = RevokeRecoveryRequest { player_id: player.to_string() };
        let timeout = gateway.config.settings.rating_timeout();
        let revoked =
            within(timeout, RATING, gateway.rating_for("recovery codes need")?.revoke_recovery(request)).await?;
        Ok(json!({ "revoked": revoked.revoked }))
    }
    .await;
    json_or_error(result)
}

#[derive(Debug, Deserialize)]
pub struct RedeemBody {
    code: String,
}

/// `POST /api/recovery/redeem`: the identity a code carries, with a token
/// for it. Each try comes out of the address's budget of tries first,
/// right or wrong; a wrong code changes nothing.
pub async fn redeem(
    State(gateway): State<Arc<Gateway>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Option<Json<RedeemBody>>,
) -> Response {
    let ip = client_ip(&gateway, peer, &headers);
    if let Err(wait) = gateway.limits.recovery_try(ip) {
        let error = ServiceError::new(
            ErrorCode::RateLimited,
            format!("too many recovery codes tried from your address: wait {} s", wait.as_secs().max(1)),
        );
        let mut response = error_response(&error);
        response.headers_mut().insert(header::RETRY_AFTER, wait.as_secs().max(1).into());
        return response;
    }
    let result = async {
        let typed = body.map(|Json(b)| b.code).unwrap_or_default();
        let code = normalized(&typed).ok_or_else(|| {
            ServiceError::new(ErrorCode::BadRequest, "a recovery code is 26 letters and digits, like ABCDE-FGHJK-…")
        })?;
        let request = RedeemRecoveryRequest { code_hash: code_hash(&code) };
        let timeout = gateway.config.settings.rating_timeout();
        let identity =
            within(timeout, RATING, gateway.rating_for("recovery codes need")?.redeem_recovery(request)).await?;
        let player = PlayerId::parse(&identity.player_id)
            .map_err(|e| ServiceError::new(ErrorCode::Internal, format!("a recovery code names no player: {e}")))?;
        Ok(json!({ "token": gateway.signer.sign(&player), "player": player.as_str(), "name": identity.name }))
    }
    .await;
    json_or_error(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn a_code_reads_back_however_it_is_typed() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let code = new_code(&mut rng);
        assert_eq!(code.len(), CODE_CHARS + 5, "five dashes between six groups: {code}");
        let plain = normalized(&code).expect("a fresh code reads");
        assert_eq!(plain.len(), CODE_CHARS);
        assert_eq!(normalized(&code.to_lowercase().replace('-', " ")), Some(plain.clone()));
        // Look-alikes are the digits they look like.
        let typed = plain.replace('0', "o").replace('1', "l");
        assert_eq!(normalized(&typed), Some(plain));
    }

    #[test]
    fn codes_differ_and_only_codes_read() {
        let mut rng = rand::rng();
        let codes: std::collections::HashSet<String> = (0..1000).map(|_| new_code(&mut rng)).collect();
        assert_eq!(codes.len(), 1000);
        assert_eq!(normalized("ABCDE"), None, "too short");
        assert_eq!(normalized(&"A".repeat(27)), None, "too long");
        assert_eq!(normalized(&format!("{}U", "A".repeat(25))), None, "U is not a letter of codes");
        assert_eq!(normalized(&format!("{}é", "A".repeat(25))), None);
    }

    #[test]
    fn the_hash_is_hex_sha256_of_the_code_alone() {
        let hash = code_hash("0123456789ABCDEFGHJKMNPQRS");
        assert_eq!(hash.len(), 64);
        assert!(hash.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_ne!(hash, code_hash("0123456789ABCDEFGHJKMNPQRT"));
        assert_eq!(hash, code_hash("0123456789ABCDEFGHJKMNPQRS"));
    }
}
