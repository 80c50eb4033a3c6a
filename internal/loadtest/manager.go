package loadtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// UserPrefix starts the user id of every run of an admin load test
// ("wunder-throughput-<worker>"), so the monitor shows them as such; each
// worker is its own user, so the per-user run limit holds.
const UserPrefix = "wunder-throughput-"

// Request is a load test as an admin asks for it (the original wunder's
// /wunder/admin/throughput/start, with a ladder of concurrency levels).
type Request struct {
	// Concurrency is the ladder: one step per level, in order.
	Concurrency []int `json:"concurrency_list"`
	// DurationS makes each step last this long; RunsPerStep instead makes
	// each worker of a step run this many times. Exactly one is set.
	DurationS   int      `json:"duration_s,omitempty"`
	RunsPerStep int      `json:"runs_per_step,omitempty"`
	Question    string   `json:"question"`
	ModelName   string   `json:"model_name,omitempty"`
	Stream      bool     `json:"stream"`
	ToolNames   []string `json:"tool_names,omitempty"`
}

// Limits bound load tests (config throughput.*).
type Limits struct {
	MaxConcurrency, MaxRunsPerStep int
	MaxDuration, RequestTimeout    time.Duration
}

// Status values of a [Report].
const (
	StatusRunning  = "running"
	StatusStopping = "stopping"
	StatusFinished = "finished"
	StatusStopped  = "stopped"
)

