package knowledge_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wunder/wunder/adapters/knowledge"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// labelled is one query of testdata/quality/queries.json with the points
// (source#title) that answer it.
type labelled struct {
	Lang     string   `json:"lang"`
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"`
}

// TestRetrievalQuality measures recall@5 and MRR on the labelled set of
// testdata/quality (15 documents, 15 English and 15 Chinese queries) for
// BM25 alone, BM25 with a rerank, hybrid BM25 + embeddings (RRF), and
// hybrid with a rerank. The rerank is a deterministic test reranker
// (overlapReranker: hashed character n-grams, no language model) and the
// embeddings come from a deterministic local model served in process
// (hashedNgrams) — no real model is reachable from these machines. The
// table is logged (go test -run TestRetrievalQuality -v; copied into
// docs/benchmarks.md); only sane floors are asserted.
func TestRetrievalQuality(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "quality", "queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	var qs []labelled
	if err := json.Unmarshal(raw, &qs); err != nil {
		t.Fatal(err)
	}
	docs := filepath.Join("testdata", "quality", "docs")
	emb := newEmbeddingsServer(t)
	models := orchestratortest.Models{Model: overlapReranker()}
	modes := []struct {
		name string
		opts knowledge.Options
	}{
		{"BM25", knowledge.Options{}},
		{"BM25 + rerank", knowledge.Options{Rerank: true, Models: models}},
		{"hybrid (BM25 + embeddings, RRF)", knowledge.Options{Embeddings: emb.options()}},
		{"hybrid + rerank", knowledge.Options{Embeddings: emb.options(), Rerank: true, Models: models}},
	}
	var table strings.Builder
	table.WriteString("| ranking | recall@5 en | MRR en | recall@5 zh | MRR zh | recall@5 all | MRR all |\n|---|---|---|---|---|---|---|\n")
	for _, m := range modes {
		o := m.opts
		o.Bases = []knowledge.DirBase{{Name: "handbook", Path: docs}}
		set := knowledge.New(&o)
		t.Cleanup(func() { _ = set.Close() })
		tl := toolNamed(t, set, "u", "handbook")
		type agg struct{ recall, rr float64 }
		by := map[string]*agg{"en": {}, "zh": {}, "all": {}}
		for _, q := range qs {
			res, _ := search(t, tl, query(q.Query, 20))
			got := ids(res)
			recall, rr := recallAt(got, q.Relevant, 5), reciprocalRank(got, q.Relevant)
			if recall < 1 && testing.Verbose() {
				t.Logf("%s: %q: top 5 %v, want %v", m.name, q.Query, got[:min(5, len(got))], q.Relevant)
			}
			for _, k := range []string{q.Lang, "all"} {
				by[k].recall += recall
				by[k].rr += rr
			}
		}
		n := map[string]float64{"en": 0, "zh": 0, "all": float64(len(qs))}
		for _, q := range qs {
			n[q.Lang]++
		}
		avg := func(k string) (float64, float64) { return by[k].recall / n[k], by[k].rr / n[k] }
		re, me := avg("en")
		rz, mz := avg("zh")
		ra, ma := avg("all")
		fmt.Fprintf(&table, "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", m.name, re, me, rz, mz, ra, ma)
		// Sane floors only: every ranking finds most answers.
		if re < 0.6 || rz < 0.6 || ma < 0.5 {
			t.Errorf("%s: recall@5 en %.2f zh %.2f, MRR %.2f: below the floors (0.6, 0.6, 0.5)", m.name, re, rz, ma)
		}
	}
	t.Logf("retrieval quality, %d queries (recall@5: share of the relevant points in the top 5; MRR: over the top 20):\n%s", len(qs), table.String())
}

func recallAt(got, relevant []string, k int) float64 {
	found := 0
	for _, r := range relevant {
		if slices.Contains(got[:min(k, len(got))], r) {
			found++
		}
	}
	return float64(found) / float64(len(relevant))
}

func reciprocalRank(got, relevant []string) float64 {
	for i, g := range got {
		if slices.Contains(relevant, g) {
			return 1 / float64(i+1)
		}
	}
	return 0
}

var _ orchestrator.Models = orchestratortest.Models{}
