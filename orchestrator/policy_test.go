package orchestrator_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// allowList is mcp.servers[].allow_tools: server -> the tools it offers;
// resources and prompts are allowed when their server's list names them
// as "resource:URI" or "prompt:NAME", or the list is empty.
type allowList map[string][]string

func (a allowList) AllowsTool(server, tool string) (bool, bool) {
	list, ok := a[server]
	if !ok {
		return false, false
	}
	return len(list) == 0 || slices.Contains(list, tool), true
}

func (a allowList) AllowsResource(server, uri string) (bool, bool) {
	return a.AllowsTool(server, "resource:"+uri)
}

func (a allowList) AllowsPrompt(server, name string) (bool, bool) {
	return a.AllowsTool(server, "prompt:"+name)
}

// admins says who is an admin; err, when set, is every answer.
type admins struct {
	ids []string
	err error
}

func (a admins) IsAdminUser(_ context.Context, id string) (bool, error) {
	return slices.Contains(a.ids, id), a.err
}

// rules is each user's tool access.
type rules map[string]*orchestrator.ToolAccess

func (r rules) ToolAccess(_ context.Context, u string) (*orchestrator.ToolAccess, error) {
	if u == "broken" {
		return nil, errors.New("store down")
	}
	return r[u], nil
}

// policyHarness is an orchestrator whose registry has a built-in tool,
// an MCP tool and a read-only MCP tool, with every rule of the policy set.
func policyHarness(t *testing.T, approvals orchestrator.ApprovalPolicy, po orchestrator.PolicyOptions, access rules) *orchestrator.Orchestrator {
	t.Helper()
	mcpTool := func(name string, readOnly bool) orchestrator.Tool {
		tl := orchestratortest.NewTool(name, readOnly, func(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
			return &orchestrator.ToolResult{Content: "ok"}, nil
		})
		tl.S.Source = orchestrator.SourceMCP
		return tl
	}
	builtin := orchestratortest.NewTool("execute_command", false, func(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		return &orchestrator.ToolResult{Content: "ran"}, nil
	})
	reg := orchestrator.NewRegistry("", nil, orchestrator.StaticToolset{SetName: "t", List: []orchestrator.Tool{
		builtin, mcpTool("fs@read", true), mcpTool("fs@write", false), mcpTool("ops@restart", false)}})
	reg.SetAccess(access)
	reg.SetPolicy(po)
	o := orchestrator.New(orchestratortest.NewMemStore(), orchestratortest.Models{}, reg, &orchestrator.Options{Approvals: approvals})
	t.Cleanup(func() { _ = o.Close(context.Background()) })
	return o
}

