-- Tournament games: the tournament each game was played in, and which
-- sides went berserk, so a tournament's scores can be recomputed from the
-- archive alone.
ALTER TABLE games ADD COLUMN tournament_id TEXT NOT NULL DEFAULT '';
ALTER TABLE games ADD COLUMN white_berserk BIGINT NOT NULL DEFAULT 0;
ALTER TABLE games ADD COLUMN black_berserk BIGINT NOT NULL DEFAULT 0;
CREATE INDEX games_by_tournament ON games (tournament_id, ended_ms) WHERE tournament_id <> '';
