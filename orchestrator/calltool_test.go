package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// logStore hands every tool log to a channel.
type logStore struct {
	orchestrator.Store
	logs chan orchestrator.ToolLog
}

func (s *logStore) AppendToolLog(ctx context.Context, l *orchestrator.ToolLog) error {
	s.logs <- *l
	return s.Store.AppendToolLog(ctx, l)
}

func callToolHarness(t *testing.T) (*harness, *logStore) {
	t.Helper()
	st := &logStore{Store: orchestratortest.NewMemStore(), logs: make(chan orchestrator.ToolLog, 16)}
	echo := orchestratortest.NewTool("srv@echo", true, func(_ context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		inv.Output("stdout", "working")
		inv.Output("stdout", "") // empty deltas are dropped
		inv.Emit("a2a_status", map[string]string{"ignored": "yes"})
		return &orchestrator.ToolResult{Content: "echo " + string(inv.Arguments) + " for " + inv.UserID}, nil
	})
	fails := orchestratortest.NewTool("srv@fails", false, func(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		return nil, errors.New("disk on fire")
	})
	panics := orchestratortest.NewTool("srv@panics", false, func(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		panic("boom")
	})
	blocks := orchestratortest.NewTool("srv@blocks", true, func(ctx context.Context, _ *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	h := newHarness(t, harnessOpts{store: st, toolsets: []orchestrator.Toolset{
		orchestrator.StaticToolset{SetName: "test", List: []orchestrator.Tool{echo, fails, panics, blocks}},
	}})
	return h, st
}

func nextLog(t *testing.T, st *logStore) orchestrator.ToolLog {
	t.Helper()
	select {
	case l := <-st.logs:
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("no tool log written")
		return orchestrator.ToolLog{}
	}
}

func TestCallToolByWireAndCanonicalName(t *testing.T) {
	h, st := callToolHarness(t)
	wire := h.o.Registry().WireName("srv@echo")
	if wire != "srv__echo" {
		t.Fatalf("WireName = %q", wire)
	}
	for _, name := range []string{wire, "srv@echo"} {
		var mu sync.Mutex
		var deltas []string
		res, err := h.o.CallTool(t.Context(), "alice", name, json.RawMessage(`{"x":1}`), func(stream, delta string) {
			mu.Lock()
			defer mu.Unlock()
			deltas = append(deltas, stream+":"+delta)
		})
		if err != nil {
			t.Fatalf("CallTool(%s): %v", name, err)
		}
		if res.IsError || res.Content != `echo {"x":1} for alice` {
			t.Fatalf("CallTool(%s) = %+v", name, res)
		}
		if len(deltas) != 1 || deltas[0] != "stdout:working" {
			t.Fatalf("deltas = %q", deltas)
		}
		l := nextLog(t, st)
		if l.Tool != "srv@echo" || l.UserID != "alice" || l.RunID != "" || l.CallID == "" || l.IsError {
			t.Fatalf("tool log = %+v", l)
		}
	}
}

func TestCallToolFailuresAreResults(t *testing.T) {
	h, st := callToolHarness(t)
	res, err := h.o.CallTool(t.Context(), "alice", "srv__fails", nil, nil)
	if err != nil || !res.IsError || res.Content != "disk on fire" {
		t.Fatalf("failing tool: %+v, %v", res, err)
	}
	if l := nextLog(t, st); !l.IsError || string(l.Arguments) != "{}" {
		t.Fatalf("tool log = %+v", l)
	}
	res, err = h.o.CallTool(t.Context(), "alice", "srv__panics", json.RawMessage(`{}`), nil)
	if err != nil || !res.IsError || !strings.Contains(res.Content, "internal error") {
		t.Fatalf("panicking tool: %+v, %v", res, err)
	}
	nextLog(t, st)
}

func TestCallToolRefusals(t *testing.T) {
	h, _ := callToolHarness(t)
	for _, tc := range []struct {
		user, name, args string
		want             error
	}{
		{"alice", "srv__nope", `{}`, orchestrator.ErrToolNotFound},
		{"alice", orchestrator.FinalResponseTool, `{}`, orchestrator.ErrToolNotFound},
		{"alice", orchestrator.PlanTool, `{"steps":[{"title":"a","status":"pending"}]}`, orchestrator.ErrToolNotFound},
		{"alice", "srv__echo", `[1]`, orchestrator.ErrInvalidArgument},
		{"alice", "srv__echo", `{`, orchestrator.ErrInvalidArgument},
		{"", "srv__echo", `{}`, orchestrator.ErrInvalidArgument},
		{"a/b", "srv__echo", `{}`, orchestrator.ErrInvalidArgument},
	} {
		_, err := h.o.CallTool(t.Context(), tc.user, tc.name, json.RawMessage(tc.args), nil)
		if !errors.Is(err, tc.want) {
			t.Errorf("CallTool(%q, %q, %s) = %v, want %v", tc.user, tc.name, tc.args, err, tc.want)
		}
	}
}

func TestCallToolCancelled(t *testing.T) {
	h, _ := callToolHarness(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := h.o.CallTool(ctx, "alice", "srv__blocks", nil, nil)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
}

func TestCallToolAfterClose(t *testing.T) {
	h, _ := callToolHarness(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := h.o.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.o.CallTool(t.Context(), "alice", "srv__echo", nil, nil); !errors.Is(err, orchestrator.ErrUnavailable) {
		t.Fatalf("after Close: %v", err)
	}
}

// heldLogs holds every tool log until release is closed.
type heldLogs struct {
	orchestrator.Store
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *heldLogs) AppendToolLog(ctx context.Context, l *orchestrator.ToolLog) error {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	return s.Store.AppendToolLog(ctx, l)
}

// A user's data deleted right after their run ended takes the run's tool
// log too, though it was still on its way to the store.
func TestDeleteUserDataWaitsForToolLogs(t *testing.T) {
	st := &heldLogs{Store: orchestratortest.NewMemStore(), entered: make(chan struct{}), release: make(chan struct{})}
	probe := orchestrator.StaticToolset{SetName: "probe", List: []orchestrator.Tool{orchestratortest.NewTool("probe", true,
		func(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
			return &orchestrator.ToolResult{Content: "probed"}, nil
		})}}
	h := newHarness(t, harnessOpts{store: st, toolsets: []orchestrator.Toolset{probe}, turns: []orchestratortest.Turn{
		{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("probe", `{}`)}},
		{Content: "done"},
	}})
	var released sync.Once
	release := func() { released.Do(func() { close(st.release) }) }
	t.Cleanup(release) // before the harness's Close, which writes the held log
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "gone", Question: "q", ToolNames: []string{"probe"}})
	if f := final(t, collect(t, h.o, run.ID, 0)); f.Answer != "done" {
		t.Fatalf("final = %+v", f)
	}
	<-st.entered // the run ended; its tool log is being written
	// DeleteUserData waits for that write: with a context that is done,
	// it gives up before deleting anything.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := h.o.DeleteUserData(ctx, "gone"); !errors.Is(err, context.Canceled) {
		t.Fatalf("DeleteUserData while the run's tool log was held: %v; want it to wait (and give up with its context)", err)
	}
	release()
	if err := h.o.DeleteUserData(t.Context(), "gone"); err != nil {
		t.Fatal(err)
	}
	if stats, err := st.ToolCallStats(t.Context(), orchestrator.ToolLogFilter{UserID: "gone"}); err != nil || len(stats) != 0 {
		t.Fatalf("tool logs of the deleted user: %d (%v); want none", len(stats), err)
	}
}

