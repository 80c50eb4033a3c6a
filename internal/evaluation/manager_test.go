package evaluation

import (
	"context"
	"errors"
	"iter"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
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

// memStore keeps runs and items in memory, as the store's tables do.
type memStore struct {
	mu    sync.Mutex
	runs  map[string]Run
	items map[string][]Item
}

func newMemStore() *memStore { return &memStore{runs: map[string]Run{}, items: map[string][]Item{}} }

func (s *memStore) SaveRun(_ context.Context, r *Run) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs[r.ID] = *r
	return nil
}

func (s *memStore) SaveItem(_ context.Context, it *Item) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	items := s.items[it.RunID]
	if i := slices.IndexFunc(items, func(x Item) bool { return x.CaseID == it.CaseID }); i >= 0 {
		items[i] = *it
	} else {
		s.items[it.RunID] = append(items, *it)
	}
	return nil
}

func (s *memStore) GetRun(_ context.Context, id string) (*Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok {
		return nil, orchestrator.ErrNotFound
	}
	return &r, nil
}

func (s *memStore) Items(_ context.Context, runID string) ([]*Item, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Item
	for _, it := range s.items[runID] {
		out = append(out, &it)
	}
	return out, nil
}

func (s *memStore) ListRuns(_ context.Context, f Filter) ([]*Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Run
	for _, r := range s.runs {
		if f.Status == "" || r.Status == f.Status {
			out = append(out, &r)
		}
	}
	return out, nil
}

func (s *memStore) DeleteRun(context.Context, string) (int, error) { return 0, errors.New("not here") }

