package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

var writeThenRead = []orchestratortest.Turn{
	{Content: "I will write the file.", ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("write_file", `{"path":"notes.txt","content":"hello wunder"}`)}, Usage: &orchestrator.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}},
	{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("read_file", `{"path":"notes.txt"}`)}, Usage: &orchestrator.Usage{InputTokens: 20, OutputTokens: 5, TotalTokens: 25}},
	{Content: "The file says: hello wunder", Reasoning: "read back ok", Usage: &orchestrator.Usage{InputTokens: 30, OutputTokens: 7, TotalTokens: 37}},
}

func TestRunWritesReadsAndAnswers(t *testing.T) {
	for _, mode := range []string{orchestrator.ModeToolCall, orchestrator.ModeFunctionCall} {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, harnessOpts{mode: mode, turns: writeThenRead})
			run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "alice", Question: "write and read", ToolNames: []string{"write_file", "读取文件"}})
			evs := collect(t, h.o, run.ID, 0)
			assertDense(t, evs, 1)
			f := final(t, evs)
			if f.Answer != "The file says: hello wunder" || f.StopReason != orchestrator.StopModelResponse || f.State != orchestrator.RunFinished {
				t.Fatalf("final = %+v", f)
			}
			if f.Usage.TotalTokens != 77 {
				t.Errorf("usage total = %d, want 77", f.Usage.TotalTokens)
			}
			if got, _ := h.files.Get("alice", "notes.txt"); got != "hello wunder" {
				t.Errorf("file = %q", got)
			}
			results := ofType(evs, orchestrator.EventToolResult)
			if len(results) != 2 {
				t.Fatalf("tool results = %d, want 2: %v", len(results), types(evs))
			}
			var rd orchestrator.ToolResultData
			_ = json.Unmarshal(results[1].Data, &rd)
			if rd.Name != "read_file" || rd.Content != "hello wunder" || rd.IsError {
				t.Errorf("read result = %+v", rd)
			}
			reqs := h.model.Requests()
			if len(reqs) != 3 {
				t.Fatalf("model calls = %d", len(reqs))
			}
			last := reqs[2]
			if mode == orchestrator.ModeFunctionCall {
				if len(last.Tools) == 0 {
					t.Error("function_call mode sent no tools")
				}
				if m := last.Messages[len(last.Messages)-1]; m.Role != orchestrator.RoleTool || m.Content != "hello wunder" || m.ToolCallID == "" {
					t.Errorf("last message = %+v", m)
				}
			} else {
				if len(last.Tools) != 0 {
					t.Error("tool_call mode sent tools")
				}
				if !strings.Contains(last.Messages[0].Content, "<tool_call>") || !strings.Contains(last.Messages[0].Content, "read_file") {
					t.Error("system prompt lacks the tool protocol")
				}
				if m := last.Messages[len(last.Messages)-1]; m.Role != orchestrator.RoleUser || !strings.HasPrefix(m.Content, "tool_response: ") {
					t.Errorf("last message = %+v", m)
				}
			}
			got, err := h.o.GetRun(t.Context(), "alice", run.ID)
			if err != nil || got.State != orchestrator.RunFinished || got.Answer != f.Answer || got.LastSeq != evs[len(evs)-1].Seq {
				t.Fatalf("GetRun = %+v, %v", got, err)
			}
			hist, err := h.o.History(t.Context(), "alice", run.SessionID, 0)
			if err != nil {
				t.Fatal(err)
			}
			if hist[0].Role != orchestrator.RoleUser || hist[len(hist)-1].Content != f.Answer {
				t.Errorf("history = %+v", hist)
			}
		})
	}
}

func TestReplayFromEverySeq(t *testing.T) {
	h := newHarness(t, harnessOpts{turns: writeThenRead})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"write_file", "read_file"}})
	all := collect(t, h.o, run.ID, 0)
	for after := int64(0); after <= int64(len(all)); after++ {
		got := collect(t, h.o, run.ID, after)
		if len(got) != len(all)-int(after) {
			t.Fatalf("after %d: %d events, want %d", after, len(got), len(all)-int(after))
		}
		assertDense(t, got, after+1)
	}
	// Once the orchestrator has shut down (every log flushed), the stored
	// log equals the live one.
	if err := h.o.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	stored, err := h.store.ListEvents(t.Context(), run.ID, 0, 0)
	if err != nil || len(stored) != len(all) {
		t.Fatalf("stored %d events (%v), live %d", len(stored), err, len(all))
	}
	for i := range all {
		if stored[i].Seq != all[i].Seq || stored[i].Type != all[i].Type || string(stored[i].Data) != string(all[i].Data) {
			t.Fatalf("event %d differs: stored %+v live %+v", i, stored[i], all[i])
		}
	}
}

