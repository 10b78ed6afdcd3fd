-- Puzzles (atomic positions and fog-of-war views with one solution) and
-- their Glicko-2 ratings, each player's puzzle rating, and each player's
-- first attempt at each puzzle (the one that is rated).
CREATE TABLE puzzles (
    id          TEXT PRIMARY KEY,
    variant     TEXT NOT NULL CHECK (variant IN ('atomic', 'fog')),
    fen         TEXT NOT NULL,
    solution    TEXT NOT NULL,
    themes      TEXT NOT NULL,
    rating      DOUBLE PRECISION NOT NULL,
    deviation   DOUBLE PRECISION NOT NULL,
    volatility  DOUBLE PRECISION NOT NULL,
    plays       BIGINT NOT NULL DEFAULT 0,
    source      TEXT NOT NULL,
    created_ms  BIGINT NOT NULL
);

CREATE INDEX puzzles_by_rating ON puzzles (variant, rating);

CREATE TABLE puzzle_ratings (
    player_id   TEXT PRIMARY KEY,
    rating      DOUBLE PRECISION NOT NULL,
    deviation   DOUBLE PRECISION NOT NULL,
    volatility  DOUBLE PRECISION NOT NULL,
    attempts    BIGINT NOT NULL,
    solved      BIGINT NOT NULL,
    last_ms     BIGINT NOT NULL
);

CREATE TABLE puzzle_attempts (
    player_id       TEXT NOT NULL,
    puzzle_id       TEXT NOT NULL REFERENCES puzzles (id),
    solved          BIGINT NOT NULL,
    rating_before   DOUBLE PRECISION NOT NULL,
    rating_after    DOUBLE PRECISION NOT NULL,
    attempted_ms    BIGINT NOT NULL,
    PRIMARY KEY (player_id, puzzle_id)
);
