//! Player identity without sign-up: a token is the player id signed with
//! the deployment's secret (HMAC-SHA256). Any gateway holding the secret
//! checks it without a lookup; an altered or forged token fails the check.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use fogblast_proto::ids::PlayerId;
use hmac::{Hmac, KeyInit, Mac};
use rand::Rng;
use sha2::Sha256;

const VERSION: &str = "v1";
const PLAYER_ID_LEN: usize = 16;
const ID_ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

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

#[derive(Clone)]
pub struct TokenSigner {
    key: Vec<u8>,
}

impl std::fmt::Debug for TokenSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenSigner { .. }")
    }
}

impl TokenSigner {
    pub fn new(secret: &[u8]) -> TokenSigner {
        TokenSigner { key: secret.to_vec() }
    }

    fn mac(&self, body: &str) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key).expect("HMAC takes keys of any length");
        mac.update(body.as_bytes());
        mac
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
        let body = format!("{VERSION}.{player}");
        let tag = self.mac(&body).finalize().into_bytes();
        format!("{body}.{}", URL_SAFE_NO_PAD.encode(tag))
    }

    /// The player a token names, if the signature holds.
    pub fn verify(&self, token: &str) -> Option<PlayerId> {
        let (body, tag) = token.rsplit_once('.')?;
        let (version, id) = body.split_once('.')?;
        if version != VERSION {
            return None;
        }
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        // `verify_slice` compares in constant time.
        self.mac(body).verify_slice(&tag).ok()?;
        PlayerId::parse(id).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_names_its_player_and_nothing_else_passes() {
        let signer = TokenSigner::new(b"secret");
        let (player, token) = signer.new_player();
        assert_eq!(signer.verify(&token), Some(player.clone()));
        assert_eq!(TokenSigner::new(b"other").verify(&token), None, "another deployment's token");
        let forged = token.replacen(player.as_str(), "aaaaaaaaaaaaaaaa", 1);
        assert_eq!(signer.verify(&forged), None, "a token with another id");
        let mut altered = token.clone();
        altered.pop();
        altered.push(if token.ends_with('A') { 'B' } else { 'A' });
        assert_eq!(signer.verify(&altered), None, "an altered signature");
        for junk in ["", ".", "v1..", "v2.abc.def", "v1.abc", "v1.a b.xyz", &"x".repeat(5000)] {
            assert_eq!(signer.verify(junk), None, "{junk:?}");
        }
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
