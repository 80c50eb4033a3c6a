package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// contributor is a PromptContributor toolset, as the skills toolset is:
// it writes a section saying what it saw, hides write_file, and offers its
// own tool "extra" once read_file has been called in the session.
type contributor struct {
	mu   sync.Mutex
	seen []orchestrator.PromptContext
	// found records what Lookup answered for read_file and for an
	// unknown name.
	found []bool
}

func (c *contributor) Name() string { return "contrib" }

func (c *contributor) Tools(context.Context, string) ([]orchestrator.Tool, error) { return nil, nil }

func (c *contributor) ContributePrompt(_ context.Context, in orchestrator.PromptContext) (orchestrator.Contribution, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = append(c.seen, in)
	if in.Lookup != nil {
		_, ok := in.Lookup("read_file")
		_, unknown := in.Lookup("no_such_tool")
		c.found = append(c.found, ok, unknown)
	}
	var names []string
	for _, pc := range in.Calls {
		names = append(names, fmt.Sprintf("%s@turn%d", pc.Name, pc.Turn))
	}
	out := orchestrator.Contribution{
		Prompt: fmt.Sprintf("### Contributed: turn %d, calls [%s]", in.Turn, strings.Join(names, " ")),
		Hide:   []string{"write_file"},
	}
	if slices.ContainsFunc(in.Calls, func(pc orchestrator.PastCall) bool { return pc.Name == "read_file" }) {
		out.Tools = []orchestrator.Tool{orchestratortest.NewTool("extra", true, func(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
			return &orchestrator.ToolResult{Content: "extra"}, nil
		})}
	}
	return out, nil
}

func (c *contributor) contexts() []orchestrator.PromptContext {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.seen)
}

// failingContributor's contribution is unavailable.
type failingContributor struct{ orchestrator.StaticToolset }

func (failingContributor) ContributePrompt(context.Context, orchestrator.PromptContext) (orchestrator.Contribution, error) {
	return orchestrator.Contribution{Prompt: "### never shown"}, errors.New("skills store down")
}

// workspace summarises a user's workspace; err, when set, fails it.
type workspace struct{ err error }

func (w workspace) Summary(_ context.Context, userID string) (string, error) {
	if w.err != nil {
		return "", w.err
	}
	return "workspace of " + userID + ": 3 files", nil
}

func offered(req *orchestrator.ModelRequest) []string {
	var out []string
	for _, s := range req.Tools {
		out = append(out, s.Name)
	}
	slices.Sort(out)
	return out
}

// Before each model call every contributor is asked, with the history the
// call sees: its section joins the system prompt, its hidden tools are
// not offered, its own tools are; a failing one is left out and the run
// goes on.
func TestPromptContributionsFollowTheSession(t *testing.T) {
	c := &contributor{}
	h := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall,
		opts:     orchestrator.Options{Workspace: workspace{}},
		toolsets: []orchestrator.Toolset{c, failingContributor{orchestrator.StaticToolset{SetName: "broken"}}},
		turns:    []orchestratortest.Turn{call("read_file", `{"path":"a"}`), {Content: "first done"}, {Content: "second done"}}})
	first := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "one", ToolNames: []string{"read_file", "write_file"},
		PreloadSkills: []string{"review"}, Language: "en"})
	if f := final(t, collect(t, h.o, first.ID, 0)); f.State != orchestrator.RunFinished || f.Answer != "first done" {
		t.Fatalf("first run = %+v", f)
	}
	second := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "two", SessionID: first.SessionID, ToolNames: []string{"read_file", "write_file"}})
	collect(t, h.o, second.ID, 0)

	reqs := h.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls; want 3", len(reqs))
	}
	wantSections := []string{
		"### Contributed: turn 0, calls []",
		"### Contributed: turn 0, calls [read_file@turn0]",
		"### Contributed: turn 1, calls [read_file@turn0]",
	}
	for i, r := range reqs {
		sys := r.Messages[0].Content
		if !strings.Contains(sys, wantSections[i]) {
			t.Errorf("call %d's system prompt lacks %q:\n%s", i, wantSections[i], sys)
		}
		if strings.Contains(sys, "never shown") {
			t.Errorf("call %d's system prompt holds a failed contribution", i)
		}
		if !strings.Contains(sys, "workspace of u: 3 files") {
			t.Errorf("call %d's system prompt lacks the workspace summary", i)
		}
	}
	if got := offered(reqs[0]); slices.Contains(got, "write_file") || !slices.Contains(got, "read_file") || slices.Contains(got, "extra") {
		t.Errorf("first call offers %v; want read_file, not the hidden write_file nor extra", got)
	}
	if got := offered(reqs[1]); !slices.Contains(got, "extra") || slices.Contains(got, "write_file") {
		t.Errorf("second call offers %v; want extra once read_file was called", got)
	}
	ctxs := c.contexts()
	if len(ctxs) != 3 {
		t.Fatalf("asked %d times; want once per model call", len(ctxs))
	}
	in := ctxs[0]
	if in.UserID != "u" || in.SessionID != first.SessionID || in.Language != "en" || !slices.Equal(in.Preload, []string{"review"}) ||
		!slices.Contains(in.Selected, "read_file") || !slices.Contains(in.Selected, "write_file") {
		t.Errorf("PromptContext = %+v", in)
	}
	if pc := ctxs[1].Calls; len(pc) != 1 || string(pc[0].Arguments) != `{"path":"a"}` {
		t.Errorf("past calls = %+v", pc)
	}
	c.mu.Lock()
	found := slices.Clone(c.found)
	c.mu.Unlock()
	if len(found) != 2*len(ctxs) {
		t.Fatalf("Lookup offered to %d of %d contributions", len(found)/2, len(ctxs))
	}
	for i := 0; i < len(found); i += 2 {
		if !found[i] || found[i+1] {
			t.Errorf("Lookup answered read_file %v, an unknown name %v; want true, false", found[i], found[i+1])
		}
	}
}

