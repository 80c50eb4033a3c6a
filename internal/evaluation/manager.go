package evaluation

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// Backend is what an evaluation needs of the core;
// *orchestrator.Orchestrator satisfies it.
type Backend interface {
	Start(ctx context.Context, req orchestrator.RunRequest) (*orchestrator.Run, error)
	Events(ctx context.Context, userID, runID string, afterSeq int64) iter.Seq2[orchestrator.Event, error]
	Cancel(ctx context.Context, userID, runID string) (*orchestrator.Run, error)
	Tools(ctx context.Context, userID string) ([]orchestrator.ToolSpec, error)
}

var _ Backend = (*orchestrator.Orchestrator)(nil)

// Workspace places and reads the files of a case's user, and removes the
// workspace after the case.
type Workspace interface {
	WriteFile(userID, path string, data []byte) error
	ReadFile(userID, path string) ([]byte, error)
	Remove(userID string) error
}

// Store keeps runs and their items.
type Store interface {
	SaveRun(ctx context.Context, r *Run) error
	SaveItem(ctx context.Context, it *Item) error
	// GetRun returns orchestrator.ErrNotFound for an unknown id.
	GetRun(ctx context.Context, id string) (*Run, error)
	Items(ctx context.Context, runID string) ([]*Item, error)
	ListRuns(ctx context.Context, f Filter) ([]*Run, error)
	// DeleteRun returns the rows removed; ErrNotFound for an unknown id.
	DeleteRun(ctx context.Context, id string) (int, error)
}

// Filter selects runs ("" or zero = any).
type Filter struct {
	ModelName, Status string
	Since, Until      time.Time
	Limit             int
}

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