// An evaluation the store says is running while no server runs it (its
// server crashed) is ended by Recover: failed, its unfinished case an
// error, its score over the cases it graded. A run of a live instance, a
// run this server runs, and a finished run are left alone.
func TestRecoverEndsOrphanedRuns(t *testing.T) {
	ctx := t.Context()
	store := newMemStore()
	started := time.Now().Add(-time.Minute).UTC()
	for _, r := range []Run{
		{ID: "ev_gone", Status: StatusRunning, Instance: "crashed", CaseCount: 2, Passed: 1, StartedAt: started},
		{ID: "ev_alive", Status: StatusRunning, Instance: "replica", StartedAt: started},
		{ID: "ev_legacy", Status: StatusRunning, StartedAt: started},
		{ID: "ev_mine_lost", Status: StatusRunning, Instance: "me", StartedAt: started},
		{ID: "ev_done", Status: StatusFinished, Instance: "crashed", StartedAt: started},
	} {
		_ = store.SaveRun(ctx, &r)
	}
	_ = store.SaveItem(ctx, &Item{RunID: "ev_gone", CaseID: "c1", Status: StatusPassed, Score: 1})
	_ = store.SaveItem(ctx, &Item{RunID: "ev_gone", CaseID: "c2", Status: StatusActive})

	sets := []CaseSet{{Name: "s", Cases: []Case{{ID: "c1", Question: "q", Requires: Requires{Tools: []string{"nope"}}}}}}
	release := make(chan struct{})
	inst := orchestratortest.Instances{ID: "me", Gone: map[string]bool{"crashed": true}}
	m := NewManager(skipBackend{release: release}, nil, store, Options{Cases: func() ([]CaseSet, error) { return sets, nil }, Instances: inst})
	defer m.Close()
	defer close(release)
	live, err := m.Start(ctx, Request{ModelName: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if live.Instance != "me" {
		t.Fatalf("a started run records instance %q; want this one's", live.Instance)
	}

	n, err := m.Recover(ctx)
	if err != nil || n != 3 {
		t.Fatalf("Recover = %d, %v; want 3 (the crashed instance's, the legacy one, this one's whose end was lost)", n, err)
	}
	for _, id := range []string{"ev_gone", "ev_legacy", "ev_mine_lost"} {
		r, _ := store.GetRun(ctx, id)
		if r.Status != StatusFailed || r.Error != interruptedError || r.FinishedAt == nil {
			t.Errorf("%s after Recover = %+v; want failed, interrupted, with an end", id, r)
		}
	}
	if r, _ := store.GetRun(ctx, "ev_gone"); r.Passed != 1 || r.Errors != 1 || r.Score != 50 {
		t.Errorf("ev_gone = %d passed, %d errors, score %v; want 1, 1 and 50", r.Passed, r.Errors, r.Score)
	}
	if items, _ := store.Items(ctx, "ev_gone"); items[0].Status != StatusPassed || items[1].Status != StatusError || items[1].Error != interruptedError {
		t.Errorf("ev_gone's items = %+v, %+v; want the passed one kept, the active one an error", items[0], items[1])
	}
	for _, id := range []string{"ev_alive", live.ID} {
		if r, _ := store.GetRun(ctx, id); r.Status != StatusRunning {
			t.Errorf("%s = %s after Recover; want running (its server runs it)", id, r.Status)
		}
	}
	if r, _ := store.GetRun(ctx, "ev_done"); r.Status != StatusFinished {
		t.Errorf("a finished run became %s", r.Status)
	}
	if n, err := m.Recover(ctx); n != 0 || err != nil {
		t.Errorf("Recover again = %d, %v; want nothing to end", n, err)
	}

	// The store cannot say whether an instance is gone: Recover says so
	// and ends nothing it is not sure of.
	_ = store.SaveRun(ctx, &Run{ID: "ev_unsure", Status: StatusRunning, Instance: "replica", StartedAt: started})
	m.opts.Instances = orchestratortest.Instances{ID: "me", Err: errors.New("store away")}
	if _, err := m.Recover(ctx); err == nil {
		t.Error("Recover with the store away: no error")
	}
	if r, _ := store.GetRun(ctx, "ev_unsure"); r.Status != StatusRunning {
		t.Errorf("a run of an instance nobody could check became %s", r.Status)
	}
}

// refusingEnds refuses to store a run that ended failed while refuse is set.
type refusingEnds struct {
	*memStore
	refuse bool
}

func (s *refusingEnds) SaveRun(ctx context.Context, r *Run) error {
	if s.refuse && r.Status == StatusFailed {
		return errors.New("store away")
	}
	return s.memStore.SaveRun(ctx, r)
}

// A Recover whose run's end could not be stored ends it at the next one,
// with the same counts: the case it ended before still counts as an error.
func TestRecoverAgainAfterItsEndWasNotStored(t *testing.T) {
	ctx := t.Context()
	store := &refusingEnds{memStore: newMemStore(), refuse: true}
	started := time.Now().Add(-time.Minute).UTC()
	_ = store.SaveRun(ctx, &Run{ID: "ev_gone", Status: StatusRunning, Instance: "crashed", CaseCount: 2, Passed: 1, StartedAt: started})
	_ = store.SaveItem(ctx, &Item{RunID: "ev_gone", CaseID: "c1", Status: StatusPassed, Score: 1})
	_ = store.SaveItem(ctx, &Item{RunID: "ev_gone", CaseID: "c2", Status: StatusActive})
	m := NewManager(skipBackend{}, nil, store, Options{Instances: orchestratortest.Instances{ID: "me", Gone: map[string]bool{"crashed": true}}})
	defer m.Close()
	if _, err := m.Recover(ctx); err == nil {
		t.Fatal("Recover with the run's end refused: no error")
	}
	store.refuse = false
	if n, err := m.Recover(ctx); n != 1 || err != nil {
		t.Fatalf("Recover again = %d, %v; want the run ended", n, err)
	}
	if r, _ := store.GetRun(ctx, "ev_gone"); r.Status != StatusFailed || r.Passed != 1 || r.Errors != 1 || r.Score != 50 {
		t.Errorf("ev_gone = %s, %d passed, %d errors, score %v; want failed, 1, 1 and 50", r.Status, r.Passed, r.Errors, r.Score)
	}
}
