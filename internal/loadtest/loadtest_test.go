package loadtest_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/loadtest"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

func TestDriveRunsEveryWorker(t *testing.T) {
	var users sync.Map
	var n atomic.Int64
	ss, wall := loadtest.Drive(t.Context(), loadtest.Plan{Workers: 3, Runs: 4}, func(_ context.Context, w int) loadtest.Sample {
		users.Store(w, true)
		if n.Add(1) == 1 {
			return loadtest.Sample{Err: errors.New("boom")}
		}
		return loadtest.Sample{Total: time.Duration(n.Load()) * time.Millisecond, First: time.Millisecond}
	})
	if len(ss) != 12 || wall <= 0 {
		t.Fatalf("%d samples in %v, want 12", len(ss), wall)
	}
	for w := range 3 {
		if _, ok := users.Load(w); !ok {
			t.Errorf("worker %d never ran", w)
		}
	}
	st := loadtest.Summarize(3, ss, wall)
	if st.Runs != 12 || st.Errors != 1 || st.Successes != 11 || st.FirstError != "boom" || st.RunsPerSec <= 0 {
		t.Errorf("summary %+v", st)
	}
	if !(st.P50MS <= st.P95MS && st.P95MS <= st.P99MS && st.P99MS <= 12) || st.FirstP50MS != 1 {
		t.Errorf("percentiles %+v", st)
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(101-i))
	}
	for p, want := range map[int]time.Duration{50: 50, 95: 95, 99: 99, 100: 100} {
		if got := loadtest.Percentile(slices.Clone(d), p); got != want {
			t.Errorf("p%d = %v, want %v", p, got, want)
		}
	}
	if loadtest.Percentile(nil, 50) != 0 {
		t.Error("percentile of nothing")
	}
}

type memStore struct {
	mu   sync.Mutex
	reps []*loadtest.Report
}

func (s *memStore) SaveThroughput(_ context.Context, r *loadtest.Report) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, o := range s.reps {
		if o.ID == r.ID {
			s.reps[i] = r
			return nil
		}
	}
	s.reps = append(s.reps, r)
	return nil
}

func (s *memStore) GetThroughput(_ context.Context, id string) (*loadtest.Report, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.reps {
		if o.ID == id {
			return o, nil
		}
	}
	return nil, orchestrator.ErrNotFound
}

func (s *memStore) ListUnfinished(_ context.Context, limit int) ([]*loadtest.Report, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*loadtest.Report
	for _, r := range slices.Backward(s.reps) {
		if r.Status == loadtest.StatusRunning || r.Status == loadtest.StatusStopping {
			out = append(out, r)
		}
	}
	return out[:min(limit, len(out))], nil
}

func (s *memStore) ListThroughput(_ context.Context, limit int) ([]*loadtest.Report, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.reps)
	slices.Reverse(out)
	return out[:min(limit, len(out))], nil
}

var limits = loadtest.Limits{MaxConcurrency: 8, MaxRunsPerStep: 100, MaxDuration: time.Minute, RequestTimeout: time.Minute}

func TestManagerOneAtATimeAndStop(t *testing.T) {
	started := make(chan string, 100)
	release := make(chan struct{})
	target := func(ctx context.Context, user string, _ loadtest.Request) loadtest.Sample {
		started <- user
		<-release // a run in flight when Stop is asked finishes
		return loadtest.Sample{Total: time.Millisecond, First: time.Millisecond}
	}
	store := &memStore{}
	m := loadtest.NewManager(store, target, limits, nil, nil)
	defer m.Close()
	rep, err := m.Start(t.Context(), loadtest.Request{Concurrency: []int{2, 4}, RunsPerStep: 1})
	if err != nil {
		t.Fatal(err)
	}
	if u := <-started; u != loadtest.UserPrefix+"0" && u != loadtest.UserPrefix+"1" {
		t.Errorf("user %q", u)
	}
	if _, err := m.Start(t.Context(), loadtest.Request{Concurrency: []int{1}, RunsPerStep: 1}); !errors.Is(err, orchestrator.ErrConflict) {
		t.Fatalf("second start: %v, want conflict", err)
	}
	<-started   // both workers of the first step are in a run
	go func() { // release them once Stop has been asked
		for r := range m.Watch(t.Context()) {
			if r.Status == loadtest.StatusStopping {
				close(release)
				return
			}
		}
	}()
	final, err := m.Stop(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if final.ID != rep.ID || final.Status != loadtest.StatusStopped || len(final.Steps) != 1 || final.Steps[0].Runs != 2 || final.Steps[0].Errors != 0 || final.FinishedAt == nil {
		t.Fatalf("after stop: %+v", final)
	}
	if _, err := m.Stop(t.Context()); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("stop with none running: %v", err)
	}
}

