-- MCP sessions that any replica serves (docs/mcp.md, "Sessions across
-- replicas"): the record a replica needs to take a session over, and the
-- events of its response streams, so that a stream is resumed with
-- Last-Event-ID on another replica. Closing a session deletes both.
CREATE TABLE mcp_sessions (
    id               TEXT PRIMARY KEY,
    user_id          TEXT NOT NULL,
    route            TEXT NOT NULL,
    protocol_version TEXT NOT NULL,
    init_params      TEXT NOT NULL,
    state            TEXT NOT NULL,
    created_at       TIMESTAMPTZ NOT NULL,
    used_at          TIMESTAMPTZ NOT NULL
);
-- The purge of idle sessions.
CREATE INDEX mcp_sessions_used_idx ON mcp_sessions (used_at);
CREATE TABLE mcp_events (
    session_id TEXT NOT NULL,
    stream_id  TEXT NOT NULL,
    idx        INTEGER NOT NULL,
    data       TEXT NOT NULL,
    PRIMARY KEY (session_id, stream_id, idx)
);
