-- Long-term memory (issue 14, docs/memory.md).
--
-- memory_settings: a user's switch (memory is off until turned on).
CREATE TABLE memory_settings (
    user_id    TEXT PRIMARY KEY,
    enabled    BOOLEAN NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);

-- memory_records: one summary per (user, session); the newest
-- memory.max_records of a user are kept.
CREATE TABLE memory_records (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL,
    session_id TEXT NOT NULL,
    summary    TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    UNIQUE (user_id, session_id)
);
CREATE INDEX memory_records_user_idx ON memory_records (user_id, created_at);

-- memory_tasks: the summarisation queue and its log. A worker claims the
-- oldest queued task (or a running one whose lease ended) with one
-- conditional UPDATE, so each task runs on one worker of one replica;
-- owner and lease_until fence its end.
CREATE TABLE memory_tasks (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    run_id      TEXT NOT NULL,
    language    TEXT NOT NULL,
    state       TEXT NOT NULL,
    error       TEXT NOT NULL,
    model       TEXT NOT NULL,
    attempts    INTEGER NOT NULL,
    owner       TEXT NOT NULL,
    lease_until TIMESTAMPTZ,
    queued_at   TIMESTAMPTZ NOT NULL,
    started_at  TIMESTAMPTZ,
    finished_at TIMESTAMPTZ
);
CREATE INDEX memory_tasks_state_idx ON memory_tasks (state, queued_at);
CREATE INDEX memory_tasks_queued_idx ON memory_tasks (queued_at);
CREATE INDEX memory_tasks_user_idx ON memory_tasks (user_id, queued_at);
