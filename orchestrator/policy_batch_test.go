package orchestrator_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// countingRules is rules that count their reads per user.
type countingRules struct {
	rules
	mu    sync.Mutex
	reads map[string]int
}

func (c *countingRules) ToolAccess(ctx context.Context, u string) (*orchestrator.ToolAccess, error) {
	c.mu.Lock()
	c.reads[u]++
	c.mu.Unlock()
	return c.rules.ToolAccess(ctx, u)
}

// countingAdmins is admins that count their reads per user.
type countingAdmins struct {
	admins
	mu    sync.Mutex
	reads map[string]int
}

func (c *countingAdmins) IsAdminUser(ctx context.Context, id string) (bool, error) {
	c.mu.Lock()
	c.reads[id]++
	c.mu.Unlock()
	return c.admins.IsAdminUser(ctx, id)
}

// DecideTools answers each check as DecideTool would, in order, and reads
// each user's rule and role once for the whole list, however many of their
// checks it holds (an MCP pass-through's tools/list).
func TestDecideToolsReadsEachUserOnce(t *testing.T) {
	access := &countingRules{rules: rules{
		"alice": {Denied: []string{"fs@write"}},
		"bob":   {Allowed: []string{"fs@read"}},
	}, reads: map[string]int{}}
	who := &countingAdmins{admins: admins{ids: []string{"root-user"}}, reads: map[string]int{}}
	reg := orchestrator.NewRegistry("", nil)
	reg.SetAccess(access)
	reg.SetPolicy(orchestrator.PolicyOptions{AdminOnly: []string{"ops@*"}, Admins: who, AllowLists: allowList{"fs": {"read", "write"}}})
	o := orchestrator.New(orchestratortest.NewMemStore(), orchestratortest.Models{}, reg,
		&orchestrator.Options{Approvals: orchestrator.ApprovalPolicy{Tools: []string{"fs@read"}}})
	t.Cleanup(func() { _ = o.Close(context.Background()) })

	pass := func(user, tool string) orchestrator.ToolCheck {
		return orchestrator.ToolCheck{UserID: user, Tool: tool, Server: "fs", Via: orchestrator.ViaPassthrough}
	}
	checks := []orchestrator.ToolCheck{
		pass("alice", "fs@read"), pass("alice", "fs@write"), pass("alice", "fs@delete"),
		pass("bob", "fs@read"), pass("bob", "fs@write"),
		{UserID: "alice", Tool: "ops@restart", Via: orchestrator.ViaPassthrough},
		{UserID: "root-user", Tool: "ops@restart", Via: orchestrator.ViaPassthrough},
		{UserID: "alice", Tool: "file:///etc/passwd", Server: "fs", What: orchestrator.CheckResource},
	}
	want := []orchestrator.Verdict{
		orchestrator.VerdictNeedsApproval, // approvals.tools
		orchestrator.VerdictDeny,          // alice's denied_tools
		orchestrator.VerdictDeny,          // not in allow_tools
		orchestrator.VerdictNeedsApproval, // allowed to bob, then approvals.tools
		orchestrator.VerdictDeny,          // not in bob's allowed_tools
		orchestrator.VerdictDeny,          // admin-only
		orchestrator.VerdictAllow,         // an admin
		orchestrator.VerdictDeny,          // a resource outside allow_resources
	}
	got := o.DecideTools(t.Context(), checks)
	if len(got) != len(checks) {
		t.Fatalf("%d decisions for %d checks", len(got), len(checks))
	}
	for i, d := range got {
		if d.Verdict != want[i] {
			t.Errorf("check %d (%s %s) = %+v; want %s", i, checks[i].UserID, checks[i].Tool, d, want[i])
		}
		if one := o.DecideTool(t.Context(), checks[i]); one != d {
			t.Errorf("check %d: DecideTools said %+v, DecideTool says %+v", i, d, one)
		}
	}
	// The DecideTool calls above read again, once per check; the batch
	// read each user once.
	batch := access.reads["alice"] - 4 // alice's three tool checks and ops@restart, one by one
	if batch != 1 || access.reads["bob"]-2 != 1 {
		t.Errorf("rule reads in the batch: alice %d, bob %d; want one each", batch, access.reads["bob"]-2)
	}
	if n := who.reads["root-user"]; n != 2 {
		t.Errorf("role reads of root-user = %d; want one in the batch, one alone", n)
	}
	if got := o.DecideTools(t.Context(), nil); len(got) != 0 {
		t.Errorf("DecideTools(nil) = %v", got)
	}
}

// The catalog a user selects from is the policy's view, and one user's
// rule never leaks into another's catalog.
func TestToolsOfEachUser(t *testing.T) {
	o := policyHarness(t, orchestrator.ApprovalPolicy{}, orchestrator.PolicyOptions{},
		rules{"alice": {Denied: []string{"fs@*"}}, "bob": {Allowed: []string{"fs@read"}}})
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
	cases := map[string][]string{
		"alice": {"execute_command", "ops@restart"},
		"bob":   {"fs@read"},
		"carol": {"execute_command", "fs@read", "fs@write", "ops@restart"},
	}
	for _, u := range []string{"alice", "bob", "carol", "alice"} {
		if got := names(u); !slices.Equal(got, cases[u]) {
			t.Errorf("%s's catalog = %v; want %v", u, got, cases[u])
		}
	}
	grouped, err := o.ToolCatalog(t.Context(), "bob")
	if err != nil {
		t.Fatal(err)
	}
	for group, entries := range grouped {
		for _, e := range entries {
			if e.Name == "fs@write" || e.Name == "execute_command" {
				t.Errorf("bob's grouped catalog holds %s in %s", e.Name, group)
			}
		}
	}
	for _, bad := range []string{"", "a/b"} {
		if _, err := o.Tools(t.Context(), bad); err == nil {
			t.Errorf("Tools(%q) = nil error", bad)
		}
		if _, err := o.ToolCatalog(t.Context(), bad); err == nil {
			t.Errorf("ToolCatalog(%q) = nil error", bad)
		}
	}
}
