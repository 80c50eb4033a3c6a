package orchestrator

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Long-term memory (docs/memory.md): per user and opt-in. When a run of a
// user who turned memory on ends finished, its session is queued for
// summarisation; a worker asks a model for a summary of the session and
// stores it as the user's memory record of that session (one per session,
// at most MemoryOptions.MaxRecords per user). Later runs of the user get
// the records, newest first and within a budget, as a [Long-term Memory]
// block of their system prompt.
//
// The queue lives in the store (memory_tasks), so a restart loses no task:
// a worker claims a task with a lease, and a task whose worker stopped is
// released (on Close) or taken over when its lease expires (a crash). The
// workers of every replica sharing a PostgreSQL store serve one queue; a
// claim is atomic, so each task is summarised by one of them.

// MemoryRecord is one summary of a session.
type MemoryRecord struct {
	ID        string    `json:"id"`
	UserID    string    `json:"user_id"`
	SessionID string    `json:"session_id"`
	Summary   string    `json:"summary"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// MemoryUser is a user who has a memory setting or records.
type MemoryUser struct {
	UserID  string `json:"user_id"`
	Enabled bool   `json:"enabled"`
	Records int    `json:"record_count"`
	// LastUpdated is the newest record's update time; nil without records.
	LastUpdated *time.Time `json:"last_updated_time,omitempty"`
}

// MemoryTaskState is the state of a summarisation task.
type MemoryTaskState string

// Memory task states: queued -> running -> done | failed; a running task
// whose worker stopped goes back to queued.
const (
	MemoryQueued  MemoryTaskState = "queued"
	MemoryRunning MemoryTaskState = "running"
	MemoryDone    MemoryTaskState = "done"
	MemoryFailed  MemoryTaskState = "failed"
)

// MemoryTask is one summarisation of a session, queued and then its log.
type MemoryTask struct {
	ID        string          `json:"task_id"`
	UserID    string          `json:"user_id"`
	SessionID string          `json:"session_id"`
	RunID     string          `json:"run_id"`
	Language  string          `json:"language"`
	State     MemoryTaskState `json:"state"`
	Error     string          `json:"error,omitempty"`
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

// MemoryTaskFilter selects tasks.
type MemoryTaskFilter struct {
	UserID string
	// States, when not empty, keeps only tasks in one of these states.
	States []MemoryTaskState
	// Limit bounds the answer; <= 0 means 100.
	Limit int
}

// MemoryStore is the optional [Store] part that keeps memory: a store that
// implements it gets memory (orchestratortest.RunMemoryStoreTests is its
// contract). Every method that takes a user id touches only that user's
// rows: the isolation is in the query.
type MemoryStore interface {
	// MemoryEnabled reports the user's switch; false when never set.
	MemoryEnabled(ctx context.Context, userID string) (bool, error)
	// SetMemoryEnabled writes the user's switch.
	SetMemoryEnabled(ctx context.Context, userID string, enabled bool, at time.Time) error
	// ListMemoryUsers lists the users with a switch or records, by id.
	ListMemoryUsers(ctx context.Context) ([]MemoryUser, error)

	// PutMemoryRecord stores r as the record of (r.UserID, r.SessionID),
	// replacing the one there was, then drops the user's oldest records
	// beyond maxRecords, in one transaction.
	PutMemoryRecord(ctx context.Context, r *MemoryRecord, maxRecords int) error
	// ListMemoryRecords returns the user's records, newest first.
	ListMemoryRecords(ctx context.Context, userID string) ([]MemoryRecord, error)
	// UpdateMemoryRecord sets the summary of the user's record of the
	// session; ErrNotFound when there is none.
	UpdateMemoryRecord(ctx context.Context, userID, sessionID, summary string, at time.Time) error
	// DeleteMemoryRecords removes the user's record of the session, or all
	// the user's records when sessionID is "", and returns how many.
	DeleteMemoryRecords(ctx context.Context, userID, sessionID string) (int, error)

	// EnqueueMemoryTask stores t as queued. When a task of the same
	// session is already queued, nothing is added and t becomes that task
	// (it will read the session as it is when it runs). When maxQueued
	// tasks are queued, t is stored failed ("queue full") and the error
	// wraps ErrBusy.
	EnqueueMemoryTask(ctx context.Context, t *MemoryTask, maxQueued int) error
	// ClaimMemoryTask moves the oldest queued task, or a running one whose
	// lease ended before now, to running under owner until now+lease, and
	// returns it; (nil, nil) when there is none. Of concurrent claimants
	// (processes sharing the store) each task goes to exactly one.
	ClaimMemoryTask(ctx context.Context, owner string, now time.Time, lease time.Duration) (*MemoryTask, error)
	// EndMemoryTask writes t's end (state, error, model, finished_at) if t
	// is still running under t.Owner; otherwise nothing is written and the
	// error wraps ErrConflict.
	EndMemoryTask(ctx context.Context, t *MemoryTask) error
	// ReleaseMemoryTask puts a running task owner holds back in the queue.
	ReleaseMemoryTask(ctx context.Context, id, owner string) error
	// ListMemoryTasks returns tasks, newest first.
	ListMemoryTasks(ctx context.Context, f MemoryTaskFilter) ([]MemoryTask, error)
	// GetMemoryTask returns one task.
	GetMemoryTask(ctx context.Context, id string) (*MemoryTask, error)
}

// MemoryOptions configure long-term memory. The zero value is memory off.
type MemoryOptions struct {
	// Enabled turns memory on, when the store is a [MemoryStore]. Default
	// false.
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
	// SwitchTTL is how long runs use a user's memory switch as this
	// process last read or wrote it, before reading it again (switches.go).
	// A change made through this process applies at once; one made
	// through another replica within SwitchTTL. Default 2s; negative
	// reads the store for every run.
	SwitchTTL time.Duration
}

func (m MemoryOptions) withDefaults() MemoryOptions {
	if m.MaxRecords <= 0 {
		m.MaxRecords = 30
	}
	if m.QueueSize <= 0 {
		m.QueueSize = 256
	}
	if m.Workers <= 0 {
		m.Workers = 1
	}
	if m.Timeout <= 0 {
		m.Timeout = 120 * time.Second
	}
	if m.PromptMaxTokens <= 0 {
		m.PromptMaxTokens = 2000
	}
	if m.PollInterval <= 0 {
		m.PollInterval = 2 * time.Second
	}
	if m.SwitchTTL == 0 {
		m.SwitchTTL = 2 * time.Second
	}
	return m
}

// maxMemorySummary bounds a summary (what the model wrote, or an edit).
const maxMemorySummary = 64 << 10

// errMemoryOff is the answer of every memory method when memory is off.
func errMemoryOff() error {
	return fmt.Errorf("%w: long-term memory is off (memory.enabled, or a store without memory)", ErrUnavailable)
}

// memoryStore returns the store's memory part, or ErrUnavailable.
func (o *Orchestrator) memoryStore() (MemoryStore, error) {
	if o.memory == nil {
		return nil, errMemoryOff()
	}
	return o.memory.st, nil
}

// MemoryEnabled reports whether the user turned memory on.
func (o *Orchestrator) MemoryEnabled(ctx context.Context, userID string) (bool, error) {
	st, err := o.memoryStore()
	if err != nil {
		return false, err
	}
	if err := validUserID(userID); err != nil {
		return false, err
	}
	return st.MemoryEnabled(ctx, userID)
}

// SetMemoryEnabled turns the user's memory on or off. Records stay when it
// is turned off (they are no longer used nor added).
func (o *Orchestrator) SetMemoryEnabled(ctx context.Context, userID string, enabled bool) error {
	st, err := o.memoryStore()
	if err != nil {
		return err
	}
	if err := validUserID(userID); err != nil {
		return err
	}
	o.memory.switches.forget(userID) // whatever the write's outcome
	if err := st.SetMemoryEnabled(ctx, userID, enabled, o.opts.Now()); err != nil {
		return err
	}
	o.memory.switches.put(userID, enabled, time.Now())
	return nil
}

// MemoryUsers lists the users with a memory switch or records.
func (o *Orchestrator) MemoryUsers(ctx context.Context) ([]MemoryUser, error) {
	st, err := o.memoryStore()
	if err != nil {
		return nil, err
	}
	return st.ListMemoryUsers(ctx)
}

// MemoryRecords returns the user's records, newest first.
func (o *Orchestrator) MemoryRecords(ctx context.Context, userID string) ([]MemoryRecord, error) {
	st, err := o.memoryStore()
	if err != nil {
		return nil, err
	}
	if err := validUserID(userID); err != nil {
		return nil, err
	}
	return st.ListMemoryRecords(ctx, userID)
}

// UpdateMemoryRecord replaces the summary of the user's record of a session.
func (o *Orchestrator) UpdateMemoryRecord(ctx context.Context, userID, sessionID, summary string) error {
	st, err := o.memoryStore()
	if err != nil {
		return err
	}
	if err := validUserID(userID); err != nil {
		return err
	}
	if err := CheckSessionID(sessionID); err != nil {
		return err
	}
	summary = strings.TrimSpace(StoredText(summary))
	switch {
	case summary == "":
		return invalidf("summary is required")
	case len(summary) > maxMemorySummary:
		return invalidf("summary is longer than %d bytes", maxMemorySummary)
	}
	return st.UpdateMemoryRecord(ctx, userID, sessionID, summary, o.opts.Now())
}

// DeleteMemoryRecords removes the user's record of a session, or every
// record of the user when sessionID is "", and says how many went; a
// session without a record is ErrNotFound.
func (o *Orchestrator) DeleteMemoryRecords(ctx context.Context, userID, sessionID string) (int, error) {
	st, err := o.memoryStore()
	if err != nil {
		return 0, err
	}
	if err := validUserID(userID); err != nil {
		return 0, err
	}
	if sessionID != "" {
		if err := CheckSessionID(sessionID); err != nil {
			return 0, err
		}
	}
	n, err := st.DeleteMemoryRecords(ctx, userID, sessionID)
	if err == nil && sessionID != "" && n == 0 {
		return 0, fmt.Errorf("%w: no memory record of session %s", ErrNotFound, sessionID)
	}
	return n, err
}

// MemoryTasks lists summarisation tasks, newest first (of one user when
// f.UserID is set).
func (o *Orchestrator) MemoryTasks(ctx context.Context, f MemoryTaskFilter) ([]MemoryTask, error) {
	st, err := o.memoryStore()
	if err != nil {
		return nil, err
	}
	if f.UserID != "" {
		if err := validUserID(f.UserID); err != nil {
			return nil, err
		}
	}
	return st.ListMemoryTasks(ctx, f)
}

// MemoryTask returns one summarisation task.
func (o *Orchestrator) MemoryTask(ctx context.Context, id string) (*MemoryTask, error) {
	st, err := o.memoryStore()
	if err != nil {
		return nil, err
	}
	if err := checkID("memory task", id); err != nil {
		return nil, err
	}
	return st.GetMemoryTask(ctx, id)
}

// memoryHeads are the block's heading and introduction per language.
var memoryHeads = map[string]struct{ head, intro string }{
	"en": {"[Long-term Memory]", "What you remember of earlier sessions with this user, newest first. Use it when it helps; it may be out of date."},
	"zh": {"[Long-term Memory]", "以下是你对该用户以往会话的记忆，按时间从新到旧排列。在有帮助时使用；其中内容可能已经过时。"},
}

// memoryBlock renders the [Long-term Memory] block of a user's prompt: ""
// when memory is off for the user or there is nothing to remember. Records
// go newest first until the budget is spent; the first one is clipped to
// the budget rather than left out.
//
// off reports that the user's switch was read and is off: the run's end
// then need not read it again (see queueMemory).
func (o *Orchestrator) memoryBlock(ctx context.Context, userID, lang string) (block string, off bool) {
	if o.memory == nil {
		return "", false
	}
	st := o.memory.st
	on, err := o.memory.enabled(ctx, userID)
	if err != nil {
		o.log.WarnContext(ctx, "memory switch unreadable; no memory in the prompt", "user_id", userID, "err", err)
		return "", false
	}
	if !on {
		return "", true
	}
	recs, err := st.ListMemoryRecords(ctx, userID)
	if err != nil {
		o.log.WarnContext(ctx, "memory records unreadable; no memory in the prompt", "user_id", userID, "err", err)
		return "", false
	}
	return renderMemory(recs, lang, o.memory.opts.PromptMaxTokens), false
}

// renderMemory is memoryBlock's text for records given newest first.
func renderMemory(recs []MemoryRecord, lang string, budget int) string {
	if len(recs) == 0 {
		return ""
	}
	h, ok := memoryHeads[lang]
	if !ok {
		h = memoryHeads["en"]
	}
	var sb strings.Builder
	sb.WriteString(h.head)
	sb.WriteString("\n")
	sb.WriteString(h.intro)
	left := budget - textTokens(h.head) - textTokens(h.intro)
	n := 0
	for _, r := range recs {
		s := strings.TrimSpace(r.Summary)
		if s == "" {
			continue
		}
		cost := textTokens(s) + 1
		if cost > left {
			if n > 0 || left <= 8 {
				break
			}
			s = clipTokens(s, left-1)
			cost = left
		}
		sb.WriteString("\n\n")
		sb.WriteString(s)
		left -= cost
		n++
	}
	if n == 0 {
		return ""
	}
	return sb.String()
}

// textTokens is estimateTokens for one text.
func textTokens(s string) int {
	return estimateTokens([]Message{{Content: s}}) - 4
}

// clipTokens cuts s to about n estimated tokens, on a rune boundary, with
// an ellipsis.
func clipTokens(s string, n int) string {
	if textTokens(s) <= n {
		return s
	}
	cost, cut := 0, 0
	ascii := 0
	for i, r := range s {
		if r < utf8.RuneSelf {
			ascii++
			if ascii%4 == 1 {
				cost++
			}
		} else {
			cost++
		}
		if cost > n-1 {
			break
		}
		cut = i + utf8.RuneLen(r)
	}
	return s[:cut] + "…"
}
