DROP TABLE IF EXISTS knowledge_embeddings;
