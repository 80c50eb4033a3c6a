-- Uploaded tool packages and users' own tool configurations (issue 11).
-- A package is the files of one (owner, kind, name): a skill or a
-- knowledge base; owner '' is an admin's upload, for everyone. Files live
-- here, not on one replica's disk, so every replica sees an upload.
CREATE TABLE tool_files (
    owner      TEXT NOT NULL,
    kind       TEXT NOT NULL,
    name       TEXT NOT NULL,
    path       TEXT NOT NULL,
    data       BLOB NOT NULL,
    size       BIGINT NOT NULL,
    sha256     TEXT NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    PRIMARY KEY (owner, kind, name, path)
);

-- One user's tool configuration as JSON (orchestrator.UserToolConfig);
-- shares is set when it offers anything to other users, so the shared
-- listing reads only those rows.
CREATE TABLE user_tool_configs (
    user_id    TEXT PRIMARY KEY,
    config     TEXT NOT NULL,
    shares     BOOLEAN NOT NULL,
    revision   BIGINT NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE INDEX user_tool_configs_shares_idx ON user_tool_configs (shares, user_id);
