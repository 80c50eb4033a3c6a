package evaluation

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

var _ Backend = (*orchestrator.Orchestrator)(nil)

// Run statuses; item statuses add active, passed, failed, skipped, error.
const (
	StatusRunning   = "running"
	StatusFinished  = "finished"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
	StatusActive    = "active"
	StatusPassed    = "passed"
	StatusSkipped   = "skipped"
	StatusError     = "error"
)

// UserPrefix starts the user id of every case run
// ("wunder-eval-<run>-<case>"): a user, so a workspace, per run and case.
const UserPrefix = "wunder-eval-"

// Manager runs evaluations and serves their results.
type Manager struct {
	b     Backend
	ws    Workspace
	store Store
	opts  Options
	wg    sync.WaitGroup

	// mu guards active.
	mu     sync.Mutex
	active map[string]*live
}

// live is a running evaluation: its event log, followed by watchers.
type live struct {
	cancel  context.CancelFunc
	events  []Event
	done    bool
	changed chan struct{}
}

// NewManager returns a Manager.
func NewManager(b Backend, ws Workspace, store Store, opts Options) *Manager {
	if opts.CaseTimeout <= 0 {
		opts.CaseTimeout = 5 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Manager{b: b, ws: ws, store: store, opts: opts, active: map[string]*live{}}
}

// Cases returns the case sets.
func (m *Manager) Cases() ([]CaseSet, error) { return m.opts.Cases() }

// Start checks the request, stores the run and starts it.
func (m *Manager) Start(ctx context.Context, req Request) (*Run, error) {
	invalid := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", orchestrator.ErrInvalidArgument, fmt.Sprintf(format, a...))
	}
	model := req.ModelName
	if model == "" && m.opts.DefaultModel != nil {
		model = m.opts.DefaultModel()
	}
	if m.opts.HasModel != nil && !m.opts.HasModel(model) {
		return nil, invalid("model_name %q is not a configured model", model)
	}
	sets, err := m.opts.Cases()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", orchestrator.ErrUnavailable, err)
	}
	cases, err := pick(sets, req)
	if err != nil {
		return nil, invalid("%v", err)
	}
	run := &Run{ID: newID(), Status: StatusRunning, ModelName: model, CaseSet: req.CaseSet,
		CaseCount: len(cases), StartedAt: time.Now().UTC()}
	for _, c := range cases {
		run.CaseIDs = append(run.CaseIDs, c.ID)
	}
	if inst := m.opts.Instances; inst != nil {
		// Recorded as this instance's only once its lease is held, so no
		// other instance takes it for orphaned.
		if err := inst.HoldLease(ctx); err != nil {
			return nil, fmt.Errorf("%w: %v", orchestrator.ErrUnavailable, err)
		}
		run.Instance = inst.InstanceID()
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l := &live{cancel: cancel, changed: make(chan struct{})}
	// Active before it is stored: Recover never meets it running in the
	// store and not here.
	m.mu.Lock()
	m.active[run.ID] = l
	m.mu.Unlock()
	if err := m.store.SaveRun(ctx, run); err != nil {
		m.mu.Lock()
		delete(m.active, run.ID)
		m.mu.Unlock()
		cancel()
		return nil, err
	}
	snap := *run
	m.emit(l, Event{"eval_started", snap})
	m.wg.Go(func() { m.run(runCtx, l, run, cases) })
	return &snap, nil
}

