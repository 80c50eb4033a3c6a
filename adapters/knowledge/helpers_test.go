package knowledge_test

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode"

	"github.com/wunder/wunder/adapters/knowledge"
	"github.com/wunder/wunder/internal/testutil/fakemodel"
	"github.com/wunder/wunder/orchestrator"
)

// writeFiles writes files (path -> content) under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// toolNamed returns the tool of set named name for user.
func toolNamed(t testing.TB, set orchestrator.Toolset, user, name string) orchestrator.Tool {
	t.Helper()
	tools, err := set.Tools(context.Background(), user)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.Spec().Name == name {
			return tl
		}
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Spec().Name)
	}
	t.Fatalf("no tool %q for %q among %v", name, user, names)
	return nil
}

// search calls a knowledge tool and returns its result and the events it
// emitted.
func search(t testing.TB, tl orchestrator.Tool, args string) (knowledge.Result, []knowledge.RequestEvent) {
	t.Helper()
	var mu sync.Mutex
	var evs []knowledge.RequestEvent
	inv := &orchestrator.ToolInvocation{UserID: "u", Arguments: json.RawMessage(args), Output: func(string, string) {},
		Emit: func(typ string, data any) {
			if typ != knowledge.EventKnowledgeRequest {
				t.Errorf("event %q, want %s", typ, knowledge.EventKnowledgeRequest)
			}
			mu.Lock()
			evs = append(evs, data.(knowledge.RequestEvent))
			mu.Unlock()
		}}
	res, err := tl.Call(context.Background(), inv)
	if err != nil || res.IsError {
		t.Fatalf("%s(%s): %v %+v", tl.Spec().Name, args, err, res)
	}
	var r knowledge.Result
	if err := json.Unmarshal([]byte(res.Content), &r); err != nil {
		t.Fatalf("result is not JSON: %v: %s", err, res.Content)
	}
	return r, evs
}

func query(q string, limit int) string {
	b, _ := json.Marshal(map[string]any{"query": q, "limit": limit})
	return string(b)
}

// hitID names a hit as the labelled set does: source#title.
func hitID(h knowledge.Hit) string { return h.Source + "#" + h.Title }

func ids(r knowledge.Result) []string {
	out := make([]string, len(r.Hits))
	for i, h := range r.Hits {
		out[i] = hitID(h)
	}
	return out
}

// hashedNgrams is the deterministic local "embedding model" of the tests:
// character n-grams hashed into dims buckets (CJK characters and their
// bigrams; trigrams of each Latin word padded with '#', and the word),
// L2-normalised. It knows nothing of meaning, only shared sub-words.
func hashedNgrams(text string, dims int) []float32 {
	v := make([]float64, dims)
	add := func(g string, w float64) {
		h := fnv.New32a()
		_, _ = h.Write([]byte(g))
		v[h.Sum32()%uint32(dims)] += w
	}
	rs := []rune(strings.ToLower(text))
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.Is(unicode.Han, r):
			add(string(r), 1)
			if i+1 < len(rs) && unicode.Is(unicode.Han, rs[i+1]) {
				add(string(rs[i:i+2]), 1.5)
			}
			i++
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			j := i
			for j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j])) && !unicode.Is(unicode.Han, rs[j]) {
				j++
			}
			w := "#" + string(rs[i:j]) + "#"
			add(w, 1)
			wr := []rune(w)
			for k := 0; k+3 <= len(wr); k++ {
				add(string(wr[k:k+3]), 0.5)
			}
			i = j
		default:
			i++
		}
	}
	var n float64
	for _, x := range v {
		n += x * x
	}
	out := make([]float32, dims)
	for i, x := range v {
		if n > 0 {
			out[i] = float32(x / math.Sqrt(n))
		}
	}
	return out
}

// embeddingsServer is an OpenAI-compatible /v1/embeddings endpoint over
// hashedNgrams, in process. fail makes it answer 500.
type embeddingsServer struct {
	*httptest.Server
	requests atomic.Int64
	inputs   atomic.Int64
	fail     atomic.Bool
}

