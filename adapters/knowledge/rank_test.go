package knowledge_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/adapters/knowledge"
	"github.com/wunder/wunder/internal/testutil/fakemodel"
	"github.com/wunder/wunder/orchestrator"
)

// namedModels resolves models by name and records the names asked for.
type namedModels struct {
	mu     sync.Mutex
	asked  []string
	models map[string]orchestrator.Model
}

func (n *namedModels) Lookup(name string) (orchestrator.Model, orchestrator.ModelSettings, error) {
	n.mu.Lock()
	n.asked = append(n.asked, name)
	n.mu.Unlock()
	if m, ok := n.models[name]; ok {
		return m, orchestrator.ModelSettings{Name: name}, nil
	}
	return nil, orchestrator.ModelSettings{}, fmt.Errorf("%w: no model %q", orchestrator.ErrUnavailable, name)
}

// reverse orders the passages it is given last to first.
func reverse() orchestrator.Model {
	return reply(func(req *orchestrator.ModelRequest) (string, error) {
		_, ps := rerankPrompt(req)
		var order []string
		for i := len(ps) - 1; i >= 0; i-- {
			order = append(order, strconv.Itoa(i))
		}
		return "[" + strings.Join(order, ",") + "]", nil
	})
}

// hang blocks until its context ends.
func hang() orchestrator.Model { return fakemodel.Script(fakemodel.Turn{Hang: true}) }

func callAs(t *testing.T, tl orchestrator.Tool, model, args string) knowledge.Result {
	t.Helper()
	res, err := tl.Call(context.Background(), &orchestrator.ToolInvocation{Arguments: []byte(args), ModelName: model, Emit: func(string, any) {}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	return res.Data.(knowledge.Result)
}

// The rerank puts the hits in the model's order — the run's model unless
// one is configured — and every failure (an error, the timeout, a reply
// without passage numbers, no such model) keeps the lexical order.
func TestRerankAndFallback(t *testing.T) {
	q := query("leave days paid", 5)
	lexical := ids(callAs(t, toolNamed(t, handbookSet(t, knowledge.Options{}), "u", "handbook"), "", q))
	if len(lexical) < 3 {
		t.Fatalf("lexical: %v, want at least 3 hits", lexical)
	}
	models := &namedModels{models: map[string]orchestrator.Model{
		"run-model": reverse(),
		"failing":   reply(func(*orchestrator.ModelRequest) (string, error) { return "", errors.New("HTTP 500 from the provider") }),
		"slow":      hang(),
		"chatty":    reply(func(*orchestrator.ModelRequest) (string, error) { return "They all look relevant to me!", nil }),
	}}

	var logs bytes.Buffer
	set := handbookSet(t, knowledge.Options{Rerank: true, Models: models, RerankCandidates: 5, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	got := ids(callAs(t, toolNamed(t, set, "u", "handbook"), "run-model", q))
	want := slices.Clone(lexical)
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Errorf("reranked by the run's model: %v, want the lexical order reversed %v", got, want)
	}
	for _, m := range []string{"failing", "chatty", "no-such-model"} {
		if got := ids(callAs(t, toolNamed(t, set, "u", "handbook"), m, q)); !slices.Equal(got, lexical) {
			t.Errorf("rerank by %s: %v, want the lexical order %v", m, got, lexical)
		}
	}
	if !strings.Contains(logs.String(), "knowledge rerank failed") || !strings.Contains(logs.String(), "HTTP 500") {
		t.Errorf("the fallback is not logged with its reason:\n%s", logs.String())
	}

	// A configured rerank model wins over the run's; a slow one times out.
	set = handbookSet(t, knowledge.Options{Rerank: true, Models: models, RerankModel: "slow", RerankTimeout: 150 * time.Millisecond})
	start := time.Now()
	got = ids(callAs(t, toolNamed(t, set, "u", "handbook"), "run-model", q))
	if el := time.Since(start); !slices.Equal(got, lexical) || el > 5*time.Second {
		t.Errorf("slow rerank: %v after %v, want the lexical order %v after about 150ms", got, el, lexical)
	}
	if last := models.asked[len(models.asked)-1]; last != "slow" {
		t.Errorf("asked model %q, want the configured one (slow)", last)
	}
}

// Hybrid retrieval fuses BM25 with the embeddings' ranking (RRF): a
// misspelt query BM25 cannot match is answered through the embeddings;
// the points' vectors are computed once per index and kept in the
// VectorStore, so another index of the same text embeds only queries; a
// failing endpoint leaves BM25 alone.
func TestHybridRRF(t *testing.T) {
	emb := newEmbeddingsServer(t)
	vecs := &memVectors{}
	var logs bytes.Buffer
	set := handbookSet(t, knowledge.Options{Embeddings: emb.options(), Vectors: vecs, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	tl := toolNamed(t, set, "u", "handbook")

	bm25 := toolNamed(t, handbookSet(t, knowledge.Options{}), "u", "handbook")
	typo := query("pasword resset forgoten", 5)
	if res := callAs(t, bm25, "", typo); len(res.Hits) != 0 {
		t.Fatalf("BM25 matched a misspelt query: %v", ids(res))
	}
	res := callAs(t, tl, "", typo)
	if len(res.Hits) == 0 || hitID(res.Hits[0]) != "passwords.md#Resetting a forgotten password" {
		t.Fatalf("hybrid, misspelt: %v, want the password reset first", ids(res))
	}
	if top := res.Hits[0].Score; top <= 0 || top > 2.0/61 {
		t.Errorf("score %v is no reciprocal-rank-fusion score (0, 2/61]", top)
	}
	// Both rankings agree on an exact query: it stays first.
	if res := callAs(t, tl, "", query("出差补贴标准", 5)); hitID(res.Hits[0]) != "报销流程.md#出差补贴标准" {
		t.Errorf("hybrid, exact: %v", ids(res))
	}
	docs := emb.inputs.Load() - 2 // the two queries
	if docs < 40 {
		t.Fatalf("%d points embedded, want the whole handbook", docs)
	}
	callAs(t, tl, "", query("VPN", 5))
	if n := emb.inputs.Load(); n != docs+3 {
		t.Errorf("after a third query %d texts embedded, want %d (the points once, then only queries)", n, docs+3)
	}

	// A new Set (a restart) with the same store embeds only the query.
	before := emb.inputs.Load()
	again := handbookSet(t, knowledge.Options{Embeddings: emb.options(), Vectors: vecs})
	callAs(t, toolNamed(t, again, "u", "handbook"), "", typo)
	if n := emb.inputs.Load() - before; n != 1 {
		t.Errorf("after a restart %d texts embedded, want 1 (the query; the points' vectors come from the store)", n)
	}

	// The endpoint fails: BM25 alone, logged; no error for the model.
	emb.fail.Store(true)
	fresh := handbookSet(t, knowledge.Options{Embeddings: emb.options(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	q := query("printer paper jam", 5)
	if got, want := ids(callAs(t, toolNamed(t, fresh, "u", "handbook"), "", q)), ids(callAs(t, bm25, "", q)); !slices.Equal(got, want) {
		t.Errorf("embeddings down: %v, want the BM25 ranking %v", got, want)
	}
	if !strings.Contains(logs.String(), "knowledge embeddings unavailable") || !strings.Contains(logs.String(), "HTTP 500") {
		t.Errorf("the fallback is not logged:\n%s", logs.String())
	}
}
