package storage

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/wunder/wunder/memory"
	"github.com/wunder/wunder/orchestrator"
)

// Memory tasks that ended before the cutoff go; those that ended after it,
// and queued or running ones of any age, stay.
func TestPruneMemoryTasks(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			s, ctx := open(t, be.fresh(t)), t.Context()
			t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
			end := func(id string, queued time.Time, state memory.TaskState) {
				t.Helper()
				task := &memory.Task{ID: id, UserID: "u_" + id, SessionID: "s_" + id, RunID: "r_" + id, State: memory.Queued, QueuedAt: queued}
				if err := s.EnqueueMemoryTask(ctx, task, 100); err != nil {
					t.Fatal(err)
				}
				if state == memory.Queued {
					return
				}
				got, err := s.ClaimMemoryTask(ctx, "w", queued.Add(time.Minute), 1000*time.Hour)
				if err != nil || got == nil || got.ID != id {
					t.Fatalf("claim %s: %+v %v", id, got, err)
				}
				if state == memory.Running {
					return
				}
				fin := queued.Add(2 * time.Minute)
				got.State, got.FinishedAt = state, &fin
				if err := s.EndMemoryTask(ctx, got); err != nil {
					t.Fatal(err)
				}
			}
			end("old_done", t0, memory.Done)
			end("old_failed", t0.Add(time.Hour), memory.Failed)
			end("old_running", t0.Add(2*time.Hour), memory.Running)
			end("new_done", t0.Add(72*time.Hour), memory.Done)
			end("old_queued", t0.Add(3*time.Hour), memory.Queued)
			n, err := s.PruneMemoryTasks(ctx, t0.Add(48*time.Hour))
			if err != nil || n != 2 {
				t.Fatalf("PruneMemoryTasks = %d, %v; want the 2 that ended before the cutoff", n, err)
			}
			left, err := s.ListMemoryTasks(ctx, memory.TaskFilter{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			ids := map[string]bool{}
			for _, task := range left {
				ids[task.ID] = true
			}
			if len(left) != 3 || !ids["old_running"] || !ids["new_done"] || !ids["old_queued"] {
				t.Fatalf("left %+v; want old_running, new_done and old_queued", left)
			}
		})
	}
}

// PruneEvents takes the events of every run that ended before the
// cutoff, however many batches that needs, and leaves the runs with their
// answers; runs still going, or waiting, keep theirs whatever their age,
// and so do runs that ended after the cutoff.
func TestPruneEvents(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			s, ctx := open(t, be.fresh(t)), t.Context()
			const old = 2*pruneBatch + 7
			must(t, s.Seed(ctx, SeedOptions{Sessions: old, Events: 3 * old})) // finished runs of the past 30 days
			cutoff := time.Now().Add(time.Hour)
			longAgo := time.Now().Add(-90 * 24 * time.Hour)
			later := cutoff.Add(time.Hour)
			must(t, s.CreateSession(ctx, &orchestrator.Session{ID: "live", UserID: "u"}))
			for id, r := range map[string]orchestrator.Run{
				"running":  {State: orchestrator.RunRunning},
				"waiting":  {State: orchestrator.RunWaitingApproval},
				"queued":   {State: orchestrator.RunQueued},
				"late":     {State: orchestrator.RunFinished, FinishedAt: &later},
				"no_event": {State: orchestrator.RunFailed, FinishedAt: &longAgo},
			} {
				r.ID, r.SessionID, r.UserID, r.CreatedAt = id, "live", "u", longAgo
				must(t, s.CreateRun(ctx, &r))
				if id != "no_event" {
					must(t, s.AppendEvents(ctx, []orchestrator.Event{{RunID: id, SessionID: "live", Seq: 1, Type: "progress"}}))
				}
			}
			n, err := s.PruneEvents(ctx, cutoff)
			if err != nil || n != old {
				t.Fatalf("PruneEvents = %d, %v; want the %d seeded runs", n, err, old)
			}
			left, err := s.db.NewSelect().Table("events").Count(ctx)
			must(t, err)
			if left != 4 {
				t.Errorf("%d events left; want the 4 of the runs that did not end before the cutoff", left)
			}
			r, err := s.GetRun(ctx, "seed_run_00000000")
			if err != nil || r.State != orchestrator.RunFinished || r.Answer == "" {
				t.Errorf("a pruned run: %+v %v; want it kept with its answer", r, err)
			}
			if n, err := s.PruneEvents(ctx, cutoff); n != 0 || err != nil {
				t.Errorf("a second pass: %d, %v; want nothing", n, err)
			}
		})
	}
}

// PruneToolLogs takes every tool log written before the cutoff, in as
// many batches as that needs, and no later one; a context that ends stops
// it with its error.
func TestPruneToolLogs(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			s, ctx := open(t, be.fresh(t)), t.Context()
			cutoff := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			const old = 2*pruneBatch + 3
			var logs []*orchestrator.ToolLog
			for i := range old + 5 {
				at := cutoff.Add(-time.Duration(i+1) * time.Minute)
				if i >= old {
					at = cutoff.Add(time.Duration(i-old) * time.Second) // at the cutoff and after: kept
				}
				logs = append(logs, &orchestrator.ToolLog{UserID: "u", Tool: "t", CreatedAt: at})
			}
			must(t, s.AppendToolLogs(ctx, logs))
			gone, cancel := context.WithCancel(ctx)
			cancel()
			if n, err := s.PruneToolLogs(gone, cutoff); n != 0 || !errors.Is(err, context.Canceled) {
				t.Fatalf("with its context ended: %d, %v", n, err)
			}
			n, err := s.PruneToolLogs(ctx, cutoff)
			if err != nil || n != old {
				t.Fatalf("PruneToolLogs = %d, %v; want %d", n, err, old)
			}
			stats, err := s.ToolCallStats(ctx, orchestrator.ToolLogFilter{UserID: "u"})
			if err != nil || len(stats) != 5 {
				t.Fatalf("%d tool logs left (%v); want the 5 from the cutoff on", len(stats), err)
			}
		})
	}
}