// The rules of the one policy point, in order, each with the key that
// states it in its reason; a rule that cannot be read denies.
func TestDecideTool(t *testing.T) {
	po := orchestrator.PolicyOptions{AdminOnly: []string{"ops@*"}, Admins: admins{ids: []string{"root-user"}},
		AllowLists: allowList{"fs": {"read", "write"}, "ops": nil}}
	access := rules{
		"alice": {Denied: []string{"fs@write"}, Approval: []string{"fs@read"}},
		"carol": {Allowed: []string{"fs@*"}},
	}
	o := policyHarness(t, orchestrator.ApprovalPolicy{Tools: []string{"execute_command"}}, po, access)
	spec := func(name string, readOnly bool) *orchestrator.ToolSpec {
		return &orchestrator.ToolSpec{Name: name, Source: orchestrator.SourceMCP, ReadOnly: readOnly}
	}
	for _, c := range []struct {
		name string
		c    orchestrator.ToolCheck
		want orchestrator.Verdict
		key  string // a word the reason must carry
	}{
		{"admin-only, not an admin", orchestrator.ToolCheck{UserID: "bob", Tool: "ops@restart", Spec: spec("ops@restart", false)}, orchestrator.VerdictDeny, "tools.admin_only"},
		{"admin-only, an admin", orchestrator.ToolCheck{UserID: "root-user", Tool: "ops@restart", Spec: spec("ops@restart", false)}, orchestrator.VerdictAllow, ""},
		{"admin-only through the pass-through", orchestrator.ToolCheck{UserID: "bob", Tool: "ops@restart", Server: "ops", Via: orchestrator.ViaPassthrough}, orchestrator.VerdictDeny, "tools.admin_only"},
		{"not in allow_tools (run)", orchestrator.ToolCheck{UserID: "bob", Tool: "fs@delete", Spec: spec("fs@delete", false)}, orchestrator.VerdictDeny, "mcp.servers[fs].allow_tools"},
		{"not in allow_tools (pass-through)", orchestrator.ToolCheck{UserID: "bob", Tool: "fs@delete", Server: "fs", Via: orchestrator.ViaPassthrough}, orchestrator.VerdictDeny, "allow_tools"},
		{"in allow_tools", orchestrator.ToolCheck{UserID: "bob", Tool: "fs@read", Server: "fs", Via: orchestrator.ViaPassthrough}, orchestrator.VerdictAllow, ""},
		{"denied_tools", orchestrator.ToolCheck{UserID: "alice", Tool: "fs@write", Server: "fs", Via: orchestrator.ViaPassthrough}, orchestrator.VerdictDeny, "denied_tools"},
		{"outside allowed_tools", orchestrator.ToolCheck{UserID: "carol", Tool: "execute_command", Spec: &orchestrator.ToolSpec{Name: "execute_command"}}, orchestrator.VerdictDeny, "allowed_tools"},
		{"a rule that cannot be read", orchestrator.ToolCheck{UserID: "broken", Tool: "fs@read", Server: "fs"}, orchestrator.VerdictDeny, "could not be read"},
		{"approvals.tools", orchestrator.ToolCheck{UserID: "bob", Tool: "execute_command", Spec: &orchestrator.ToolSpec{Name: "execute_command"}}, orchestrator.VerdictNeedsApproval, "approvals.tools"},
		{"the user's approval_tools", orchestrator.ToolCheck{UserID: "alice", Tool: "fs@read", Spec: spec("fs@read", true)}, orchestrator.VerdictNeedsApproval, "tool access asks approval"},
		{"suggest mode, a tool that changes things", orchestrator.ToolCheck{UserID: "bob", Tool: "fs@write", Spec: spec("fs@write", false), ApprovalMode: orchestrator.ApprovalSuggest}, orchestrator.VerdictNeedsApproval, "suggest"},
		{"suggest mode, unknown spec (pass-through)", orchestrator.ToolCheck{UserID: "bob", Tool: "fs@read", Server: "fs", ApprovalMode: orchestrator.ApprovalSuggest}, orchestrator.VerdictNeedsApproval, "suggest"},
		{"suggest mode, read-only", orchestrator.ToolCheck{UserID: "bob", Tool: "fs@read", Spec: spec("fs@read", true), ApprovalMode: orchestrator.ApprovalSuggest}, orchestrator.VerdictAllow, ""},
		{"an unconfigured server's name", orchestrator.ToolCheck{UserID: "bob", Tool: "web@get", Spec: spec("web@get", true)}, orchestrator.VerdictAllow, ""},
		{"a resource allow_resources leaves out", orchestrator.ToolCheck{UserID: "bob", Tool: "file:///etc/passwd", Server: "fs", What: orchestrator.CheckResource}, orchestrator.VerdictDeny, "allow_resources"},
		{"a prompt allow_prompts leaves out", orchestrator.ToolCheck{UserID: "bob", Tool: "leak", Server: "fs", What: orchestrator.CheckPrompt}, orchestrator.VerdictDeny, "allow_prompts"},
		{"a resource of a server without a list", orchestrator.ToolCheck{UserID: "alice", Tool: "x://y", Server: "ops", What: orchestrator.CheckResource}, orchestrator.VerdictAllow, ""},
		{"a resource of an unknown server", orchestrator.ToolCheck{UserID: "alice", Tool: "x://y", Server: "nope", What: orchestrator.CheckResource}, orchestrator.VerdictAllow, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := o.DecideTool(t.Context(), c.c)
			if d.Verdict != c.want || !strings.Contains(d.Reason, c.key) {
				t.Fatalf("DecideTool(%+v) = %+v; want %s with a reason naming %q", c.c, d, c.want, c.key)
			}
		})
	}
	// An admin whose roles cannot be read is refused admin-only tools.
	o = policyHarness(t, orchestrator.ApprovalPolicy{}, orchestrator.PolicyOptions{AdminOnly: []string{"ops@*"}, Admins: admins{ids: []string{"root-user"}, err: errors.New("db down")}}, nil)
	if d := o.DecideTool(t.Context(), orchestrator.ToolCheck{UserID: "root-user", Tool: "ops@restart"}); d.Verdict != orchestrator.VerdictDeny {
		t.Fatalf("admin-only with unreadable roles: %+v", d)
	}
	// Without an API key every caller is the local operator.
	o = policyHarness(t, orchestrator.ApprovalPolicy{}, orchestrator.PolicyOptions{AdminOnly: []string{"ops@*"}, EveryoneAdmin: true}, nil)
	if d := o.DecideTool(t.Context(), orchestrator.ToolCheck{UserID: "bob", Tool: "ops@restart"}); !d.Allowed() {
		t.Fatalf("admin-only for the local operator: %+v", d)
	}
}

