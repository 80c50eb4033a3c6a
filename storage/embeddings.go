package storage

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/uptrace/bun"
)

// embeddingRow is a knowledge_embeddings row: one text's vector under one
// embedding model.
type embeddingRow struct {
	bun.BaseModel `bun:"table:knowledge_embeddings"`

	Model     string    `bun:"model,pk"`
	Hash      string    `bun:"hash,pk"`
	Dims      int       `bun:"dims,notnull"`
	Vector    []byte    `bun:"vector,notnull"`
	CreatedAt time.Time `bun:"created_at,notnull"`
}

// embeddingBatch bounds the hashes of one IN list and the rows of one
// insert.
const embeddingBatch = 500

// LoadEmbeddings returns the stored vectors of model for those of hashes
// it has, by hash. It implements adapters/knowledge.VectorStore.
func (s *Store) LoadEmbeddings(ctx context.Context, model string, hashes []string) (map[string][]float32, error) {
	out := make(map[string][]float32, len(hashes))
	for start := 0; start < len(hashes); start += embeddingBatch {
		batch := hashes[start:min(start+embeddingBatch, len(hashes))]
		var rows []embeddingRow
		err := s.db.NewSelect().Model(&rows).Where("model = ? AND hash IN (?)", model, bun.List(batch)).Scan(ctx)
		if err != nil {
			return nil, dbErr(err, "load embeddings", "embeddings of "+model)
		}
		for _, r := range rows {
			v, err := decodeVector(r.Vector, r.Dims)
			if err != nil {
				return nil, fmt.Errorf("storage: embedding %s of %s: %w", r.Hash, model, err)
			}
			out[r.Hash] = v
		}
	}
	return out, nil
}

// SaveEmbeddings stores vectors of model by hash, replacing any. It
// implements adapters/knowledge.VectorStore.
func (s *Store) SaveEmbeddings(ctx context.Context, model string, vectors map[string][]float32) error {
	if len(vectors) == 0 {
		return nil
	}
	hashes := make([]string, 0, len(vectors))
	for h := range vectors {
		hashes = append(hashes, h)
	}
	sort.Strings(hashes) // one lock order for concurrent writers
	now := time.Now().UTC().Truncate(time.Microsecond)
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		for start := 0; start < len(hashes); start += embeddingBatch {
			batch := hashes[start:min(start+embeddingBatch, len(hashes))]
			rows := make([]embeddingRow, len(batch))
			for i, h := range batch {
				v := vectors[h]
				rows[i] = embeddingRow{Model: model, Hash: h, Dims: len(v), Vector: encodeVector(v), CreatedAt: now}
			}
			_, err := db.NewInsert().Model(&rows).
				On("CONFLICT (model, hash) DO UPDATE").
				Set("dims = EXCLUDED.dims, vector = EXCLUDED.vector, created_at = EXCLUDED.created_at").
				Exec(ctx)
			if err != nil {
				return dbErr(err, "save embeddings", "embeddings of "+model)
			}
		}
		return nil
	})
}

func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVector(b []byte, dims int) ([]float32, error) {
	if len(b) != 4*dims {
		return nil, fmt.Errorf("%d bytes for %d dimensions", len(b), dims)
	}
	v := make([]float32, dims)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}
