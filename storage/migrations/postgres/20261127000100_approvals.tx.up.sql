-- Approvals (issue 12): a call waiting for a person's decision, and the
-- decision. Decisions and the execution mark (started/done, with the
-- result) are written with compare-and-set on (state, execution), so a
-- decision is recorded once and an approved call runs at most once.
CREATE TABLE approvals (
    run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    id         TEXT NOT NULL,
    session_id TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    round      INTEGER NOT NULL,
    call_id    TEXT NOT NULL,
    kind       TEXT NOT NULL,
    tool       TEXT NOT NULL,
    arguments  TEXT,
    reason     TEXT NOT NULL,
    missing    TEXT,
    decisions  TEXT NOT NULL,
    state      TEXT NOT NULL,
    decision   TEXT,
    execution  TEXT NOT NULL,
    result     TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ,
    decided_at TIMESTAMPTZ,
    PRIMARY KEY (run_id, id)
);

-- The round a waiting run suspended (its calls, as JSON), read by the
-- instance that resumes it.
ALTER TABLE runs ADD COLUMN pending TEXT;
