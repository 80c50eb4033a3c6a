-- The pass-through's peer ids expire (storage.a2a_peer_id_retention_days):
-- used_at is when the id was last used (claimed, or named by its owner),
-- to the hour (a2apeers.go); the janitor deletes the rows not used since
-- the cutoff. The rows there are dated from their claim. The default
-- serves replicas not yet upgraded, whose inserts leave it out.
ALTER TABLE a2a_peer_ids ADD COLUMN used_at TIMESTAMPTZ NOT NULL DEFAULT now();
UPDATE a2a_peer_ids SET used_at = created_at;
CREATE INDEX a2a_peer_ids_used_idx ON a2a_peer_ids (used_at);
