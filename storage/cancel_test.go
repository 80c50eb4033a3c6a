package storage

import (
	"context"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/wunder/wunder/orchestrator"
)

// endOnFlag plays the owner on another replica, woken by the cancel's
// notification: the moment the cancelling flag is stored, it ends the run.
type endOnFlag struct {
	db    *bun.DB
	runID string
}

func (h endOnFlag) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (h endOnFlag) AfterQuery(ctx context.Context, e *bun.QueryEvent) {
	if e.Err == nil && strings.HasPrefix(e.Query, "UPDATE") && strings.Contains(e.Query, "'cancelling'") {
		// The raw connection pool: no hook, another connection.
		if _, err := h.db.DB.ExecContext(ctx, "UPDATE runs SET state = 'cancelled' WHERE id = $1", h.runID); err != nil {
			panic(err)
		}
	}
}

// RequestCancel answers with what its own statement did. Across replicas
// the owner ends a flagged run within milliseconds; a cancel that read the
// run again after flagging it could find it ended and answer "already
// cancelled" (409) for the cancel that ended it. PostgreSQL only: there a
// cancel commits at once, so the owner can end the run before the next
// statement; SQLite's single server executes its runs itself.
func TestRequestCancelAnswersItsOwnWrite(t *testing.T) {
	s := open(t, freshPostgres(t))
	ctx := t.Context()
	must(t, s.CreateSession(ctx, &orchestrator.Session{ID: "s", UserID: "u"}))
	must(t, s.CreateRun(ctx, &orchestrator.Run{ID: "r", SessionID: "s", UserID: "u", State: orchestrator.RunRunning}))
	s.db = s.db.WithQueryHook(endOnFlag{db: s.db, runID: "r"})
	r, err := s.RequestCancel(ctx, "r")
	if err != nil || r.State != orchestrator.RunCancelling {
		t.Fatalf("RequestCancel = %+v, %v; want the run as the cancel left it, cancelling", r, err)
	}
	if got, err := s.GetRun(ctx, "r"); err != nil || got.State != orchestrator.RunCancelled {
		t.Fatalf("the owner's end: %+v, %v; want cancelled (the hook did not run)", got, err)
	}
	// A run that cannot be cancelled any more is answered as it is.
	r, err = s.RequestCancel(ctx, "r")
	if err != nil || r.State != orchestrator.RunCancelled {
		t.Fatalf("RequestCancel of an ended run = %+v, %v; want it unchanged", r, err)
	}
	if _, err := s.RequestCancel(ctx, "nope"); err == nil {
		t.Fatal("RequestCancel of no run: no error")
	}
}