// Run is an evaluation run: the model, the cases and the score.
type Run struct {
	ID         string     `json:"run_id"`
	Status     string     `json:"status"`
	ModelName  string     `json:"model_name"`
	CaseSet    string     `json:"case_set,omitempty"`
	CaseIDs    []string   `json:"case_ids"`
	Score      float64    `json:"total_score"`
	CaseCount  int        `json:"case_count"`
	Passed     int        `json:"passed_count"`
	Failed     int        `json:"failed_count"`
	Skipped    int        `json:"skipped_count"`
	Errors     int        `json:"error_count"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	ElapsedS   float64    `json:"elapsed_s"`
	Error      string     `json:"error,omitempty"`
	// Instance is the server instance that runs it (Options.Instances):
	// when that instance is gone, another one ends the run (Recover).
	Instance string `json:"instance,omitempty"`
}

// Item is one case's outcome in a run.
type Item struct {
	RunID      string        `json:"run_id"`
	CaseID     string        `json:"case_id"`
	CaseSet    string        `json:"case_set"`
	Seq        int           `json:"seq"`
	Status     string        `json:"status"`
	Score      float64       `json:"score"`
	MaxScore   float64       `json:"max_score"`
	Prompt     string        `json:"prompt"`
	Answer     string        `json:"final_answer,omitempty"`
	ToolCalls  []string      `json:"tool_calls,omitempty"`
	Checks     []CheckResult `json:"checker_detail,omitempty"`
	SkipReason string        `json:"skip_reason,omitempty"`
	Error      string        `json:"error,omitempty"`
	UserID     string        `json:"user_id"`
	SessionID  string        `json:"session_id,omitempty"`
	CoreRunID  string        `json:"wunder_run_id,omitempty"`
	StartedAt  time.Time     `json:"started_at"`
	ElapsedS   float64       `json:"elapsed_s"`
}

// Event is one event of a run's stream: eval_started ({run}),
// eval_item (an Item, first active, then with its outcome),
// eval_progress ({completed, total, passed, failed, skipped, errors}),
// eval_log ({message}), eval_finished ({run}).
type Event struct {
	Type string
	Data any
}

// Request starts a run.
type Request struct {
	ModelName string
	// CaseSet limits the run to one set; CaseIDs to these cases ("" and
	// nil = all).
	CaseSet string
	CaseIDs []string
}

// Options configure a Manager. Cases is required.
type Options struct {
	// Cases loads the case sets; it is called at every start, so edited
	// case files apply to the next run.
	Cases func() ([]CaseSet, error)
	// Models returns the default model's name and whether a name is a
	// configured model.
	DefaultModel func() string
	HasModel     func(name string) bool
	// Judge grades judge checks with JudgeModel ("" = the run's model);
	// nil: judge checks fail saying so.
	Judge      Judge
	JudgeModel string
	// CaseTimeout bounds one case's run. Default 5 minutes.
	CaseTimeout time.Duration
	Logger      *slog.Logger
	// Instances records which server instance runs an evaluation, so that
	// Recover can end one whose instance is gone; nil records none.
	Instances orchestrator.Instances
}

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

func (m *Manager) grade(ctx context.Context, run *Run, c Case, it *Item) {
	if reason, err := m.missing(ctx, it.UserID, c); err != nil {
		it.Status, it.Error = StatusError, err.Error()
		return
	} else if reason != "" {
		it.Status, it.SkipReason = StatusSkipped, reason
		return
	}
	defer func() {
		if err := m.ws.Remove(it.UserID); err != nil {
			m.opts.Logger.Warn("evaluation workspace not removed", "user_id", it.UserID, "err", err)
		}
	}()
	for _, f := range c.Files {
		if err := m.ws.WriteFile(it.UserID, f.Path, []byte(f.Content)); err != nil {
			it.Status, it.Error = StatusError, fmt.Sprintf("setup file %s: %v", f.Path, err)
			return
		}
	}
	cctx, cancel := context.WithTimeout(ctx, m.opts.CaseTimeout)
	defer cancel()
	answer, err := m.ask(cctx, run.ModelName, c, it)
	switch {
	case ctx.Err() != nil:
		it.Status, it.Error = StatusCancelled, "the evaluation was cancelled"
		return
	case errors.Is(err, context.DeadlineExceeded):
		it.Status, it.Error = StatusError, fmt.Sprintf("the case took longer than %s (evaluation.case_timeout_s)", m.opts.CaseTimeout)
		return
	case err != nil:
		it.Status, it.Error = StatusError, err.Error()
		return
	}
	it.Answer = answer
	judgeModel := m.opts.JudgeModel
	if judgeModel == "" {
		judgeModel = run.ModelName
	}
	g := &grader{question: c.Question, answer: answer, model: judgeModel, judge: m.opts.Judge,
		readFile: func(p string) ([]byte, error) { return m.ws.ReadFile(it.UserID, p) }}
	it.Status = StatusPassed
	for _, ch := range c.Checks {
		res := g.run(cctx, ch)
		it.Checks = append(it.Checks, res)
		if !res.Passed {
			it.Status = StatusFailed
		}
	}
}

// missing says which prerequisite of c is not configured ("" = none).
func (m *Manager) missing(ctx context.Context, user string, c Case) (string, error) {
	specs, err := m.b.Tools(ctx, user)
	if err != nil {
		return "", err
	}
	tools, mcp, skills, kbs := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, s := range specs {
		tools[s.Name] = true
		for _, a := range s.Aliases {
			tools[a] = true
		}
		switch s.Source {
		case orchestrator.SourceMCP:
			server, _, _ := strings.Cut(s.Name, "@")
			mcp[server] = true
		case orchestrator.SourceSkill:
			skills[s.Name] = true
		case orchestrator.SourceKnowledge:
			kbs[s.Name] = true
		}
	}
	for _, need := range []struct {
		what  string
		names []string
		have  map[string]bool
	}{
		{"MCP server", c.Requires.MCPServers, mcp}, {"skill", c.Requires.Skills, skills},
		{"knowledge base", c.Requires.Knowledge, kbs}, {"tool", append(slices.Clone(c.Tools), c.Requires.Tools...), tools},
	} {
		for _, n := range need.names {
			if !need.have[n] {
				return fmt.Sprintf("needs %s %q, which is not configured", need.what, n), nil
			}
		}
	}
	return "", nil
}

// ask runs the case's question and returns the answer.
func (m *Manager) ask(ctx context.Context, model string, c Case, it *Item) (string, error) {
	r, err := m.b.Start(ctx, orchestrator.RunRequest{UserID: it.UserID, Question: c.Question, ToolNames: c.Tools, ModelName: model})
	if err != nil {
		return "", err
	}
	it.SessionID, it.CoreRunID = r.SessionID, r.ID
	follow := func(ctx context.Context) (string, bool, error) {
		for ev, err := range m.b.Events(ctx, it.UserID, r.ID, 0) {
			if err != nil {
				return "", false, err
			}
			switch ev.Type {
			case orchestrator.EventToolCall:
				var tc orchestrator.ToolCallData
				if json.Unmarshal(ev.Data, &tc) == nil {
					it.ToolCalls = append(it.ToolCalls, tc.Name)
				}
			case orchestrator.EventFinal:
				var fin orchestrator.FinalData
				if err := json.Unmarshal(ev.Data, &fin); err != nil {
					return "", true, err
				}
				if fin.State != orchestrator.RunFinished {
					return fin.Answer, true, fmt.Errorf("the run ended %s: %s", fin.State, fin.Error)
				}
				return fin.Answer, true, nil
			}
		}
		return "", false, ctx.Err()
	}
	answer, final, err := follow(ctx)
	if !final && ctx.Err() != nil {
		// Cancelled or timed out: end the core run, and wait (bounded) for
		// it to end before its workspace goes.
		bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_, _ = m.b.Cancel(bg, it.UserID, r.ID)
		_, _, _ = follow(bg)
		return "", ctx.Err()
	}
	return answer, err
}

// interruptedError is the error of an evaluation, and of its unfinished
// cases, that Recover ended.
const interruptedError = "interrupted: the server that ran it stopped"

// Recover ends the evaluations the store says are running that no server
// runs any more: this one does not, and their instance is gone, is this
// one (its result was not stored), or is not recorded (stored before
// instances were). Each ends failed, its unfinished cases as errors. It
// returns how many it ended. Every server calls it at start and then
// periodically; two that end one run at once store the same end.
func (m *Manager) Recover(ctx context.Context) (int, error) {
	runs, err := m.store.ListRuns(ctx, Filter{Status: StatusRunning})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range runs {
		m.mu.Lock()
		_, active := m.active[r.ID]
		m.mu.Unlock()
		if active {
			continue
		}
		gone, err := orchestrator.Orphaned(ctx, m.opts.Instances, r.Instance)
		if err != nil {
			return n, err
		}
		if !gone {
			continue
		}
		if err := m.interrupt(ctx, r); err != nil {
			return n, err
		}
		m.opts.Logger.Warn("evaluation ended: the server that ran it stopped", "run_id", r.ID, "instance", r.Instance)
		n++
	}
	return n, nil
}

// interrupt stores r ended by Recover.
func (m *Manager) interrupt(ctx context.Context, r *Run) error {
	items, err := m.store.Items(ctx, r.ID)
	if err != nil {
		return err
	}
	for _, it := range items {
		switch {
		case it.Status == StatusActive:
			it.Status, it.Score, it.Error = StatusError, 0, interruptedError
			if err := m.store.SaveItem(ctx, it); err != nil {
				return err
			}
		case it.Status == StatusError && it.Error == interruptedError:
			// Ended by an earlier Recover whose run then was not
			// stored: the stored run has not counted it yet.
		default:
			continue
		}
		r.Errors++
	}
	r.Status, r.Error = StatusFailed, interruptedError
	r.settle(time.Now().UTC())
	return m.store.SaveRun(ctx, r)
}

// Cancel cancels a running evaluation; ErrNotFound if it is not running
// here (unknown, or already ended: ErrConflict).
func (m *Manager) Cancel(ctx context.Context, id string) (*Run, error) {
	m.mu.Lock()
	l := m.active[id]
	m.mu.Unlock()
	if l == nil {
		r, err := m.store.GetRun(ctx, id)
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: evaluation run %s is %s", orchestrator.ErrConflict, id, r.Status)
	}
	m.emit(l, Event{"eval_log", map[string]string{"message": "cancel requested"}})
	l.cancel()
	return m.store.GetRun(ctx, id)
}

// Get returns a run and its items.
func (m *Manager) Get(ctx context.Context, id string) (*Run, []*Item, error) {
	r, err := m.store.GetRun(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	items, err := m.store.Items(ctx, id)
	return r, items, err
}

// List lists runs, newest first.
func (m *Manager) List(ctx context.Context, f Filter) ([]*Run, error) {
	return m.store.ListRuns(ctx, f)
}

// Delete removes a finished run and its items; a running one is a
// conflict (cancel it first).
func (m *Manager) Delete(ctx context.Context, id string) (int, error) {
	m.mu.Lock()
	_, running := m.active[id]
	m.mu.Unlock()
	if running {
		return 0, fmt.Errorf("%w: evaluation run %s is running; cancel it first", orchestrator.ErrConflict, id)
	}
	return m.store.DeleteRun(ctx, id)
}

// Watch yields a run's events from its start: live while it runs, else
// rebuilt from the store (eval_started, an eval_item per case,
// eval_finished). It ends after eval_finished or when ctx ends.
func (m *Manager) Watch(ctx context.Context, id string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		m.mu.Lock()
		l := m.active[id]
		if l == nil {
			m.mu.Unlock()
			r, items, err := m.Get(ctx, id)
			if err != nil {
				yield(Event{}, err)
				return
			}
			if !yield(Event{"eval_started", *r}, nil) {
				return
			}
			for _, it := range items {
				if !yield(Event{"eval_item", *it}, nil) {
					return
				}
			}
			yield(Event{"eval_finished", *r}, nil)
			return
		}
		next := 0
		for {
			evs, done, ch := l.events[next:], l.done, l.changed
			next += len(evs)
			m.mu.Unlock()
			for _, ev := range evs {
				if !yield(ev, nil) {
					return
				}
			}
			if done {
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

// Close cancels running evaluations and waits for them.
func (m *Manager) Close() {
	m.mu.Lock()
	for _, l := range m.active {
		l.cancel()
	}
	m.mu.Unlock()
	m.wg.Wait()
}

func seconds(d time.Duration) float64 { return math.Round(d.Seconds()*100) / 100 }

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "ev_" + hex.EncodeToString(b[:])
}
