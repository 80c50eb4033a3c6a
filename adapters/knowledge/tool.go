package knowledge

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

// Limits of a search.
const (
	DefaultLimit = 5
	MaxLimit     = 20
	// maxQueryChars bounds a query.
	maxQueryChars = 2000
)

// EventKnowledgeRequest is the event each search emits.
const EventKnowledgeRequest = "knowledge_request"

// Hit is one result of a search.
type Hit struct {
	Title       string   `json:"title"`
	HeadingPath []string `json:"heading_path"`
	Content     string   `json:"content"`
	// Score is the score of the stage that ordered the hits: BM25, or the
	// reciprocal-rank-fusion score with embeddings; after a model's rerank
	// the hits keep their earlier scores in the model's order.
	Score  float64 `json:"score"`
	Source string  `json:"source"`
}

// Result is a search's answer, the tool's result content and data.
type Result struct {
	Hits []Hit `json:"hits"`
}

// RequestEvent is the data of a knowledge_request event.
type RequestEvent struct {
	Base  string     `json:"base"`
	Query string     `json:"query"`
	Hits  []EventHit `json:"hits"`
}

// EventHit is a hit as the event reports it.
type EventHit struct {
	Title string  `json:"title"`
	Score float64 `json:"score"`
}

// tool is one base as a tool.
type tool struct {
	set *Set
	b   base
}

var inputSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"query":{"type":"string","description":"What to look for: a question or keywords, in the language of the documents."},` +
	`"limit":{"type":"integer","minimum":1,"maximum":20,"default":5,"description":"How many passages to return (default 5, at most 20)."}},` +
	`"required":["query"]}`)

func (t *tool) Spec() orchestrator.ToolSpec {
	desc := fmt.Sprintf("Search the knowledge base %q", t.b.name)
	if t.b.description != "" {
		desc += ": " + t.b.description
	}
	if t.b.owner != "" && t.b.shared {
		desc += fmt.Sprintf(" (shared by %s)", t.b.owner)
	}
	desc += ". Returns the most relevant passages (title, heading_path, content, score, source)."
	return orchestrator.ToolSpec{Name: t.b.tool, Description: desc, InputSchema: inputSchema,
		Source: orchestrator.SourceKnowledge, Owner: t.b.owner, ReadOnly: true}
}

type args struct {
	Query    string   `json:"query"`
	Keywords []string `json:"keywords"` // the original wunder's alternative to query
	Limit    *int     `json:"limit"`
}

func parseArgs(raw json.RawMessage) (string, int, string) {
	var a args
	if err := json.Unmarshal(raw, &a); err != nil {
		return "", 0, "the arguments must be a JSON object {\"query\": string, \"limit\": integer}: " + err.Error()
	}
	q := strings.TrimSpace(a.Query)
	if q == "" {
		q = strings.TrimSpace(strings.Join(a.Keywords, " "))
	}
	if q == "" {
		return "", 0, "query is required: a question or keywords to look for"
	}
	limit := DefaultLimit
	if a.Limit != nil {
		limit = min(max(*a.Limit, 1), MaxLimit)
	}
	return truncate(q, maxQueryChars), limit, ""
}

func (t *tool) Call(ctx context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
	q, limit, bad := parseArgs(inv.Arguments)
	if bad != "" {
		return orchestrator.ErrorResult(bad), nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	hits, err := t.set.search(ctx, t.b, q, limit, inv.ModelName)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return orchestrator.ErrorResult(fmt.Sprintf("%s cannot be searched: %v", t.b, err)), nil
	}
	ev := RequestEvent{Base: t.b.tool, Query: q, Hits: make([]EventHit, len(hits))}
	for i, h := range hits {
		ev.Hits[i] = EventHit{Title: h.Title, Score: h.Score}
	}
	if inv.Emit != nil {
		inv.Emit(EventKnowledgeRequest, ev)
	}
	res := Result{Hits: hits}
	b, _ := json.Marshal(res)
	return &orchestrator.ToolResult{Content: string(b), Data: res}, nil
}

// search ranks the points of b for q: BM25; fused by reciprocal rank with
// the embeddings' ranking when configured; reordered by the model when
// rerank is on (its failure keeps the order before it).
func (s *Set) search(ctx context.Context, b base, q string, limit int, runModel string) ([]Hit, error) {
	ix, release, err := s.cache.acquire(ctx, b.src)
	if err != nil {
		return nil, err
	}
	defer release()
	n := max(limit, s.opts.RerankCandidates, 2*limit)
	ranked, err := ix.bm25(q, n)
	if err != nil {
		return nil, err
	}
	if s.emb != nil && len(ix.points) > 0 {
		if d, err := s.denseRank(ctx, ix, q, n); err != nil {
			s.opts.Logger.WarnContext(ctx, "knowledge embeddings unavailable; BM25 alone", "base", b.tool, "err", err)
		} else {
			ranked = fuse(ranked, d)
		}
	}
	if s.rr != nil && len(ranked) > 1 {
		head := ranked[:min(len(ranked), s.opts.RerankCandidates)]
		if re, err := s.rr.rerank(ctx, runModel, q, ix.points, head); err != nil {
			s.opts.Logger.WarnContext(ctx, "knowledge rerank failed; lexical order kept", "base", b.tool, "err", err)
		} else {
			ranked = append(re, ranked[len(head):]...)
		}
	}
	if len(ranked) > limit {
		ranked = ranked[:limit]
	}
	hits := make([]Hit, len(ranked))
	for i, r := range ranked {
		p := ix.points[r.doc]
		hp := p.HeadingPath
		if hp == nil {
			hp = []string{}
		}
		hits[i] = Hit{Title: p.Title, HeadingPath: hp, Content: p.Content, Score: r.score, Source: p.Source}
	}
	return hits, nil
}

// denseRank embeds q and ranks the points by similarity.
func (s *Set) denseRank(ctx context.Context, ix *index, q string, n int) ([]scored, error) {
	vecs, err := s.emb.vectors(ctx, ix)
	if err != nil {
		return nil, err
	}
	qv, err := s.emb.embed(ctx, []string{q})
	if err != nil {
		return nil, err
	}
	return dense(qv[0], vecs, n), nil
}
