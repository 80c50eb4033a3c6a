package fakellm_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/internal/testutil/fakellm"
	"github.com/wunder/wunder/internal/testutil/fakemodel"
	"github.com/wunder/wunder/orchestrator"
)

// outcome is what a caller of a model sees of one call.
type outcome struct {
	Content, Reasoning string
	ToolCalls          []orchestrator.ToolCall
	Usage              *orchestrator.Usage
	FinishReason       string
	// Attempts are those the retry events announce; Deltas and
	// ReasoningDeltas are the deltas after the last of them (streamed
	// calls only).
	Attempts                []int
	Deltas, ReasoningDeltas string
	// Failed: the call ended with an error, which Canceled says is ctx's.
	Failed, Canceled bool
}

func call(ctx context.Context, m orchestrator.Model, req *orchestrator.ModelRequest) outcome {
	var o outcome
	for ev, err := range m.Generate(ctx, req) {
		switch {
		case err != nil:
			return outcome{Failed: true, Canceled: errors.Is(err, context.Canceled), Deltas: o.Deltas}
		case ev.Retry != nil:
			o.Attempts = append(o.Attempts, ev.Retry.Attempt)
			o.Deltas, o.ReasoningDeltas = "", ""
		case ev.Response != nil:
			r := ev.Response
			o.Content, o.Reasoning, o.ToolCalls, o.Usage, o.FinishReason = r.Content, r.ReasoningContent, r.ToolCalls, r.Usage, r.FinishReason
		}
		o.Deltas += ev.Delta
		o.ReasoningDeltas += ev.ReasoningDelta
	}
	if !req.Stream {
		// The in-process face streams whatever the request says; the
		// answer is what counts.
		o.Deltas, o.ReasoningDeltas = "", ""
	}
	return o
}

