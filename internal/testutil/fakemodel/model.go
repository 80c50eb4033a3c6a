// Package fakemodel is wunder's one fake chat model, for tests, demos and
// benchmarks. An engine decides each call's answer, a [Turn], in one of
// three ways:
//
//   - [Script]: turns played in order, one per call across all runs;
//     past the end the last one repeats;
//   - [Directives]: from the conversation, as the directives in its
//     question say ("call <tool> <json>", "write", "run:", "follow the
//     skill <name>", "#attachments", and the faults "#hang", "#500",
//     "#cut"); see [Directive];
//   - [Reply]: from a function of the request.
//
// The engine has two faces that give the same answers: [Model.Generate],
// an in-process [orchestrator.Model], and the OpenAI-compatible HTTP
// handler of internal/testutil/fakellm, which serves a *Model over the real
// wire format. Both take one step of the engine per call ([Model.Next],
// then [Model.Await]) and differ only in how the answer travels:
//
//	m := fakemodel.Script(fakemodel.Turn{ToolCalls: []orchestrator.ToolCall{call}}, fakemodel.Turn{Content: "done"})
//	o := orchestrator.New(store, orchestratortest.Models{Model: m}, reg, nil)  // in process
//	srv := httptest.NewServer(&fakellm.Server{Model: m})                       // over HTTP
//
// Every request is recorded ([Model.Requests], [Model.Take]), and calls
// that a predicate picks can be held until released ([Model.Hold]).
package fakemodel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/wunder/wunder/orchestrator"
)

// Turn is one answer of the model.
type Turn struct {
	Content   string
	Reasoning string
	// ToolCalls are returned as tool_calls in function_call mode (the
	// request offers tools) and written as <tool_call> blocks after the
	// content in tool_call mode.
	ToolCalls []orchestrator.ToolCall
	// Usage is reported with the answer; nil reports none.
	Usage *orchestrator.Usage
	// Retries fails that many attempts before the answer: in process, a
	// delta "void " and a retry event each; over HTTP, that many requests
	// (a stream cut after "void ", or a 503 for a whole answer), which the
	// client retries.
	Retries int
	// Err fails the call: in process it is the call's error; over HTTP the
	// answer is a 500 whose error message is its text.
	Err error
	// Wait blocks the call until the channel is closed or the caller's
	// context ends (then the call fails with the context's error).
	Wait <-chan struct{}
	// Started is closed when the call begins (for tests that need to know
	// the model is being called).
	Started chan struct{}
	// Hang: the answer starts (over HTTP a streamed answer sends its first
	// chunk; a turn with Content sends that whole, as one delta, in both
	// faces) and goes no further until the caller goes away: a model
	// stalled mid-answer.
	Hang bool
	// Cut: a streamed answer stops after its first content chunk, without
	// its end: in process an error follows that chunk; over HTTP the
	// connection closes without [DONE]. A whole answer is not cut.
	Cut bool
}

// Answer is a call's turn as both faces send it: rendered for the
// request's tool call mode. In function_call mode (the request offers
// tools) tool calls stay ToolCalls; in tool_call mode each becomes a line
// <tool_call>{"name":...,"arguments":{...}}</tool_call> after the content.
type Answer struct {
	Turn
	// FinishReason is "tool_calls" when ToolCalls are set, else "stop".
	FinishReason string
	// held: the call waits for [Model.Release] (see [Model.Hold]).
	held bool
}

// Model is the fake model: the engine and its in-process face. Make one
// with [Script], [Directives] or [Reply]; it is safe for concurrent use.
type Model struct {
	// mu guards the fields below; decide runs with it held.
	mu       sync.Mutex
	decide   func(*orchestrator.ModelRequest) Turn
	requests []*orchestrator.ModelRequest
	noLog    bool
	hold     func(*orchestrator.ModelRequest) bool
	// replay is the turn the next call gets instead of a decision: the
	// rest of an answer whose attempts the HTTP face fails (Retries).
	replay *Turn

	// held tells of each held call; release lets one go on.
	held, release chan struct{}
}

var _ orchestrator.Model = (*Model)(nil)

// Reply returns a model that answers each call with fn's turn for its
// request. fn runs with the model's lock held, one call at a time, so it
// may keep state of its own without a lock.
func Reply(fn func(req *orchestrator.ModelRequest) Turn) *Model {
	return &Model{decide: fn, held: make(chan struct{}, 64), release: make(chan struct{}, 64)}
}

