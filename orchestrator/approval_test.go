package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// deployTool counts its calls and records their arguments: the side
// effect approvals guard.
type deployTool struct {
	mu    sync.Mutex
	calls []string
}

func (d *deployTool) toolset() orchestrator.Toolset {
	t := orchestratortest.NewTool("deploy", false, func(_ context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		d.mu.Lock()
		d.calls = append(d.calls, string(inv.Arguments))
		d.mu.Unlock()
		return &orchestrator.ToolResult{Content: "deployed " + string(inv.Arguments)}, nil
	})
	t.S.InputSchema = json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"}},"required":["env"]}`)
	return orchestrator.StaticToolset{SetName: "deploy", List: []orchestrator.Tool{t}}
}

func (d *deployTool) called() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.calls...)
}

// untilEvent follows a run until an event of type typ and returns the
// events so far.
func untilEvent(t *testing.T, o *orchestrator.Orchestrator, runID string, after int64, typ string) []orchestrator.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var out []orchestrator.Event
	for ev, err := range o.Events(ctx, "", runID, after) {
		if err != nil {
			t.Fatalf("Events(%s) before %s: %v (got %v)", runID, typ, err, types(out))
		}
		out = append(out, ev)
		if ev.Type == typ {
			return out
		}
		if ev.Type == orchestrator.EventFinal {
			t.Fatalf("run ended before %s: %v", typ, types(out))
		}
	}
	t.Fatalf("no %s event: %v", typ, types(out))
	return nil
}

// waitState waits until the stored run is in state st (the store is the
// truth a restarted server reads).
func waitState(t *testing.T, s orchestrator.Store, runID string, st orchestrator.RunState) *orchestrator.Run {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, err := s.GetRun(t.Context(), runID)
		if err == nil && r.State == st {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s did not reach %s (last: %+v, %v)", runID, st, r, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func approvalData(t *testing.T, ev orchestrator.Event) orchestrator.ApprovalRequiredData {
	t.Helper()
	var d orchestrator.ApprovalRequiredData
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func approvalHarness(t *testing.T, d *deployTool, policy orchestrator.ApprovalPolicy, turns ...orchestratortest.Turn) *harness {
	return newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall, toolsets: []orchestrator.Toolset{d.toolset()},
		opts: orchestrator.Options{Approvals: policy}, turns: turns})
}

var deployTurns = []orchestratortest.Turn{call("deploy", `{"env":"prod"}`), {Content: "Done."}}