// httpFace serves m over HTTP and returns wunder's LLM client of it.
func httpFace(t *testing.T, m *fakemodel.Model) orchestrator.Model {
	srv := httptest.NewServer(&fakellm.Server{Model: m, Chunks: 3})
	t.Cleanup(srv.Close)
	include := true
	c, err := llm.New(llm.Config{Provider: llm.ProviderLocal, BaseURL: srv.URL + "/v1", Model: "fake", StreamIncludeUsage: &include,
		Retry: llm.RetryConfig{MaxAttempts: 3, InitialBackoff: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var (
	readFile = []orchestrator.ToolSpec{{Name: "read_file", Description: "reads a file", InputSchema: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	usage    = &orchestrator.Usage{InputTokens: 12, OutputTokens: 5, TotalTokens: 17}
	twoCalls = []orchestrator.ToolCall{
		{ID: "c1", Name: "read_file", Arguments: []byte(`{"path":"a.txt"}`)},
		{ID: "c2", Name: "read_file", Arguments: []byte(`{"path":"b.txt"}`)},
	}
)

// The same script gives the same answers through both faces: in process,
// and over HTTP through wunder's own LLM client, streamed and whole, in
// function_call mode (the request offers tools) and tool_call mode.
func TestFacesAgree(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	for _, c := range []struct {
		name string
		// model makes a fresh model per face.
		model     func() *fakemodel.Model
		questions []string
		// fails: every call fails (the error itself differs by face: a
		// client reports a status, in process the turn's error is it).
		fails bool
	}{
		{name: "text", model: func() *fakemodel.Model {
			return fakemodel.Script(fakemodel.Turn{Content: "hello, fake world — ünïcödé"})
		}},
		{name: "reasoning and usage", model: func() *fakemodel.Model {
			return fakemodel.Script(fakemodel.Turn{Reasoning: "think first", Content: "then answer", Usage: usage})
		}},
		{name: "tool calls then answer", questions: []string{"q", "q"}, model: func() *fakemodel.Model {
			return fakemodel.Script(fakemodel.Turn{Content: "calling", ToolCalls: twoCalls, Usage: usage}, fakemodel.Turn{Content: "done"})
		}},
		{name: "retries", model: func() *fakemodel.Model {
			return fakemodel.Script(fakemodel.Turn{Content: "fine after two retries", Retries: 2})
		}},
		{name: "wait", model: func() *fakemodel.Model { return fakemodel.Script(fakemodel.Turn{Content: "waited", Wait: closed}) }},
		{name: "error", fails: true, model: func() *fakemodel.Model { return fakemodel.Script(fakemodel.Turn{Err: errors.New("boom")}) }},
		{name: "directives", questions: []string{"hello there", `call read_file {"path":"x"}`, "write a note"}, model: fakemodel.Directives},
		{name: "directive 500", questions: []string{"hi #500"}, fails: true, model: fakemodel.Directives},
		{name: "reply", questions: []string{"one", "two"}, model: func() *fakemodel.Model {
			return fakemodel.Reply(func(req *orchestrator.ModelRequest) fakemodel.Turn {
				q, _ := fakemodel.Conversation(req)
				return fakemodel.Turn{Content: "you said " + q, Usage: usage}
			})
		}},
	} {
		for _, tools := range [][]orchestrator.ToolSpec{nil, readFile} {
			for _, stream := range []bool{true, false} {
				name := c.name + map[bool]string{true: "/function_call", false: "/tool_call"}[tools != nil] + map[bool]string{true: "/stream", false: "/whole"}[stream]
				t.Run(name, func(t *testing.T) {
					questions := c.questions
					if questions == nil {
						questions = []string{"q"}
					}
					in, over := c.model(), c.model()
					client := httpFace(t, over)
					for i, q := range questions {
						req := &orchestrator.ModelRequest{Tools: tools, Stream: stream, Messages: []orchestrator.Message{
							{Role: orchestrator.RoleSystem, Content: "you are a fake"}, {Role: orchestrator.RoleUser, Content: q}}}
						want, got := call(t.Context(), in, req), call(t.Context(), client, req)
						if c.fails {
							if !want.Failed || !got.Failed {
								t.Fatalf("call %d: in process %+v, over HTTP %+v; want both to fail", i, want, got)
							}
							continue
						}
						if !stream {
							// A client retries a whole answer on its status,
							// which carries no deltas; the count still agrees.
							want.Deltas, got.Deltas = "", ""
						}
						if !reflect.DeepEqual(want, got) {
							t.Errorf("call %d (%q):\nin process %+v\nover HTTP  %+v", i, q, want, got)
						}
					}
					ins, overs := in.Requests(), over.Requests()
					if len(ins) != len(questions) || len(overs) < len(ins) {
						t.Fatalf("requests recorded: %d in process, %d over HTTP; want %d (and one more over HTTP per retry)", len(ins), len(overs), len(questions))
					}
					// The engine sees the request the loop made, either way.
					last := overs[len(overs)-1]
					if want := ins[len(ins)-1]; !reflect.DeepEqual(want.Messages, last.Messages) || !reflect.DeepEqual(want.Tools, last.Tools) || want.Stream != last.Stream {
						t.Errorf("recorded request:\nin process %+v\nover HTTP  %+v", want, last)
					}
				})
			}
		}
	}
}

// A call without an id gets call_<n> on the wire; in process it keeps
// none, and the loop names it.
func TestFacesCallIDs(t *testing.T) {
	turn := fakemodel.Turn{ToolCalls: []orchestrator.ToolCall{{Name: "read_file", Arguments: []byte(`{"path":"a"}`)}, {Name: "read_file"}}}
	req := &orchestrator.ModelRequest{Tools: readFile, Stream: true, Messages: []orchestrator.Message{{Role: orchestrator.RoleUser, Content: "q"}}}
	got := call(t.Context(), httpFace(t, fakemodel.Script(turn)), req)
	want := []orchestrator.ToolCall{{ID: "call_1", Name: "read_file", Arguments: []byte(`{"path":"a"}`)}, {ID: "call_2", Name: "read_file", Arguments: []byte(`{}`)}}
	if !reflect.DeepEqual(got.ToolCalls, want) {
		t.Fatalf("over HTTP: %+v, want %+v", got.ToolCalls, want)
	}
	if in := call(t.Context(), fakemodel.Script(turn), req); in.ToolCalls[0].ID != "" {
		t.Fatalf("in process: %+v", in.ToolCalls)
	}
}

// A hanging answer and a held call end, in both faces, when the caller
// goes away; a cut stream fails in both.
func TestFacesFaults(t *testing.T) {
	req := func(q string) *orchestrator.ModelRequest {
		return &orchestrator.ModelRequest{Stream: true, Messages: []orchestrator.Message{{Role: orchestrator.RoleUser, Content: q}}}
	}
	for name, face := range map[string]func(*fakemodel.Model) orchestrator.Model{
		"in process": func(m *fakemodel.Model) orchestrator.Model { return m },
		"over HTTP":  func(m *fakemodel.Model) orchestrator.Model { return httpFace(t, m) },
	} {
		t.Run(name, func(t *testing.T) {
			started := make(chan struct{})
			m := fakemodel.Script(fakemodel.Turn{Hang: true, Started: started})
			ctx, cancel := context.WithCancel(t.Context())
			go func() { <-started; cancel() }()
			if o := call(ctx, face(m), req("q")); !o.Canceled {
				t.Errorf("hang: %+v, want a cancelled call", o)
			}

			m = fakemodel.Directives()
			m.Hold(func(r *orchestrator.ModelRequest) bool { q, _ := fakemodel.Conversation(r); return q == "hold" })
			ctx, cancel = context.WithCancel(t.Context())
			go func() { <-m.Held(); cancel() }()
			if o := call(ctx, face(m), req("hold")); !o.Canceled {
				t.Errorf("held: %+v, want a cancelled call", o)
			}
			go func() { <-m.Held(); m.Release() }()
			if o := call(t.Context(), face(m), req("hold")); o.Content != "echo: hold" {
				t.Errorf("released: %+v, want the echo", o)
			}

			o := call(t.Context(), face(fakemodel.Directives()), req("abcdefghijkl #cut"))
			if !o.Failed || o.Deltas == "" {
				t.Errorf("cut: %+v, want a failure after a delta", o)
			}
		})
	}
}
