package client_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// The tests in this file run the client against the real gateway and
// core (a scripted model), as `wunder run` uses it.

// writeTurns make the model write a file, then answer.
func writeTurns(content string) []orchestratortest.Turn {
	return []orchestratortest.Turn{
		{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("write_file", `{"path":"a.txt","content":"`+content+`"}`)}},
		{Content: "wrote it", Usage: &orchestrator.Usage{InputTokens: 5, OutputTokens: 2, TotalTokens: 7}},
	}
}

// Ask yields the run's events as the server streams them, in seq order,
// and stops after the final event, whose payload decodes as Final.
func TestAskStreamsToTheFinalEvent(t *testing.T) {
	files := orchestratortest.NewFiles()
	srv, _ := newServerWith(t, files, nil, writeTurns("hi")...)
	c := client.New(srv.URL, "k", nil)
	var types []string
	var last client.Event
	for ev, err := range c.Ask(t.Context(), client.RunRequest{UserID: "u", Question: "write", ToolNames: []string{"write_file"}}) {
		if err != nil {
			t.Fatalf("after %q: %v", types, err)
		}
		if ev.Seq != int64(len(types)+1) || ev.RunID == "" || ev.SessionID == "" {
			t.Fatalf("event %d: %+v; want seq %d with its run and session", len(types), ev, len(types)+1)
		}
		types = append(types, ev.Type)
		last = ev
	}
	for _, want := range []string{"tool_call", "tool_result", "final"} {
		if !slices.Contains(types, want) {
			t.Errorf("events %q lack %s", types, want)
		}
	}
	if last.Type != "final" {
		t.Fatalf("last event %q, want final", last.Type)
	}
	var fin client.Final
	if err := json.Unmarshal(last.Data, &fin); err != nil {
		t.Fatal(err)
	}
	if fin.Answer != "wrote it" || fin.State != "finished" || fin.StopReason == "" || fin.Usage.TotalTokens == 0 {
		t.Errorf("final = %+v", fin)
	}
	if got, _ := files.Get("u", "a.txt"); got != "hi" {
		t.Errorf("the tool call did not run: a.txt = %q", got)
	}
}

// AskJSON waits for the whole answer; the run it made can be read back
// with GetRun, and Follow from a seq yields exactly the events after it.
func TestAskJSONThenGetRunAndFollowFromASeq(t *testing.T) {
	srv, _ := newServerWith(t, orchestratortest.NewFiles(), nil, writeTurns("x")...)
	c := client.New(srv.URL, "k", nil)
	a, err := c.AskJSON(t.Context(), client.RunRequest{UserID: "u", Question: "write", ToolNames: []string{"write_file"}})
	if err != nil {
		t.Fatal(err)
	}
	if a.State != "finished" || a.Answer != "wrote it" || a.RunID == "" || a.SessionID == "" || a.Usage.InputTokens == 0 {
		t.Fatalf("answer = %+v", a)
	}
	run, err := c.GetRun(t.Context(), "u", a.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if run.ID != a.RunID || run.State != "finished" || run.Answer != a.Answer || run.LastSeq() < 3 {
		t.Fatalf("run = %+v", run)
	}
	after := run.LastSeq() - 2
	var seqs []int64
	for ev, err := range c.Follow(t.Context(), "u", a.RunID, after, nil) {
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, ev.Seq)
	}
	if want := []int64{after + 1, after + 2}; !slices.Equal(seqs, want) {
		t.Errorf("Follow after %d yielded seqs %v, want %v", after, seqs, want)
	}
}

// Cancel ends a running run: following it ends with a final event whose
// state is cancelled.
func TestCancelEndsTheRun(t *testing.T) {
	started := make(chan struct{})
	srv, _ := newServer(t, orchestratortest.Turn{Content: "never", Wait: make(chan struct{}), Started: started})
	c := client.New(srv.URL, "k", nil)
	run, err := c.Submit(t.Context(), client.RunRequest{UserID: "u", Question: "wait"})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if err := c.Cancel(t.Context(), "u", run.ID); err != nil {
		t.Fatal(err)
	}
	var fin client.Final
	for ev, err := range c.Follow(t.Context(), "u", run.ID, 0, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == "final" {
			_ = json.Unmarshal(ev.Data, &fin)
		}
	}
	if fin.State != "cancelled" {
		t.Errorf("final state after Cancel = %q, want cancelled", fin.State)
	}
	if got, err := c.GetRun(t.Context(), "u", run.ID); err != nil || got.State != "cancelled" {
		t.Errorf("GetRun = %+v, %v", got, err)
	}
}