// A call the policy names waits: approval_required with the call, the run
// waiting_approval in the store, the tool not run. approve runs it once and
// the run finishes; a second decision is a conflict; the log is dense
// across the wait.
func TestApprovalApprove(t *testing.T) {
	d := &deployTool{}
	h := approvalHarness(t, d, orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}, deployTurns...)
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}})
	evs := untilEvent(t, h.o, run.ID, 0, orchestrator.EventApprovalRequired)
	a := approvalData(t, evs[len(evs)-1])
	if a.Kind != orchestrator.KindAuthorization || a.Tool != "deploy" || string(a.Arguments) != `{"env":"prod"}` ||
		strings.Join(a.Decisions, ",") != "approve,edit,reject,cancel" || a.ApprovalID == "" || a.Reason == "" || a.ExpiresAt == nil {
		t.Fatalf("approval_required = %+v", a)
	}
	waitState(t, h.store, run.ID, orchestrator.RunWaitingApproval)
	// The wait is stored first and shown after (suspendRun): GetRun says
	// waiting_approval a moment after the store does.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		got, _ := h.o.GetRun(t.Context(), "u", run.ID)
		if got.State == orchestrator.RunWaitingApproval {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GetRun state = %s, want waiting_approval", got.State)
		}
	}
	list, err := h.o.Approvals(t.Context(), "u", run.ID)
	if err != nil || len(list) != 1 || list[0].State != orchestrator.ApprovalPending || list[0].ID != a.ApprovalID {
		t.Fatalf("Approvals = %+v, %v", list, err)
	}
	if c := d.called(); len(c) != 0 {
		t.Fatalf("deploy ran before approval: %v", c)
	}
	if _, err := h.o.Approvals(t.Context(), "mallory", run.ID); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Fatalf("another user's Approvals: %v, want ErrNotFound", err)
	}
	if _, err := h.o.Decide(t.Context(), "mallory", run.ID, a.ApprovalID, orchestrator.ApprovalDecision{Decision: "approve"}); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Fatalf("another user's Decide: %v, want ErrNotFound", err)
	}
	if _, err := h.o.Decide(t.Context(), "u", run.ID, a.ApprovalID, orchestrator.ApprovalDecision{Decision: "maybe"}); !errors.Is(err, orchestrator.ErrInvalidArgument) {
		t.Fatalf("Decide(maybe): %v, want ErrInvalidArgument", err)
	}
	got, err := h.o.Decide(t.Context(), "u", run.ID, a.ApprovalID, orchestrator.ApprovalDecision{Decision: "approve"})
	if err != nil || got.State != orchestrator.ApprovalApproved || got.Decision.By != "u" {
		t.Fatalf("Decide(approve) = %+v, %v", got, err)
	}
	if _, err := h.o.Decide(t.Context(), "u", run.ID, a.ApprovalID, orchestrator.ApprovalDecision{Decision: "reject"}); !errors.Is(err, orchestrator.ErrConflict) {
		t.Fatalf("second Decide: %v, want ErrConflict", err)
	}
	all := collect(t, h.o, run.ID, 0)
	assertDense(t, all, 1)
	if f := final(t, all); f.State != orchestrator.RunFinished || f.Answer != "Done." {
		t.Fatalf("final = %+v", f)
	}
	if c := d.called(); len(c) != 1 || c[0] != `{"env":"prod"}` {
		t.Fatalf("deploy calls = %v, want one with the model's arguments", c)
	}
	if n := len(ofType(all, orchestrator.EventApprovalDecided)); n != 1 {
		t.Fatalf("%d approval_decided events, want 1: %v", n, types(all))
	}
	list, _ = h.o.Approvals(t.Context(), "u", run.ID)
	if list[0].Execution != orchestrator.ExecutionDone || list[0].Result == nil || !strings.Contains(list[0].Result.Content, "deployed") {
		t.Fatalf("approval after the run = %+v", list[0])
	}
}

// edit runs the call with the person's arguments, after checking them
// against the tool's schema; the model is told they changed.
func TestApprovalEdit(t *testing.T) {
	d := &deployTool{}
	h := approvalHarness(t, d, orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}, deployTurns...)
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}})
	evs := untilEvent(t, h.o, run.ID, 0, orchestrator.EventApprovalRequired)
	id := approvalData(t, evs[len(evs)-1]).ApprovalID
	for _, bad := range []string{`[1]`, `"x"`, `{}`, `{"env":null}`} {
		_, err := h.o.Decide(t.Context(), "u", run.ID, id, orchestrator.ApprovalDecision{Decision: "edit", Arguments: json.RawMessage(bad)})
		if !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Fatalf("edit with %s: %v, want ErrInvalidArgument", bad, err)
		}
	}
	if _, err := h.o.Decide(t.Context(), "u", run.ID, id, orchestrator.ApprovalDecision{Decision: "edit", Arguments: json.RawMessage(`{"env":"staging"}`)}); err != nil {
		t.Fatal(err)
	}
	f := final(t, collect(t, h.o, run.ID, 0))
	if f.State != orchestrator.RunFinished {
		t.Fatalf("final = %+v", f)
	}
	if c := d.called(); len(c) != 1 || c[0] != `{"env":"staging"}` {
		t.Fatalf("deploy calls = %v, want one with the edited arguments", c)
	}
	reqs := h.model.Requests()
	last := reqs[len(reqs)-1].Messages
	if m := last[len(last)-1]; m.Role != orchestrator.RoleTool || !strings.Contains(m.Content, "changed the arguments") || !strings.Contains(m.Content, "staging") {
		t.Fatalf("the model read %+v, want the result with a note on the edit", m)
	}
}

