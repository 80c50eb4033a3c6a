-- Accounts and their bearer tokens (issue 10). The users table of v1 was a
-- stub (id, created_at); it gains what an account needs. roles is a JSON
-- array of role names; password_hash is an encoded argon2id hash, '' for a
-- user who cannot log in with a password. Tokens are stored only as the
-- hex SHA-256 of their secret.
ALTER TABLE users ADD COLUMN display_name TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN password_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN roles TEXT NOT NULL DEFAULT '["user"]';
ALTER TABLE users ADD COLUMN disabled BOOLEAN NOT NULL DEFAULT FALSE;
-- The user's tool rule as JSON ({allowed_tools, denied_tools, approval_tools}); NULL = none.
ALTER TABLE users ADD COLUMN tool_access TEXT;
ALTER TABLE users ADD COLUMN updated_at TIMESTAMPTZ;

CREATE TABLE auth_tokens (
    id         TEXT PRIMARY KEY,
    hash       TEXT NOT NULL UNIQUE,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name       TEXT NOT NULL DEFAULT '',
    kind       TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ
);
CREATE INDEX auth_tokens_user_idx ON auth_tokens (user_id, created_at DESC, id DESC);
