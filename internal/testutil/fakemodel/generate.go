package fakemodel

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/wunder/wunder/orchestrator"
)

// errCut ends a streamed answer that Turn.Cut cuts, in process.
var errCut = errors.New("fake model: stream cut")

// inProcessChunk is the size in runes of the in-process face's deltas.
const inProcessChunk = 8

// Generate implements [orchestrator.Model]: the in-process face. The turn
// is decided when Generate is called; the answer streams when the result
// is iterated: the reasoning as one delta, then the content in deltas of
// up to 8 runes (whether or not req.Stream is set), then the response.
func (m *Model) Generate(ctx context.Context, req *orchestrator.ModelRequest) iter.Seq2[orchestrator.ModelEvent, error] {
	a := m.Next(req)
	stream := req != nil && req.Stream
	return func(yield func(orchestrator.ModelEvent, error) bool) {
		if err := m.Await(ctx, a); err != nil {
			yield(orchestrator.ModelEvent{}, err)
			return
		}
		if a.Hang {
			if a.Content != "" && !yield(orchestrator.ModelEvent{Delta: a.Content}, nil) {
				return
			}
			<-ctx.Done()
			yield(orchestrator.ModelEvent{}, fmt.Errorf("fake model: %w", ctx.Err()))
			return
		}
		if a.Err != nil {
			yield(orchestrator.ModelEvent{}, a.Err)
			return
		}
		for i := range a.Retries {
			if !yield(orchestrator.ModelEvent{Delta: "void "}, nil) ||
				!yield(orchestrator.ModelEvent{Retry: &orchestrator.ModelRetry{Attempt: i + 2, Reason: "fake model: retry"}}, nil) {
				return
			}
		}
		if a.Reasoning != "" && !yield(orchestrator.ModelEvent{ReasoningDelta: a.Reasoning}, nil) {
			return
		}
		for _, chunk := range pieces(a.Content, inProcessChunk) {
			if ctx.Err() != nil {
				yield(orchestrator.ModelEvent{}, fmt.Errorf("fake model: %w", ctx.Err()))
				return
			}
			if !yield(orchestrator.ModelEvent{Delta: chunk}, nil) {
				return
			}
			if a.Cut && stream {
				yield(orchestrator.ModelEvent{}, errCut)
				return
			}
		}
		yield(orchestrator.ModelEvent{Response: &orchestrator.ModelResponse{
			Content: a.Content, ReasoningContent: a.Reasoning, ToolCalls: a.ToolCalls,
			Usage: a.Usage, FinishReason: a.FinishReason,
		}}, nil)
	}
}

// pieces cuts s into pieces of n runes (the last may be shorter).
func pieces(s string, n int) []string {
	r := []rune(s)
	var out []string
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}