func TestSubscriberThatLeavesDoesNotStopTheRun(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	h := newHarness(t, harnessOpts{
		toolsets: []orchestrator.Toolset{blockingTool("wait", started, release)},
		turns:    []orchestratortest.Turn{{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("wait", `{}`)}}, {Content: "done"}},
	})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"wait"}})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var seen int64
	for ev, err := range h.o.Events(ctx, "", run.ID, 0) {
		if err != nil {
			break
		}
		seen = ev.Seq
		if ev.Type == orchestrator.EventToolCall {
			<-started
			cancel() // the client goes away mid-tool
		}
	}
	close(release)
	rest := collect(t, h.o, run.ID, seen)
	assertDense(t, rest, seen+1)
	if f := final(t, rest); f.Answer != "done" {
		t.Fatalf("final = %+v", f)
	}
}

func TestParallelReadOnlyTools(t *testing.T) {
	// Two read-only tools that each wait for the other: they finish only
	// if the loop runs them at the same time.
	a, b := make(chan struct{}), make(chan struct{})
	mk := func(name string, mine chan struct{}, other chan struct{}) orchestrator.Tool {
		return orchestratortest.NewTool(name, true, func(ctx context.Context, _ *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
			close(mine)
			select {
			case <-other:
				return &orchestrator.ToolResult{Content: name + " ok"}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	}
	set := orchestrator.StaticToolset{SetName: "pair", List: []orchestrator.Tool{mk("left", a, b), mk("right", b, a)}}
	h := newHarness(t, harnessOpts{
		toolsets: []orchestrator.Toolset{set},
		turns: []orchestratortest.Turn{
			{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("left", `{}`), orchestratortest.Call("right", `{}`)}},
			{Content: "both"},
		},
	})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"left", "right"}})
	evs := collect(t, h.o, run.ID, 0)
	if f := final(t, evs); f.Answer != "both" {
		t.Fatalf("final = %+v", f)
	}
	for _, ev := range ofType(evs, orchestrator.EventToolResult) {
		var d orchestrator.ToolResultData
		_ = json.Unmarshal(ev.Data, &d)
		if d.IsError {
			t.Errorf("%s failed: %s", d.Name, d.Content)
		}
	}
}

func TestMutatingToolsRunInOrder(t *testing.T) {
	var order []string
	var running atomic.Int32
	mk := func(name string) orchestrator.Tool {
		return orchestratortest.NewTool(name, false, func(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
			if running.Add(1) != 1 {
				return orchestrator.ErrorResult("ran concurrently"), nil
			}
			defer running.Add(-1)
			order = append(order, name)
			return &orchestrator.ToolResult{Content: name}, nil
		})
	}
	set := orchestrator.StaticToolset{SetName: "m", List: []orchestrator.Tool{mk("m1"), mk("m2"), mk("m3")}}
	h := newHarness(t, harnessOpts{toolsets: []orchestrator.Toolset{set}, turns: []orchestratortest.Turn{
		{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("m3", `{}`), orchestratortest.Call("m1", `{}`), orchestratortest.Call("m2", `{}`)}},
		{Content: "ok"},
	}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"m1", "m2", "m3"}})
	final(t, collect(t, h.o, run.ID, 0))
	if strings.Join(order, ",") != "m3,m1,m2" {
		t.Fatalf("order = %v", order)
	}
}

func TestFinalResponseTool(t *testing.T) {
	for _, mode := range []string{orchestrator.ModeToolCall, orchestrator.ModeFunctionCall} {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, harnessOpts{mode: mode, turns: []orchestratortest.Turn{
				{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("最终回复", `{"content":"42"}`)}},
			}})
			run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
			f := final(t, collect(t, h.o, run.ID, 0))
			if f.Answer != "42" || f.StopReason != orchestrator.StopFinalTool {
				t.Fatalf("final = %+v", f)
			}
		})
	}
}