// Script returns a model that plays turns in order, one per call across
// all runs; past the end it repeats the last turn. Without turns it
// answers with empty text.
func Script(turns ...Turn) *Model {
	next := 0
	return Reply(func(*orchestrator.ModelRequest) Turn {
		if len(turns) == 0 {
			return Turn{}
		}
		t := turns[min(next, len(turns)-1)]
		next++
		return t
	})
}

// Directives returns a model that answers as the conversation's
// directives say ([Directive]).
func Directives() *Model { return Reply(Directive) }

// NoLog turns the request log off, for servers that run long (the
// `wunder fakellm` command), and returns m.
func (m *Model) NoLog() *Model {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.noLog, m.requests = true, nil
	return m
}

// Requests returns the requests seen so far, in order. Over HTTP each
// attempt is a request.
func (m *Model) Requests() []*orchestrator.ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*orchestrator.ModelRequest(nil), m.requests...)
}

// Take returns the requests seen since the last Take (or the start) and
// forgets them.
func (m *Model) Take() []*orchestrator.ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.requests
	m.requests = nil
	return out
}

// Hold makes the calls whose request match reports true wait, once they
// begin, until [Model.Release] lets them go on or their caller goes away;
// each held call is told on [Model.Held] first. Hold(nil) holds no more
// calls (those already held stay held).
func (m *Model) Hold(match func(req *orchestrator.ModelRequest) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hold = match
}

// Held receives once per call that Hold holds, when it begins to wait.
func (m *Model) Held() <-chan struct{} { return m.held }

// Release lets one held call go on (one that waits now, or else the next
// one held).
func (m *Model) Release() { m.release <- struct{}{} }

// Next is the engine's step for one call, which both faces take: it
// records req, decides the call's turn and renders it for req.
func (m *Model) Next(req *orchestrator.ModelRequest) Answer {
	if req == nil {
		req = &orchestrator.ModelRequest{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.noLog {
		m.requests = append(m.requests, req)
	}
	var t Turn
	if m.replay != nil {
		t, m.replay = *m.replay, nil
	} else {
		t = m.decide(req)
	}
	t, finish := render(t, len(req.Tools) > 0)
	return Answer{Turn: t, FinishReason: finish, held: m.hold != nil && m.hold(req)}
}

// Replay makes the next call answer t instead of a decision. The HTTP face
// uses it for a turn's retries, which are separate requests; it assumes
// one call at a time.
func (m *Model) Replay(t Turn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.replay = &t
}

// Await is what a call waits for before its answer: it closes Started,
// holds the call if Hold picked it, and waits for Wait. It fails with
// ctx's error (wrapped) when ctx ends first.
func (m *Model) Await(ctx context.Context, a Answer) error {
	if a.Started != nil {
		close(a.Started)
	}
	if a.held {
		select {
		case m.held <- struct{}{}:
		case <-ctx.Done():
			return fmt.Errorf("fake model: %w", ctx.Err())
		}
		select {
		case <-m.release:
		case <-ctx.Done():
			return fmt.Errorf("fake model: %w", ctx.Err())
		}
	}
	if a.Wait != nil {
		select {
		case <-a.Wait:
		case <-ctx.Done():
			return fmt.Errorf("fake model: %w", ctx.Err())
		}
	}
	return nil
}

// render renders t for a request in function_call mode (functionMode, the
// request offers tools: tool calls stay ToolCalls) or tool_call mode (each
// call becomes a line <tool_call>{"name":...,"arguments":{...}}</tool_call>
// after the content, and ToolCalls is nil). It returns the finish reason
// too. A rendered turn renders to itself.
func render(t Turn, functionMode bool) (Turn, string) {
	switch {
	case len(t.ToolCalls) == 0:
		return t, "stop"
	case functionMode:
		return t, "tool_calls"
	}
	var sb strings.Builder
	sb.WriteString(t.Content)
	for _, c := range t.ToolCalls {
		name, _ := json.Marshal(c.Name)
		fmt.Fprintf(&sb, "\n<tool_call>{\"name\":%s,\"arguments\":%s}</tool_call>", name, Arguments(c.Arguments))
	}
	t.Content, t.ToolCalls = sb.String(), nil
	return t, "stop"
}

// Arguments is a call's arguments as JSON text, "{}" when there are none.
func Arguments(b json.RawMessage) string {
	if len(b) == 0 {
		return "{}"
	}
	return string(b)
}
