-- The A2A pass-through (docs/a2a.md, "The A2A pass-through"): the tasks
-- and contexts made at a published peer through wunder, and the user each
-- belongs to. The peer sees one caller, wunder; this table keeps each
-- user to their own tasks and contexts there. kind is "task" or
-- "context"; the first claim of an id wins.
CREATE TABLE a2a_peer_ids (
    peer       TEXT NOT NULL,
    kind       TEXT NOT NULL,
    id         TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (peer, kind, id)
);
