//! Player identity without sign-up: a token is the player id and the time
//! it was issued, signed with the deployment's secret (HMAC-SHA256), and
//! names the key that signed it:
//!
//! `v2.<key id>.<player id>.<issued, unix s>.<signature>`
//!
//! Any gateway holding the secret checks it without a lookup; an altered or
//! forged token fails the check. Secrets rotate: tokens of the previous
//! secrets (`--token-previous-secrets`) are still accepted, and a player
//! who comes back with one is handed a token of the current secret, so once
//! the grace period is over the old secret can go. Tokens expire when
//! their player has not come back for `--token-max-age-days`; each return
//! renews the token (at most once a day). `v1` tokens (player id only, no
//! time, no key id) from before are accepted under the same secrets and
//! renewed as `v2` at once, until the max age has passed since the format
//! was retired (none was issued after).

use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use fogblast_proto::ids::PlayerId;
use hmac::{Hmac, KeyInit, Mac};
use rand::Rng;
use sha2::{Digest, Sha256};

const VERSION: &str = "v2";
const LEGACY_VERSION: &str = "v1";
const PLAYER_ID_LEN: usize = 16;
const ID_ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
/// When `v1` tokens stopped being issued (2026-12-03 00:00 UTC, unix s):
/// the latest issue time any of them can have, so the max age applies to
/// them from then.
const LEGACY_RETIRED_S: u64 = 1_796_256_000;
/// A token is handed out anew when it is older than this.
const RENEW_AFTER_S: u64 = 24 * 3600;

/// The shortest secret accepted: 32 bytes, the size of the HMAC-SHA256 key.
pub const MIN_SECRET_BYTES: usize = 32;

/// Secrets published in examples and deployment files. Player ids are
/// public, so a deployment signing with one lets anyone make any player's
/// token.
const KNOWN_SECRETS: &[&str] =
    &["compose-demo-secret-change-me", "dev-only-token-secret-not-for-production", "change-me", "changeme", "secret"];

/// Why a configured secret is refused, if it is.
pub fn refuse_secret(secret: &str) -> Option<String> {
    if KNOWN_SECRETS.iter().any(|known| known.eq_ignore_ascii_case(secret.trim())) {
        return Some("the token secret is a published example: anyone could sign any player's token".to_owned());
    }
    if secret.len() < MIN_SECRET_BYTES {
        return Some(format!(
            "the token secret has {} bytes; it needs at least {MIN_SECRET_BYTES} (e.g. `openssl rand -hex 32`)",
            secret.len()
        ));
    }
    None
}

/// One signing key: the secret and the id tokens name it by.
#[derive(Clone)]
struct Key {
    id: String,
    secret: Vec<u8>,
}

impl Key {
    fn new(secret: &[u8]) -> Key {
        // The id names the key without revealing anything of it.
        let digest = Sha256::new().chain_update(b"fogblast token key id\0").chain_update(secret).finalize();
        Key { id: URL_SAFE_NO_PAD.encode(&digest[..6]), secret: secret.to_vec() }
    }

    fn mac(&self, body: &str) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.secret).expect("HMAC takes keys of any length");
        mac.update(body.as_bytes());
        mac
    }

    fn signs(&self, body: &str, tag: &str) -> bool {
        let Ok(tag) = URL_SAFE_NO_PAD.decode(tag) else { return false };
        // `verify_slice` compares in constant time.
        self.mac(body).verify_slice(&tag).is_ok()
    }
}

/// What a token that verifies says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    pub player: PlayerId,
    /// A token to hand back instead (a newer key, a newer time), if any.
    pub renewed: Option<String>,
}

#[derive(Clone)]
pub struct TokenSigner {
    current: Key,
    previous: Vec<Key>,
    /// Tokens issued longer ago than this are refused; 0: never.
    max_age_s: u64,
}

impl std::fmt::Debug for TokenSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenSigner { .. }")
    }
}

