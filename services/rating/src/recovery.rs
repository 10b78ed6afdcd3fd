//! Recovery codes in the archive database: each player's one code, kept as
//! its hash with the name it carries. A new code replaces the player's old
//! one in the same statement, so at most one code works at a time.

use sqlx::Row;

use crate::archive::{Archive, ArchiveError};

/// Whether `hash` is a SHA-256 digest as lowercase hex.
pub fn is_code_hash(hash: &str) -> bool {
    hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl Archive {
    /// Keeps `code_hash` as `player`'s recovery code, in place of any
    /// earlier one. `false` when another player's code has that hash (no
    /// two codes of fresh randomness ever do; the caller refuses it).
    pub async fn set_recovery(&self, player: &str, name: &str, code_hash: &str) -> Result<bool, ArchiveError> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let taken = sqlx::query("SELECT player_id FROM recovery_codes WHERE code_hash = $1")
            .bind(code_hash)
            .fetch_optional(self.pool())
            .await?;
        if let Some(row) = taken {
            let holder: String = row.try_get("player_id")?;
            if holder != player {
                return Ok(false);
            }
        }
        sqlx::query(
            "INSERT INTO recovery_codes (player_id, code_hash, name, created_ms) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (player_id) DO UPDATE SET code_hash = excluded.code_hash, name = excluded.name, \
             created_ms = excluded.created_ms",
        )
        .bind(player)
        .bind(code_hash)
        .bind(name)
        .bind(now)
        .execute(self.pool())
        .await?;
        Ok(true)
    }

    /// The player and name `code_hash` stands for, if it is a player's code.
    pub async fn redeem_recovery(&self, code_hash: &str) -> Result<Option<(String, String)>, ArchiveError> {
        let row = sqlx::query("SELECT player_id, name FROM recovery_codes WHERE code_hash = $1")
            .bind(code_hash)
            .fetch_optional(self.pool())
            .await?;
        row.map(|row| Ok((row.try_get("player_id")?, row.try_get("name")?))).transpose()
    }

    /// Forgets `player`'s code; `true` when there was one.
    pub async fn revoke_recovery(&self, player: &str) -> Result<bool, ArchiveError> {
        let done =
            sqlx::query("DELETE FROM recovery_codes WHERE player_id = $1").bind(player).execute(self.pool()).await?;
        Ok(done.rows_affected() > 0)
    }
}