// Tool logs wait to be stored with others (Options.ToolLogDelay), yet the
// readers of a run that just ended see them: ToolCallStats (what the
// monitor aggregates) counts its call, and deleting its session removes
// its log. With an hour's delay, nothing but those readers' flush stores
// the log before Close.
func TestToolLogReadersSeeLogsStillWaiting(t *testing.T) {
	st := orchestratortest.NewMemStore()
	probe := orchestrator.StaticToolset{SetName: "probe", List: []orchestrator.Tool{orchestratortest.NewTool("probe", true,
		func(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
			return &orchestrator.ToolResult{Content: "probed"}, nil
		})}}
	turns := []orchestratortest.Turn{{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("probe", `{}`)}}, {Content: "done"}}
	h := newHarness(t, harnessOpts{store: st, toolsets: []orchestrator.Toolset{probe}, opts: orchestrator.Options{ToolLogDelay: orchestrator.DelayOf(time.Hour)},
		turns: append(turns, turns...)})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u1", Question: "q", ToolNames: []string{"probe"}})
	if f := final(t, collect(t, h.o, run.ID, 0)); f.Answer != "done" {
		t.Fatalf("final = %+v", f)
	}
	calls, err := h.o.ToolCallStats(t.Context(), orchestrator.ToolLogFilter{UserID: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || calls[0].Tool != "probe" {
		t.Fatalf("tool calls right after the run = %+v; want probe called once", calls)
	}

	// A second run on a new session; its session is deleted as soon as
	// it ended, and its log goes with it.
	run2 := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u1", Question: "q", ToolNames: []string{"probe"}})
	if f := final(t, collect(t, h.o, run2.ID, 0)); f.Answer != "done" {
		t.Fatalf("final = %+v", f)
	}
	if err := h.o.DeleteSession(t.Context(), "u1", run2.SessionID); err != nil {
		t.Fatal(err)
	}
	// The usage stores whatever still waits: the deleted run's log must
	// not be among it.
	calls, err = h.o.ToolCallStats(t.Context(), orchestrator.ToolLogFilter{UserID: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 {
		t.Fatalf("tool calls after deleting the second run's session = %+v; want only the first run's call", calls)
	}
}
