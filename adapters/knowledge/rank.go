package knowledge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// rrfK is the k of reciprocal rank fusion (Cormack et al. 2009): a point's
// fused score is the sum over the rankings of 1/(k + rank).
const rrfK = 60

// fuse merges rankings by reciprocal rank fusion, best first.
func fuse(rankings ...[]scored) []scored {
	sum := map[int]float64{}
	first := map[int]int{} // order of first appearance, to break ties
	for _, r := range rankings {
		for rank, s := range r {
			if _, ok := first[s.doc]; !ok {
				first[s.doc] = len(first)
			}
			sum[s.doc] += 1 / float64(rrfK+rank+1)
		}
	}
	out := make([]scored, 0, len(sum))
	for doc, s := range sum {
		out = append(out, scored{doc: doc, score: s})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return first[out[i].doc] < first[out[j].doc]
	})
	return out
}

// Defaults of the rerank.
const (
	DefaultRerankTimeout    = 15 * time.Second
	DefaultRerankCandidates = 20
	// rerankSnippet is how much of each candidate the model reads.
	rerankSnippet = 400
)

// reranker asks a model to order candidates.
type reranker struct {
	models orchestrator.Models
	// model is the configured model; "" means the run's.
	model   string
	timeout time.Duration
}

const rerankSystem = "You rank passages of a knowledge base by how well they answer a query. " +
	"Reply with only a JSON array of the passage numbers, the most relevant first, for example [3,0,2]. " +
	"Leave out passages that do not help answer the query."

// rerank returns the candidates in the model's order: those it names
// first, in its order, then the rest in their lexical order. Any failure
// (no model, an error, the timeout, a reply without a JSON array of
// numbers) is returned, and the caller keeps the lexical order.
func (r *reranker) rerank(ctx context.Context, runModel, query string, points []Point, cands []scored) ([]scored, error) {
	name := r.model
	if name == "" {
		name = runModel
	}
	m, _, err := r.models.Lookup(name)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var b strings.Builder
	fmt.Fprintf(&b, "Query: %s\n\nPassages:\n", query)
	for i, c := range cands {
		p := points[c.doc]
		fmt.Fprintf(&b, "\n[%d] %s\n%s\n", i, strings.Join(append([]string{p.Title}, p.HeadingPath...), " / "), truncate(p.Content, rerankSnippet))
	}
	zero := 0.0
	req := &orchestrator.ModelRequest{
		Messages: []orchestrator.Message{
			{Role: orchestrator.RoleSystem, Content: rerankSystem},
			{Role: orchestrator.RoleUser, Content: b.String()},
		},
		MaxOutput: 256, Temperature: &zero,
	}
	var reply string
	for ev, err := range m.Generate(ctx, req) {
		if err != nil {
			return nil, err
		}
		if ev.Response != nil {
			reply = ev.Response.Content
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	order, err := parseOrder(reply, len(cands))
	if err != nil {
		return nil, err
	}
	out := make([]scored, 0, len(cands))
	used := make([]bool, len(cands))
	for _, i := range order {
		out = append(out, cands[i])
		used[i] = true
	}
	for i, c := range cands {
		if !used[i] {
			out = append(out, c)
		}
	}
	return out, nil
}

var arrayRE = regexp.MustCompile(`\[[\s\d,"]*\]`)

// parseOrder reads the first JSON array of numbers (or numeric strings) in
// reply; out-of-range and repeated numbers are skipped.
func parseOrder(reply string, n int) ([]int, error) {
	for _, m := range arrayRE.FindAllString(reply, -1) {
		var raw []json.RawMessage
		if json.Unmarshal([]byte(m), &raw) != nil || len(raw) == 0 {
			continue
		}
		var out []int
		seen := map[int]bool{}
		for _, r := range raw {
			s := strings.Trim(string(r), `"`)
			i, err := strconv.Atoi(s)
			if err != nil || i < 0 || i >= n || seen[i] {
				continue
			}
			seen[i] = true
			out = append(out, i)
		}
		if len(out) > 0 {
			return out, nil
		}
	}
	return nil, errors.New("the reply holds no JSON array of passage numbers: " + truncate(reply, 120))
}