// The prompt preview is what a run would get: the contributions asked
// once with no history, the user's workspace; a workspace that cannot be
// read leaves its part out and fails nothing. Bad requests are refused.
func TestSystemPromptPreview(t *testing.T) {
	c := &contributor{}
	h := newHarness(t, harnessOpts{opts: orchestrator.Options{Workspace: workspace{}}, toolsets: []orchestrator.Toolset{c}})
	ctx := t.Context()
	p, err := h.o.SystemPrompt(ctx, orchestrator.PromptRequest{UserID: "u", ToolNames: []string{"read_file"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p, "### Contributed: turn 0, calls []") || !strings.Contains(p, "workspace of u: 3 files") || !strings.Contains(p, "read_file") {
		t.Errorf("preview:\n%s", p)
	}
	if n := len(c.contexts()); n != 1 {
		t.Errorf("contributions asked %d times for one preview", n)
	}
	zh, err := h.o.SystemPrompt(ctx, orchestrator.PromptRequest{UserID: "u", Language: "zh"})
	if err != nil || zh == p {
		t.Errorf("zh preview = same as en (%v)", err)
	}
	for _, bad := range []struct {
		req  orchestrator.PromptRequest
		want error
	}{
		{orchestrator.PromptRequest{}, orchestrator.ErrInvalidArgument},
		{orchestrator.PromptRequest{UserID: "u", Language: "fr"}, orchestrator.ErrInvalidArgument},
		{orchestrator.PromptRequest{UserID: "u", ToolCallMode: "xml"}, orchestrator.ErrInvalidArgument},
		{orchestrator.PromptRequest{UserID: "u", ToolNames: []string{"no_such_tool"}}, orchestrator.ErrToolNotFound},
	} {
		if _, err := h.o.SystemPrompt(ctx, bad.req); !errors.Is(err, bad.want) {
			t.Errorf("SystemPrompt(%+v) = %v; want %v", bad.req, err, bad.want)
		}
	}

	broken := newHarness(t, harnessOpts{opts: orchestrator.Options{Workspace: workspace{err: errors.New("disk gone")}}, turns: []orchestratortest.Turn{{Content: "ok"}}})
	p, err = broken.o.SystemPrompt(ctx, orchestrator.PromptRequest{UserID: "u"})
	if err != nil || strings.Contains(p, "3 files") {
		t.Fatalf("preview with a broken workspace = %v:\n%s", err, p)
	}
	run := mustStart(t, broken.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	if f := final(t, collect(t, broken.o, run.ID, 0)); f.State != orchestrator.RunFinished {
		t.Errorf("a run with a broken workspace ended %s", f.State)
	}
}
