-- Recovery codes: each player's one code, kept as its SHA-256 hash, that
-- carries the player's identity (id and name, and so the ratings) to
-- another browser. Issuing a new code replaces the old one; revoking
-- deletes it.
CREATE TABLE recovery_codes (
    player_id TEXT PRIMARY KEY,
    code_hash TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    created_ms BIGINT NOT NULL
);