// What a user sees is what the policy lets them use: the catalog drops
// admin-only tools, tools outside a server's allow-list and tools the
// user's rule denies; selecting one is an unknown tool.
func TestCatalogFollowsThePolicy(t *testing.T) {
	po := orchestrator.PolicyOptions{AdminOnly: []string{"ops@*"}, Admins: admins{ids: []string{"root-user"}}, AllowLists: allowList{"fs": {"read"}}}
	o := policyHarness(t, orchestrator.ApprovalPolicy{}, po, rules{"alice": {Denied: []string{"execute_command"}}})
	names := func(user string) []string {
		specs, err := o.Tools(t.Context(), user)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range specs {
			if !s.AlwaysOn && !s.RunOnly {
				out = append(out, s.Name)
			}
		}
		return out
	}
	if got, want := names("alice"), []string{"fs@read"}; !slices.Equal(got, want) {
		t.Errorf("alice sees %v, want %v", got, want)
	}
	if got, want := names("root-user"), []string{"execute_command", "fs@read", "ops@restart"}; !slices.Equal(got, want) {
		t.Errorf("an admin sees %v, want %v", got, want)
	}
	if _, err := o.CallTool(t.Context(), "alice", "fs@write", nil, nil); !errors.Is(err, orchestrator.ErrToolNotFound) {
		t.Errorf("CallTool(fs@write) outside allow_tools = %v, want ErrToolNotFound", err)
	}
}

// A direct call (the /wunder/mcp catalog) of a tool that waits for a
// person is refused, since it cannot wait, and the refusal is audited.
func TestCallToolNeedingApprovalIsRefusedAndAudited(t *testing.T) {
	o := policyHarness(t, orchestrator.ApprovalPolicy{Tools: []string{"execute_command"}}, orchestrator.PolicyOptions{}, nil)
	ctx := orchestrator.WithFrontEnd(t.Context(), "mcp")
	_, err := o.CallTool(ctx, "bob", "execute_command", []byte(`{}`), nil)
	if !errors.Is(err, orchestrator.ErrPermissionDenied) || !strings.Contains(err.Error(), "approval") {
		t.Fatalf("CallTool of a tool needing approval = %v", err)
	}
	if _, err := o.CallTool(ctx, "bob", "fs@read", []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	recs, err := o.Audit(t.Context(), orchestrator.AuditFilter{UserID: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("audit = %+v, want 2 records", recs)
	}
	denied, allowed := recs[1], recs[0] // newest first
	if denied.Outcome != orchestrator.OutcomeDenied || denied.Tool != "execute_command" || denied.Via != orchestrator.ViaCatalog ||
		denied.FrontEnd != "mcp" || !strings.Contains(denied.Reason, "approvals.tools") {
		t.Errorf("the refusal's record = %+v", denied)
	}
	if allowed.Outcome != orchestrator.OutcomeAllowed || allowed.Tool != "fs@read" || allowed.Via != orchestrator.ViaCatalog {
		t.Errorf("the allowed call's record = %+v", allowed)
	}
}

// An approval does not outrank the policy: a tool denied to the user
// while the run waited never runs. The resumed run selects its tools
// again through the policy, which no longer offers the tool, and ends
// saying so.
func TestApprovedCallStillMeetsThePolicy(t *testing.T) {
	d := &deployTool{}
	access := &mutableAccess{}
	h := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall, toolsets: []orchestrator.Toolset{d.toolset()},
		opts: orchestrator.Options{Approvals: orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}}, turns: deployTurns})
	h.o.Registry().SetAccess(access)
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"deploy"}, Frontend: "a2a"})
	evs := untilEvent(t, h.o, run.ID, 0, orchestrator.EventApprovalRequired)
	a := approvalData(t, evs[len(evs)-1])
	waitState(t, h.store, run.ID, orchestrator.RunWaitingApproval)
	access.set(&orchestrator.ToolAccess{Denied: []string{"deploy"}})
	if _, err := h.o.Decide(t.Context(), "u", run.ID, a.ApprovalID, orchestrator.ApprovalDecision{Decision: orchestrator.DecisionApprove}); err != nil {
		t.Fatal(err)
	}
	f := final(t, collect(t, h.o, run.ID, 0))
	if f.State != orchestrator.RunFailed || !strings.Contains(f.Error, "deploy") {
		t.Fatalf("final = %+v; want failed, naming deploy", f)
	}
	if got := d.called(); len(got) != 0 {
		t.Fatalf("deploy ran %v after it was denied", got)
	}
}

