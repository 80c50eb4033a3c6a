package llm

import (
	"cmp"
	"errors"
	"slices"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

// maxEvent bounds one event of an event stream (and so one chunk).
const maxEvent = 8 << 20

// errBadChunk marks a chunk that is not the JSON it should be.
var errBadChunk = errors.New("malformed chunk")

// accumulator folds stream chunks into a [orchestrator.ModelResponse].
type accumulator struct {
	content   strings.Builder
	reasoning strings.Builder
	calls     []*partialCall
	finish    string
	usage     *wireUsage
}

// partialCall is a tool call whose arguments arrive in fragments.
type partialCall struct {
	index int
	id    string
	name  string
	args  strings.Builder
}

// add folds one chunk in and returns the text deltas it carried.
func (a *accumulator) add(ch *chatChunk) (delta, reasoning string) {
	if ch.Usage != nil {
		a.usage = ch.Usage
	}
	for i := range ch.Choices {
		c := &ch.Choices[i]
		if c.Index != 0 {
			continue // n > 1 is never asked for
		}
		if c.FinishReason != "" {
			a.finish = c.FinishReason
		}
		d := &c.Delta
		a.content.WriteString(d.Content)
		delta += d.Content
		r := d.reasoning()
		a.reasoning.WriteString(r)
		reasoning += r
		for j := range d.ToolCalls {
			a.addCall(&d.ToolCalls[j])
		}
	}
	return delta, reasoning
}

// addCall merges one tool call fragment. Fragments are keyed by index; the
// id, type and name usually come only with the first. A fragment without
// an index (some servers send whole calls) starts a new call when it has an
// id not seen yet and continues the last call otherwise.
func (a *accumulator) addCall(f *wireToolCall) {
	var pc *partialCall
	switch {
	case f.Index != nil:
		for _, c := range a.calls {
			if c.index == *f.Index {
				pc = c
				break
			}
		}
		if pc == nil {
			pc = &partialCall{index: *f.Index}
			a.calls = append(a.calls, pc)
		}
	case len(a.calls) > 0 && (f.ID == "" || f.ID == a.calls[len(a.calls)-1].id):
		pc = a.calls[len(a.calls)-1]
	default:
		next := 0
		for _, c := range a.calls {
			next = max(next, c.index+1)
		}
		pc = &partialCall{index: next}
		a.calls = append(a.calls, pc)
	}
	if pc.id == "" {
		pc.id = f.ID
	}
	if pc.name == "" {
		pc.name = f.Function.Name
	}
	pc.args.WriteString(string(f.Function.Arguments))
}

// complete reports whether the server said the answer is finished.
func (a *accumulator) complete() bool { return a.finish != "" }

func (a *accumulator) response() *orchestrator.ModelResponse {
	out := &orchestrator.ModelResponse{
		Content:          a.content.String(),
		ReasoningContent: a.reasoning.String(),
		Usage:            a.usage.usage(),
		FinishReason:     a.finish,
	}
	calls := slices.Clone(a.calls)
	slices.SortStableFunc(calls, func(x, y *partialCall) int { return cmp.Compare(x.index, y.index) })
	for _, c := range calls {
		out.ToolCalls = append(out.ToolCalls, orchestrator.ToolCall{
			ID:        callID(c.id),
			Name:      c.name,
			Arguments: rawArguments(c.args.String()),
		})
	}
	return out
}