func TestManagerLadderReportAndWatch(t *testing.T) {
	target := func(context.Context, string, loadtest.Request) loadtest.Sample {
		return loadtest.Sample{Total: 2 * time.Millisecond, First: time.Millisecond}
	}
	m := loadtest.NewManager(&memStore{}, target, limits, nil, nil)
	defer m.Close()
	rep, err := m.Start(t.Context(), loadtest.Request{Concurrency: []int{1, 2}, RunsPerStep: 3, Question: "q"})
	if err != nil {
		t.Fatal(err)
	}
	var last *loadtest.Report
	for r := range m.Watch(t.Context()) {
		last = r
	}
	if last == nil { // the ladder may have ended before Watch began
		last, err = m.Report(t.Context(), rep.ID)
		if err != nil {
			t.Fatal(err)
		}
	}
	if last.Status != loadtest.StatusFinished || len(last.Steps) != 2 {
		t.Fatalf("final %+v", last)
	}
	for i, st := range last.Steps {
		if want := []int{1, 2}[i]; st.Concurrency != want || st.Runs != 3*want || st.Errors != 0 || st.P99MS != 2 {
			t.Errorf("step %d: %+v", i, st)
		}
	}
	got, err := m.Report(t.Context(), "")
	if err != nil || got.ID != rep.ID {
		t.Errorf("latest report: %v %v", got, err)
	}
}

// A request outside the limits is refused naming the field and the
// config key that bounds it; a good one gets the default question.
func TestLimits(t *testing.T) {
	levels := func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = 1
		}
		return out
	}
	for _, tc := range []struct {
		req  loadtest.Request
		want string
	}{
		{loadtest.Request{RunsPerStep: 1}, "concurrency_list must list at least one level"},
		{loadtest.Request{Concurrency: levels(33), RunsPerStep: 1}, "concurrency_list has at most 32 levels, got 33"},
		{loadtest.Request{Concurrency: []int{1, 0}, RunsPerStep: 1}, "concurrency_list[1] must be between 1 and 8 (throughput.max_concurrency), got 0"},
		{loadtest.Request{Concurrency: []int{9}, RunsPerStep: 1}, "concurrency_list[0] must be between 1 and 8 (throughput.max_concurrency), got 9"},
		{loadtest.Request{Concurrency: []int{1}}, "set exactly one of duration_s and runs_per_step"},
		{loadtest.Request{Concurrency: []int{1}, RunsPerStep: 1, DurationS: 1}, "set exactly one of duration_s and runs_per_step"},
		{loadtest.Request{Concurrency: []int{1}, RunsPerStep: 1, DurationS: -1}, "duration_s and runs_per_step must not be negative"},
		{loadtest.Request{Concurrency: []int{1}, RunsPerStep: 101}, "runs_per_step must be at most 100 (throughput.max_runs_per_step), got 101"},
		{loadtest.Request{Concurrency: []int{1, 2}, DurationS: 31}, "duration_s × levels must be at most 1m0s (throughput.max_duration_s)"},
		{loadtest.Request{Concurrency: []int{1}, RunsPerStep: 1, Question: strings.Repeat("x", 8193)}, "question is longer than 8192 bytes"},
	} {
		err := limits.Validate(&tc.req)
		if !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%d levels, runs %d, duration %d) = %v, want invalid argument %q",
				len(tc.req.Concurrency), tc.req.RunsPerStep, tc.req.DurationS, err, tc.want)
		}
	}
	for _, req := range []loadtest.Request{
		{Concurrency: []int{1, 8}, DurationS: 30},
		{Concurrency: levels(32), RunsPerStep: 100},
		{Concurrency: []int{1}, RunsPerStep: 1, Question: strings.Repeat("x", 8192)},
	} {
		if err := limits.Validate(&req); err != nil {
			t.Errorf("valid request refused: %v", err)
		}
	}
	req := loadtest.Request{Concurrency: []int{1}, RunsPerStep: 1}
	if err := limits.Validate(&req); err != nil || req.Question != "hello" {
		t.Errorf("no question: %v, question %q; want hello", err, req.Question)
	}
}

