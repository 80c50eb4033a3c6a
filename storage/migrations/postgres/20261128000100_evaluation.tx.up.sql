-- Load tests and capability evaluation (issue 15). Each row keeps the
-- report as the owning package shapes it (JSON in a TEXT column); the
-- columns beside it are what listings filter and sort on.
CREATE TABLE throughput_runs (
    id         TEXT PRIMARY KEY,
    status     TEXT NOT NULL,
    started_at TIMESTAMPTZ NOT NULL,
    report     TEXT NOT NULL
);
CREATE INDEX throughput_runs_started_idx ON throughput_runs (started_at);

CREATE TABLE evaluation_runs (
    id            TEXT PRIMARY KEY,
    model_name    TEXT NOT NULL,
    status        TEXT NOT NULL,
    score         DOUBLE PRECISION NOT NULL,
    case_count    INTEGER NOT NULL,
    passed_count  INTEGER NOT NULL,
    failed_count  INTEGER NOT NULL,
    skipped_count INTEGER NOT NULL,
    error_count   INTEGER NOT NULL,
    started_at    TIMESTAMPTZ NOT NULL,
    finished_at   TIMESTAMPTZ,
    run           TEXT NOT NULL
);
CREATE INDEX evaluation_runs_started_idx ON evaluation_runs (started_at);

CREATE TABLE evaluation_items (
    run_id  TEXT NOT NULL REFERENCES evaluation_runs (id) ON DELETE CASCADE,
    case_id TEXT NOT NULL,
    seq     INTEGER NOT NULL,
    status  TEXT NOT NULL,
    score   DOUBLE PRECISION NOT NULL,
    item    TEXT NOT NULL,
    PRIMARY KEY (run_id, case_id)
);
