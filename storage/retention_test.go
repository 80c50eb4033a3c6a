package storage

import (
	"testing"
	"time"

	"github.com/wunder/wunder/memory"
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
