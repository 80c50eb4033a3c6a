-- Write fewer pages per commit (issue 13, docs/benchmarks.md "fifth pass").
--
-- The time-ordered indexes were declared newest first (DESC), so every new
-- run and session went to the left end of its range, where a full leaf is
-- split by rebalancing it with its siblings: two pages or more a commit
-- each. In ascending order a new entry is appended at the right end, which
-- SQLite splits cheaply, and a query for the newest first walks the same
-- index backwards. session_locks is keyed by its primary key alone:
-- WITHOUT ROWID keeps one B-tree for the table and that key instead of two.
DROP INDEX sessions_user_updated_idx;
CREATE INDEX sessions_user_updated_idx ON sessions (user_id, updated_at, id);
DROP INDEX runs_created_idx;
CREATE INDEX runs_created_idx ON runs (created_at, id);
DROP INDEX runs_user_created_idx;
CREATE INDEX runs_user_created_idx ON runs (user_id, created_at, id);
DROP INDEX runs_session_created_idx;
CREATE INDEX runs_session_created_idx ON runs (session_id, created_at, id);

CREATE TABLE session_locks_new (
    "key"      TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    expires_at TIMESTAMP NOT NULL
) WITHOUT ROWID;
INSERT INTO session_locks_new ("key", owner, expires_at) SELECT "key", owner, expires_at FROM session_locks;
DROP TABLE session_locks;
ALTER TABLE session_locks_new RENAME TO session_locks;
CREATE INDEX session_locks_owner_idx ON session_locks (owner);