func newEmbeddingsServer(t testing.TB) *embeddingsServer {
	s := &embeddingsServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		s.requests.Add(1)
		if s.fail.Load() {
			http.Error(w, `{"error":{"message":"down"}}`, http.StatusInternalServerError)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		s.inputs.Add(int64(len(req.Input)))
		type datum struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		out := struct {
			Object string  `json:"object"`
			Data   []datum `json:"data"`
			Model  string  `json:"model"`
		}{Object: "list", Model: req.Model}
		// Answer in reverse order: clients must go by index.
		for i := len(req.Input) - 1; i >= 0; i-- {
			out.Data = append(out.Data, datum{Object: "embedding", Index: i, Embedding: hashedNgrams(req.Input[i], 512)})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *embeddingsServer) options() *knowledge.Embeddings {
	return &knowledge.Embeddings{BaseURL: s.URL + "/v1", Model: "hashed-ngrams", APIKey: "k"}
}

// memVectors is an in-memory knowledge.VectorStore.
type memVectors struct {
	mu sync.Mutex
	m  map[string][]float32
}

func (v *memVectors) LoadEmbeddings(_ context.Context, model string, hashes []string) (map[string][]float32, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := map[string][]float32{}
	for _, h := range hashes {
		if x, ok := v.m[model+"/"+h]; ok {
			out[h] = x
		}
	}
	return out, nil
}

func (v *memVectors) SaveEmbeddings(_ context.Context, model string, vecs map[string][]float32) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil {
		v.m = map[string][]float32{}
	}
	for h, x := range vecs {
		v.m[model+"/"+h] = x
	}
	return nil
}

// rerankPrompt reads the rerank request the adapter sends: the query and
// the passages, in order.
var passageRE = regexp.MustCompile(`(?m)^\[(\d+)\] `)

func rerankPrompt(req *orchestrator.ModelRequest) (string, []string) {
	user := req.Messages[len(req.Messages)-1].Content
	head, body, _ := strings.Cut(user, "\n\nPassages:\n")
	q := strings.TrimPrefix(head, "Query: ")
	locs := passageRE.FindAllStringIndex(body, -1)
	var passages []string
	for i, l := range locs {
		end := len(body)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		passages = append(passages, body[l[1]:end])
	}
	return q, passages
}

// reply is a model that answers every request with text (or fails).
func reply(fn func(req *orchestrator.ModelRequest) (string, error)) orchestrator.Model {
	return fakemodel.Reply(func(req *orchestrator.ModelRequest) fakemodel.Turn {
		text, err := fn(req)
		return fakemodel.Turn{Content: text, Err: err}
	})
}

// overlapReranker is the deterministic stand-in for a model's rerank: it
// orders passages by the cosine of hashed character n-grams of the query
// and the passage (title line weighted twice). It is no language model;
// it stands for "a second opinion with another signal than BM25".
func overlapReranker() orchestrator.Model {
	return reply(func(req *orchestrator.ModelRequest) (string, error) {
		q, passages := rerankPrompt(req)
		qv := hashedNgrams(q, 512)
		type sc struct {
			i int
			s float64
		}
		var scores []sc
		for i, p := range passages {
			title, _, _ := strings.Cut(p, "\n")
			pv := hashedNgrams(title+" "+title+" "+p, 512)
			var dot float64
			for j := range qv {
				dot += float64(qv[j]) * float64(pv[j])
			}
			scores = append(scores, sc{i, dot})
		}
		sort.SliceStable(scores, func(a, b int) bool { return scores[a].s > scores[b].s })
		parts := make([]string, len(scores))
		for i, s := range scores {
			parts[i] = strconv.Itoa(s.i)
		}
		return "Ranking: [" + strings.Join(parts, ", ") + "]", nil
	})
}