// finalFailStore stores every report but a finished one.
type finalFailStore struct{ memStore }

func (s *finalFailStore) SaveThroughput(ctx context.Context, r *loadtest.Report) error {
	if r.FinishedAt != nil {
		return errors.New("disk full")
	}
	return s.memStore.SaveThroughput(ctx, r)
}

// A final report the store refused is not passed off as stored: Stop
// answers the real final report, saying it was not stored, not the
// store's stale running one.
func TestManagerFinalNotStored(t *testing.T) {
	started := make(chan struct{}, 10)
	target := func(ctx context.Context, _ string, _ loadtest.Request) loadtest.Sample {
		select {
		case started <- struct{}{}:
		default:
		}
		return loadtest.Sample{Total: time.Millisecond, First: time.Millisecond}
	}
	m := loadtest.NewManager(&finalFailStore{}, target, limits, nil, nil)
	defer m.Close()
	if _, err := m.Start(t.Context(), loadtest.Request{Concurrency: []int{1}, DurationS: 60}); err != nil {
		t.Fatal(err)
	}
	<-started
	final, err := m.Stop(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if final.Status != loadtest.StatusStopped || final.FinishedAt == nil || !strings.Contains(final.Error, "not stored") {
		t.Errorf("after stop: %+v; want stopped, saying its final report was not stored", final)
	}
}

// A load test the store says is running or stopping while no server runs
// it (its server crashed) is ended by Recover: stopped, saying why. One of
// a live instance, the one this server runs, and an ended one are left
// alone.
func TestRecoverEndsOrphanedTests(t *testing.T) {
	ctx := t.Context()
	store := &memStore{}
	started := time.Now().Add(-time.Minute).UTC()
	for _, r := range []loadtest.Report{
		{ID: "lt_gone", Status: loadtest.StatusRunning, Instance: "crashed", Current: 4, StartedAt: started},
		{ID: "lt_stopping", Status: loadtest.StatusStopping, Instance: "crashed", StartedAt: started},
		{ID: "lt_legacy", Status: loadtest.StatusRunning, StartedAt: started},
		{ID: "lt_alive", Status: loadtest.StatusRunning, Instance: "replica", StartedAt: started},
		{ID: "lt_done", Status: loadtest.StatusFinished, Instance: "crashed", StartedAt: started},
	} {
		_ = store.SaveThroughput(ctx, &r)
	}
	release := make(chan struct{})
	target := func(ctx context.Context, _ string, _ loadtest.Request) loadtest.Sample {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return loadtest.Sample{Total: time.Millisecond, First: time.Millisecond}
	}
	m := loadtest.NewManager(store, target, limits, orchestratortest.Instances{ID: "me", Gone: map[string]bool{"crashed": true}}, nil)
	defer m.Close()
	defer close(release)
	live, err := m.Start(ctx, loadtest.Request{Concurrency: []int{1}, RunsPerStep: 1})
	if err != nil {
		t.Fatal(err)
	}
	if live.Instance != "me" {
		t.Fatalf("a started test records instance %q; want this one's", live.Instance)
	}
	n, err := m.Recover(ctx)
	if err != nil || n != 3 {
		t.Fatalf("Recover = %d, %v; want 3", n, err)
	}
	for _, id := range []string{"lt_gone", "lt_stopping", "lt_legacy"} {
		r, _ := store.GetThroughput(ctx, id)
		if r.Status != loadtest.StatusStopped || !strings.Contains(r.Error, "interrupted") || r.FinishedAt == nil || r.Current != 0 {
			t.Errorf("%s after Recover = %+v; want stopped, interrupted, with an end", id, r)
		}
	}
	for id, want := range map[string]string{"lt_alive": loadtest.StatusRunning, live.ID: loadtest.StatusRunning, "lt_done": loadtest.StatusFinished} {
		if r, _ := store.GetThroughput(ctx, id); r.Status != want {
			t.Errorf("%s = %s after Recover; want %s", id, r.Status, want)
		}
	}
	if n, err := m.Recover(ctx); n != 0 || err != nil {
		t.Errorf("Recover again = %d, %v; want nothing to end", n, err)
	}
}
