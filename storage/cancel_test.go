package storage

import (
	"context"
	"errors"
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

// cancelOnClaim plays a cancel from another replica that lands the moment
// a waiting run is claimed.
type cancelOnClaim struct {
	db    *bun.DB
	runID string
}

func (h cancelOnClaim) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	return ctx
}

func (h cancelOnClaim) AfterQuery(ctx context.Context, e *bun.QueryEvent) {
	if e.Err == nil && strings.HasPrefix(e.Query, "UPDATE") && strings.Contains(e.Query, "'waiting_input'") {
		if _, err := h.db.DB.ExecContext(ctx, "UPDATE runs SET state = 'cancelling' WHERE id = $1", h.runID); err != nil {
			panic(err)
		}
	}
}

// ClaimWaiting, too, answers with the run as its claim left it: running,
// owned by the claimer. The cancel that follows is the owner's to see.
func TestClaimWaitingAnswersItsOwnWrite(t *testing.T) {
	s := open(t, freshPostgres(t))
	ctx := t.Context()
	must(t, s.CreateSession(ctx, &orchestrator.Session{ID: "s", UserID: "u"}))
	must(t, s.CreateRun(ctx, &orchestrator.Run{ID: "r", SessionID: "s", UserID: "u", State: orchestrator.RunWaitingInput}))
	s.db = s.db.WithQueryHook(cancelOnClaim{db: s.db, runID: "r"})
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
