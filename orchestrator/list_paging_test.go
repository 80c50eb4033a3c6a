package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// pageAll reads a whole list page by page as a front-end does (NewPager,
// the store's page, CutPage), calling between after each page but the
// last. It returns the ids in the order served.
func pageAll[T any](t *testing.T, size int, list string, filter []any, read func(orchestrator.Page) ([]T, error),
	key func(T) *orchestrator.PageKey, id func(T) string, between func()) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("more than 100 pages: the cursor does not advance")
		}
		p, err := orchestrator.NewPager("cursor", cursor, size, list, filter...)
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		items, err := read(p.Page)
		if err != nil {
			t.Fatal(err)
		}
		items, cursor = orchestrator.CutPage(p, items, key)
		if len(items) > size {
			t.Fatalf("page %d holds %d items; the size is %d", pages, len(items), size)
		}
		for _, it := range items {
			ids = append(ids, id(it))
		}
		if cursor == "" {
			return ids
		}
		if between != nil {
			between()
		}
	}
}

// startDone starts a run and follows it to its end.
func startDone(t *testing.T, h *harness, req orchestrator.RunRequest) *orchestrator.Run {
	t.Helper()
	req.Caller = orchestrator.CallerAgent
	r := mustStart(t, h.o, req)
	collect(t, h.o, r.ID, 0)
	return r
}

// Runs, sessions and users page without gap or duplicate, newest first,
// however many items are added while a client pages; what is added
// meanwhile comes before the cursor and is not served.
func TestListsPageWithoutGapOrDuplicate(t *testing.T) {
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{{Content: "ok"}}})
	ctx := t.Context()
	var alice []*orchestrator.Run
	for i := range 7 {
		alice = append(alice, startDone(t, h, orchestrator.RunRequest{UserID: "alice", Question: fmt.Sprint("q", i)}))
		startDone(t, h, orchestrator.RunRequest{UserID: fmt.Sprint("user", i), Question: "q"})
	}
	addMore := func() { startDone(t, h, orchestrator.RunRequest{UserID: "alice", Question: "meanwhile"}) }

	t.Run("runs", func(t *testing.T) {
		got := pageAll(t, 3, "runs", []any{"alice"}, func(p orchestrator.Page) ([]*orchestrator.Run, error) {
			return h.o.ListRuns(ctx, orchestrator.RunFilter{UserID: "alice", Page: p})
		}, orchestrator.RunKey, func(r *orchestrator.Run) string { return r.ID }, addMore)
		var want []string
		for _, r := range slices.Backward(alice) {
			want = append(want, r.ID)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("paged runs = %v; want alice's, newest first: %v", got, want)
		}
	})
	t.Run("sessions", func(t *testing.T) {
		before, err := h.o.ListSessions(ctx, "alice", orchestrator.Page{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		got := pageAll(t, 4, "sessions", []any{"alice"}, func(p orchestrator.Page) ([]*orchestrator.Session, error) {
			return h.o.ListSessions(ctx, "alice", p)
		}, orchestrator.SessionKey, func(s *orchestrator.Session) string { return s.ID }, addMore)
		var want []string
		for _, s := range before {
			want = append(want, s.ID)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("paged sessions = %v; want %v", got, want)
		}
	})
	t.Run("users", func(t *testing.T) {
		before, err := h.o.Users(ctx, orchestrator.Page{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		got := pageAll(t, 2, "users", nil, func(p orchestrator.Page) ([]orchestrator.UserStats, error) {
			return h.o.Users(ctx, p)
		}, orchestrator.UserStatsKey, func(u orchestrator.UserStats) string { return u.UserID }, nil)
		var want []string
		for _, u := range before {
			want = append(want, u.UserID)
		}
		if len(want) != 8 || !slices.Equal(got, want) {
			t.Fatalf("paged users = %v; want the 8 users %v", got, want)
		}
	})
	// A cursor of alice's runs does not page bob's.
	p, _ := orchestrator.NewPager("cursor", "", 1, "runs", "alice")
	runs, err := h.o.ListRuns(ctx, orchestrator.RunFilter{UserID: "alice", Page: p.Page})
	if err != nil {
		t.Fatal(err)
	}
	_, c := orchestrator.CutPage(p, runs, orchestrator.RunKey)
	if _, err := orchestrator.NewPager("cursor", c, 1, "runs", "bob"); !errors.Is(err, orchestrator.ErrInvalidArgument) {
		t.Fatalf("alice's cursor on bob's runs = %v; want ErrInvalidArgument", err)
	}
}

// ListRuns shows a run that executes here as it is now, not as the store
// last had it; History returns the newest messages when limited.
func TestListRunsShowsLiveRunsAndHistoryLimits(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	h := newHarness(t, harnessOpts{mode: orchestrator.ModeFunctionCall, toolsets: []orchestrator.Toolset{blockingTool("block", started, release)},
		turns: []orchestratortest.Turn{call("block", `{}`), {Content: "ok"}}})
	ctx := t.Context()
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"block"}})
	<-started
	runs, err := h.o.ListRuns(ctx, orchestrator.RunFilter{UserID: "u"})
	if err != nil || len(runs) != 1 {
		t.Fatalf("ListRuns = %+v, %v", runs, err)
	}
	live, _ := h.o.GetRun(ctx, "u", run.ID)
	if runs[0].State != orchestrator.RunRunning || runs[0].LastSeq != live.LastSeq {
		t.Errorf("listed run = state %s, last seq %d; want the live run's (%s, %d)", runs[0].State, runs[0].LastSeq, live.State, live.LastSeq)
	}
	if got := h.o.CurrentTool(run.ID); got != "block" {
		t.Errorf("CurrentTool during the call = %q; want block", got)
	}
	close(release)
	collect(t, h.o, run.ID, 0)
	if got := h.o.CurrentTool(run.ID); got != "" {
		t.Errorf("CurrentTool after the run = %q; want none", got)
	}
	all, err := h.o.History(ctx, "u", run.SessionID, 0)
	if err != nil || len(all) < 3 {
		t.Fatalf("History = %d messages, %v", len(all), err)
	}
	last2, err := h.o.History(ctx, "u", run.SessionID, 2)
	if err != nil || len(last2) != 2 || last2[1].Content != all[len(all)-1].Content || last2[0].Role != all[len(all)-2].Role {
		t.Fatalf("History(limit 2) = %+v, %v; want the last two of %d", last2, err, len(all))
	}
}

