-- The same schema for SQLite, which `fogblast up` uses on one machine.
-- Players, their ratings per variant, the archive of finished games and the
-- record of which games moved ratings. Times are unix milliseconds. Flags
-- are 0 or 1 and counts BIGINT, so that the same queries run on SQLite.

CREATE TABLE players (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL DEFAULT '',
    created_ms  BIGINT NOT NULL
);

-- One Glicko-2 rating per player and variant: atomic is rated apart from
-- standard chess and fog of war.
CREATE TABLE ratings (
    player_id       TEXT NOT NULL REFERENCES players (id),
    variant         TEXT NOT NULL CHECK (variant IN ('standard', 'atomic', 'fog')),
    rating          REAL NOT NULL,
    deviation       REAL NOT NULL,
    volatility      REAL NOT NULL,
    rated_games     BIGINT NOT NULL DEFAULT 0,
    wins            BIGINT NOT NULL DEFAULT 0,
    losses          BIGINT NOT NULL DEFAULT 0,
    draws           BIGINT NOT NULL DEFAULT 0,
    last_rated_ms   BIGINT NOT NULL,
    PRIMARY KEY (player_id, variant)
);

-- Leaderboards list settled players only (deviation under 110).
CREATE INDEX ratings_leaderboard ON ratings (variant, rating DESC) WHERE deviation < 110;

-- Every finished game, rated or not. The primary key is what makes a
-- redelivered game a no-op.
CREATE TABLE games (
    id                  TEXT PRIMARY KEY,
    variant             TEXT NOT NULL,
    chess960            BIGINT NOT NULL,
    initial_fen         TEXT NOT NULL,
    white_id            TEXT,
    white_name          TEXT NOT NULL,
    white_computer      BIGINT NOT NULL,
    white_level         BIGINT NOT NULL,
    black_id            TEXT,
    black_name          TEXT NOT NULL,
    black_computer      BIGINT NOT NULL,
    black_level         BIGINT NOT NULL,
    rated               BIGINT NOT NULL,
    result              TEXT NOT NULL,
    reason              BIGINT NOT NULL,
    moves               TEXT NOT NULL,
    clocks              TEXT NOT NULL,
    clock_initial_ms    BIGINT,
    clock_increment_ms  BIGINT,
    final_fen           TEXT NOT NULL,
    created_ms          BIGINT NOT NULL,
    started_ms          BIGINT NOT NULL,
    ended_ms            BIGINT NOT NULL,
    archived_ms         BIGINT NOT NULL
);

CREATE INDEX games_by_white ON games (white_id, ended_ms DESC, id DESC);
CREATE INDEX games_by_black ON games (black_id, ended_ms DESC, id DESC);

-- The games that moved ratings, once each, with what they moved.
CREATE TABLE rated_games (
    game_id             TEXT PRIMARY KEY REFERENCES games (id),
    variant             TEXT NOT NULL,
    white_before        REAL NOT NULL,
    white_after         REAL NOT NULL,
    white_deviation     REAL NOT NULL,
    black_before        REAL NOT NULL,
    black_after         REAL NOT NULL,
    black_deviation     REAL NOT NULL,
    rated_ms            BIGINT NOT NULL
);