func pick(sets []CaseSet, req Request) ([]Case, error) {
	var out []Case
	found := req.CaseSet == ""
	for _, s := range sets {
		if req.CaseSet != "" && s.Name != req.CaseSet {
			continue
		}
		found = true
		for _, c := range s.Cases {
			if len(req.CaseIDs) == 0 || slices.Contains(req.CaseIDs, c.ID) {
				out = append(out, c)
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("case_set %q does not exist", req.CaseSet)
	}
	for _, id := range req.CaseIDs {
		if !slices.ContainsFunc(out, func(c Case) bool { return c.ID == id }) {
			return nil, fmt.Errorf("case %q does not exist", id)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no cases to run")
	}
	return out, nil
}

func (m *Manager) emit(l *live, ev Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l.events = append(l.events, ev)
	close(l.changed)
	l.changed = make(chan struct{})
}

// run plays the cases one after another.
func (m *Manager) run(ctx context.Context, l *live, run *Run, cases []Case) {
	defer func() {
		if p := recover(); p != nil {
			m.opts.Logger.Error("evaluation panicked", "run_id", run.ID, "panic", p)
			run.Status, run.Error = StatusFailed, fmt.Sprint("internal error: ", p)
		}
		m.finish(l, run)
	}()
	for i, c := range cases {
		if ctx.Err() != nil {
			break
		}
		it := m.runCase(ctx, l, run, i, c)
		switch it.Status {
		case StatusPassed:
			run.Passed++
		case StatusFailed:
			run.Failed++
		case StatusSkipped:
			run.Skipped++
		case StatusError:
			run.Errors++
		}
		done := run.Passed + run.Failed + run.Skipped + run.Errors
		m.emit(l, Event{"eval_progress", map[string]int{"completed": done, "total": run.CaseCount,
			"passed": run.Passed, "failed": run.Failed, "skipped": run.Skipped, "errors": run.Errors}})
	}
	switch {
	case ctx.Err() != nil:
		run.Status = StatusCancelled
	default:
		run.Status = StatusFinished
	}
}

// settle sets an ending run's end time, duration and score: the share of
// its graded cases that passed.
func (r *Run) settle(now time.Time) {
	r.FinishedAt = &now
	r.ElapsedS = seconds(now.Sub(r.StartedAt))
	if graded := r.Passed + r.Failed + r.Errors; graded > 0 {
		r.Score = math.Round(10000*float64(r.Passed)/float64(graded)) / 100
	}
}

func (m *Manager) finish(l *live, run *Run) {
	run.settle(time.Now().UTC())
	if err := m.store.SaveRun(context.Background(), run); err != nil {
		m.opts.Logger.Warn("evaluation run not stored", "run_id", run.ID, "err", err)
		// The store still says running: the watchers are told the result
		// was lost, not a score nobody can read back.
		run.Status, run.Error = StatusFailed, "the result was not stored: "+err.Error()
	}
	snap := *run
	m.emit(l, Event{"eval_finished", snap})
	m.mu.Lock()
	l.done = true
	l.cancel()
	delete(m.active, run.ID)
	close(l.changed)
	l.changed = make(chan struct{})
	m.mu.Unlock()
}

// runCase runs one case and stores its item.
func (m *Manager) runCase(ctx context.Context, l *live, run *Run, seq int, c Case) *Item {
	user := UserPrefix + strings.TrimPrefix(run.ID, "ev_") + "-" + c.ID
	it := &Item{RunID: run.ID, CaseID: c.ID, CaseSet: c.Set, Seq: seq, Status: StatusActive, MaxScore: 1,
		Prompt: c.Question, UserID: user, StartedAt: time.Now().UTC()}
	m.emit(l, Event{"eval_item", *it})
	m.grade(ctx, run, c, it)
	if ctx.Err() != nil && it.Status == StatusError {
		// Whatever failed, it failed because the evaluation was cancelled.
		it.Status, it.Error = StatusCancelled, "the evaluation was cancelled"
	}
	it.ElapsedS = seconds(time.Since(it.StartedAt))
	if it.Status == StatusPassed {
		it.Score = 1
	}
	if err := m.store.SaveItem(context.Background(), it); err != nil {
		m.opts.Logger.Warn("evaluation item not stored", "run_id", run.ID, "case", c.ID, "err", err)
	}
	m.emit(l, Event{"eval_item", *it})
	return it
}

// interruptedError is the error of an evaluation, and of its unfinished
// cases, that Recover ended.
const interruptedError = "interrupted: the server that ran it stopped"

func seconds(d time.Duration) float64 { return math.Round(d.Seconds()*100) / 100 }

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "ev_" + hex.EncodeToString(b[:])
}
