package a2atools_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/adapters/a2atools"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

func toolNamed(t *testing.T, s *a2atools.Set, name string) orchestrator.Tool {
	t.Helper()
	tools, _ := s.Tools(t.Context(), "u")
	for _, tl := range tools {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func newSet(t *testing.T, svcs ...a2atools.Service) *a2atools.Set {
	s, err := a2atools.New(svcs, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestCallGoSDKPeer(t *testing.T) {
	url := startGoEcho(t)
	s := newSet(t, a2atools.Service{Name: "goecho", URL: url})
	rec := &recorder{}
	res, err := toolNamed(t, s, "a2a@goecho").Call(t.Context(), invocation(`{"message":"ping"}`, rec, nil))
	if err != nil || res.IsError || !strings.HasPrefix(res.Content, "echo: ping") {
		t.Fatalf("result %+v, %v", res, err)
	}
	types := rec.types()
	if types[0] != "a2a_request" || !slices.Contains(types, "a2a_status") || types[len(types)-1] != "a2a_result" {
		t.Fatalf("events %v", types)
	}
}

func TestCallWunderPeerBothVersions(t *testing.T) {
	peer := startWunder(t, nil)
	s := newSet(t,
		a2atools.Service{Name: "w10", URL: peer.url},                          // 1.0 from the card
		a2atools.Service{Name: "w03", URL: peer.url + "/a2a", Version: "0.3"}, // 0.3, no card
	)
	for _, name := range []string{"a2a@w10", "a2a@w03"} {
		rec := &recorder{}
		res, err := toolNamed(t, s, name).Call(t.Context(), invocation(`{"message":"hello `+name+`"}`, rec, nil))
		if err != nil || res.IsError || !strings.HasPrefix(res.Content, "echo: hello "+name) {
			t.Fatalf("%s: %+v, %v", name, res, err)
		}
	}
}

func TestCancelReachesPeer(t *testing.T) {
	peer := startWunder(t, nil)
	s := newSet(t, a2atools.Service{Name: "w", URL: peer.url})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan *orchestrator.ToolResult, 1)
	go func() {
		res, _ := toolNamed(t, s, "a2a@w").Call(ctx, invocation(`{"message":"hold please"}`, &recorder{}, nil))
		done <- res
	}()
	<-peer.model.Held()
	cancel()
	res := <-done
	if !res.IsError || !strings.Contains(res.Content, "cancelled") {
		t.Fatalf("result %+v", res)
	}
	runs, err := peer.o.ListRuns(t.Context(), orchestrator.RunFilter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("peer runs %v %v", runs, err)
	}
	for _, err := range peer.o.Events(t.Context(), "", runs[0].ID, 0) {
		if err != nil {
			t.Fatal(err)
		}
	}
	r, _ := peer.o.GetRun(t.Context(), "", runs[0].ID)
	if r.State != orchestrator.RunCancelled {
		t.Fatalf("peer task state %s, want cancelled", r.State)
	}
}

// TestRecursionGuard: wunder B offers a2a@self (itself) with max_depth 1.
// A call from depth 0 reaches B at depth 1, where B's model calling
// a2a@self is refused with an error result the model reads.
func TestRecursionGuard(t *testing.T) {
	var selfURL string
	selfSet := &lazySet{}
	script := orchestratortest.NewScriptedModel(
		orchestratortest.Turn{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("a2a@self", `{"message":"go deeper"}`)}},
		orchestratortest.Turn{Content: "stopped"},
	)
	peer := startWunder(t, script, selfSet)
	selfURL = peer.url
	selfSet.set = newSet(t, a2atools.Service{Name: "self", URL: selfURL, MaxDepth: 1})

	s := newSet(t, a2atools.Service{Name: "b", URL: peer.url, MaxDepth: 3})
	res, err := toolNamed(t, s, "a2a@b").Call(t.Context(), invocation(`{"message":"start"}`, &recorder{}, nil))
	if err != nil || res.IsError || !strings.HasPrefix(res.Content, "stopped") {
		t.Fatalf("result %+v %v", res, err)
	}
	runs, _ := peer.o.ListRuns(t.Context(), orchestrator.RunFilter{})
	if len(runs) != 1 {
		t.Fatalf("B ran %d tasks, want 1 (the guard stops the second)", len(runs))
	}
	var refused bool
	for ev, err := range peer.o.Events(t.Context(), "", runs[0].ID, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == orchestrator.EventToolResult {
			var d orchestrator.ToolResultData
			_ = json.Unmarshal(ev.Data, &d)
			refused = d.IsError && strings.Contains(d.Content, "max_depth is 1")
		}
	}
	if !refused {
		t.Fatal("a2a@self at depth 1 was not refused")
	}
	// Directly: depth 3 of max 3 is refused before any network call.
	res, _ = toolNamed(t, s, "a2a@b").Call(t.Context(), invocation(`{"message":"x"}`, &recorder{}, map[string]string{"wunder.a2a.depth": "3"}))
	if !res.IsError || !strings.Contains(res.Content, "max_depth is 3") {
		t.Fatalf("depth 3: %+v", res)
	}
}

// lazySet is a toolset whose tools are set after the server starts (the
// tool needs the server's own URL).
type lazySet struct{ set *a2atools.Set }

func (l *lazySet) Name() string { return "a2a" }
func (l *lazySet) Tools(ctx context.Context, u string) ([]orchestrator.Tool, error) {
	if l.set == nil {
		return []orchestrator.Tool{stubTool{}}, nil
	}
	return l.set.Tools(ctx, u)
}

type stubTool struct{}

func (stubTool) Spec() orchestrator.ToolSpec {
	return orchestrator.ToolSpec{Name: "a2a@self", Description: "stub", InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (stubTool) Call(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
	return orchestrator.ErrorResult("not ready"), nil
}

func TestBackgroundAndWait(t *testing.T) {
	url := startGoEcho(t)
	peer := startWunder(t, nil)
	s := newSet(t, a2atools.Service{Name: "g", URL: url}, a2atools.Service{Name: "w", URL: peer.url})
	var handles []string
	for _, name := range []string{"a2a@g", "a2a@w"} {
		res, err := toolNamed(t, s, name).Call(t.Context(), invocation(`{"message":"par `+name+`","background":true}`, &recorder{}, nil))
		if err != nil || res.IsError {
			t.Fatalf("%s: %+v %v", name, res, err)
		}
		handles = append(handles, res.Data.(map[string]any)["handle"].(string))
	}
	obs, _ := toolNamed(t, s, "a2a_observe").Call(t.Context(), invocation(`{}`, &recorder{}, nil))
	if !strings.Contains(obs.Content, handles[0]) {
		t.Fatalf("observe: %s", obs.Content)
	}
	start := time.Now()
	res, _ := toolNamed(t, s, "a2a_wait").Call(t.Context(), invocation(`{"timeout_s":30}`, &recorder{}, nil))
	t.Logf("a2a_wait took %s", time.Since(start))
	if !strings.Contains(res.Content, "echo: par a2a@g") || !strings.Contains(res.Content, "echo: par a2a@w") {
		t.Fatalf("wait: %s", res.Content)
	}
	other := invocation(`{}`, &recorder{}, nil)
	other.RunID = "another_run"
	if res, _ := toolNamed(t, s, "a2a_observe").Call(t.Context(), other); !strings.Contains(res.Content, "no background") {
		t.Fatalf("another run sees the jobs: %s", res.Content)
	}
}

// TestBackgroundAfterClose: a background call on a closed Set starts no
// goroutine; a2a_wait reports the job as shut down at once.
func TestBackgroundAfterClose(t *testing.T) {
	s := newSet(t, a2atools.Service{Name: "x", URL: "http://127.0.0.1:9"})
	s.Close()
	res, err := toolNamed(t, s, "a2a@x").Call(t.Context(), invocation(`{"message":"late","background":true}`, &recorder{}, nil))
	if err != nil || res.IsError {
		t.Fatalf("background call: %+v %v", res, err)
	}
	wait, _ := toolNamed(t, s, "a2a_wait").Call(t.Context(), invocation(`{"timeout_s":1}`, &recorder{}, nil))
	if !strings.Contains(wait.Content, "failed: the a2a toolset is shut down") {
		t.Fatalf("wait after close: %s", wait.Content)
	}
}
