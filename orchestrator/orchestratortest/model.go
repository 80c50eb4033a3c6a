// Package orchestratortest holds test doubles for the orchestrator's
// interfaces (a scripted model, tools built from functions, an in-memory
// store) and the shared contract suites every implementation passes
// (RunStoreTests).
package orchestratortest

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"sync"

	"github.com/wunder/wunder/orchestrator"
)

// Turn is one scripted model answer.
type Turn struct {
	Content   string
	Reasoning string
	// ToolCalls are returned as tool_calls in function_call mode and written
	// as <tool_call> blocks into the content in tool_call mode.
	ToolCalls []orchestrator.ToolCall
	Usage     *orchestrator.Usage
	// Retries emits that many retry events (with deltas before each, which
	// the loop must discard) before the answer.
	Retries int
	// Err fails the call.
	Err error
	// Wait blocks the call until the channel is closed or ctx is done
	// (then the call fails with ctx's error).
	Wait <-chan struct{}
	// Started is closed when the call begins (for tests that need to know
	// the model is being called).
	Started chan struct{}
}

// ScriptedModel answers with its turns in order, one per Generate call,
// across all runs; past the end it repeats the last turn. It records every
// request.
type ScriptedModel struct {
	// mu guards the fields below.
	mu       sync.Mutex
	turns    []Turn
	next     int
	requests []*orchestrator.ModelRequest
}

var _ orchestrator.Model = (*ScriptedModel)(nil)

// NewScriptedModel returns a model that plays turns.
func NewScriptedModel(turns ...Turn) *ScriptedModel { return &ScriptedModel{turns: turns} }

// Requests returns the requests seen so far.
func (m *ScriptedModel) Requests() []*orchestrator.ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*orchestrator.ModelRequest(nil), m.requests...)
}

// Generate implements orchestrator.Model.
func (m *ScriptedModel) Generate(ctx context.Context, req *orchestrator.ModelRequest) iter.Seq2[orchestrator.ModelEvent, error] {
	m.mu.Lock()
	m.requests = append(m.requests, req)
	var t Turn
	if len(m.turns) > 0 {
		i := min(m.next, len(m.turns)-1)
		t = m.turns[i]
		m.next++
	}
	m.mu.Unlock()
	return func(yield func(orchestrator.ModelEvent, error) bool) {
		if t.Started != nil {
			close(t.Started)
		}
		if t.Wait != nil {
			select {
			case <-t.Wait:
			case <-ctx.Done():
				yield(orchestrator.ModelEvent{}, fmt.Errorf("scripted model: %w", ctx.Err()))
				return
			}
		}
		if t.Err != nil {
			yield(orchestrator.ModelEvent{}, t.Err)
			return
		}
		for i := range t.Retries {
			if !yield(orchestrator.ModelEvent{Delta: "void "}, nil) ||
				!yield(orchestrator.ModelEvent{Retry: &orchestrator.ModelRetry{Attempt: i + 1, Reason: "scripted"}}, nil) {
				return
			}
		}
		resp := &orchestrator.ModelResponse{Content: t.Content, ReasoningContent: t.Reasoning, Usage: t.Usage, FinishReason: "stop"}
		if len(t.ToolCalls) > 0 {
			if len(req.Tools) > 0 {
				resp.ToolCalls = t.ToolCalls
				resp.FinishReason = "tool_calls"
			} else {
				var sb strings.Builder
				sb.WriteString(t.Content)
				for _, c := range t.ToolCalls {
					fmt.Fprintf(&sb, "\n<tool_call>{\"name\": %q, \"arguments\": %s}</tool_call>", c.Name, orEmptyObject(c.Arguments))
				}
				resp.Content = sb.String()
			}
		}
		if t.Reasoning != "" && !yield(orchestrator.ModelEvent{ReasoningDelta: t.Reasoning}, nil) {
			return
		}
		for _, chunk := range chunks(resp.Content, 8) {
			if ctx.Err() != nil {
				yield(orchestrator.ModelEvent{}, ctx.Err())
				return
			}
			if !yield(orchestrator.ModelEvent{Delta: chunk}, nil) {
				return
			}
		}
		yield(orchestrator.ModelEvent{Response: resp}, nil)
	}
}

func orEmptyObject(b []byte) string {
	if len(b) == 0 {
		return "{}"
	}
	return string(b)
}

func chunks(s string, n int) []string {
	r := []rune(s)
	var out []string
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}

// Models serves one model under any name.
type Models struct {
	Model    orchestrator.Model
	Settings orchestrator.ModelSettings
}

// Lookup implements orchestrator.Models.
func (m Models) Lookup(name string) (orchestrator.Model, orchestrator.ModelSettings, error) {
	if m.Model == nil {
		return nil, orchestrator.ModelSettings{}, fmt.Errorf("%w: no model configured", orchestrator.ErrUnavailable)
	}
	s := m.Settings
	if s.Name == "" {
		s.Name = "scripted"
	}
	return m.Model, s, nil
}

// Call is a shorthand for a tool call with JSON arguments.
func Call(name, args string) orchestrator.ToolCall {
	return orchestrator.ToolCall{Name: name, Arguments: []byte(args)}
}
