-- wunder schema v1 (SQLite). Keep in step with ../postgres/; the column
-- names, types' meaning and indexes are the same, only the spelling of
-- identity columns and timestamps differs. SQLite keeps TIMESTAMP values as
-- text in bun's format, 'YYYY-MM-DD HH:MM:SS[.ffffff]+00:00', always UTC, so
-- text order is time order.

CREATE TABLE users (
    id         TEXT PRIMARY KEY,
    created_at TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f+00:00', 'now'))
);

CREATE TABLE sessions (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL,
    title      TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX sessions_user_updated_idx ON sessions (user_id, updated_at DESC, id DESC);

CREATE TABLE messages (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id        TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    run_id            TEXT NOT NULL DEFAULT '',
    role              TEXT NOT NULL,
    content           TEXT NOT NULL DEFAULT '',
    reasoning_content TEXT NOT NULL DEFAULT '',
    tool_calls        TEXT,
    tool_call_id      TEXT NOT NULL DEFAULT '',
    name              TEXT NOT NULL DEFAULT '',
    created_at        TIMESTAMP NOT NULL
);
CREATE INDEX messages_session_idx ON messages (session_id, id);

CREATE TABLE runs (
    id            TEXT PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    user_id       TEXT NOT NULL,
    state         TEXT NOT NULL,
    stop_reason   TEXT NOT NULL DEFAULT '',
    question      TEXT NOT NULL DEFAULT '',
    answer        TEXT NOT NULL DEFAULT '',
    error         TEXT NOT NULL DEFAULT '',
    model_name    TEXT NOT NULL DEFAULT '',
    input_tokens  BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    total_tokens  BIGINT NOT NULL DEFAULT 0,
    last_seq      BIGINT NOT NULL DEFAULT 0,
    created_at    TIMESTAMP NOT NULL,
    started_at    TIMESTAMP,
    finished_at   TIMESTAMP
);
CREATE INDEX runs_created_idx ON runs (created_at DESC, id DESC);
CREATE INDEX runs_user_created_idx ON runs (user_id, created_at DESC, id DESC);
CREATE INDEX runs_session_created_idx ON runs (session_id, created_at DESC, id DESC);
CREATE INDEX runs_state_idx ON runs (state);

CREATE TABLE events (
    run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq        BIGINT NOT NULL,
    session_id TEXT NOT NULL,
    type       TEXT NOT NULL,
    data       TEXT,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (run_id, seq)
);

CREATE TABLE tool_logs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id      TEXT NOT NULL DEFAULT '',
    session_id  TEXT NOT NULL DEFAULT '',
    user_id     TEXT NOT NULL DEFAULT '',
    call_id     TEXT NOT NULL DEFAULT '',
    tool        TEXT NOT NULL,
    arguments   TEXT,
    result      TEXT NOT NULL DEFAULT '',
    is_error    BOOLEAN NOT NULL DEFAULT FALSE,
    duration_ms BIGINT NOT NULL DEFAULT 0,
    created_at  TIMESTAMP NOT NULL
);
CREATE INDEX tool_logs_session_idx ON tool_logs (session_id);
CREATE INDEX tool_logs_run_idx ON tool_logs (run_id);
CREATE INDEX tool_logs_tool_created_idx ON tool_logs (tool, created_at);

CREATE TABLE session_locks (
    "key"      TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    expires_at TIMESTAMP NOT NULL
);

-- Push notification configs of A2A tasks (runs).
CREATE TABLE push_configs (
    id         TEXT PRIMARY KEY,
    run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL,
    url        TEXT NOT NULL,
    token      TEXT NOT NULL DEFAULT '',
    auth       TEXT,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX push_configs_run_idx ON push_configs (run_id);
