package evaluation

import (
	"context"
	"errors"
	"iter"
	"sync"
	"testing"

	"github.com/wunder/wunder/orchestrator"
)

// skipBackend offers no tools, so every case that requires one is skipped
// without a run; it answers once release is closed.
type skipBackend struct {
	Backend
	release chan struct{}
}

func (b skipBackend) Tools(ctx context.Context, _ string) ([]orchestrator.ToolSpec, error) {
	select {
	case <-b.release:
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// failingStore stores the first SaveRun (the start) and fails every later
// one (the end).
type failingStore struct {
	Store
	mu    sync.Mutex
	saves int
}

func (s *failingStore) SaveRun(context.Context, *Run) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saves++
	if s.saves > 1 {
		return errors.New("disk full")
	}
	return nil
}

func (s *failingStore) SaveItem(context.Context, *Item) error { return nil }

// A run whose end cannot be stored is not told finished: its watchers get
// eval_finished with status failed, naming the lost result.
func TestEvaluationEndNotStoredIsNotFinished(t *testing.T) {
	sets := []CaseSet{{Name: "s", Cases: []Case{{ID: "c1", Question: "q", Requires: Requires{Tools: []string{"nope"}}}}}}
	release := make(chan struct{})
	m := NewManager(skipBackend{release: release}, nil, &failingStore{}, Options{Cases: func() ([]CaseSet, error) { return sets, nil }})
	defer m.Close()
	run, err := m.Start(t.Context(), Request{ModelName: "m"})
	if err != nil {
		t.Fatal(err)
	}
	var last Event
	// Watched live: the run cannot end before its first event is read.
	next, stop := iter.Pull2(m.Watch(t.Context(), run.ID))
	defer stop()
	for first := true; ; first = false {
		ev, err, ok := next()
		if !ok {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		last = ev
		if first {
			close(release)
		}
	}
	fin, ok := last.Data.(Run)
	if last.Type != "eval_finished" || !ok {
		t.Fatalf("last event = %+v; want eval_finished with the run", last)
	}
	if fin.Status != StatusFailed || fin.Error == "" || fin.Skipped != 1 {
		t.Errorf("finished run = %+v; want failed (its result not stored) after one skipped case", fin)
	}
}