// A session with a run in progress cannot be deleted (the run would write
// into nothing); once the run ends it can, and then it is gone with its
// runs. Bad ids are refused before any store read.
func TestDeleteSessionRefusesWhileARunIsInProgress(t *testing.T) {
	gate, started := make(chan struct{}), make(chan struct{})
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{{Content: "slow", Wait: gate, Started: started}}})
	ctx := t.Context()
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	<-started
	if err := h.o.DeleteSession(ctx, "u", run.SessionID); !errors.Is(err, orchestrator.ErrConflict) {
		t.Fatalf("DeleteSession during its run = %v; want ErrConflict", err)
	}
	close(gate)
	collect(t, h.o, run.ID, 0)
	if err := h.o.DeleteSession(ctx, "u", run.SessionID); err != nil {
		t.Fatalf("DeleteSession after its run: %v", err)
	}
	if _, err := h.o.GetRun(ctx, "u", run.ID); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("the deleted session's run = %v; want ErrNotFound", err)
	}
	if err := h.o.DeleteSession(ctx, "u", run.SessionID); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("second DeleteSession = %v; want ErrNotFound", err)
	}
	for _, c := range []struct {
		id   string
		want error
	}{{"", orchestrator.ErrInvalidArgument}, {"sess/../x", orchestrator.ErrNotFound}} {
		if err := h.o.DeleteSession(ctx, "u", c.id); !errors.Is(err, c.want) {
			t.Errorf("DeleteSession(%q) = %v; want %v", c.id, err, c.want)
		}
		if _, err := h.o.GetSession(ctx, "u", c.id); !errors.Is(err, c.want) {
			t.Errorf("GetSession(%q) = %v; want %v", c.id, err, c.want)
		}
	}
	if _, err := h.o.ListSessions(ctx, "", orchestrator.Page{}); !errors.Is(err, orchestrator.ErrInvalidArgument) {
		t.Errorf("ListSessions without a user = %v; want ErrInvalidArgument", err)
	}
}

// A session whose run waits for a person is in progress too: deleting it
// is refused until the run is cancelled.
func TestDeleteSessionRefusesAWaitingRun(t *testing.T) {
	d := &deployTool{}
	h := approvalHarness(t, d, orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}, deployTurns...)
	ctx := t.Context()
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "ship", ToolNames: []string{"deploy"}})
	untilEvent(t, h.o, run.ID, 0, orchestrator.EventApprovalRequired)
	waitState(t, h.store, run.ID, orchestrator.RunWaitingApproval)
	settle(t, h.o, "u", run.ID)
	for _, del := range []func(context.Context) error{
		func(ctx context.Context) error { return h.o.DeleteSession(ctx, "u", run.SessionID) },
		func(ctx context.Context) error { return h.o.DeleteUserData(ctx, "u") },
	} {
		if err := del(ctx); !errors.Is(err, orchestrator.ErrConflict) {
			t.Fatalf("deletion while a run waits = %v; want ErrConflict", err)
		}
	}
	if _, err := h.o.Cancel(ctx, "u", run.ID); err != nil {
		t.Fatal(err)
	}
	if err := h.o.DeleteSession(ctx, "u", run.SessionID); err != nil {
		t.Fatalf("DeleteSession after the cancel: %v", err)
	}
}

// settle waits until the run has left this process's live runs (a run
// that suspended is stored waiting first, then leaves).
func settle(t *testing.T, o *orchestrator.Orchestrator, userID, runID string) {
	t.Helper()
	if _, err := o.Settled(t.Context(), userID, runID); err != nil {
		t.Fatal(err)
	}
}
