-- The pass-through's peer ids expire (storage.a2a_peer_id_retention_days):
-- used_at is when the id was last used (claimed, or named by its owner),
-- to the hour (a2apeers.go); the janitor deletes the rows not used since
-- the cutoff. The rows there are dated from their claim. (SQLite adds a
-- NOT NULL column only with a constant default; wunder always sets it.)
ALTER TABLE a2a_peer_ids ADD COLUMN used_at TIMESTAMP NOT NULL DEFAULT '1970-01-01 00:00:00+00:00';
UPDATE a2a_peer_ids SET used_at = created_at;
CREATE INDEX a2a_peer_ids_used_idx ON a2a_peer_ids (used_at);
