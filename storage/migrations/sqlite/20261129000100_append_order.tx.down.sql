CREATE TABLE session_locks_old (
    "key"      TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    expires_at TIMESTAMP NOT NULL
);
INSERT INTO session_locks_old ("key", owner, expires_at) SELECT "key", owner, expires_at FROM session_locks;
DROP TABLE session_locks;
ALTER TABLE session_locks_old RENAME TO session_locks;
CREATE INDEX session_locks_owner_idx ON session_locks (owner);

DROP INDEX runs_session_created_idx;
CREATE INDEX runs_session_created_idx ON runs (session_id, created_at DESC, id DESC);
DROP INDEX runs_user_created_idx;
CREATE INDEX runs_user_created_idx ON runs (user_id, created_at DESC, id DESC);
DROP INDEX runs_created_idx;
CREATE INDEX runs_created_idx ON runs (created_at DESC, id DESC);
DROP INDEX sessions_user_updated_idx;
CREATE INDEX sessions_user_updated_idx ON sessions (user_id, updated_at DESC, id DESC);
