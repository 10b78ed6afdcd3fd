-- Ratings follow the order games finished in, not the order they arrive
-- in: each rated game keeps what is needed to rate it again, its players,
-- its end, its score and each side's stored rating before it (before
-- inactivity decay), so a game that arrives after later games of its
-- players are rated is put in its place and those games are rated again.

ALTER TABLE rated_games ADD COLUMN ended_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE rated_games ADD COLUMN white_id TEXT NOT NULL DEFAULT '';
ALTER TABLE rated_games ADD COLUMN black_id TEXT NOT NULL DEFAULT '';
-- 1, 0.5 or 0, for white.
ALTER TABLE rated_games ADD COLUMN white_score REAL NOT NULL DEFAULT 0.5;
ALTER TABLE rated_games ADD COLUMN white_prior_rating REAL NOT NULL DEFAULT 1500;
ALTER TABLE rated_games ADD COLUMN white_prior_deviation REAL NOT NULL DEFAULT 500;
ALTER TABLE rated_games ADD COLUMN white_prior_volatility REAL NOT NULL DEFAULT 0.09;
ALTER TABLE rated_games ADD COLUMN white_prior_rated_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE rated_games ADD COLUMN white_volatility REAL NOT NULL DEFAULT 0.09;
ALTER TABLE rated_games ADD COLUMN black_prior_rating REAL NOT NULL DEFAULT 1500;
ALTER TABLE rated_games ADD COLUMN black_prior_deviation REAL NOT NULL DEFAULT 500;
ALTER TABLE rated_games ADD COLUMN black_prior_volatility REAL NOT NULL DEFAULT 0.09;
ALTER TABLE rated_games ADD COLUMN black_prior_rated_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE rated_games ADD COLUMN black_volatility REAL NOT NULL DEFAULT 0.09;

-- Games rated before this kept less: their players, end and score come
-- from the archive, and their prior ratings are taken as the ratings they
-- started from, with the deviation they ended with.
UPDATE rated_games SET
    ended_ms = (SELECT g.ended_ms FROM games g WHERE g.id = rated_games.game_id),
    white_id = (SELECT COALESCE(g.white_id, '') FROM games g WHERE g.id = rated_games.game_id),
    black_id = (SELECT COALESCE(g.black_id, '') FROM games g WHERE g.id = rated_games.game_id),
    white_score = (SELECT CASE g.result WHEN '1-0' THEN 1 WHEN '0-1' THEN 0 ELSE 0.5 END
                   FROM games g WHERE g.id = rated_games.game_id),
    white_prior_rating = white_before,
    white_prior_deviation = white_deviation,
    black_prior_rating = black_before,
    black_prior_deviation = black_deviation;
UPDATE rated_games SET white_prior_rated_ms = ended_ms, black_prior_rated_ms = ended_ms;

CREATE INDEX rated_games_in_order ON rated_games (variant, ended_ms, game_id);
