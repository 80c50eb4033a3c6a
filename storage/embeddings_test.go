package storage

import (
	"fmt"
	"slices"
	"testing"
)

// The knowledge embeddings on both backends: vectors round-trip exactly,
// by model and hash, in batches past one IN list, and a save replaces.
func TestEmbeddings(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			st := open(t, b.fresh(t))
			ctx := t.Context()
			vecs := map[string][]float32{}
			var hashes []string
			for i := range 1200 {
				h := fmt.Sprintf("h%04d", i)
				hashes = append(hashes, h)
				vecs[h] = []float32{float32(i), -0.5, 1e-7, float32(i) / 3}
			}
			if err := st.SaveEmbeddings(ctx, "m1", vecs); err != nil {
				t.Fatal(err)
			}
			if err := st.SaveEmbeddings(ctx, "m2", map[string][]float32{"h0001": {9, 9}}); err != nil {
				t.Fatal(err)
			}
			got, err := st.LoadEmbeddings(ctx, "m1", append(slices.Clone(hashes), "missing"))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(hashes) {
				t.Fatalf("loaded %d vectors, want %d", len(got), len(hashes))
			}
			for h, v := range vecs {
				if !slices.Equal(got[h], v) {
					t.Fatalf("%s: %v, want %v", h, got[h], v)
				}
			}
			if err := st.SaveEmbeddings(ctx, "m1", map[string][]float32{"h0001": {1, 2, 3}}); err != nil {
				t.Fatal(err)
			}
			got, err = st.LoadEmbeddings(ctx, "m2", []string{"h0001", "h0002"})
			if err != nil || len(got) != 1 || !slices.Equal(got["h0001"], []float32{9, 9}) {
				t.Fatalf("m2: %v %v, want its own vector only", got, err)
			}
			got, err = st.LoadEmbeddings(ctx, "m1", []string{"h0001"})
			if err != nil || !slices.Equal(got["h0001"], []float32{1, 2, 3}) {
				t.Fatalf("after replacing: %v %v", got, err)
			}
			if got, err := st.LoadEmbeddings(ctx, "m1", nil); err != nil || len(got) != 0 {
				t.Fatalf("no hashes: %v %v", got, err)
			}
		})
	}
}