// Report is a load test: what was asked, its state, and a [Step] per level
// done so far.
type Report struct {
	ID         string     `json:"run_id"`
	Status     string     `json:"status"`
	Request    Request    `json:"request"`
	UserPrefix string     `json:"user_id_prefix"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	ElapsedS   float64    `json:"elapsed_s"`
	// Current is the concurrency of the step running (0 = none).
	Current int    `json:"current_concurrency,omitempty"`
	Steps   []Step `json:"steps"`
	// Error says what went wrong with the test itself (a panic, its final
	// report not stored, its server stopped).
	Error string `json:"error,omitempty"`
	// Instance is the server instance that runs it: when that instance is
	// gone, another one ends the test (Recover).
	Instance string `json:"instance,omitempty"`
}

func (r *Report) clone() *Report {
	c := *r
	c.Steps = slices.Clone(r.Steps)
	c.Request.Concurrency = slices.Clone(r.Request.Concurrency)
	return &c
}

// Store keeps reports across restarts.
type Store interface {
	SaveThroughput(ctx context.Context, r *Report) error
	// GetThroughput returns a report; orchestrator.ErrNotFound if none.
	GetThroughput(ctx context.Context, id string) (*Report, error)
	// ListThroughput returns the newest reports first.
	ListThroughput(ctx context.Context, limit int) ([]*Report, error)
	// ListUnfinished returns the newest reports still running or
	// stopping first.
	ListUnfinished(ctx context.Context, limit int) ([]*Report, error)
}

// Target makes one run of a load test as userID and measures it.
type Target func(ctx context.Context, userID string, req Request) Sample

// Manager runs one load test at a time. Its goroutine model: Start
// launches the ladder in a goroutine the Manager owns (detached from the
// request that started it); Stop cancels it and Close waits for it.
type Manager struct {
	store  Store
	target Target
	limits Limits
	inst   orchestrator.Instances // nil: no instance recorded
	log    *slog.Logger

	// mu guards the fields below.
	mu      sync.Mutex
	active  *Report
	cancel  context.CancelFunc // stops new runs (Stop)
	abort   context.CancelFunc // cancels runs in flight too (Close)
	done    chan struct{}
	changed chan struct{} // closed and replaced on every change
	// last is the final report of the test that ended last, as Stop and
	// the watchers are told it (with Error when it was not stored).
	last *Report
}

// NewManager returns a manager making runs with target. inst, when not
// nil, records which server instance runs a test, so that Recover can end
// one whose instance is gone.
func NewManager(store Store, target Target, limits Limits, inst orchestrator.Instances, log *slog.Logger) *Manager {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Manager{store: store, target: target, limits: limits, inst: inst, log: log, changed: make(chan struct{})}
}

// Validate checks a request against the limits (ErrInvalidArgument).
func (l Limits) Validate(req *Request) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", orchestrator.ErrInvalidArgument, fmt.Sprintf(format, a...))
	}
	if len(req.Concurrency) == 0 {
		return bad("concurrency_list must list at least one level")
	}
	if len(req.Concurrency) > 32 {
		return bad("concurrency_list has at most 32 levels, got %d", len(req.Concurrency))
	}
	for i, c := range req.Concurrency {
		if c < 1 || c > l.MaxConcurrency {
			return bad("concurrency_list[%d] must be between 1 and %d (throughput.max_concurrency), got %d", i, l.MaxConcurrency, c)
		}
	}
	switch {
	case (req.DurationS > 0) == (req.RunsPerStep > 0):
		return bad("set exactly one of duration_s and runs_per_step (each > 0)")
	case req.DurationS < 0 || req.RunsPerStep < 0:
		return bad("duration_s and runs_per_step must not be negative")
	case req.RunsPerStep > l.MaxRunsPerStep:
		return bad("runs_per_step must be at most %d (throughput.max_runs_per_step), got %d", l.MaxRunsPerStep, req.RunsPerStep)
	case req.DurationS > 0 && time.Duration(req.DurationS)*time.Second*time.Duration(len(req.Concurrency)) > l.MaxDuration:
		return bad("duration_s × levels must be at most %s (throughput.max_duration_s)", l.MaxDuration)
	case req.Question == "":
		req.Question = "hello"
	}
	if len(req.Question) > 8192 {
		return bad("question is longer than 8192 bytes")
	}
	return nil
}

// Start validates req and starts the ladder; orchestrator.ErrConflict if a
// load test is running in this process.
func (m *Manager) Start(ctx context.Context, req Request) (*Report, error) {
	if err := m.limits.Validate(&req); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.active != nil {
		return nil, fmt.Errorf("%w: load test %s is %s; stop it first", orchestrator.ErrConflict, m.active.ID, m.active.Status)
	}
	rep := &Report{ID: newID(), Status: StatusRunning, Request: req, UserPrefix: UserPrefix, StartedAt: time.Now().UTC(), Steps: []Step{}}
	if m.inst != nil {
		// Recorded as this instance's only once its lease is held, so no
		// other instance takes it for orphaned.
		if err := m.inst.HoldLease(ctx); err != nil {
			return nil, fmt.Errorf("%w: %v", orchestrator.ErrUnavailable, err)
		}
		rep.Instance = m.inst.InstanceID()
	}
	if err := m.store.SaveThroughput(ctx, rep); err != nil {
		return nil, err
	}
	hard, abort := context.WithCancel(context.WithoutCancel(ctx))
	runCtx, cancel := context.WithTimeout(hard, m.limits.MaxDuration)
	m.active, m.cancel, m.abort, m.done = rep, cancel, abort, make(chan struct{})
	m.notifyLocked()
	go m.run(runCtx, hard, rep, m.done)
	return rep.clone(), nil
}

// run plays the ladder, then stores the final report. When ctx ends
// (Stop, or max duration) no run starts any more and the runs in flight
// finish; they are cancelled only when hard ends (Close).
func (m *Manager) run(ctx, hard context.Context, rep *Report, done chan struct{}) {
	defer close(done)
	defer func() {
		if p := recover(); p != nil {
			m.log.Error("load test panicked", "run_id", rep.ID, "panic", p)
			m.update(func() { rep.Error = fmt.Sprint("internal error: ", p) })
		}
		m.finish(rep)
	}()
	req := rep.Request
	for _, level := range req.Concurrency {
		if ctx.Err() != nil {
			return
		}
		m.update(func() { rep.Current = level })
		plan := Plan{Workers: level, Runs: req.RunsPerStep, Duration: time.Duration(req.DurationS) * time.Second}
		// The target runs on Drive's goroutines, which the recover above
		// does not cover: a panic there ends the step and then the test.
		stepCtx, stopStep := context.WithCancel(ctx)
		var panicked atomic.Pointer[string]
		samples, wall := Drive(stepCtx, plan, func(_ context.Context, worker int) (s Sample) {
			defer func() {
				if p := recover(); p != nil {
					msg := fmt.Sprint(p)
					panicked.CompareAndSwap(nil, &msg)
					stopStep()
					s = Sample{Err: fmt.Errorf("internal error: %s", msg)}
				}
			}()
			rctx, cancel := context.WithTimeout(hard, m.limits.RequestTimeout)
			defer cancel()
			return m.target(rctx, fmt.Sprintf("%s%d", UserPrefix, worker), req)
		})
		stopStep()
		step := Summarize(level, samples, wall)
		m.update(func() { rep.Steps = append(rep.Steps, step) })
		if err := m.store.SaveThroughput(context.WithoutCancel(ctx), m.snapshot()); err != nil {
			m.log.Warn("load test step not stored", "run_id", rep.ID, "err", err)
		}
		if p := panicked.Load(); p != nil {
			m.log.Error("load test panicked", "run_id", rep.ID, "panic", *p)
			m.update(func() { rep.Error = "internal error: " + *p })
			return
		}
	}
}

func (m *Manager) finish(rep *Report) {
	m.mu.Lock()
	now := time.Now().UTC()
	rep.FinishedAt, rep.Current = &now, 0
	rep.ElapsedS = round(now.Sub(rep.StartedAt).Seconds())
	if rep.Status == StatusStopping {
		rep.Status = StatusStopped
	} else {
		rep.Status = StatusFinished
	}
	final := rep.clone()
	m.mu.Unlock()
	// Stored before it stops being active, so whoever sees it end reads
	// the final report.
	if err := m.store.SaveThroughput(context.Background(), final); err != nil {
		m.log.Warn("load test report not stored", "run_id", rep.ID, "err", err)
		final.Error = "the final report was not stored: " + err.Error()
	}
	m.mu.Lock()
	m.cancel()
	m.abort()
	m.active, m.last = nil, final
	m.notifyLocked()
	m.mu.Unlock()
}

// interruptedError is the error of a load test Recover ended.
const interruptedError = "interrupted: the server that ran it stopped"

// recoverScan is how many unfinished reports one Recover looks at.
const recoverScan = 1000

// Recover ends the load tests the store says are running (or stopping)
// that no server runs any more: this one does not, and their instance is
// gone, is this one (the final report was not stored), or is not recorded
// (stored before instances were). Each is stored stopped, its error
// saying why. It returns how many it ended. Every server calls it at
// start and then periodically.
func (m *Manager) Recover(ctx context.Context) (int, error) {
	reps, err := m.store.ListUnfinished(ctx, recoverScan)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range reps {
		m.mu.Lock()
		active := m.active != nil && m.active.ID == r.ID
		m.mu.Unlock()
		if active {
			continue
		}
		gone, err := orchestrator.Orphaned(ctx, m.inst, r.Instance)
		if err != nil {
			return n, err
		}
		if !gone {
			continue
		}
		now := time.Now().UTC()
		r.Status, r.Current, r.Error, r.FinishedAt = StatusStopped, 0, interruptedError, &now
		r.ElapsedS = round(now.Sub(r.StartedAt).Seconds())
		if err := m.store.SaveThroughput(ctx, r); err != nil {
			return n, err
		}
		m.log.Warn("load test ended: the server that ran it stopped", "run_id", r.ID, "instance", r.Instance)
		n++
	}
	return n, nil
}

func (m *Manager) update(f func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f()
	if m.active != nil {
		m.active.ElapsedS = round(time.Since(m.active.StartedAt).Seconds())
	}
	m.notifyLocked()
}

func (m *Manager) notifyLocked() {
	close(m.changed)
	m.changed = make(chan struct{})
}

func (m *Manager) snapshot() *Report {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.active == nil {
		return nil
	}
	return m.active.clone()
}

// Stop stops the running load test: no run starts any more, the runs under
// way finish (bounded by the request timeout), and the report is stored as
// stopped. It waits until the ladder has ended. orchestrator.ErrNotFound
// if none runs.
func (m *Manager) Stop(ctx context.Context) (*Report, error) {
	m.mu.Lock()
	rep, done := m.active, m.done
	if rep == nil {
		m.mu.Unlock()
		return nil, fmt.Errorf("%w: no load test is running", orchestrator.ErrNotFound)
	}
	rep.Status = StatusStopping
	m.cancel()
	m.notifyLocked()
	m.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if last := m.lastOf(rep.ID); last != nil {
		return last, nil
	}
	return m.store.GetThroughput(ctx, rep.ID)
}

// lastOf is a copy of the final report of test id when it is the one that
// ended last, else nil.
func (m *Manager) lastOf(id string) *Report {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last == nil || m.last.ID != id {
		return nil
	}
	return m.last.clone()
}

// Status is the running load test (nil if none) and the latest reports.
type Status struct {
	Active  *Report   `json:"active"`
	History []*Report `json:"history"`
}

// Status reports the running load test and the last 50 reports.
func (m *Manager) Status(ctx context.Context) (*Status, error) {
	hist, err := m.store.ListThroughput(ctx, 50)
	if err != nil {
		return nil, err
	}
	return &Status{Active: m.snapshot(), History: hist}, nil
}

// Report returns a report: id's, or with "" the running one, else the
// latest.
func (m *Manager) Report(ctx context.Context, id string) (*Report, error) {
	if id != "" {
		return m.store.GetThroughput(ctx, id)
	}
	if r := m.snapshot(); r != nil {
		return r, nil
	}
	list, err := m.store.ListThroughput(ctx, 1)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("%w: no load test has run", orchestrator.ErrNotFound)
	}
	return list[0], nil
}

// Watch yields the running load test's report now and after every change
// (a step begins or ends, a stop is asked), and last its final report
// (with Error when it was not stored); it yields nothing when none runs. It ends when ctx does.
func (m *Manager) Watch(ctx context.Context) iter.Seq[*Report] {
	return func(yield func(*Report) bool) {
		m.mu.Lock()
		if m.active == nil {
			m.mu.Unlock()
			return
		}
		id := m.active.ID
		for {
			cur, ch := m.active, m.changed
			var snap *Report
			if cur != nil && cur.ID == id {
				snap = cur.clone()
			}
			m.mu.Unlock()
			if snap == nil {
				if final := m.lastOf(id); final != nil {
					yield(final)
				} else if final, err := m.store.GetThroughput(ctx, id); err == nil {
					yield(final)
				}
				return
			}
			if !yield(snap) {
				return
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
			m.mu.Lock()
		}
	}
}

// Close stops a running load test, cancelling its runs in flight, and
// waits for it.
func (m *Manager) Close() {
	m.mu.Lock()
	done := m.done
	if m.active != nil {
		m.active.Status = StatusStopping
		m.cancel()
		m.abort()
	}
	m.mu.Unlock()
	if done != nil {
		<-done
	}
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "tp_" + hex.EncodeToString(b[:])
}