fn now_s() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl TokenSigner {
    /// Signs with `secret`; accepts tokens of `previous` secrets too, and
    /// refuses those issued more than `max_age_s` ago (0: never).
    pub fn new(secret: &[u8], previous: &[Vec<u8>], max_age_s: u64) -> TokenSigner {
        TokenSigner { current: Key::new(secret), previous: previous.iter().map(|s| Key::new(s)).collect(), max_age_s }
    }

    /// A new anonymous player and the token that proves it.
    pub fn new_player(&self) -> (PlayerId, String) {
        let mut rng = rand::rng();
        let id: String =
            (0..PLAYER_ID_LEN).map(|_| char::from(ID_ALPHABET[rng.random_range(0..ID_ALPHABET.len())])).collect();
        let player = PlayerId::parse(&id).expect("the alphabet makes valid ids");
        let token = self.sign(&player);
        (player, token)
    }

    pub fn sign(&self, player: &PlayerId) -> String {
        self.sign_at(player, now_s())
    }

    fn sign_at(&self, player: &PlayerId, issued_s: u64) -> String {
        let body = format!("{VERSION}.{}.{player}.{issued_s}", self.current.id);
        let tag = self.current.mac(&body).finalize().into_bytes();
        format!("{body}.{}", URL_SAFE_NO_PAD.encode(tag))
    }

    /// The player a token names, if a key this gateway accepts signed it
    /// and it has not expired, with a renewed token when one is due.
    pub fn verify(&self, token: &str) -> Option<Verified> {
        self.verify_at(token, now_s())
    }

    fn verify_at(&self, token: &str, now: u64) -> Option<Verified> {
        if token.len() > 256 {
            return None;
        }
        let (body, tag) = token.rsplit_once('.')?;
        let mut parts = body.split('.');
        match (parts.next()?, parts.next(), parts.next(), parts.next(), parts.next()) {
            (VERSION, Some(key_id), Some(id), Some(issued), None) => {
                let key = std::iter::once(&self.current).chain(&self.previous).find(|k| k.id == key_id)?;
                if !key.signs(body, tag) {
                    return None;
                }
                let player = PlayerId::parse(id).ok()?;
                let issued_s: u64 = issued.parse().ok()?;
                if self.max_age_s > 0 && now.saturating_sub(issued_s) > self.max_age_s {
                    return None;
                }
                let stale = key_id != self.current.id || now.saturating_sub(issued_s) > RENEW_AFTER_S;
                let renewed = stale.then(|| self.sign_at(&player, now));
                Some(Verified { player, renewed })
            }
            (LEGACY_VERSION, Some(id), None, None, None) => {
                std::iter::once(&self.current).chain(&self.previous).find(|k| k.signs(body, tag))?;
                // No issue time is written in it, but none was issued after
                // the format was retired: it is at least that old.
                if self.max_age_s > 0 && now.saturating_sub(LEGACY_RETIRED_S) > self.max_age_s {
                    return None;
                }
                let player = PlayerId::parse(id).ok()?;
                let renewed = Some(self.sign_at(&player, now));
                Some(Verified { player, renewed })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &[u8] = b"secret-a-0123456789abcdef0123456789";
    const B: &[u8] = b"secret-b-0123456789abcdef0123456789";

    fn signer(secret: &[u8]) -> TokenSigner {
        TokenSigner::new(secret, &[], 0)
    }

    #[test]
    fn a_token_names_its_player_and_nothing_else_passes() {
        let signer = signer(A);
        let (player, token) = signer.new_player();
        assert!(token.starts_with(&format!("v2.{}.{player}.", signer.current.id)), "{token}");
        assert_eq!(signer.verify(&token), Some(Verified { player: player.clone(), renewed: None }));
        assert_eq!(self::signer(B).verify(&token), None, "another deployment's token");
        let forged = token.replacen(player.as_str(), "aaaaaaaaaaaaaaaa", 1);
        assert_eq!(signer.verify(&forged), None, "a token with another id");
        let (body, tag) = token.rsplit_once('.').unwrap();
        let (head, issued) = body.rsplit_once('.').unwrap();
        let later = format!("{head}.{}.{tag}", issued.parse::<u64>().unwrap() + 1);
        assert_eq!(signer.verify(&later), None, "a token with another issue time");
        let mut altered = token.clone();
        altered.pop();
        altered.push(if token.ends_with('A') { 'B' } else { 'A' });
        assert_eq!(signer.verify(&altered), None, "an altered signature");
        for junk in ["", ".", "v2....", "v1..", "v2.abc.def", "v1.abc", "v1.a b.xyz", &"x".repeat(5000)] {
            assert_eq!(signer.verify(junk), None, "{junk:?}");
        }
    }

    /// A secret is replaced without logging anyone out: the old one is
    /// accepted for a while, and its tokens are handed back renewed under
    /// the new one; once it is dropped, they are refused.
    #[test]
    fn secrets_rotate_and_old_tokens_are_renewed_then_expire() {
        let (player, old) = signer(A).new_player();
        let rotated = TokenSigner::new(B, &[A.to_vec()], 0);
        let verified = rotated.verify(&old).expect("the previous secret is accepted");
        assert_eq!(verified.player, player);
        let renewed = verified.renewed.expect("renewed under the new secret");
        assert_eq!(signer(B).verify(&renewed).map(|v| v.player), Some(player.clone()));
        assert_eq!(signer(B).verify(&old), None, "the old secret dropped: its tokens go");

        // Tokens expire once their player has not come back for the max age.
        let expiring = TokenSigner::new(A, &[], 30 * 24 * 3600);
        let recent = expiring.sign_at(&player, now_s() - 2 * 24 * 3600);
        let verified = expiring.verify(&recent).expect("within the max age");
        assert!(verified.renewed.is_some(), "older than a day: renewed");
        assert_eq!(expiring.verify(&expiring.sign_at(&player, now_s() - 31 * 24 * 3600)), None, "expired");

        // A legacy token (player id only) is accepted and renewed at once.
        let body = format!("v1.{player}");
        let tag = URL_SAFE_NO_PAD.encode(Key::new(A).mac(&body).finalize().into_bytes());
        let legacy = format!("{body}.{tag}");
        let verified = signer(A).verify(&legacy).expect("a v1 token of the secret");
        assert!(verified.renewed.is_some_and(|t| t.starts_with("v2.")));
        assert_eq!(signer(B).verify(&legacy), None);

        // It carries no issue time, but it is at least as old as the
        // format's retirement: the max age runs from then.
        let day = 24 * 3600;
        let early = expiring.verify_at(&legacy, LEGACY_RETIRED_S + 29 * day).expect("within the max age of retirement");
        assert!(early.renewed.is_some_and(|t| t.starts_with("v2.")));
        assert_eq!(expiring.verify_at(&legacy, LEGACY_RETIRED_S + 31 * day), None, "past the max age of retirement");
        assert!(signer(A).verify_at(&legacy, LEGACY_RETIRED_S + 3650 * day).is_some(), "no max age: never expires");
    }

    #[test]
    fn published_and_short_secrets_are_refused() {
        for published in ["compose-demo-secret-change-me", "dev-only-token-secret-not-for-production", "CHANGEME"] {
            let reason = refuse_secret(published).expect("refused");
            assert!(reason.contains("published"), "{reason}");
        }
        let reason = refuse_secret(&"a".repeat(31)).expect("refused");
        assert!(reason.contains("31 bytes") && reason.contains("32"), "{reason}");
        assert_eq!(refuse_secret(&"0123456789abcdef".repeat(4)), None);
    }
}
