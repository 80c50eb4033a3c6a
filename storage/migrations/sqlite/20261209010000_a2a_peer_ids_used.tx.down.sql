DROP INDEX IF EXISTS a2a_peer_ids_used_idx;
ALTER TABLE a2a_peer_ids DROP COLUMN used_at;
