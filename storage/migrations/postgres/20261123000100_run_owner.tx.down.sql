ALTER TABLE runs DROP COLUMN spec;
DROP INDEX IF EXISTS session_locks_owner_idx;
ALTER TABLE runs DROP COLUMN owner;