// The reply tool ends a run as final_response does, with its own stop
// reason (a direct answer: A2A answers it with a Message). It is offered
// only to runs that name it: elsewhere a call of it is an unknown tool.
func TestReplyTool(t *testing.T) {
	for _, mode := range []string{orchestrator.ModeToolCall, orchestrator.ModeFunctionCall} {
		t.Run(mode, func(t *testing.T) {
			h := newHarness(t, harnessOpts{mode: mode, turns: []orchestratortest.Turn{
				{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call(orchestrator.ReplyTool, `{"content":"42"}`)}},
			}})
			run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{orchestrator.ReplyTool}})
			f := final(t, collect(t, h.o, run.ID, 0))
			if f.Answer != "42" || f.StopReason != orchestrator.StopReply || f.State != orchestrator.RunFinished {
				t.Fatalf("final = %+v", f)
			}
			if r, err := h.o.GetRun(t.Context(), "u", run.ID); err != nil || r.StopReason != orchestrator.StopReply || r.Answer != "42" {
				t.Fatalf("stored run %+v, %v; want stop reason reply", r, err)
			}
		})
	}
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{
		{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call(orchestrator.ReplyTool, `{"content":"42"}`)}},
		{Content: "then plainly"},
	}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	evs := collect(t, h.o, run.ID, 0)
	if f := final(t, evs); f.Answer != "then plainly" || f.StopReason != orchestrator.StopModelResponse {
		t.Fatalf("reply not offered: final = %+v; want the call refused and the plain answer", f)
	}
}

func TestMaxRounds(t *testing.T) {
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{
		{Content: "again", ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("read_file", `{"path":"x"}`)}},
	}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"read_file"}, MaxRounds: 3})
	evs := collect(t, h.o, run.ID, 0)
	f := final(t, evs)
	if f.StopReason != orchestrator.StopMaxRounds || f.Answer != "again" {
		t.Fatalf("final = %+v", f)
	}
	if n := len(ofType(evs, orchestrator.EventLLMRequest)); n != 3 {
		t.Fatalf("model calls = %d, want 3", n)
	}
}

func TestBadToolCallsBecomeResults(t *testing.T) {
	panicky := orchestratortest.NewTool("boom", true, func(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		panic("kaboom")
	})
	failing := orchestratortest.NewTool("fails", true, func(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		return nil, errors.New("disk on fire")
	})
	h := newHarness(t, harnessOpts{
		toolsets: []orchestrator.Toolset{orchestrator.StaticToolset{SetName: "bad", List: []orchestrator.Tool{panicky, failing}}},
		turns: []orchestratortest.Turn{
			{Content: "<tool_call>{not json}</tool_call><tool_call>{\"name\":\"nope\",\"arguments\":{}}</tool_call>" +
				"<tool_call>{\"name\":\"boom\",\"arguments\":{}}</tool_call><tool_call>{\"name\":\"fails\",\"arguments\":\"{}\"}</tool_call>"},
			{Content: "recovered"},
		},
	})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"boom", "fails"}})
	evs := collect(t, h.o, run.ID, 0)
	if f := final(t, evs); f.Answer != "recovered" || f.State != orchestrator.RunFinished {
		t.Fatalf("final = %+v", f)
	}
	results := ofType(evs, orchestrator.EventToolResult)
	// Parallel calls report in completion order; match them by call id.
	want := map[string]string{"call_1_1": "malformed tool call", "call_1_2": "unknown tool \"nope\"", "call_1_3": "internal error", "call_1_4": "disk on fire"}
	if len(results) != len(want) {
		t.Fatalf("results = %d, want %d", len(results), len(want))
	}
	for _, ev := range results {
		var d orchestrator.ToolResultData
		_ = json.Unmarshal(ev.Data, &d)
		if !d.IsError || !strings.Contains(d.Content, want[d.CallID]) {
			t.Errorf("result %s = %+v, want error containing %q", d.CallID, d, want[d.CallID])
		}
	}
	// The model saw every error in the next request.
	reqs := h.model.Requests()
	lastMsg := reqs[1].Messages[len(reqs[1].Messages)-1].Content
	if strings.Count(lastMsg, "tool_response: ") != 4 {
		t.Errorf("tool_response lines in %q", lastMsg)
	}
}