// A tool call the policy holds is listed by Approvals; Decide with edit
// runs the call with the new arguments, and a second decision is a 409
// *Error, as `wunder run --approve` expects.
func TestApprovalsAndDecide(t *testing.T) {
	files := orchestratortest.NewFiles()
	opts := &orchestrator.Options{Approvals: orchestrator.ApprovalPolicy{Tools: []string{"write_file"}}}
	srv, _ := newServerWith(t, files, opts, writeTurns("original")...)
	c := client.New(srv.URL, "k", nil)
	run, err := c.Submit(t.Context(), client.RunRequest{UserID: "u", Question: "write", ToolNames: []string{"write_file"}})
	if err != nil {
		t.Fatal(err)
	}
	decided := false
	var final client.Final
	for ev, err := range c.Follow(t.Context(), "u", run.ID, 0, nil) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case "approval_required":
			list, err := c.Approvals(t.Context(), "u", run.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 1 || list[0].Tool != "write_file" || list[0].State != "pending" || list[0].RunID != run.ID ||
				!slices.Contains(list[0].Decisions, "edit") || !strings.Contains(string(list[0].Arguments), "original") {
				t.Fatalf("approvals = %+v", list)
			}
			got, err := c.Decide(t.Context(), "u", run.ID, list[0].ID, client.Decision{Decision: "edit",
				Arguments: json.RawMessage(`{"path":"a.txt","content":"edited"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != list[0].ID || got.State == "pending" {
				t.Errorf("decided approval = %+v, want it no longer pending", got)
			}
			_, err = c.Decide(t.Context(), "u", run.ID, list[0].ID, client.Decision{Decision: "reject", Reason: "too late"})
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Status != 409 {
				t.Errorf("second decision: %v, want a 409 *client.Error", err)
			}
			decided = true
		case "final":
			_ = json.Unmarshal(ev.Data, &final)
		}
	}
	if !decided || final.State != "finished" {
		t.Fatalf("decided %v, final %+v", decided, final)
	}
	if got, _ := files.Get("u", "a.txt"); got != "edited" {
		t.Errorf("a.txt = %q, want the edited arguments' content", got)
	}
}

// The server's problem answers become *Error with the status, code,
// detail and request id; SetLanguage asks for them in another language.
func TestGatewayProblemsAsErrors(t *testing.T) {
	srv, _ := newServer(t, orchestratortest.Turn{Content: "x"})
	c := client.New(srv.URL, "k", nil)
	_, err := c.GetRun(t.Context(), "u", "run_missing")
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != 404 || ce.Code != "not_found" || ce.Detail == "" || ce.RequestID == "" {
		t.Fatalf("unknown run: %#v", err)
	}
	if !strings.HasPrefix(ce.Error(), "404 not_found: ") {
		t.Errorf("Error() = %q, want it to start with the status and code", ce.Error())
	}
	_, err = c.Submit(t.Context(), client.RunRequest{UserID: "u", Question: ""})
	if !errors.As(err, &ce) || ce.Status != 400 {
		t.Errorf("empty question: %v, want a 400", err)
	}

	c.SetLanguage("zh-CN")
	_, err = c.GetRun(t.Context(), "u", "run_missing")
	if !errors.As(err, &ce) || ce.Code != "not_found" || !strings.ContainsFunc(ce.Detail, func(r rune) bool { return unicode.Is(unicode.Han, r) }) {
		t.Errorf("with language zh-CN: %v, want the detail in Chinese", err)
	}
	c.SetLanguage("")
	if _, err := c.GetRun(t.Context(), "u", "run_missing"); !errors.As(err, &ce) || strings.ContainsFunc(ce.Detail, func(r rune) bool { return unicode.Is(unicode.Han, r) }) {
		t.Errorf("language cleared: %v, want the default language", err)
	}
}

// Tools lists the user's catalog with each tool's group; Health answers
// nil from a live server.
func TestToolsAndHealth(t *testing.T) {
	srv, _ := newServer(t, orchestratortest.Turn{Content: "x"})
	c := client.New(srv.URL+"/", "k", nil) // a trailing slash is fine
	tools, err := c.Tools(t.Context(), "u")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		if tl.Group == "" || tl.WireName == "" || len(tl.InputSchema) == 0 {
			t.Errorf("tool %+v lacks its group, wire name or schema", tl)
		}
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "write_file") || !slices.Contains(names, "read_file") {
		t.Errorf("catalog %q lacks the files tools", names)
	}
	if err := c.Health(t.Context()); err != nil {
		t.Errorf("Health = %v", err)
	}
}