// reject gives the model the reason as the call's result; the run goes on
// and finishes; the tool never runs.
func TestApprovalReject(t *testing.T) {
	d := &deployTool{}
	h := approvalHarness(t, d, orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}, deployTurns...)
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}})
	evs := untilEvent(t, h.o, run.ID, 0, orchestrator.EventApprovalRequired)
	id := approvalData(t, evs[len(evs)-1]).ApprovalID
	if _, err := h.o.Decide(t.Context(), "u", run.ID, id, orchestrator.ApprovalDecision{Decision: "reject", Reason: "not on a Friday"}); err != nil {
		t.Fatal(err)
	}
	f := final(t, collect(t, h.o, run.ID, 0))
	if f.State != orchestrator.RunFinished || f.Answer != "Done." {
		t.Fatalf("final = %+v", f)
	}
	if c := d.called(); len(c) != 0 {
		t.Fatalf("a rejected call ran: %v", c)
	}
	reqs := h.model.Requests()
	last := reqs[len(reqs)-1].Messages
	if m := last[len(last)-1]; !strings.Contains(m.Content, "rejected") || !strings.Contains(m.Content, "not on a Friday") {
		t.Fatalf("the model read %+v, want the rejection with its reason", m)
	}
}

// cancel ends the run cancelled, frees its session (a next run starts),
// and never runs the tool.
func TestApprovalCancel(t *testing.T) {
	d := &deployTool{}
	h := approvalHarness(t, d, orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}, deployTurns...)
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}})
	evs := untilEvent(t, h.o, run.ID, 0, orchestrator.EventApprovalRequired)
	id := approvalData(t, evs[len(evs)-1]).ApprovalID
	if _, err := h.o.Decide(t.Context(), "u", run.ID, id, orchestrator.ApprovalDecision{Decision: "cancel"}); err != nil {
		t.Fatal(err)
	}
	all := collect(t, h.o, run.ID, 0)
	assertDense(t, all, 1)
	if f := final(t, all); f.State != orchestrator.RunCancelled || f.StopReason != orchestrator.StopCancelled {
		t.Fatalf("final = %+v", f)
	}
	if c := d.called(); len(c) != 0 {
		t.Fatalf("a cancelled call ran: %v", c)
	}
	next := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", SessionID: run.SessionID, Question: "again"})
	collect(t, h.o, next.ID, 0)
}

// Cancelling a waiting run (the run API's cancel) ends it at once and
// closes its approvals.
func TestCancelWaitingRun(t *testing.T) {
	d := &deployTool{}
	h := approvalHarness(t, d, orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}, deployTurns...)
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}})
	untilEvent(t, h.o, run.ID, 0, orchestrator.EventApprovalRequired)
	waitState(t, h.store, run.ID, orchestrator.RunWaitingApproval)
	r, err := h.o.Cancel(t.Context(), "u", run.ID)
	if err != nil || r.State != orchestrator.RunCancelled {
		t.Fatalf("Cancel = %+v, %v", r, err)
	}
	if f := final(t, collect(t, h.o, run.ID, 0)); f.State != orchestrator.RunCancelled {
		t.Fatalf("final = %+v", f)
	}
	list, _ := h.o.Approvals(t.Context(), "u", run.ID)
	if list[0].State != orchestrator.ApprovalCancelled {
		t.Fatalf("approval of a cancelled run = %+v", list[0])
	}
	if _, err := h.o.Decide(t.Context(), "u", run.ID, list[0].ID, orchestrator.ApprovalDecision{Decision: "approve"}); !errors.Is(err, orchestrator.ErrConflict) {
		t.Fatalf("Decide after cancel: %v, want ErrConflict", err)
	}
}

