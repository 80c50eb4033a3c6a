package gateway_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// The monitor shows a running run with the tool it is in, cancels it
// through its session, counts tool calls as the runs made them, and
// reports the process.
func TestMonitor(t *testing.T) {
	started := make(chan struct{})
	slow := orchestratortest.NewTool("slow", false, func(ctx context.Context, _ *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	e := newEnv(t, envOpts{
		extra: []orchestrator.Toolset{orchestrator.StaticToolset{SetName: "slow", List: []orchestrator.Tool{slow}}},
		turns: []orchestratortest.Turn{
			{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("write_file", `{"path":"a.txt","content":"hi"}`)}},
			{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("read_file", `{"path":"a.txt"}`)}},
			{Content: "done"},
			{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("slow", `{}`)}},
		}})
	done := decode[struct {
		RunID string `json:"run_id"`
		State string `json:"state"`
	}](t, e.do(t, "POST", "/wunder", `{"user_id":"alice","question":"write then read","tool_names":["write_file","read_file"],"stream":false}`), 200)
	if done.State != "finished" {
		t.Fatalf("first run = %+v", done)
	}
	busy := decode[orchestrator.Run](t, e.do(t, "POST", "/wunder/runs", `{"user_id":"bob","question":"slowly","tool_names":["slow"]}`), 202)
	<-started
	type view struct {
		RunID       string `json:"run_id"`
		UserID      string `json:"user_id"`
		State       string `json:"state"`
		CurrentTool string `json:"current_tool"`
		DurationMS  *int64 `json:"duration_ms"`
	}
	mon := decode[struct {
		Runs []view `json:"runs"`
	}](t, e.do(t, "GET", "/wunder/admin/monitor?state=running", ""), 200)
	if len(mon.Runs) != 1 || mon.Runs[0].RunID != busy.ID || mon.Runs[0].CurrentTool != "slow" || mon.Runs[0].DurationMS == nil {
		t.Fatalf("monitor(running) = %+v, want bob's run in slow", mon.Runs)
	}
	all := decode[struct {
		Runs []view `json:"runs"`
	}](t, e.do(t, "GET", "/wunder/admin/monitor?user_id=alice&since=1h", ""), 200)
	if len(all.Runs) != 1 || all.Runs[0].RunID != done.RunID || all.Runs[0].State != "finished" {
		t.Fatalf("monitor(alice) = %+v", all.Runs)
	}
	wantProblem(t, e.do(t, "GET", "/wunder/admin/monitor?state=sleeping", ""), 400, "invalid_argument")
	wantProblem(t, e.do(t, "GET", "/wunder/admin/monitor?since=yesterday", ""), 400, "invalid_argument")

	detail := decode[struct {
		Session orchestrator.Session `json:"session"`
		Runs    []view               `json:"runs"`
		Events  []orchestrator.Event `json:"events"`
	}](t, e.do(t, "GET", "/wunder/admin/monitor/"+busy.SessionID, ""), 200)
	if detail.Session.UserID != "bob" || len(detail.Runs) != 1 || len(detail.Events) == 0 {
		t.Fatalf("session detail = %+v", detail)
	}
	wantProblem(t, e.do(t, "GET", "/wunder/admin/monitor/sess_nope", ""), 404, "not_found")
	cancelled := decode[struct {
		Runs []orchestrator.Run `json:"runs"`
	}](t, e.do(t, "POST", "/wunder/admin/monitor/"+busy.SessionID+"/cancel", ""), 200)
	if len(cancelled.Runs) != 1 || cancelled.Runs[0].ID != busy.ID {
		t.Fatalf("cancel = %+v", cancelled)
	}
	evs := readSSE(t, e.do(t, "GET", "/wunder/runs/"+busy.ID+"/events", "").Body)
	if last := evs[len(evs)-1]; last.typ != "final" || !strings.Contains(string(last.ev.Data), `"cancelled"`) {
		t.Fatalf("bob's run did not end cancelled: %+v", last)
	}

	// Tool logs are written in the background: wait until the three calls
	// are counted.
	type usage struct {
		Tool    string `json:"tool"`
		Calls   int    `json:"calls"`
		Errors  int    `json:"errors"`
		Users   int    `json:"users"`
		Buckets []struct {
			Key   string `json:"key"`
			Calls int    `json:"calls"`
		} `json:"buckets"`
	}
	var tools []usage
	deadline := time.Now().Add(10 * time.Second)
	for {
		tools = decode[struct {
			Tools []usage `json:"tools"`
		}](t, e.do(t, "GET", "/wunder/admin/monitor/tool_usage?group=user", ""), 200).Tools
		n := 0
		for _, u := range tools {
			n += u.Calls
		}
		if n == 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	got := map[string]usage{}
	for _, u := range tools {
		got[u.Tool] = u
	}
	if got["write_file"].Calls != 1 || got["read_file"].Calls != 1 || got["slow"].Calls != 1 || got["slow"].Errors != 1 ||
		got["slow"].Users != 1 || len(got["slow"].Buckets) != 1 || got["slow"].Buckets[0].Key != "bob" {
		t.Fatalf("tool usage = %+v", tools)
	}
	wantProblem(t, e.do(t, "GET", "/wunder/admin/monitor/tool_usage?group=day", ""), 400, "invalid_argument")

	sys := decode[map[string]any](t, e.do(t, "GET", "/wunder/admin/monitor/system", ""), 200)
	for _, k := range []string{"goroutines", "memory", "open_streams", "runs", "cpu"} {
		if _, ok := sys[k]; !ok {
			t.Fatalf("system snapshot lacks %s: %v", k, sys)
		}
	}
	if code := e.do(t, "DELETE", "/wunder/admin/monitor/"+busy.SessionID, "").StatusCode; code != 204 {
		t.Fatalf("DELETE session = %d", code)
	}
	wantProblem(t, e.do(t, "GET", "/wunder/admin/monitor/"+busy.SessionID, ""), 404, "not_found")
}

