package storage

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/wunder/wunder/orchestrator"
)

// otherReplica plays another replica: right after an UPDATE of this store
// whose text has match, it runs then ($1 is runID) on another connection.
type otherReplica struct {
	db                 *bun.DB
	match, then, runID string
}

func (h otherReplica) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (h otherReplica) AfterQuery(ctx context.Context, e *bun.QueryEvent) {
	if e.Err == nil && strings.HasPrefix(e.Query, "UPDATE") && strings.Contains(e.Query, h.match) {
		// The raw connection pool: no hook, another connection.
		if _, err := h.db.DB.ExecContext(ctx, h.then, h.runID); err != nil {
			panic(err)
		}
	}
}

// runBesideReplica stores run "r" in state on a fresh PostgreSQL store
// whose UPDATEs matching match another replica follows with then.
func runBesideReplica(t *testing.T, state orchestrator.RunState, match, then string) (*Store, context.Context) {
	t.Helper()
	s := open(t, freshPostgres(t))
	ctx := t.Context()
	must(t, s.CreateSession(ctx, &orchestrator.Session{ID: "s", UserID: "u"}))
	must(t, s.CreateRun(ctx, &orchestrator.Run{ID: "r", SessionID: "s", UserID: "u", State: state}))
	s.db = s.db.WithQueryHook(otherReplica{db: s.db, match: match, then: then, runID: "r"})
	return s, ctx
}

// RequestCancel answers with what its own statement did. Across replicas
// the owner ends a flagged run within milliseconds; a cancel that read the
// run again after flagging it could find it ended and answer "already
// cancelled" (409) for the cancel that ended it. PostgreSQL only: there a
// cancel commits at once, so the owner can end the run before the next
// statement; SQLite's single server executes its runs itself.
func TestRequestCancelAnswersItsOwnWrite(t *testing.T) {
	// The owner, woken by the notification, ends the run the moment the
	// flag is stored.
	s, ctx := runBesideReplica(t, orchestrator.RunRunning, "'cancelling'", "UPDATE runs SET state = 'cancelled' WHERE id = $1")
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

// ClaimWaiting, too, answers with the run as its claim left it: running,
// owned by the claimer. The cancel that follows is the owner's to see.
func TestClaimWaitingAnswersItsOwnWrite(t *testing.T) {
	// A cancel from another replica lands the moment the run is claimed.
	s, ctx := runBesideReplica(t, orchestrator.RunWaitingApproval, "'waiting_approval'", "UPDATE runs SET state = 'cancelling' WHERE id = $1")
	r, err := s.ClaimWaiting(ctx, "r", "me")
	if err != nil || r.State != orchestrator.RunRunning || r.Owner != "me" {
		t.Fatalf("ClaimWaiting = %+v, %v; want the run as the claim left it, running and owned by me", r, err)
	}
	if got, err := s.GetRun(ctx, "r"); err != nil || got.State != orchestrator.RunCancelling {
		t.Fatalf("after the other replica's cancel: %+v, %v; want cancelling (the hook did not run)", got, err)
	}
	if _, err := s.ClaimWaiting(ctx, "r", "you"); !errors.Is(err, orchestrator.ErrConflict) {
		t.Fatalf("ClaimWaiting of a run no longer waiting: %v; want a conflict", err)
	}
}