func TestModelErrorFailsTheRun(t *testing.T) {
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{{Err: errors.New("upstream 500 after 3 attempts")}}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	evs := collect(t, h.o, run.ID, 0)
	f := final(t, evs)
	if f.State != orchestrator.RunFailed || f.StopReason != orchestrator.StopError || !strings.Contains(f.Error, "upstream 500") {
		t.Fatalf("final = %+v", f)
	}
	if len(ofType(evs, orchestrator.EventError)) != 1 {
		t.Fatalf("events = %v", types(evs))
	}
}

func TestRetriesAreEvents(t *testing.T) {
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{{Content: "fine", Retries: 2}}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	evs := collect(t, h.o, run.ID, 0)
	if n := len(ofType(evs, orchestrator.EventLLMStreamRetry)); n != 2 {
		t.Fatalf("retries = %d: %v", n, types(evs))
	}
	if f := final(t, evs); f.Answer != "fine" {
		t.Fatalf("final = %+v", f)
	}
}

func TestStartValidation(t *testing.T) {
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{{Content: "x"}}})
	other := mustStart(t, h.o, orchestrator.RunRequest{UserID: "bob", Question: "mine"})
	collect(t, h.o, other.ID, 0)
	cases := []struct {
		name string
		req  orchestrator.RunRequest
		want error
	}{
		{"no user", orchestrator.RunRequest{Question: "q"}, orchestrator.ErrInvalidArgument},
		{"user with slash", orchestrator.RunRequest{UserID: "../x", Question: "q"}, orchestrator.ErrInvalidArgument},
		{"no question", orchestrator.RunRequest{UserID: "u", Question: "  "}, orchestrator.ErrInvalidArgument},
		{"bad mode", orchestrator.RunRequest{UserID: "u", Question: "q", ToolCallMode: "xml"}, orchestrator.ErrInvalidArgument},
		{"bad language", orchestrator.RunRequest{UserID: "u", Question: "q", Language: "fr"}, orchestrator.ErrInvalidArgument},
		{"unknown tool", orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"rm_rf"}}, orchestrator.ErrToolNotFound},
		{"excluded tool", orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"read_file"}, ExcludeTools: []string{"read_file"}}, orchestrator.ErrToolNotFound},
		{"unknown session", orchestrator.RunRequest{UserID: "u", Question: "q", SessionID: "sess_nope"}, orchestrator.ErrNotFound},
		{"someone else's session", orchestrator.RunRequest{UserID: "u", Question: "q", SessionID: other.SessionID}, orchestrator.ErrNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := h.o.Start(t.Context(), c.req); !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
	if _, err := h.o.GetRun(t.Context(), "u", other.ID); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("another user's run: %v", err)
	}
}

func TestNoModelIsUnavailable(t *testing.T) {
	reg := orchestrator.NewRegistry("", nil)
	o := orchestrator.New(orchestratortest.NewMemStore(), orchestratortest.Models{}, reg, nil)
	defer o.Close(t.Context())
	if _, err := o.Start(t.Context(), orchestrator.RunRequest{UserID: "u", Question: "q"}); !errors.Is(err, orchestrator.ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
}

func TestSessionContinues(t *testing.T) {
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{{Content: "first answer"}, {Content: "second answer"}}})
	r1 := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "one"})
	collect(t, h.o, r1.ID, 0)
	r2 := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "two", SessionID: r1.SessionID})
	collect(t, h.o, r2.ID, 0)
	msgs := h.model.Requests()[1].Messages
	var contents []string
	for _, m := range msgs[1:] {
		contents = append(contents, m.Role+":"+m.Content)
	}
	if got := strings.Join(contents, "|"); got != "user:one|assistant:first answer|user:two" {
		t.Fatalf("second request history = %s", got)
	}
	sessions, err := h.o.ListSessions(t.Context(), "u", orchestrator.Page{})
	if err != nil || len(sessions) != 1 || sessions[0].Title != "one" {
		t.Fatalf("sessions = %+v, %v", sessions, err)
	}
	if err := h.o.DeleteSession(t.Context(), "u", r1.SessionID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.o.History(t.Context(), "u", r1.SessionID, 0); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Fatalf("history after delete: %v", err)
	}
}