// A waiting run holds no execution slot (another user's run executes
// while it waits with max_active_runs 1) but keeps its per-user slot.
func TestWaitingRunHoldsNoSlot(t *testing.T) {
	d := &deployTool{}
	h := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall, toolsets: []orchestrator.Toolset{d.toolset()},
		opts:  orchestrator.Options{MaxActiveRuns: 1, QueueSize: -1, Approvals: orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}},
		turns: []orchestratortest.Turn{call("deploy", `{"env":"prod"}`), {Content: "Done."}}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}})
	untilEvent(t, h.o, run.ID, 0, orchestrator.EventApprovalRequired)
	waitState(t, h.store, run.ID, orchestrator.RunWaitingApproval)
	if _, err := h.o.Start(t.Context(), orchestrator.RunRequest{UserID: "u", Question: "more"}); !errors.Is(err, orchestrator.ErrBusy) {
		t.Fatalf("the same user's second run: %v, want ErrBusy (per_user 1 counts the waiting run)", err)
	}
	other := mustStart(t, h.o, orchestrator.RunRequest{UserID: "v", Question: "hello"})
	if f := final(t, collect(t, h.o, other.ID, 0)); f.State != orchestrator.RunFinished {
		t.Fatalf("the other user's run: %+v", f)
	}
}

