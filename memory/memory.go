// Package memory is wunder's per-user long-term memory (docs/memory.md),
// opt-in per user. When a run of a user who turned memory on ends
// finished, its session is queued for summarisation; a worker asks a model
// for a summary of the session and stores it as the user's memory record
// of that session (one per session, at most Options.MaxRecords per user).
// Later runs of the user get the records, newest first and within a
// budget, as a [Long-term Memory] block of their system prompt.
//
// The queue lives in the store (memory_tasks), so a restart loses no task:
// a worker claims a task with a lease, and a task whose worker stopped is
// released (on Close) or taken over when its lease expires (a crash). The
// workers of every replica sharing a PostgreSQL store serve one queue; a
// claim is atomic, so each task is summarised by one of them.
//
// The core meets memory through a small interface of its own
// (orchestrator.Memory: the prompt block, a run's end, a user's deleted
// data), which [Memory] implements and cmd/wunder wires as the core's
// Options.Memory; this package imports the core, never the reverse. It
// reads sessions through the core's store ([Sessions]) and summarises
// with the core's models, and the admin and user routes of the gateway
// call its methods.
//
// Goroutines: Options.Workers workers, started by [New] and ended by
// [Memory.Close], which the owner calls after the core's Close (a run's
// end may queue a task); a worker stopped in the middle of a summary puts
// its task back in the queue for the next start or another replica.
package memory

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// Record is one summary of a session.
type Record struct {
	ID        string    `json:"id"`
	UserID    string    `json:"user_id"`
	SessionID string    `json:"session_id"`
	Summary   string    `json:"summary"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// User is a user who has a memory setting or records.
type User struct {
	UserID  string `json:"user_id"`
	Enabled bool   `json:"enabled"`
	Records int    `json:"record_count"`
	// LastUpdated is the newest record's update time; nil without records.
	LastUpdated *time.Time `json:"last_updated_time,omitempty"`
}

// TaskState is the state of a summarisation task.
type TaskState string

// Memory task states: queued -> running -> done | failed; a running task
// whose worker stopped goes back to queued.
const (
	Queued  TaskState = "queued"
	Running TaskState = "running"
	Done    TaskState = "done"
	Failed  TaskState = "failed"
)

// Task is one summarisation of a session, queued and then its log.
type Task struct {
	ID        string    `json:"task_id"`
	UserID    string    `json:"user_id"`
	SessionID string    `json:"session_id"`
	RunID     string    `json:"run_id"`
	Language  string    `json:"language"`
	State     TaskState `json:"state"`
	Error     string    `json:"error,omitempty"`
	// Model is the configured model that summarised (set when it ran).
	Model string `json:"model,omitempty"`
	// Attempts counts the claims of the task.
	Attempts int `json:"attempts"`
	// Owner is the instance of the worker that holds a running task, until
	// LeaseUntil.
	Owner      string     `json:"-"`
	LeaseUntil *time.Time `json:"-"`
	QueuedAt   time.Time  `json:"queued_at"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// TaskFilter selects tasks.
type TaskFilter struct {
	UserID string
	// States, when not empty, keeps only tasks in one of these states.
	States []TaskState
	// Limit bounds the answer; <= 0 means 100.
	Limit int
}

// Store keeps memory: switches, records and the task queue (storage
// implements it; memorytest.RunStoreTests is its contract). Every method
// that takes a user id touches only that user's rows: the isolation is in
// the query. A store that is also the core's (orchestrator.Store) deletes
// a user's memory with the rest of the user's data (DeleteUserData).
type Store interface {
	// MemoryEnabled reports the user's switch; false when never set.
	MemoryEnabled(ctx context.Context, userID string) (bool, error)
	// SetMemoryEnabled writes the user's switch.
	SetMemoryEnabled(ctx context.Context, userID string, enabled bool, at time.Time) error
	// ListMemoryUsers lists the users with a switch or records, by id.
	ListMemoryUsers(ctx context.Context) ([]User, error)

	// PutMemoryRecord stores r as the record of (r.UserID, r.SessionID),
	// replacing the one there was, then drops the user's oldest records
	// beyond maxRecords, in one transaction.
	PutMemoryRecord(ctx context.Context, r *Record, maxRecords int) error
	// ListMemoryRecords returns the user's records, newest first.
	ListMemoryRecords(ctx context.Context, userID string) ([]Record, error)
	// UpdateMemoryRecord sets the summary of the user's record of the
	// session; orchestrator.ErrNotFound when there is none.
	UpdateMemoryRecord(ctx context.Context, userID, sessionID, summary string, at time.Time) error
	// DeleteMemoryRecords removes the user's record of the session, or all
	// the user's records when sessionID is "", and returns how many.
	DeleteMemoryRecords(ctx context.Context, userID, sessionID string) (int, error)

	// EnqueueMemoryTask stores t as queued. When a task of the same
	// session is already queued, nothing is added and t becomes that task
	// (it will read the session as it is when it runs). When maxQueued
	// tasks are queued, t is stored failed ("queue full") and the error
	// wraps orchestrator.ErrBusy.
	EnqueueMemoryTask(ctx context.Context, t *Task, maxQueued int) error
	// ClaimMemoryTask moves the oldest queued task, or a running one whose
	// lease ended before now, to running under owner until now+lease, and
	// returns it; (nil, nil) when there is none. Of concurrent claimants
	// (processes sharing the store) each task goes to exactly one.
	ClaimMemoryTask(ctx context.Context, owner string, now time.Time, lease time.Duration) (*Task, error)
	// EndMemoryTask writes t's end (state, error, model, finished_at) if t
	// is still running under t.Owner; otherwise nothing is written and the
	// error wraps orchestrator.ErrConflict.
	EndMemoryTask(ctx context.Context, t *Task) error
	// ReleaseMemoryTask puts a running task owner holds back in the queue.
	ReleaseMemoryTask(ctx context.Context, id, owner string) error
	// ListMemoryTasks returns tasks, newest first.
	ListMemoryTasks(ctx context.Context, f TaskFilter) ([]Task, error)
	// GetMemoryTask returns one task.
	GetMemoryTask(ctx context.Context, id string) (*Task, error)
}

// Options configure long-term memory. The zero value is memory off.
type Options struct {
	// Enabled turns memory on. Default false: every method but the
	// core's then answers orchestrator.ErrUnavailable.
	Enabled bool
	// MaxRecords bounds a user's records. Default 30.
	MaxRecords int
	// QueueSize bounds the queued tasks. Default 256.
	QueueSize int
	// Workers is how many summaries this process makes at once. Default 1.
	Workers int
	// Model names the model that summarises; "" = the default model.
	Model string
	// Timeout bounds one summarisation call. Default 120s.
	Timeout time.Duration
	// PromptMaxTokens is the budget of the [Long-term Memory] block, in
	// estimated tokens. Default 2000.
	PromptMaxTokens int
	// PollInterval is how often an idle worker looks for tasks other
	// processes queued or left behind. Default 2s.
	PollInterval time.Duration
	// MaxHistoryItems bounds the session history a summary reads (the
	// core's Options.MaxHistoryItems). Default 200.
	MaxHistoryItems int
	// StoreRetry bounds the retries of a failing store write (the core's
	// Options.StoreRetry). Default 10s.
	StoreRetry time.Duration
	// Owner names this process's workers in the task leases they take;
	// default: host, pid and a random part.
	Owner string
	// Logger; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// SwitchTTL is how long runs use a user's memory switch as this
	// process last read or wrote it, before reading it again (switches.go).
	// A change made through this process applies at once; one made
	// through another replica within SwitchTTL. Default 2s; negative
	// reads the store for every run.
	SwitchTTL time.Duration
}

func (o Options) withDefaults() Options {
	if o.MaxRecords <= 0 {
		o.MaxRecords = 30
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 256
	}
	if o.Workers <= 0 {
		o.Workers = 1
	}
	if o.Timeout <= 0 {
		o.Timeout = 120 * time.Second
	}
	if o.PromptMaxTokens <= 0 {
		o.PromptMaxTokens = 2000
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 2 * time.Second
	}
	if o.SwitchTTL == 0 {
		o.SwitchTTL = 2 * time.Second
	}
	if o.MaxHistoryItems <= 0 {
		o.MaxHistoryItems = 200
	}
	if o.StoreRetry <= 0 {
		o.StoreRetry = 10 * time.Second
	}
	if o.Owner == "" {
		host, _ := os.Hostname()
		o.Owner = fmt.Sprintf("%s:%d:%s", strings.ReplaceAll(host, ":", "_"), os.Getpid(), strings.ToLower(rand.Text()[:10]))
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Sessions is what memory reads of the core's store (an
// orchestrator.Store is one): a session, to check its owner, and its
// history.
type Sessions interface {
	GetSession(ctx context.Context, id string) (*orchestrator.Session, error)
	ListMessages(ctx context.Context, sessionID string, limit int) ([]orchestrator.Message, error)
}

// Memory is long-term memory: the core's [orchestrator.Memory], and what
// the memory routes manage. It is safe for concurrent use.
type Memory struct {
	st       Store
	sessions Sessions
	models   orchestrator.Models
	opts     Options
	log      *slog.Logger
	// on: Options.Enabled with a store.
	on bool
	// wake tells idle workers a task was queued here.
	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// switches are the users' switches as runs use them (switches.go).
	switches switchCache
}

var _ orchestrator.Memory = (*Memory)(nil)

// New returns long-term memory over st, summarising the sessions kept in
// sessions with models; when opts says it is on (and st is not nil), its
// workers start. Close stops them.
func New(st Store, sessions Sessions, models orchestrator.Models, opts *Options) *Memory {
	var o Options
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	m := &Memory{st: st, sessions: sessions, models: models, opts: o, log: o.Logger, on: o.Enabled && st != nil,
		wake: make(chan struct{}, o.Workers), ctx: ctx, cancel: cancel, switches: switchCache{ttl: o.SwitchTTL}}
	if !m.on {
		if o.Enabled {
			m.log.Warn("long-term memory is on but the store does not keep it; memory stays off")
		}
		return m
	}
	for i := range o.Workers {
		m.wg.Add(1)
		go m.work(i)
	}
	return m
}

// Close stops the workers; a summary in flight is abandoned and its task
// released. Call it after the core's Close.
func (m *Memory) Close() {
	m.cancel()
	m.wg.Wait()
}

// maxSummary bounds a summary (what the model wrote, or an edit).
const maxSummary = 64 << 10

// errOff is the answer of every method when memory is off.
func errOff() error {
	return fmt.Errorf("%w: long-term memory is off (memory.enabled, or a store without memory)", orchestrator.ErrUnavailable)
}

// store returns the store, or ErrUnavailable when memory is off.
func (m *Memory) store() (Store, error) {
	if !m.on {
		return nil, errOff()
	}
	return m.st, nil
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{orchestrator.ErrInvalidArgument}, args...)...)
}

// Enabled reports whether the user turned memory on.
func (m *Memory) Enabled(ctx context.Context, userID string) (bool, error) {
	st, err := m.store()
	if err != nil {
		return false, err
	}
	if err := orchestrator.ValidateUserID(userID); err != nil {
		return false, err
	}
	return st.MemoryEnabled(ctx, userID)
}

// SetEnabled turns the user's memory on or off. Records stay when it is
// turned off (they are no longer used nor added).
func (m *Memory) SetEnabled(ctx context.Context, userID string, enabled bool) error {
	st, err := m.store()
	if err != nil {
		return err
	}
	if err := orchestrator.ValidateUserID(userID); err != nil {
		return err
	}
	m.switches.forget(userID) // whatever the write's outcome
	if err := st.SetMemoryEnabled(ctx, userID, enabled, m.opts.Now()); err != nil {
		return err
	}
	m.switches.put(userID, enabled, time.Now())
	return nil
}

// Users lists the users with a memory switch or records.
func (m *Memory) Users(ctx context.Context) ([]User, error) {
	st, err := m.store()
	if err != nil {
		return nil, err
	}
	return st.ListMemoryUsers(ctx)
}

// Records returns the user's records, newest first.
func (m *Memory) Records(ctx context.Context, userID string) ([]Record, error) {
	st, err := m.store()
	if err != nil {
		return nil, err
	}
	if err := orchestrator.ValidateUserID(userID); err != nil {
		return nil, err
	}
	return st.ListMemoryRecords(ctx, userID)
}

// UpdateRecord replaces the summary of the user's record of a session.
func (m *Memory) UpdateRecord(ctx context.Context, userID, sessionID, summary string) error {
	st, err := m.store()
	if err != nil {
		return err
	}
	if err := orchestrator.ValidateUserID(userID); err != nil {
		return err
	}
	if err := orchestrator.CheckSessionID(sessionID); err != nil {
		return err
	}
	summary = strings.TrimSpace(orchestrator.StoredText(summary))
	switch {
	case summary == "":
		return invalidf("summary is required")
	case len(summary) > maxSummary:
		return invalidf("summary is longer than %d bytes", maxSummary)
	}
	return st.UpdateMemoryRecord(ctx, userID, sessionID, summary, m.opts.Now())
}

// DeleteRecords removes the user's record of a session, or every record
// of the user when sessionID is "", and says how many went; a session
// without a record is orchestrator.ErrNotFound.
func (m *Memory) DeleteRecords(ctx context.Context, userID, sessionID string) (int, error) {
	st, err := m.store()
	if err != nil {
		return 0, err
	}
	if err := orchestrator.ValidateUserID(userID); err != nil {
		return 0, err
	}
	if sessionID != "" {
		if err := orchestrator.CheckSessionID(sessionID); err != nil {
			return 0, err
		}
	}
	n, err := st.DeleteMemoryRecords(ctx, userID, sessionID)
	if err == nil && sessionID != "" && n == 0 {
		return 0, fmt.Errorf("%w: no memory record of session %s", orchestrator.ErrNotFound, sessionID)
	}
	return n, err
}

// Tasks lists summarisation tasks, newest first (of one user when
// f.UserID is set).
func (m *Memory) Tasks(ctx context.Context, f TaskFilter) ([]Task, error) {
	st, err := m.store()
	if err != nil {
		return nil, err
	}
	if f.UserID != "" {
		if err := orchestrator.ValidateUserID(f.UserID); err != nil {
			return nil, err
		}
	}
	return st.ListMemoryTasks(ctx, f)
}

// Task returns one summarisation task.
func (m *Memory) Task(ctx context.Context, id string) (*Task, error) {
	st, err := m.store()
	if err != nil {
		return nil, err
	}
	if err := orchestrator.CheckID("memory task", id); err != nil {
		return nil, err
	}
	return st.GetMemoryTask(ctx, id)
}