// A call the policy refuses in a round does not run: the model reads why,
// and the audit records it denied with its run, session and front-end.
// Here the server's allow-list drops the tool after the round's tools were
// offered (an admin reconfigured the MCP server while the model thought).
func TestDeniedCallInARoundIsAudited(t *testing.T) {
	var ran atomic.Int32
	tool := orchestratortest.NewTool("fs@deploy", false, func(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		ran.Add(1)
		return &orchestrator.ToolResult{Content: "deployed"}, nil
	})
	tool.S.Source = orchestrator.SourceMCP
	started, answer := make(chan struct{}), make(chan struct{})
	first := call("fs@deploy", `{}`)
	first.Started, first.Wait = started, answer
	model := orchestratortest.NewScriptedModel(first, orchestratortest.Turn{Content: "Done."})
	reg := orchestrator.NewRegistry("", nil, orchestrator.StaticToolset{SetName: "fs", List: []orchestrator.Tool{tool}})
	allow := &mutableAllow{list: allowList{"fs": {"deploy"}}}
	reg.SetPolicy(orchestrator.PolicyOptions{AllowLists: allow})
	st := orchestratortest.NewMemStore()
	o := orchestrator.New(st, orchestratortest.Models{Model: model,
		Settings: orchestrator.ModelSettings{Name: "m", ToolCallMode: orchestrator.ModeFunctionCall, MaxRounds: 4}}, reg, &orchestrator.Options{})
	t.Cleanup(func() { _ = o.Close(context.Background()) })
	run := mustStart(t, o, orchestrator.RunRequest{UserID: "u", Question: "ship it", ToolNames: []string{"fs@deploy"}, Frontend: "a2a"})
	<-started // the round's tools are selected and offered
	allow.set(allowList{"fs": {"read"}})
	close(answer)
	all := collect(t, o, run.ID, 0)
	if f := final(t, all); f.State != orchestrator.RunFinished {
		t.Fatalf("final = %+v", f)
	}
	if n := ran.Load(); n != 0 {
		t.Fatalf("fs@deploy ran %d times though the policy denied it", n)
	}
	res := ofType(all, orchestrator.EventToolResult)
	if len(res) != 1 || !strings.Contains(string(res[0].Data), "allow_tools") {
		t.Fatalf("tool_result = %v; want the refusal naming allow_tools", res)
	}
	recs, err := o.Audit(t.Context(), orchestrator.AuditFilter{Via: orchestrator.ViaRun})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Outcome != orchestrator.OutcomeDenied || recs[0].RunID != run.ID || recs[0].FrontEnd != "a2a" ||
		recs[0].SessionID != run.SessionID || !strings.Contains(recs[0].Reason, "allow_tools") || recs[0].Tool != "fs@deploy" {
		t.Fatalf("audit = %+v; want fs@deploy denied in the run", recs)
	}
}

// mutableAllow is an allow-list an admin changes while the server runs.
type mutableAllow struct {
	mu   sync.Mutex
	list allowList
}

func (m *mutableAllow) set(l allowList) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.list = l
}

func (m *mutableAllow) AllowsTool(server, tool string) (bool, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.list.AllowsTool(server, tool)
}

func (m *mutableAllow) AllowsResource(server, uri string) (bool, bool) {
	return m.AllowsTool(server, "resource:"+uri)
}

func (m *mutableAllow) AllowsPrompt(server, name string) (bool, bool) {
	return m.AllowsTool(server, "prompt:"+name)
}

// mutableAccess is a user rule an admin changes while a run waits.
type mutableAccess struct {
	mu sync.Mutex
	a  *orchestrator.ToolAccess
}

func (m *mutableAccess) set(a *orchestrator.ToolAccess) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.a = a
}

func (m *mutableAccess) ToolAccess(context.Context, string) (*orchestrator.ToolAccess, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.a, nil
}
