package orchestrator_test

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// The audit refuses a filter it cannot answer before reading anything:
// a bad user id, an unknown outcome or path, a cursor of another list.
func TestAuditRefusesBadFilters(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	cases := []struct {
		name string
		f    orchestrator.AuditFilter
	}{
		{"bad user", orchestrator.AuditFilter{UserID: "a/b"}},
		{"unknown outcome", orchestrator.AuditFilter{Outcome: "maybe"}},
		{"unknown path", orchestrator.AuditFilter{Via: "carrier pigeon"}},
		{"a cursor of runs", orchestrator.AuditFilter{Page: orchestrator.Page{After: &orchestrator.PageKey{At: time.Now(), ID: "run_1"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := h.o.Audit(t.Context(), c.f); !errors.Is(err, orchestrator.ErrInvalidArgument) {
				t.Fatalf("Audit(%+v) = %v; want ErrInvalidArgument", c.f, err)
			}
		})
	}
	if _, err := h.o.Usage(t.Context(), orchestrator.UsageFilter{UserID: "."}); !errors.Is(err, orchestrator.ErrInvalidArgument) {
		t.Errorf("Usage(user .) = %v; want ErrInvalidArgument", err)
	}
}

// Every call a run makes is audited (allowed, error; those still waiting
// for their batch included), read back through
// the filters and paged newest first with AuditKey, without gap or
// duplicate; the usage meter counts each user's runs, tokens and calls.
func TestAuditAndUsageOfRuns(t *testing.T) {
	usage := &orchestrator.Usage{InputTokens: 100, OutputTokens: 10, TotalTokens: 110}
	h := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall,
		turns: []orchestratortest.Turn{
			{ToolCalls: []orchestrator.ToolCall{
				{ID: "c1", Name: "write_file", Arguments: []byte(`{"path":"a","content":"x"}`)},
				{ID: "c2", Name: "write_file", Arguments: []byte(`{"path":"b","content":"y"}`)},
				{ID: "c3", Name: "read_file", Arguments: []byte(`{"path":"missing"}`)},
			}, Usage: usage},
			{Content: "done", Usage: usage},
		}})
	ctx := t.Context()
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "alice", Question: "q", ToolNames: []string{"write_file", "read_file"}, Frontend: orchestrator.FrontendA2A})
	collect(t, h.o, run.ID, 0)
	// bob's run calls nothing; its model answers as the script's last turn.
	other := mustStart(t, h.o, orchestrator.RunRequest{UserID: "bob", Question: "q"})
	collect(t, h.o, other.ID, 0)

	all, err := h.o.Audit(ctx, orchestrator.AuditFilter{UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 {
		t.Fatalf("alice's audit = %d records; want 3", len(all))
	}
	for _, l := range all {
		if l.RunID != run.ID || l.SessionID != run.SessionID || l.Via != orchestrator.ViaRun || l.FrontEnd != orchestrator.FrontendA2A {
			t.Errorf("record = %+v", l)
		}
	}
	errs, err := h.o.Audit(ctx, orchestrator.AuditFilter{UserID: "alice", Outcome: orchestrator.OutcomeError})
	if err != nil || len(errs) != 1 || errs[0].CallID != "c3" || !errs[0].IsError {
		t.Errorf("alice's failed calls = %+v, %v; want c3", errs, err)
	}
	writes, err := h.o.Audit(ctx, orchestrator.AuditFilter{Tool: "write_file", Outcome: orchestrator.OutcomeAllowed})
	if err != nil || len(writes) != 2 {
		t.Errorf("allowed write_file records = %d, %v; want 2", len(writes), err)
	}
	if none, err := h.o.Audit(ctx, orchestrator.AuditFilter{UserID: "alice", Since: time.Now().Add(time.Hour)}); err != nil || len(none) != 0 {
		t.Errorf("records of the future = %+v, %v", none, err)
	}

	// Paged one by one, newest first, they are the same three.
	var paged []string
	got := pageAll(t, 1, "audit", []any{"alice"}, func(p orchestrator.Page) ([]*orchestrator.ToolLog, error) {
		return h.o.Audit(ctx, orchestrator.AuditFilter{UserID: "alice", Page: p})
	}, orchestrator.AuditKey, func(l *orchestrator.ToolLog) string { return strconv.FormatInt(l.ID, 10) }, nil)
	for _, l := range all {
		paged = append(paged, strconv.FormatInt(l.ID, 10))
	}
	if !slices.Equal(got, paged) {
		t.Errorf("paged audit = %v; want %v", got, paged)
	}

	use, err := h.o.Usage(ctx, orchestrator.UsageFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byUser := map[string]orchestrator.UserUsage{}
	for _, u := range use {
		byUser[u.UserID] = u
	}
	a, b := byUser["alice"], byUser["bob"]
	if a.Runs != 1 || a.InputTokens != 200 || a.OutputTokens != 20 || a.ToolCalls != 3 || a.DeniedCalls != 0 || a.RunSeconds < 0 {
		t.Errorf("alice's usage = %+v; want 1 run, 200/20 tokens, 3 calls", a)
	}
	if b.Runs != 1 || b.InputTokens != 100 || b.ToolCalls != 0 {
		t.Errorf("bob's usage = %+v; want 1 run, 100 input tokens, no calls", b)
	}
	if len(use) != 2 || use[0].UserID != "alice" {
		t.Errorf("usage order = %+v; want the biggest token user first", use)
	}
	only, err := h.o.Usage(ctx, orchestrator.UsageFilter{UserID: "bob"})
	if err != nil || len(only) != 1 || only[0].UserID != "bob" {
		t.Errorf("bob's usage alone = %+v, %v", only, err)
	}
}
