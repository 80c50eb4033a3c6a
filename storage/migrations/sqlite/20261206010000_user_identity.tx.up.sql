-- User ids unique ignoring case, and a deleted account's id never reused
-- (issue 35). id_key is the id case-folded (orchestrator.FoldUserID); the
-- unique index on it makes "Alice" and "alice" one account whatever order
-- concurrent inserts commit in. The fold is Go's (SQL's lower() folds
-- ASCII only in SQLite and follows the locale in PostgreSQL), so the rows
-- that exist now are keyed by the store right after it migrates
-- (Store.Migrate, keyUsers): the oldest account of a group of ids equal
-- but for case takes the key, and the others keep working under their
-- exact ids with no key (NULLs never clash in a unique index).
-- deleted_at marks a tombstone: the account is gone, its key stays taken.
ALTER TABLE users ADD COLUMN id_key TEXT;
ALTER TABLE users ADD COLUMN deleted_at TIMESTAMP;
CREATE UNIQUE INDEX users_id_key_idx ON users (id_key);