// The users the monitor knows, their sessions, and deleting their data:
// refused without the confirmation and while a run is in progress; then
// everything of theirs is gone and the workspace hook ran.
func TestAdminUsers(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	slow := orchestratortest.NewTool("slow", false, func(ctx context.Context, _ *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		close(started)
		select {
		case <-release:
			return &orchestrator.ToolResult{Content: "ok"}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	var deleted []string
	e := newEnv(t, envOpts{
		gw: gateway.Options{DeleteWorkspace: func(_ context.Context, user string) error {
			deleted = append(deleted, user)
			return nil
		}},
		extra: []orchestrator.Toolset{orchestrator.StaticToolset{SetName: "slow", List: []orchestrator.Tool{slow}}},
		turns: []orchestratortest.Turn{{Content: "hi"}, {Content: "hi"}, {Content: "hi"}, {ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("slow", `{}`)}}, {Content: "done"}}})
	for _, u := range []string{"alice", "alice", "bob"} {
		decode[map[string]any](t, e.do(t, "POST", "/wunder", `{"user_id":"`+u+`","question":"hello","stream":false}`), 200)
	}
	type user struct {
		UserID   string `json:"user_id"`
		Sessions int    `json:"sessions"`
		Runs     int    `json:"runs"`
	}
	users := decode[struct {
		Users []user `json:"users"`
	}](t, e.do(t, "GET", "/wunder/admin/users", ""), 200).Users
	if len(users) != 2 || users[0].UserID != "bob" || users[1].UserID != "alice" || users[1].Sessions != 2 || users[1].Runs != 2 {
		t.Fatalf("users = %+v", users)
	}
	type usersPage struct {
		Users []user  `json:"users"`
		Next  *string `json:"next_cursor"`
	}
	first := decode[usersPage](t, e.do(t, "GET", "/wunder/admin/users?limit=1", ""), 200)
	if len(first.Users) != 1 || first.Users[0].UserID != "bob" || first.Next == nil || *first.Next == "" {
		t.Fatalf("users, the first page of one: %+v", first)
	}
	last := decode[usersPage](t, e.do(t, "GET", "/wunder/admin/users?limit=1&cursor="+url.QueryEscape(*first.Next), ""), 200)
	if len(last.Users) != 1 || last.Users[0].UserID != "alice" || last.Next == nil || *last.Next != "" {
		t.Fatalf("users, the page of one after bob: %+v", last)
	}
	sessions := decode[struct {
		Sessions []orchestrator.Session `json:"sessions"`
	}](t, e.do(t, "GET", "/wunder/admin/users/alice/sessions", ""), 200).Sessions
	if len(sessions) != 2 || sessions[0].UserID != "alice" {
		t.Fatalf("alice's sessions = %+v", sessions)
	}
	wantProblem(t, e.do(t, "DELETE", "/wunder/admin/users/alice", ""), 400, "confirmation_required")
	wantProblem(t, e.do(t, "DELETE", "/wunder/admin/users/alice?confirm=bob", ""), 400, "confirmation_required")
	busy := decode[orchestrator.Run](t, e.do(t, "POST", "/wunder/runs", `{"user_id":"alice","question":"slowly","tool_names":["slow"]}`), 202)
	<-started
	wantProblem(t, e.do(t, "DELETE", "/wunder/admin/users/alice?confirm=alice", ""), 409, "conflict")
	close(release)
	readSSE(t, e.do(t, "GET", "/wunder/runs/"+busy.ID+"/events", "").Body)
	if code := e.do(t, "DELETE", "/wunder/admin/users/alice?confirm=alice", "").StatusCode; code != 204 {
		t.Fatalf("DELETE alice = %d", code)
	}
	if len(deleted) != 1 || deleted[0] != "alice" {
		t.Fatalf("workspace hook ran for %v, want alice", deleted)
	}
	users = decode[struct {
		Users []user `json:"users"`
	}](t, e.do(t, "GET", "/wunder/admin/users", ""), 200).Users
	if len(users) != 1 || users[0].UserID != "bob" {
		t.Fatalf("users after deleting alice = %+v", users)
	}
	wantProblem(t, e.do(t, "GET", "/wunder/runs/"+busy.ID, ""), 404, "not_found")
}

// observability.monitor_event_limit sets how many events a session's
// detail shows when the request names none; ?events= still chooses.
func TestMonitorEventLimit(t *testing.T) {
	e := newEnv(t, envOpts{gw: gateway.Options{MonitorEventLimit: 2}, turns: []orchestratortest.Turn{{Content: "a fairly long answer"}}})
	run := decode[struct {
		SessionID string `json:"session_id"`
		State     string `json:"state"`
	}](t, e.do(t, "POST", "/wunder", `{"user_id":"alice","question":"hi","stream":false}`), 200)
	type detail struct {
		Events []orchestrator.Event `json:"events"`
	}
	d := decode[detail](t, e.do(t, "GET", "/wunder/admin/monitor/"+run.SessionID, ""), 200)
	if len(d.Events) != 2 || d.Events[1].Type != "final" {
		t.Fatalf("default detail = %d events %+v; want the last 2, ending with final", len(d.Events), d.Events)
	}
	if d := decode[detail](t, e.do(t, "GET", "/wunder/admin/monitor/"+run.SessionID+"?events=4", ""), 200); len(d.Events) != 4 {
		t.Fatalf("?events=4 gives %d events", len(d.Events))
	}
}
