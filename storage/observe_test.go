package storage

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// Options.Observe hears every operation: bun's queries by operation and
// table, and the group-commit writes as their callers wait for them.
func TestObserveOps(t *testing.T) {
	ctx := t.Context()
	var mu sync.Mutex
	var ops []string
	s, err := Open(ctx, Options{SQLitePath: filepath.Join(t.TempDir(), "w.db"), AutoMigrate: true,
		Observe: func(_ context.Context, op string, start time.Time, _ error) {
			if start.IsZero() {
				t.Errorf("op %s reported without its start", op)
			}
			mu.Lock()
			ops = append(ops, op)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	must(t, s.CreateSession(ctx, &orchestrator.Session{ID: "sess_a", UserID: "alice", CreatedAt: now, UpdatedAt: now}))
	if _, err := s.GetSession(ctx, "sess_a"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"write", "select_sessions"} {
		if !slices.Contains(ops, want) {
			t.Errorf("ops %v: no %q", ops, want)
		}
	}
}
