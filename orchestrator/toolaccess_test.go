package orchestrator_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

func TestToolAccessPermits(t *testing.T) {
	var none *orchestrator.ToolAccess
	rule := &orchestrator.ToolAccess{Allowed: []string{"read_file", "srv@*"}, Denied: []string{"srv@danger"}}
	empty := &orchestrator.ToolAccess{Allowed: []string{}}
	denyOnly := &orchestrator.ToolAccess{Denied: []string{"execute_*"}}
	for _, tt := range []struct {
		a    *orchestrator.ToolAccess
		name string
		want bool
	}{
		{none, "anything", true},
		{rule, "read_file", true},
		{rule, "write_file", false},
		{rule, "srv@echo", true},
		{rule, "srv@danger", false},
		{empty, "read_file", false},
		{denyOnly, "execute_command", false},
		{denyOnly, "read_file", true},
	} {
		if got := tt.a.Permits(tt.name); got != tt.want {
			t.Errorf("%+v.Permits(%q) = %v; want %v", tt.a, tt.name, got, tt.want)
		}
	}
}

type accessFunc func(ctx context.Context, userID string) (*orchestrator.ToolAccess, error)

func (f accessFunc) ToolAccess(ctx context.Context, userID string) (*orchestrator.ToolAccess, error) {
	return f(ctx, userID)
}

type namedTool string

func (n namedTool) Spec() orchestrator.ToolSpec {
	return orchestrator.ToolSpec{Name: string(n), Description: "t", InputSchema: []byte(`{"type":"object"}`)}
}

func (namedTool) Call(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
	return &orchestrator.ToolResult{Content: "ok"}, nil
}

// A forbidden tool is not in the catalog, and selecting it is the error of
// an unknown tool; another user is unaffected.
func TestRegistryHonoursToolAccess(t *testing.T) {
	reg := orchestrator.NewRegistry("", nil, orchestrator.StaticToolset{SetName: "t", List: []orchestrator.Tool{namedTool("read_file"), namedTool("write_file")}})
	reg.SetAccess(accessFunc(func(_ context.Context, u string) (*orchestrator.ToolAccess, error) {
		if u == "alice" {
			return &orchestrator.ToolAccess{Denied: []string{"write_file"}}, nil
		}
		return nil, nil
	}))
	names := func(u string) []string {
		specs, err := reg.Catalog(t.Context(), u)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range specs {
			out = append(out, s.Name)
		}
		return out
	}
	if got := names("alice"); slices.Contains(got, "write_file") || !slices.Contains(got, "read_file") {
		t.Errorf("alice's catalog = %v; want read_file without write_file", got)
	}
	if got := names("bob"); !slices.Contains(got, "write_file") {
		t.Errorf("bob's catalog = %v; want write_file", got)
	}
	if _, err := reg.Select(t.Context(), "alice", []string{"write_file"}, nil); !errors.Is(err, orchestrator.ErrToolNotFound) {
		t.Errorf("Select(write_file) for alice = %v; want ErrToolNotFound", err)
	}
	if _, err := reg.Select(t.Context(), "bob", []string{"write_file"}, nil); err != nil {
		t.Errorf("Select(write_file) for bob = %v", err)
	}
}

// A run reads the user's tool rule once: the rule its tools were selected
// with also decides which of its calls ask for approval.
func TestToolAccessReadOncePerRun(t *testing.T) {
	var reads atomic.Int32
	files := orchestratortest.NewFiles()
	reg := withEdits(files, &deployTool{})
	reg.SetAccess(accessFunc(func(context.Context, string) (*orchestrator.ToolAccess, error) {
		reads.Add(1)
		return &orchestrator.ToolAccess{Approval: []string{"deploy"}}, nil
	}))
	model := orchestratortest.NewScriptedModel(call("read_file", `{"path":"a"}`), call("deploy", `{"env":"x"}`), orchestratortest.Turn{Content: "ok"})
	o := orchestrator.New(orchestratortest.NewMemStore(), orchestratortest.Models{Model: model,
		Settings: orchestrator.ModelSettings{Name: "m", ToolCallMode: orchestrator.ModeFunctionCall, MaxRounds: 4}}, reg, &orchestrator.Options{})
	t.Cleanup(func() { _ = o.Close(context.Background()) })
	run := mustStart(t, o, orchestrator.RunRequest{UserID: "u", Question: "go", ToolNames: []string{"read_file", "deploy"}})
	if !asksApproval(t, o, run.ID) {
		t.Fatal("deploy, named by the user's rule, did not ask for approval")
	}
	if n := reads.Load(); n != 1 {
		t.Fatalf("the tool rule was read %d times in one run; want 1", n)
	}
}
