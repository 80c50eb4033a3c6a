package storage

import (
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// A run stored waiting before approvals had a state of their own was
// waiting for approvals: after the migration it is waiting_approval, and
// runs in other states are left as they were.
func TestWaitingApprovalMigration(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			opts := be.fresh(t)
			opts.AutoMigrate = false
			s := open(t, opts)
			migrateBefore(t, s, "20261206030000")
			ctx, at := t.Context(), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
			must(t, s.CreateSession(ctx, &orchestrator.Session{ID: "s", UserID: "u", CreatedAt: at, UpdatedAt: at}))
			for id, state := range map[string]orchestrator.RunState{"waiting": "waiting_input", "done": orchestrator.RunFinished, "going": orchestrator.RunRunning} {
				must(t, s.CreateRun(ctx, &orchestrator.Run{ID: id, SessionID: "s", UserID: "u", State: state, Owner: "o", CreatedAt: at}))
			}
			must(t, s.Migrate(ctx))
			for id, want := range map[string]orchestrator.RunState{"waiting": orchestrator.RunWaitingApproval, "done": orchestrator.RunFinished, "going": orchestrator.RunRunning} {
				r, err := s.GetRun(ctx, id)
				if err != nil || r.State != want {
					t.Errorf("run %s after the migration = %+v, %v; want %s", id, r, err, want)
				}
			}
			// The waiting run is claimed as any waiting run.
			if r, err := s.ClaimWaiting(ctx, "waiting", "me"); err != nil || r.State != orchestrator.RunRunning {
				t.Errorf("ClaimWaiting after the migration = %+v, %v", r, err)
			}
		})
	}
}
