package storage

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/accounts"
	"github.com/wunder/wunder/memory"
	"github.com/wunder/wunder/orchestrator"
)

// The storage-only methods (those no contract suite in orchestratortest,
// memorytest or accountstest reaches) refuse arguments they cannot store
// with ErrInvalidArgument, saying what is missing, on both backends alike,
// and write nothing.
func TestStorageOnlyArgumentsRefused(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			s, ctx := open(t, be.fresh(t)), t.Context()
			now := time.Now()
			for _, tc := range []struct {
				name string
				call func(ctx context.Context) error
				msg  string
			}{
				{"SaveThroughput without an id", func(ctx context.Context) error {
					return s.SaveThroughput(ctx, "", "running", now, json.RawMessage(`{}`))
				}, "needs an id"},
				{"SaveEvaluationRun of nil", func(ctx context.Context) error { return s.SaveEvaluationRun(ctx, nil) }, "needs an id"},
				{"SaveEvaluationRun without an id", func(ctx context.Context) error {
					return s.SaveEvaluationRun(ctx, &EvaluationRun{ModelName: "m", Run: json.RawMessage(`{}`)})
				}, "needs an id"},
				{"PutMemoryRecord without a session", func(ctx context.Context) error {
					return s.PutMemoryRecord(ctx, &memory.Record{ID: "m", UserID: "u"}, 5)
				}, "session id"},
				{"PutMemoryRecord without a user", func(ctx context.Context) error {
					return s.PutMemoryRecord(ctx, &memory.Record{ID: "m", SessionID: "s"}, 5)
				}, "user id"},
				{"EnqueueMemoryTask without an id", func(ctx context.Context) error {
					return s.EnqueueMemoryTask(ctx, &memory.Task{UserID: "u", SessionID: "s"}, 5)
				}, "memory task id"},
				{"ClaimMemoryTask without an owner", func(ctx context.Context) error {
					_, err := s.ClaimMemoryTask(ctx, "", now, time.Minute)
					return err
				}, "owner"},
				{"ClaimMemoryTask with no lease", func(ctx context.Context) error {
					_, err := s.ClaimMemoryTask(ctx, "w", now, 0)
					return err
				}, "positive lease"},
				{"ReleaseLocksOf nobody", func(ctx context.Context) error { return s.ReleaseLocksOf(ctx, "") }, "needs an owner"},
				{"UpdateUser of nil", func(ctx context.Context) error { return s.UpdateUser(ctx, nil) }, "user id is empty"},
				{"UpdateUser without an id", func(ctx context.Context) error { return s.UpdateUser(ctx, &accounts.User{}) }, "user id is empty"},
				{"SavePushConfig of nil", func(ctx context.Context) error { return s.SavePushConfig(ctx, nil) }, "task id and an id"},
				{"SavePushConfig without an id", func(ctx context.Context) error {
					return s.SavePushConfig(ctx, &PushConfig{TaskID: "r", URL: "https://x"})
				}, "task id and an id"},
				{"Seed of nothing", func(ctx context.Context) error { return s.Seed(ctx, SeedOptions{}) }, "at least one session"},
				{"UpdateApproval of nil", func(ctx context.Context) error {
					return s.UpdateApproval(ctx, nil, orchestrator.ApprovalPending, "")
				}, "approval is nil"},
				{"CreateApprovals with a nil", func(ctx context.Context) error {
					return s.CreateApprovals(ctx, []*orchestrator.Approval{nil})
				}, "approval id and run id"},
			} {
				err := tc.call(ctx)
				if !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.msg) {
					t.Errorf("%s = %v; want ErrInvalidArgument saying %q", tc.name, err, tc.msg)
				}
			}
			// Nothing was written by any of them.
			for _, table := range []string{"throughput_runs", "evaluation_runs", "memory_records", "memory_tasks", "push_configs", "sessions", "approvals"} {
				n, err := s.db.NewSelect().Table(table).Count(ctx)
				must(t, err)
				if n != 0 {
					t.Errorf("%s holds %d rows after refused calls", table, n)
				}
			}
		})
	}
}

// ReleaseLocksOf releases every lock of its owner and only those, on both
// backends: another owner's locks stay held.
func TestReleaseLocksOfOneOwner(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			s, ctx := open(t, be.fresh(t)), t.Context()
			for key, owner := range map[string]string{"k1": "a", "k2": "a", "k3": "b"} {
				must(t, s.AcquireLock(ctx, key, owner, time.Minute))
			}
			must(t, s.ReleaseLocksOf(ctx, "a"))
			for key, want := range map[string]bool{"k1": false, "k2": false, "k3": true} {
				if held, err := s.LockHeld(ctx, key); err != nil || held != want {
					t.Errorf("LockHeld(%s) = %v, %v; want %v", key, held, err, want)
				}
			}
			// Owner b's lock is still b's: a cannot take it.
			if err := s.AcquireLock(ctx, "k3", "a", time.Minute); !errors.Is(err, orchestrator.ErrBusy) {
				t.Errorf("AcquireLock of b's lock by a = %v; want ErrBusy", err)
			}
			// Releasing an owner with no locks is not an error.
			must(t, s.ReleaseLocksOf(ctx, "nobody"))
		})
	}
}
