package orchestrator_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// The core's part of the user-isolation matrix: every entry point that
// takes a user id and names a run, a session or an approval answers
// another user ErrNotFound (never "permission denied": the two are not
// told apart), and changes nothing of the owner's. The owner keeps a
// finished run in one session and a run waiting for a person in another.
func TestCoreIsolatesUsers(t *testing.T) {
	d := &deployTool{}
	h := approvalHarness(t, d, orchestrator.ApprovalPolicy{Tools: []string{"deploy"}},
		orchestratortest.Turn{Content: "hello alice"}, call("deploy", `{"env":"prod"}`), orchestratortest.Turn{Content: "Done."})
	ctx := t.Context()

	done := mustStart(t, h.o, orchestrator.RunRequest{UserID: "alice", Question: "hi"})
	if f := final(t, collect(t, h.o, done.ID, 0)); f.State != orchestrator.RunFinished {
		t.Fatalf("alice's first run ended %s", f.State)
	}
	waiting := mustStart(t, h.o, orchestrator.RunRequest{UserID: "alice", Question: "ship it", ToolNames: []string{"deploy"}})
	evs := untilEvent(t, h.o, waiting.ID, 0, orchestrator.EventApprovalRequired)
	approvalID := approvalData(t, evs[len(evs)-1]).ApprovalID
	// Settled, not the store: the live run shows the wait a moment after
	// the store has it.
	if r, err := h.o.Settled(ctx, "alice", waiting.ID); err != nil || r.State != orchestrator.RunWaitingApproval {
		t.Fatalf("alice's run settled = %+v, %v; want waiting_approval", r, err)
	}
	history, err := h.o.History(ctx, "alice", done.SessionID, 0)
	if err != nil || len(history) == 0 {
		t.Fatalf("alice's history = %v, %v", history, err)
	}

	const bob = "bob"
	notFound := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"GetRun", func(ctx context.Context) error { _, err := h.o.GetRun(ctx, bob, done.ID); return err }},
		{"GetRun of a waiting run", func(ctx context.Context) error { _, err := h.o.GetRun(ctx, bob, waiting.ID); return err }},
		{"GetSession", func(ctx context.Context) error { _, err := h.o.GetSession(ctx, bob, done.SessionID); return err }},
		{"History", func(ctx context.Context) error { _, err := h.o.History(ctx, bob, done.SessionID, 0); return err }},
		{"DeleteSession", func(ctx context.Context) error { return h.o.DeleteSession(ctx, bob, done.SessionID) }},
		{"DeleteSession of a waiting run's", func(ctx context.Context) error { return h.o.DeleteSession(ctx, bob, waiting.SessionID) }},
		{"Cancel", func(ctx context.Context) error { _, err := h.o.Cancel(ctx, bob, waiting.ID); return err }},
		{"Cancel of a finished run", func(ctx context.Context) error { _, err := h.o.Cancel(ctx, bob, done.ID); return err }},
		{"Events", func(ctx context.Context) error {
			for _, err := range h.o.Events(ctx, bob, done.ID, 0) {
				return err // the first item is the refusal, not an event
			}
			return errors.New("Events yielded nothing")
		}},
		{"Wait", func(ctx context.Context) error { _, err := h.o.Wait(ctx, bob, waiting.ID, 0, nil); return err }},
		{"Approvals", func(ctx context.Context) error { _, err := h.o.Approvals(ctx, bob, waiting.ID); return err }},
		{"Decide", func(ctx context.Context) error {
			_, err := h.o.Decide(ctx, bob, waiting.ID, approvalID, orchestrator.ApprovalDecision{Decision: orchestrator.DecisionApprove})
			return err
		}},
		{"Plan", func(ctx context.Context) error { _, err := h.o.Plan(ctx, bob, done.ID); return err }},
		{"Start in another user's session", func(ctx context.Context) error {
			_, err := h.o.Start(ctx, orchestrator.RunRequest{UserID: bob, Question: "mine now", SessionID: done.SessionID})
			return err
		}},
		{"Start creating another user's session", func(ctx context.Context) error {
			// CreateSession starts a missing session, never takes one.
			_, err := h.o.Start(ctx, orchestrator.RunRequest{UserID: bob, Question: "mine now", SessionID: done.SessionID, CreateSession: true})
			return err
		}},
	}
	for _, c := range notFound {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(t.Context()); !errors.Is(err, orchestrator.ErrNotFound) {
				t.Fatalf("bob's %s on alice's = %v; want ErrNotFound", c.name, err)
			}
		})
	}

	// Listings scoped to bob show nothing of alice's.
	if ss, err := h.o.ListSessions(ctx, bob, orchestrator.Page{}); err != nil || len(ss) != 0 {
		t.Errorf("bob's sessions = %+v, %v; want none", ss, err)
	}
	if rs, err := h.o.ListRuns(ctx, orchestrator.RunFilter{UserID: bob}); err != nil || len(rs) != 0 {
		t.Errorf("bob's runs = %+v, %v; want none", rs, err)
	}
	if n, err := h.o.CountRuns(ctx, orchestrator.RunFilter{UserID: bob}); err != nil || n != 0 {
		t.Errorf("bob's run count = %d, %v; want 0", n, err)
	}
	// Deleting all of bob's data leaves alice's alone.
	if err := h.o.DeleteUserData(ctx, bob); err != nil {
		t.Fatalf("DeleteUserData(bob): %v", err)
	}

	// Nothing of alice's changed.
	if r, err := h.o.GetRun(ctx, "alice", waiting.ID); err != nil || r.State != orchestrator.RunWaitingApproval {
		t.Fatalf("alice's waiting run after bob's attempts = %+v, %v", r, err)
	}
	list, err := h.o.Approvals(ctx, "alice", waiting.ID)
	if err != nil || len(list) != 1 || list[0].State != orchestrator.ApprovalPending {
		t.Fatalf("alice's approvals after bob's attempts = %+v, %v", list, err)
	}
	if after, err := h.o.History(ctx, "alice", done.SessionID, 0); err != nil || len(after) != len(history) {
		t.Fatalf("alice's history after bob's attempts: %d messages, %v; want %d", len(after), err, len(history))
	}
	if got := d.called(); len(got) != 0 {
		t.Fatalf("deploy ran on bob's say-so: %v", got)
	}

	// The unscoped view ("" = an admin's) sees alice's run; alice decides
	// her own approval and the run ends.
	if r, err := h.o.GetRun(ctx, "", done.ID); err != nil || r.UserID != "alice" {
		t.Fatalf("unscoped GetRun = %+v, %v", r, err)
	}
	if _, err := h.o.Decide(ctx, "alice", waiting.ID, approvalID, orchestrator.ApprovalDecision{Decision: orchestrator.DecisionApprove}); err != nil {
		t.Fatalf("alice's own Decide: %v", err)
	}
	if f := final(t, collect(t, h.o, waiting.ID, 0)); f.State != orchestrator.RunFinished || f.Answer != "Done." {
		t.Fatalf("alice's run after her approval = %+v", f)
	}
	if got := d.called(); !slices.Equal(got, []string{`{"env":"prod"}`}) {
		t.Fatalf("deploy calls = %v; want the one alice approved", got)
	}
}

