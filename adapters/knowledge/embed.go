package knowledge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wunder/wunder/orchestrator"
)

// VectorStore keeps embedding vectors by model and content hash, so a
// restart (or another replica) does not embed the same text again.
// storage.Store implements it.
type VectorStore interface {
	// LoadEmbeddings returns the stored vectors of model for those of
	// hashes it has, by hash.
	LoadEmbeddings(ctx context.Context, model string, hashes []string) (map[string][]float32, error)
	// SaveEmbeddings stores vectors of model by hash, replacing any.
	SaveEmbeddings(ctx context.Context, model string, vectors map[string][]float32) error
}

// Embeddings configures dense retrieval through an OpenAI-compatible
// embeddings endpoint.
type Embeddings struct {
	// BaseURL is the API's base, e.g. https://api.openai.com/v1; the
	// request goes to BaseURL + "/embeddings". Required.
	BaseURL string
	APIKey  string
	// Model is the embedding model's name. Required.
	Model string
	// Timeout bounds one request. Default 30 s.
	Timeout time.Duration
	// BatchSize is how many texts go in one request. Default 32.
	BatchSize int
	// Client sends the requests. Default: a client with no other timeout.
	Client *http.Client
}

// Defaults of [Embeddings].
const (
	DefaultEmbeddingsTimeout = 30 * time.Second
	DefaultEmbeddingsBatch   = 32
	// maxEmbedChars is how much of a point is embedded.
	maxEmbedChars = 2000
	// embedRetryPause is how long a base whose vectors failed to compute
	// is searched by BM25 alone before the embeddings are tried again.
	embedRetryPause = 30 * time.Second
)

// embedder calls the embeddings endpoint.
type embedder struct {
	opts  Embeddings
	store VectorStore // may be nil: vectors live as long as the index
}

func newEmbedder(o *Embeddings, store VectorStore) *embedder {
	if o == nil || o.BaseURL == "" || o.Model == "" {
		return nil
	}
	e := &embedder{opts: *o, store: store}
	if e.opts.Timeout <= 0 {
		e.opts.Timeout = DefaultEmbeddingsTimeout
	}
	if e.opts.BatchSize <= 0 {
		e.opts.BatchSize = DefaultEmbeddingsBatch
	}
	if e.opts.Client == nil {
		e.opts.Client = &http.Client{}
	}
	e.opts.BaseURL = strings.TrimRight(e.opts.BaseURL, "/")
	return e
}

// embed returns one normalised vector per text.
func (e *embedder) embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.opts.BatchSize {
		batch := texts[start:min(start+e.opts.BatchSize, len(texts))]
		vs, err := e.call(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

func (e *embedder) call(ctx context.Context, batch []string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"model": e.opts.Model, "input": batch})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.opts.BaseURL+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: embeddings: %v", orchestrator.ErrUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.opts.APIKey)
	}
	resp, err := e.opts.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: embeddings: %v", orchestrator.ErrUnavailable, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("%w: embeddings: %v", orchestrator.ErrUnavailable, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: embeddings: HTTP %d: %s", orchestrator.ErrUnavailable, resp.StatusCode, truncate(string(b), 200))
	}
	var r struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%w: embeddings: bad response: %v", orchestrator.ErrUnavailable, err)
	}
	out := make([][]float32, len(batch))
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= len(batch) || len(d.Embedding) == 0 {
			return nil, fmt.Errorf("%w: embeddings: bad response: index %d of %d", orchestrator.ErrUnavailable, d.Index, len(batch))
		}
		out[d.Index] = normalize(d.Embedding)
	}
	for i, v := range out {
		if v == nil {
			return nil, fmt.Errorf("%w: embeddings: no vector for input %d", orchestrator.ErrUnavailable, i)
		}
	}
	return out, nil
}

// embedText is what is embedded of a point: its headings and the start of
// its text.
func embedText(p Point) string {
	t := strings.Join(append([]string{p.Title}, p.HeadingPath...), " / ") + "\n" + p.Content
	return truncate(t, maxEmbedChars)
}

func textHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// vectors returns the embeddings of ix's points, computing (or loading
// from the store) those missing once per index; nil while they cannot be
// had (then searches use BM25 alone, and try again after a pause).
func (e *embedder) vectors(ctx context.Context, ix *index) ([][]float32, error) {
	ix.vecMu.Lock()
	defer ix.vecMu.Unlock()
	if ix.vecs != nil && ix.vecModel == e.opts.Model {
		return ix.vecs, nil
	}
	if !ix.vecFailed.IsZero() && time.Since(ix.vecFailed) < embedRetryPause {
		return nil, fmt.Errorf("%w: embeddings failed %s ago; retrying after %s", orchestrator.ErrUnavailable,
			time.Since(ix.vecFailed).Round(time.Second), embedRetryPause)
	}
	vecs, err := e.compute(ctx, ix.points)
	if err != nil {
		ix.vecFailed = time.Now()
		return nil, err
	}
	ix.vecs, ix.vecModel, ix.vecFailed = vecs, e.opts.Model, time.Time{}
	return vecs, nil
}

func (e *embedder) compute(ctx context.Context, points []Point) ([][]float32, error) {
	texts := make([]string, len(points))
	hashes := make([]string, len(points))
	for i, p := range points {
		texts[i] = embedText(p)
		hashes[i] = textHash(texts[i])
	}
	have := map[string][]float32{}
	if e.store != nil && len(hashes) > 0 {
		got, err := e.store.LoadEmbeddings(ctx, e.opts.Model, dedupe(hashes))
		if err != nil {
			return nil, err
		}
		for h, v := range got {
			have[h] = normalize(v)
		}
	}
	var missing []string
	var missingHash []string
	seen := map[string]bool{}
	for i, h := range hashes {
		if have[h] == nil && !seen[h] {
			seen[h] = true
			missing = append(missing, texts[i])
			missingHash = append(missingHash, h)
		}
	}
	if len(missing) > 0 {
		vs, err := e.embed(ctx, missing)
		if err != nil {
			return nil, err
		}
		fresh := make(map[string][]float32, len(vs))
		for i, v := range vs {
			have[missingHash[i]] = v
			fresh[missingHash[i]] = v
		}
		if e.store != nil {
			if err := e.store.SaveEmbeddings(ctx, e.opts.Model, fresh); err != nil {
				return nil, err
			}
		}
	}
	out := make([][]float32, len(points))
	for i, h := range hashes {
		out[i] = have[h]
	}
	return out, nil
}

// dense ranks every point by cosine similarity with the query, best first,
// up to n.
func dense(q []float32, vecs [][]float32, n int) []scored {
	out := make([]scored, 0, len(vecs))
	for i, v := range vecs {
		if len(v) != len(q) {
			continue // a vector of another dimension: the model changed
		}
		var dot float64
		for j := range v {
			dot += float64(v[j]) * float64(q[j])
		}
		out = append(out, scored{doc: i, score: dot})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	if len(out) > n {
		out = out[:n]
	}
	return out
}

func normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return v
	}
	n := float32(1 / math.Sqrt(s))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * n
	}
	return out
}

func dedupe(list []string) []string {
	seen := map[string]bool{}
	out := list[:0:0]
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// truncate cuts s to at most n runes.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
