-- The schema before had no tombstones: deleted accounts go (their tokens
-- went when they were deleted), and their ids can be taken again.
DELETE FROM users WHERE deleted_at IS NOT NULL;
DROP INDEX IF EXISTS users_id_key_idx;
ALTER TABLE users DROP COLUMN deleted_at;
ALTER TABLE users DROP COLUMN id_key;