// A user's listings never hold another's items, however the runs of the
// two interleave, and a deleted user's data leaves the other's whole.
func TestListingsAndDeletionStayWithTheirUser(t *testing.T) {
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{{Content: "ok"}}})
	ctx := t.Context()
	users := []string{"alice", "bob", "carol"}
	mine := map[string][]string{}
	for i := range 6 {
		u := users[i%len(users)]
		r := mustStart(t, h.o, orchestrator.RunRequest{UserID: u, Question: "q", Caller: orchestrator.CallerAgent})
		collect(t, h.o, r.ID, 0)
		mine[u] = append(mine[u], r.ID)
	}
	for _, u := range users {
		runs, err := h.o.ListRuns(ctx, orchestrator.RunFilter{UserID: u})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range runs {
			if r.UserID != u {
				t.Errorf("%s's listing holds %s's run %s", u, r.UserID, r.ID)
			}
			got = append(got, r.ID)
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(mine[u]))
		if !slices.Equal(got, want) {
			t.Errorf("%s's runs = %v; want %v", u, got, want)
		}
		sessions, err := h.o.ListSessions(ctx, u, orchestrator.Page{})
		if err != nil || len(sessions) != len(mine[u]) {
			t.Errorf("%s's sessions = %d, %v; want %d", u, len(sessions), err, len(mine[u]))
		}
		for _, s := range sessions {
			if s.UserID != u {
				t.Errorf("%s's sessions hold %s's %s", u, s.UserID, s.ID)
			}
		}
	}
	if err := h.o.DeleteUserData(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	// Read from the store: a run's live entry may outlive its final event
	// by a moment in this process, and nothing of it is the store's.
	for _, id := range mine["bob"] {
		if _, err := h.store.GetRun(ctx, id); !errors.Is(err, orchestrator.ErrNotFound) {
			t.Errorf("bob's run %s after DeleteUserData: %v; want ErrNotFound", id, err)
		}
	}
	for _, u := range []string{"alice", "carol"} {
		for _, id := range mine[u] {
			if r, err := h.o.GetRun(ctx, u, id); err != nil || r.State != orchestrator.RunFinished {
				t.Errorf("%s's run %s after bob's deletion = %+v, %v", u, id, r, err)
			}
		}
	}
	stats, err := h.o.Users(ctx, orchestrator.Page{})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, s := range stats {
		listed = append(listed, s.UserID)
		if s.Sessions != 2 || s.Runs != 2 {
			t.Errorf("stats of %s = %+v; want 2 sessions, 2 runs", s.UserID, s)
		}
	}
	slices.Sort(listed)
	if !slices.Equal(listed, []string{"alice", "carol"}) {
		t.Errorf("users after bob's deletion = %v; want alice, carol", listed)
	}
}

// A session named by its front-end (CreateSession) is started by the
// first run naming it, with that id and the run's user, and continued by
// the next: the second run's model sees the first's exchange.
func TestStartCreatesNamedSession(t *testing.T) {
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{{Content: "one"}, {Content: "two"}}})
	first := mustStart(t, h.o, orchestrator.RunRequest{UserID: "alice", Question: "first", SessionID: "ctx_named-1", CreateSession: true})
	if first.SessionID != "ctx_named-1" {
		t.Fatalf("session %q; want the named one", first.SessionID)
	}
	final(t, collect(t, h.o, first.ID, 0))
	second := mustStart(t, h.o, orchestrator.RunRequest{UserID: "alice", Question: "second", SessionID: "ctx_named-1", CreateSession: true})
	final(t, collect(t, h.o, second.ID, 0))
	history, err := h.o.History(t.Context(), "alice", "ctx_named-1", 0)
	if err != nil || len(history) != 4 {
		t.Fatalf("history of the named session: %d messages, %v; want both exchanges", len(history), err)
	}
	if _, err := h.o.Start(t.Context(), orchestrator.RunRequest{UserID: "alice", Question: "x", SessionID: "ctx_unnamed"}); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("a missing session without CreateSession: %v; want ErrNotFound", err)
	}
}