// approval_mode: suggest asks for every tool that changes things,
// auto_edit lets file edits go, full_auto asks nothing; read-only tools
// never ask unless named; a user's tool access may name tools.
func TestApprovalModes(t *testing.T) {
	cases := []struct {
		name, mode string
		policy     orchestrator.ApprovalPolicy
		rule       *orchestrator.ToolAccess
		tool, args string
		ask        bool
	}{
		{"suggest asks for a write", orchestrator.ApprovalSuggest, orchestrator.ApprovalPolicy{}, nil, "write_file", `{"path":"a","content":"x"}`, true},
		{"suggest never asks for a read", orchestrator.ApprovalSuggest, orchestrator.ApprovalPolicy{}, nil, "read_file", `{"path":"a"}`, false},
		{"auto_edit lets an edit go", orchestrator.ApprovalAutoEdit, orchestrator.ApprovalPolicy{}, nil, "write_file", `{"path":"a","content":"x"}`, false},
		{"auto_edit asks for a command", orchestrator.ApprovalAutoEdit, orchestrator.ApprovalPolicy{}, nil, "deploy", `{"env":"x"}`, true},
		{"full_auto asks nothing", orchestrator.ApprovalFullAuto, orchestrator.ApprovalPolicy{}, nil, "deploy", `{"env":"x"}`, false},
		{"the policy's names hold in full_auto", orchestrator.ApprovalFullAuto, orchestrator.ApprovalPolicy{Tools: []string{"dep*"}}, nil, "deploy", `{"env":"x"}`, true},
		{"a named read-only tool asks", "", orchestrator.ApprovalPolicy{Tools: []string{"read_file"}}, nil, "read_file", `{"path":"a"}`, true},
		{"all_tools asks for a write", "", orchestrator.ApprovalPolicy{AllTools: true}, nil, "write_file", `{"path":"a","content":"x"}`, true},
		{"all_tools spares a read", "", orchestrator.ApprovalPolicy{AllTools: true}, nil, "read_file", `{"path":"a"}`, false},
		{"the user's rule asks", "", orchestrator.ApprovalPolicy{}, &orchestrator.ToolAccess{Approval: []string{"deploy"}}, "deploy", `{"env":"x"}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := &deployTool{}
			files := orchestratortest.NewFiles()
			model := orchestratortest.NewScriptedModel(call(tc.tool, tc.args), orchestratortest.Turn{Content: "ok"})
			// write_file of the test files is a file edit, as builtin's is.
			reg := withEdits(files, d)
			if tc.rule != nil {
				reg.SetAccess(accessOf{tc.rule})
			}
			store := orchestratortest.NewMemStore()
			o := orchestrator.New(store, orchestratortest.Models{Model: model, Settings: orchestrator.ModelSettings{Name: "m", ToolCallMode: orchestrator.ModeFunctionCall, MaxRounds: 4}},
				reg, &orchestrator.Options{Approvals: tc.policy})
			t.Cleanup(func() { _ = o.Close(context.Background()) })
			run := mustStart(t, o, orchestrator.RunRequest{UserID: "u", Question: "go", ToolNames: []string{tc.tool}, ApprovalMode: tc.mode})
			if asked := asksApproval(t, o, run.ID); asked != tc.ask {
				t.Fatalf("asked = %v, want %v", asked, tc.ask)
			}
		})
	}
	if _, err := newHarness(t, harnessOpts{}).o.Start(t.Context(), orchestrator.RunRequest{UserID: "u", Question: "q", ApprovalMode: "yolo"}); !errors.Is(err, orchestrator.ErrInvalidArgument) {
		t.Fatalf("approval_mode yolo: %v, want ErrInvalidArgument", err)
	}
}

// asksApproval follows a run until it asks for an approval (true) or
// ends (false).
func asksApproval(t *testing.T, o *orchestrator.Orchestrator, runID string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for ev, err := range o.Events(ctx, "", runID, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == orchestrator.EventApprovalRequired {
			return true
		}
	}
	return false
}

type accessOf struct{ a *orchestrator.ToolAccess }

func (a accessOf) ToolAccess(context.Context, string) (*orchestrator.ToolAccess, error) {
	return a.a, nil
}

// withEdits is a registry of files (write_file marked as a file edit) and
// deploy.
func withEdits(files *orchestratortest.Files, d *deployTool) *orchestrator.Registry {
	ts, _ := files.Toolset().Tools(context.Background(), "")
	var list []orchestrator.Tool
	for _, t := range ts {
		if ft, ok := t.(*orchestratortest.FuncTool); ok && ft.S.Name == "write_file" {
			c := *ft
			c.S.EditsFiles = true
			t = &c
		}
		list = append(list, t)
	}
	return orchestrator.NewRegistry("", nil, orchestrator.StaticToolset{SetName: "files", List: list}, d.toolset())
}

// A call that lacks a required argument asks for it (param_required, with
// the schema of what is missing); an edit completes the model's arguments.
func TestApprovalParamRequired(t *testing.T) {
	d := &deployTool{}
	h := approvalHarness(t, d, orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}, call("deploy", `{}`), orchestratortest.Turn{Content: "Done."})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}})
	evs := untilEvent(t, h.o, run.ID, 0, orchestrator.EventApprovalRequired)
	a := approvalData(t, evs[len(evs)-1])
	if a.Kind != orchestrator.KindParamRequired || !strings.Contains(string(a.Missing), `"required":["env"]`) || strings.Join(a.Decisions, ",") != "edit,reject,cancel" {
		t.Fatalf("approval_required = %+v (missing %s)", a, a.Missing)
	}
	if _, err := h.o.Decide(t.Context(), "u", run.ID, a.ApprovalID, orchestrator.ApprovalDecision{Decision: "approve"}); !errors.Is(err, orchestrator.ErrInvalidArgument) {
		t.Fatalf("approve of param_required: %v, want ErrInvalidArgument", err)
	}
	if _, err := h.o.Decide(t.Context(), "u", run.ID, a.ApprovalID, orchestrator.ApprovalDecision{Decision: "edit", Arguments: json.RawMessage(`{"env":"dev"}`)}); err != nil {
		t.Fatal(err)
	}
	final(t, collect(t, h.o, run.ID, 0))
	if c := d.called(); len(c) != 1 || c[0] != `{"env":"dev"}` {
		t.Fatalf("deploy calls = %v", c)
	}
}

// Nobody decides: after approvals.timeout the approval is rejected (the
// default on_timeout) and the run goes on without the call.
func TestApprovalTimeout(t *testing.T) {
	d := &deployTool{}
	h := approvalHarness(t, d, orchestrator.ApprovalPolicy{Tools: []string{"deploy"}, Timeout: 50 * time.Millisecond}, deployTurns...)
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}})
	all := collect(t, h.o, run.ID, 0)
	if f := final(t, all); f.State != orchestrator.RunFinished {
		t.Fatalf("final = %+v", f)
	}
	if c := d.called(); len(c) != 0 {
		t.Fatalf("a timed-out call ran: %v", c)
	}
	list, _ := h.o.Approvals(t.Context(), "u", run.ID)
	if list[0].State != orchestrator.ApprovalRejected || list[0].Decision.By != orchestrator.DecidedByTimeout {
		t.Fatalf("timed-out approval = %+v", list[0])
	}
}

// The wait survives the process: a second orchestrator on the same store
// (a restart, or another replica) lists the pending approval, and a
// decision sent to it resumes the run there; the tool runs once and the
// log goes on after the first process's last event.
func TestApprovalSurvivesRestart(t *testing.T) {
	d := &deployTool{}
	store := orchestratortest.NewMemStore()
	first := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall, store: store, toolsets: []orchestrator.Toolset{d.toolset()},
		opts:  orchestrator.Options{Approvals: orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}},
		turns: deployTurns})
	run := mustStart(t, first.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}})
	evs := untilEvent(t, first.o, run.ID, 0, orchestrator.EventApprovalRequired)
	id := approvalData(t, evs[len(evs)-1]).ApprovalID
	waitState(t, store, run.ID, orchestrator.RunWaitingApproval)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := first.o.Close(ctx); err != nil {
		t.Fatal(err)
	}
	second := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall, store: store, toolsets: []orchestrator.Toolset{d.toolset()},
		opts:  orchestrator.Options{Approvals: orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}},
		turns: deployTurns[1:]})
	if n, err := second.o.RecoverOrphans(t.Context()); err != nil || n != 0 {
		t.Fatalf("RecoverOrphans = %d, %v: a waiting run is not an orphan", n, err)
	}
	list, err := second.o.Approvals(t.Context(), "u", run.ID)
	if err != nil || len(list) != 1 || list[0].State != orchestrator.ApprovalPending {
		t.Fatalf("after the restart Approvals = %+v, %v", list, err)
	}
	if _, err := second.o.Decide(t.Context(), "u", run.ID, id, orchestrator.ApprovalDecision{Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	all := collect(t, second.o, run.ID, 0)
	assertDense(t, all, 1)
	if f := final(t, all); f.State != orchestrator.RunFinished || f.Answer != "Done." {
		t.Fatalf("final = %+v", f)
	}
	if c := d.called(); len(c) != 1 {
		t.Fatalf("deploy ran %d times, want once", len(c))
	}
}

// Exactly once: a run whose approved call was marked started, and whose
// process died before the result was stored, is resumed without running
// the call again; the model is told the outcome is unknown.
func TestApprovedCallStartedIsNotRunAgain(t *testing.T) {
	d := &deployTool{}
	store := orchestratortest.NewMemStore()
	first := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall, store: store, toolsets: []orchestrator.Toolset{d.toolset()},
		opts:  orchestrator.Options{Approvals: orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}},
		turns: deployTurns})
	run := mustStart(t, first.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}})
	evs := untilEvent(t, first.o, run.ID, 0, orchestrator.EventApprovalRequired)
	id := approvalData(t, evs[len(evs)-1]).ApprovalID
	waitState(t, store, run.ID, orchestrator.RunWaitingApproval)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := first.o.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// What a process that died inside the call leaves: the approval
	// decided and marked started, the run claimed and running.
	a, _ := store.GetApproval(t.Context(), run.ID, id)
	a.State, a.Decision = orchestrator.ApprovalApproved, &orchestrator.ApprovalDecision{Decision: "approve", By: "u"}
	if err := store.UpdateApproval(t.Context(), a, orchestrator.ApprovalPending, ""); err != nil {
		t.Fatal(err)
	}
	a.Execution = orchestrator.ExecutionStarted
	if err := store.UpdateApproval(t.Context(), a, orchestrator.ApprovalApproved, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := store.ClaimWaiting(t.Context(), run.ID, "dead-instance"); err != nil {
		t.Fatal(err)
	}
	second := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall, store: store, toolsets: []orchestrator.Toolset{d.toolset()},
		opts:  orchestrator.Options{ResumeInterrupted: true, Approvals: orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}},
		turns: deployTurns[1:]})
	if n, err := second.o.RecoverOrphans(t.Context()); err != nil || n != 1 {
		t.Fatalf("RecoverOrphans = %d, %v", n, err)
	}
	all := collect(t, second.o, run.ID, 0)
	if f := final(t, all); f.State != orchestrator.RunFinished {
		t.Fatalf("final = %+v", f)
	}
	if c := d.called(); len(c) != 0 {
		t.Fatalf("a call marked started ran again: %v", c)
	}
	reqs := second.model.Requests()
	last := reqs[len(reqs)-1].Messages
	if m := last[len(last)-1]; !strings.Contains(m.Content, "unknown") {
		t.Fatalf("the model read %+v, want the unknown outcome", m)
	}
}

// A process that dies after it asked for approval but before it stored
// the wait leaves a running run with its round and pending approvals; the
// reaper makes it wait again, and a decision then finishes it.
func TestRunDiedWhileSuspendingWaitsAgain(t *testing.T) {
	d := &deployTool{}
	store := orchestratortest.NewMemStore()
	first := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall, store: store, toolsets: []orchestrator.Toolset{d.toolset()},
		opts: orchestrator.Options{Approvals: orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}}, turns: deployTurns})
	run := mustStart(t, first.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}})
	evs := untilEvent(t, first.o, run.ID, 0, orchestrator.EventApprovalRequired)
	id := approvalData(t, evs[len(evs)-1]).ApprovalID
	stored := waitState(t, store, run.ID, orchestrator.RunWaitingApproval)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := first.o.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// What the dead process left: the round stored, the state not.
	if _, err := store.ClaimWaiting(t.Context(), run.ID, stored.Owner); err != nil {
		t.Fatal(err)
	}
	second := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall, store: store, toolsets: []orchestrator.Toolset{d.toolset()},
		opts: orchestrator.Options{Approvals: orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}}, turns: deployTurns[1:]})
	if _, err := second.o.RecoverOrphans(t.Context()); err != nil {
		t.Fatal(err)
	}
	if r, _ := store.GetRun(t.Context(), run.ID); r.State != orchestrator.RunWaitingApproval {
		t.Fatalf("after recovery the run is %s, want waiting_approval", r.State)
	}
	if _, err := second.o.Decide(t.Context(), "u", run.ID, id, orchestrator.ApprovalDecision{Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	if f := final(t, collect(t, second.o, run.ID, 0)); f.State != orchestrator.RunFinished {
		t.Fatalf("final = %+v", f)
	}
	if c := d.called(); len(c) != 1 {
		t.Fatalf("deploy ran %d times, want once", len(c))
	}
}

// holdWait holds the storing of a run's wait (SuspendRun) until released.
// asked is the approvals of the held wait.
type holdWait struct {
	orchestrator.Store
	holding chan struct{}
	release chan struct{}
	asked   []*orchestrator.Approval
}

func (s *holdWait) SuspendRun(ctx context.Context, r *orchestrator.Run, approvals []*orchestrator.Approval, tail orchestrator.RunTail) error {
	s.asked = approvals
	s.holding <- struct{}{}
	<-s.release
	return s.Store.SuspendRun(ctx, r, approvals, tail)
}

// The wait, its approvals and their approval_required events are stored
// in one write and seen together: while it is stored, GetRun says
// running, no approval_required is visible, and Settled waits; once it
// is, Settled returns the run as GetRun and the store then say. This is
// what a front-end answering "waiting_approval" relies on.
func TestSettledWaitsForTheStoredWait(t *testing.T) {
	d := &deployTool{}
	store := &holdWait{Store: orchestratortest.NewMemStore(), holding: make(chan struct{}, 1), release: make(chan struct{})}
	h := newHarness(t, harnessOpts{store: store, mode: orchestrator.ModeFunctionCall, toolsets: []orchestrator.Toolset{d.toolset()},
		opts: orchestrator.Options{Approvals: orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}}, turns: deployTurns})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}})
	<-store.holding // the wait is being stored, and is not yet
	evs, err := store.ListEvents(t.Context(), run.ID, 0, 0)
	if err != nil {
		t.Fatalf("ListEvents: %v", err)
	}
	for _, ev := range evs {
		if ev.Type == orchestrator.EventApprovalRequired {
			t.Fatalf("approval_required stored before the wait: %+v", ev)
		}
	}
	if aps, err := store.ListApprovals(t.Context(), run.ID); err != nil || len(aps) != 0 {
		t.Fatalf("approvals stored before the wait: %+v, %v", aps, err)
	}
	type settled struct {
		r   *orchestrator.Run
		err error
	}
	done := make(chan settled, 1)
	go func() {
		r, err := h.o.Settled(t.Context(), "u", run.ID)
		done <- settled{r, err}
	}()
	if r, err := h.o.GetRun(t.Context(), "u", run.ID); err != nil || r.State != orchestrator.RunRunning {
		t.Fatalf("GetRun while the wait is stored = %+v, %v; want running", r, err)
	}
	select {
	case s := <-done:
		t.Fatalf("Settled returned before the wait was stored: %+v, %v", s.r, s.err)
	default:
	}
	close(store.release)
	s := <-done
	if s.err != nil || s.r.State != orchestrator.RunWaitingApproval || s.r.Pending == nil {
		t.Fatalf("Settled = %+v, %v; want waiting_approval with its round", s.r, s.err)
	}
	untilEvent(t, h.o, run.ID, 0, orchestrator.EventApprovalRequired)
	if aps, err := store.ListApprovals(t.Context(), run.ID); err != nil || len(aps) != 1 || aps[0].State != orchestrator.ApprovalPending {
		t.Fatalf("approvals after the wait = %+v, %v; want the one pending", aps, err)
	}
	if r, err := store.GetRun(t.Context(), run.ID); err != nil || r.State != orchestrator.RunWaitingApproval {
		t.Fatalf("stored run after Settled = %+v, %v", r, err)
	}
	if _, err := h.o.Settled(t.Context(), "mallory", run.ID); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Fatalf("another user's Settled: %v, want ErrNotFound", err)
	}
	// Decided: it resumes, and Settled follows it to its end.
	if _, err := h.o.Decide(t.Context(), "u", run.ID, s.r.Pending.Calls[0].ApprovalID, orchestrator.ApprovalDecision{Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	if r, err := h.o.Settled(t.Context(), "u", run.ID); err != nil || r.State != orchestrator.RunFinished {
		t.Fatalf("Settled after the decision = %+v, %v; want finished", r, err)
	}
}

// approvalLists counts the store's ListApprovals.
type approvalLists struct {
	orchestrator.Store
	n atomic.Int32
}

func (s *approvalLists) ListApprovals(ctx context.Context, runID string) ([]*orchestrator.Approval, error) {
	s.n.Add(1)
	return s.Store.ListApprovals(ctx, runID)
}

// A run started here that has not asked for an approval has none: its
// approvals are answered without reading the store (an A2A task's every
// snapshot of a running task asks). Once it asks, the store answers.
func TestApprovalsOfARunThatHasNotAsked(t *testing.T) {
	d := &deployTool{}
	store := &approvalLists{Store: orchestratortest.NewMemStore()}
	release := make(chan struct{})
	first := call("deploy", `{"env":"prod"}`)
	first.Wait = release
	h := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall, store: store, toolsets: []orchestrator.Toolset{d.toolset()},
		opts: orchestrator.Options{Approvals: orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}}, turns: []orchestratortest.Turn{first, {Content: "Done."}}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}})
	list, err := h.o.Approvals(t.Context(), "u", run.ID)
	if err != nil || list == nil || len(list) != 0 || store.n.Load() != 0 {
		t.Fatalf("Approvals of a run that has not asked = %#v, %v after %d reads of the store; want an empty list and none", list, err, store.n.Load())
	}
	if _, err := h.o.Approvals(t.Context(), "mallory", run.ID); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Fatalf("another user's Approvals: %v, want ErrNotFound", err)
	}
	close(release)
	evs := untilEvent(t, h.o, run.ID, 0, orchestrator.EventApprovalRequired)
	a := approvalData(t, evs[len(evs)-1])
	list, err = h.o.Approvals(t.Context(), "u", run.ID)
	if err != nil || len(list) != 1 || list[0].ID != a.ApprovalID || list[0].State != orchestrator.ApprovalPending || store.n.Load() == 0 {
		t.Fatalf("Approvals once asked = %+v, %v after %d reads; want the pending one, from the store", list, err, store.n.Load())
	}
}
