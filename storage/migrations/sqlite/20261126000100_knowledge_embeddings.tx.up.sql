-- Embedding vectors of knowledge points (adapters/knowledge, hybrid
-- retrieval), by embedding model and the SHA-256 of the embedded text, so
-- unchanged text is never sent to the embeddings endpoint twice, across
-- restarts and replicas. vector holds dims little-endian float32s.
CREATE TABLE knowledge_embeddings (
    model      TEXT NOT NULL,
    hash       TEXT NOT NULL,
    dims       INTEGER NOT NULL,
    vector     BLOB NOT NULL,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (model, hash)
);
