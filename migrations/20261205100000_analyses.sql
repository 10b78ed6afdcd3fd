-- Computer analyses of archived games: one row per game, made by the
-- first request (later ones find it), finished once by the engine pool's
-- result. `positions` holds that result as the protobuf
-- `fogblast.engine.v1.AnalysisFinished`; each move's class and the
-- accuracies are worked out from it when read.
CREATE TABLE analyses (
    game_id TEXT PRIMARY KEY,
    -- queued, done or failed
    state TEXT NOT NULL,
    -- who asked first (the client's address), for the bound on waiting analyses
    requester TEXT NOT NULL,
    requested_ms BIGINT NOT NULL,
    finished_ms BIGINT NOT NULL DEFAULT 0,
    depth BIGINT NOT NULL DEFAULT 0,
    error TEXT NOT NULL DEFAULT '',
    positions BYTEA
);
CREATE INDEX analyses_waiting_by_requester ON analyses (requester) WHERE state = 'queued';
