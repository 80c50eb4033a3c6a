package loadtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/loadtest"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// savesStore records every report it is given, as stored at that moment.
type savesStore struct {
	memStore
	// mu guards saves.
	mu    sync.Mutex
	saves []loadtest.Report
	fail  error
}

func (s *savesStore) SaveThroughput(ctx context.Context, r *loadtest.Report) error {
	s.mu.Lock()
	if s.fail != nil {
		s.mu.Unlock()
		return s.fail
	}
	cp := *r
	cp.Steps = slices.Clone(r.Steps)
	s.saves = append(s.saves, cp)
	s.mu.Unlock()
	return s.memStore.SaveThroughput(ctx, r)
}

// watchAfter watches the running test, calls release once the watch has
// begun (so the test cannot end unseen), and returns the final report.
func watchAfter(t *testing.T, m *loadtest.Manager, release func()) *loadtest.Report {
	t.Helper()
	next, stop := iter.Pull(m.Watch(t.Context()))
	defer stop()
	last, ok := next()
	if !ok {
		t.Fatal("Watch yielded nothing: no test is running")
	}
	release()
	for r, ok := next(); ok; r, ok = next() {
		last = r
	}
	return last
}

// Each worker of a step is its own user, wunder-throughput-<n>; every run
// gets the request (with the default question) and a context bounded by
// the request timeout; the report says who the users are and is stored
// at the start, after each step and at the end.
func TestManagerRunsTheLadder(t *testing.T) {
	type call struct {
		user     string
		question string
		deadline time.Duration
	}
	var mu sync.Mutex
	var calls []call
	gate := make(chan struct{})
	target := func(ctx context.Context, user string, req loadtest.Request) loadtest.Sample {
		<-gate
		d, _ := ctx.Deadline()
		mu.Lock()
		calls = append(calls, call{user, req.Question, time.Until(d)})
		mu.Unlock()
		return loadtest.Sample{Total: ms, First: ms}
	}
	store := &savesStore{}
	lim := limits
	lim.RequestTimeout = 7 * time.Second
	m := loadtest.NewManager(store, target, lim, nil, nil)
	defer m.Close()
	rep, err := m.Start(t.Context(), loadtest.Request{Concurrency: []int{1, 3}, RunsPerStep: 2, ModelName: "gpt", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rep)
	if rep.Status != loadtest.StatusRunning || rep.UserPrefix != loadtest.UserPrefix || rep.Request.Question != "hello" ||
		rep.Request.ModelName != "gpt" || !strings.Contains(string(b), `"steps":[]`) || !strings.HasPrefix(rep.ID, "tp_") {
		t.Errorf("started report = %s", b)
	}
	final := watchAfter(t, m, func() { close(gate) })
	if final.ID != rep.ID || final.Status != loadtest.StatusFinished || len(final.Steps) != 2 || final.Current != 0 || final.FinishedAt == nil {
		t.Fatalf("final = %+v", final)
	}

	mu.Lock()
	defer mu.Unlock()
	users := map[string]int{}
	for _, c := range calls {
		users[c.user]++
		if c.question != "hello" || c.deadline <= 0 || c.deadline > 7*time.Second {
			t.Errorf("call %+v: want the default question and a deadline within the 7s request timeout", c)
		}
	}
	// Step 1: user 0 twice; step 2: users 0, 1, 2 twice each.
	want := map[string]int{loadtest.UserPrefix + "0": 4, loadtest.UserPrefix + "1": 2, loadtest.UserPrefix + "2": 2}
	if len(users) != len(want) {
		t.Errorf("users = %v, want %v", users, want)
	}
	for u, n := range want {
		if users[u] != n {
			t.Errorf("users = %v, want %v", users, want)
			break
		}
	}

	store.mu.Lock()
	defer store.mu.Unlock()
	var shape []string
	for _, s := range store.saves {
		shape = append(shape, s.Status+":"+strings.Repeat("s", len(s.Steps)))
	}
	if got := strings.Join(shape, " "); got != "running: running:s running:ss finished:ss" {
		t.Errorf("stored reports = %q, want the start, each step, the end", got)
	}
}

// A target that panics (on the step's worker goroutines) does not take
// the server down: the ladder stops at that step, the test ends finished
// saying what went wrong, and the next one can start.
func TestManagerSurvivesAPanickingTarget(t *testing.T) {
	gate := make(chan struct{})
	target := func(context.Context, string, loadtest.Request) loadtest.Sample {
		<-gate
		panic("boom")
	}
	m := loadtest.NewManager(&memStore{}, target, limits, nil, nil)
	defer m.Close()
	if _, err := m.Start(t.Context(), loadtest.Request{Concurrency: []int{2, 4}, RunsPerStep: 3}); err != nil {
		t.Fatal(err)
	}
	final := watchAfter(t, m, func() { close(gate) })
	if final.Status != loadtest.StatusFinished || final.Error != "internal error: boom" || final.FinishedAt == nil ||
		len(final.Steps) != 1 || final.Steps[0].Errors == 0 || final.Steps[0].Successes != 0 {
		t.Errorf("after a panic: %+v; want it finished at the first step, saying why", final)
	}
	if _, err := m.Start(t.Context(), loadtest.Request{Concurrency: []int{1}, RunsPerStep: 1}); err != nil {
		t.Errorf("a start after the panic: %v", err)
	}
}

// Close stops a running test and cancels its runs in flight (Stop lets
// them finish); the report is stored stopped, the cancelled runs counted
// as errors.
func TestManagerCloseCancelsRunsInFlight(t *testing.T) {
	inRun := make(chan struct{}, 4)
	target := func(ctx context.Context, _ string, _ loadtest.Request) loadtest.Sample {
		inRun <- struct{}{}
		<-ctx.Done()
		return loadtest.Sample{Err: ctx.Err()}
	}
	store := &memStore{}
	m := loadtest.NewManager(store, target, limits, nil, nil)
	rep, err := m.Start(t.Context(), loadtest.Request{Concurrency: []int{2, 4}, RunsPerStep: 1})
	if err != nil {
		t.Fatal(err)
	}
	<-inRun
	<-inRun
	m.Close()
	got, err := store.GetThroughput(t.Context(), rep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != loadtest.StatusStopped || len(got.Steps) != 1 || got.Steps[0].Errors != 2 || got.Steps[0].FirstError != context.Canceled.Error() {
		t.Errorf("after Close: %+v", got)
	}
}

// The status, report and watch routes with and without a test running.
func TestManagerStatusAndReports(t *testing.T) {
	gate := make(chan struct{})
	target := func(context.Context, string, loadtest.Request) loadtest.Sample {
		<-gate
		return loadtest.Sample{Total: ms, First: ms}
	}
	store := &memStore{}
	m := loadtest.NewManager(store, target, limits, nil, nil)
	defer m.Close()
	if _, err := m.Report(t.Context(), ""); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("Report with none ever run = %v, want not found", err)
	}
	if _, err := m.Report(t.Context(), "tp_missing"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("Report of an unknown id = %v, want not found", err)
	}
	for r := range m.Watch(t.Context()) {
		t.Errorf("Watch with none running yielded %+v", r)
	}
	st, err := m.Status(t.Context())
	if err != nil || st.Active != nil || len(st.History) != 0 {
		t.Errorf("idle status = %+v, %v", st, err)
	}

	rep, err := m.Start(t.Context(), loadtest.Request{Concurrency: []int{1}, RunsPerStep: 1})
	if err != nil {
		t.Fatal(err)
	}
	// What Start returned is a copy: changing it changes nothing.
	rep.Request.Concurrency[0] = 99
	rep.Steps = append(rep.Steps, loadtest.Step{})
	cur, err := m.Report(t.Context(), "")
	if err != nil || cur.ID != rep.ID || cur.Request.Concurrency[0] != 1 || len(cur.Steps) != 0 {
		t.Errorf("running report = %+v, %v; want the running test unchanged", cur, err)
	}
	st, err = m.Status(t.Context())
	if err != nil || st.Active == nil || st.Active.ID != rep.ID || len(st.History) != 1 {
		t.Errorf("status while running = %+v, %v", st, err)
	}
	watchAfter(t, m, func() { close(gate) })
	st, _ = m.Status(t.Context())
	latest, err := m.Report(t.Context(), "")
	if st.Active != nil || err != nil || latest.ID != rep.ID || latest.Status != loadtest.StatusFinished {
		t.Errorf("after the end: active %+v, latest %+v, %v", st.Active, latest, err)
	}
}

// A test that cannot be recorded does not start: the store's error is
// returned and nothing stays active; a lease that cannot be held makes
// the feature unavailable.
func TestManagerStartFailures(t *testing.T) {
	target := func(context.Context, string, loadtest.Request) loadtest.Sample { return loadtest.Sample{Total: ms} }
	store := &savesStore{fail: errors.New("disk full")}
	m := loadtest.NewManager(store, target, limits, nil, nil)
	defer m.Close()
	req := loadtest.Request{Concurrency: []int{1}, RunsPerStep: 1}
	if _, err := m.Start(t.Context(), req); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Start with the store failing = %v", err)
	}
	if st, _ := m.Status(t.Context()); st.Active != nil {
		t.Errorf("a test that was not stored is active: %+v", st.Active)
	}
	store.mu.Lock()
	store.fail = nil
	store.mu.Unlock()
	if _, err := m.Start(t.Context(), req); err != nil {
		t.Errorf("Start once the store is back: %v", err)
	}

	leased := loadtest.NewManager(&memStore{}, target, limits, leaseless{orchestratortest.Instances{ID: "me"}}, nil)
	defer leased.Close()
	if _, err := leased.Start(t.Context(), req); !errors.Is(err, orchestrator.ErrUnavailable) {
		t.Errorf("Start without a lease = %v, want unavailable", err)
	}
}

// leaseless cannot hold its lease.
type leaseless struct{ orchestratortest.Instances }

func (leaseless) HoldLease(context.Context) error { return errors.New("store unreachable") }
