package orchestrator

import (
	"context"
	"time"
)

// NewLock is a lock [Store.CreateRunWith] takes with a run.
type NewLock struct {
	Key string
	TTL time.Duration
}

// Store persists sessions, messages, runs, events, tool logs and locks. The
// storage package implements it on bun (SQLite and PostgreSQL);
// orchestratortest has an in-memory one. Every implementation passes
// orchestratortest.RunStoreTests.
//
// Methods that look an object up by id return an error wrapping ErrNotFound
// when it does not exist.
type Store interface {
	CreateSession(ctx context.Context, s *Session) error
	GetSession(ctx context.Context, id string) (*Session, error)
	// ListSessions returns the user's sessions, most recently updated
	// first; a page After a [SessionKey] reads only that page.
	ListSessions(ctx context.Context, userID string, page Page) ([]*Session, error)
	// TouchSession sets the session's title (when not empty) and UpdatedAt.
	TouchSession(ctx context.Context, id, title string, at time.Time) error
	// RenameSession sets the session's title and nothing else: a rename
	// does not move the session in ListSessions' order.
	RenameSession(ctx context.Context, id, title string) error
	// DeleteSession removes the session with its messages, runs, events and
	// tool logs.
	DeleteSession(ctx context.Context, id string) error
	// ListUserStats lists the users that have sessions, with their counts
	// of sessions and runs, most recently active first, then by user id;
	// a page After a [UserStatsKey] starts after that user. It aggregates
	// every session to order them, whatever the page.
	ListUserStats(ctx context.Context, page Page) ([]UserStats, error)
	// DeleteUserData removes every session of the user as DeleteSession
	// does, the user's tool logs and, in a store that keeps memory
	// (a memory.Store), the user's memory records, tasks and switch.
	DeleteUserData(ctx context.Context, userID string) error

	// AppendMessages adds messages to the end of a session's history.
	AppendMessages(ctx context.Context, sessionID string, msgs []Message) error
	// ListMessages returns the last limit messages of a session, oldest
	// first; limit <= 0 means all.
	ListMessages(ctx context.Context, sessionID string, limit int) ([]Message, error)

	CreateRun(ctx context.Context, r *Run) error
	// CreateRunWith creates a run with, in the same write, its new
	// session (when s is not nil; else r's session must exist), the
	// first messages of its history (its question: tail.Messages),
	// appended to the session's history, and the first events of its log
	// (tail.Events, as AppendEvents): all or nothing (the errors are
	// CreateSession's, CreateRun's, AppendMessages' and AppendEvents').
	// It spares a run's start two commits, and a run that is queued when
	// its process dies keeps its question, attachments included. locks
	// are new locks the run takes with it (owned by r.ID for their TTL),
	// the session lock of a session nobody knew before: a key already
	// there, even expired, fails the write with ErrConflict.
	//
	// r may be in any state, an ended one too: a run whose start was
	// deferred to its log's first write and that ended by then (see
	// [Orchestrator.Start]) is stored whole, as it ended, with its new
	// session, its whole history and its events, the final one last, and
	// no lock (nobody could know its session before this write).
	CreateRunWith(ctx context.Context, s *Session, r *Run, tail RunTail, locks ...NewLock) error
	// UpdateRun writes the run's mutable fields (state, stop reason, answer,
	// error, usage, last seq, timestamps). The write is fenced by r.Owner:
	// when the stored run has another owner (a reaper claimed it, see
	// ClaimRun), nothing is written and the error wraps ErrConflict.
	UpdateRun(ctx context.Context, r *Run) error
	// EndRun writes a run's end as UpdateRun does, fenced by r.Owner, and
	// in the same write sets its session's UpdatedAt to at, frees the
	// locks of keys that the run (owner r.ID) holds, and appends tail:
	// the last messages of the run's history (to r.SessionID, as
	// AppendMessages) and the last events of its log (as AppendEvents,
	// the final event among them). It is all or nothing: when the fence
	// refuses the update, or any part fails, nothing is written and the
	// error is that part's (UpdateRun's for the fence). It spares a run's
	// end three or four commits.
	EndRun(ctx context.Context, r *Run, at time.Time, keys []string, tail RunTail) error
	// SuspendRun writes a run's pause in one write: its mutable fields as
	// UpdateRun does (the waiting state, the pending round, the last seq),
	// fenced by r.Owner; the approvals it waits for, as CreateApprovals
	// does; and tail, the messages kept since the last write (to
	// r.SessionID, as AppendMessages) and the log's last events, those that
	// announce the pause among them (as AppendEvents). It is all or
	// nothing, as EndRun: a reader sees the run waiting with its approvals
	// and their events, or none of them.
	SuspendRun(ctx context.Context, r *Run, approvals []*Approval, tail RunTail) error
	// ClaimRun hands a run that is not terminal from owner from to owner
	// to, atomically: of several processes claiming the same run, one
	// wins. It returns an error wrapping ErrConflict when the run is
	// terminal or its owner is no longer from, and ErrNotFound when there
	// is no such run.
	ClaimRun(ctx context.Context, runID, from, to string) error
	// RequestCancel moves a queued, running or waiting run to cancelling
	// (its owner's heartbeat sees it and stops the run) and returns the run
	// as stored afterwards. A run already terminal or cancelling is
	// returned unchanged, so a cancel can never overwrite a run's end.
	RequestCancel(ctx context.Context, runID string) (*Run, error)
	GetRun(ctx context.Context, id string) (*Run, error)
	// ListRuns returns runs, newest first, filtered by user and/or session
	// (empty means any); a page After a [RunKey] reads only that page.
	ListRuns(ctx context.Context, f RunFilter) ([]*Run, error)

	// AppendEvents stores events; (run_id, seq) is unique and a duplicate is
	// an error wrapping ErrConflict.
	AppendEvents(ctx context.Context, events []Event) error
	// ListEvents returns up to limit events of a run with seq > afterSeq, in
	// seq order; limit <= 0 means all.
	ListEvents(ctx context.Context, runID string, afterSeq int64, limit int) ([]Event, error)

	AppendToolLog(ctx context.Context, l *ToolLog) error
	// ToolCallStats returns the tool calls f selects, newest first, up to
	// f.Limit (the monitor's aggregation reads them).
	ToolCallStats(ctx context.Context, f ToolLogFilter) ([]ToolCallStat, error)
	// ListToolLogs returns the audit records (tool logs) f selects, newest
	// first (created_at, then id), a page of f.Page.Limit (0: 50) After
	// an [AuditKey].
	ListToolLogs(ctx context.Context, f AuditFilter) ([]*ToolLog, error)
	// Usage sums each user's runs (count, tokens, execution time up to
	// now for runs still going) and tool calls (allowed, denied) in f's
	// window, the biggest token users first.
	Usage(ctx context.Context, f UsageFilter, now time.Time) ([]UserUsage, error)

	// ClaimWaiting moves a waiting run (waiting_approval or waiting_input) to running under owner
	// to, atomically, and returns it as stored afterwards: of several
	// claimants exactly one wins. The error wraps ErrConflict when the run
	// is not waiting and ErrNotFound when there is no such run.
	ClaimWaiting(ctx context.Context, runID, to string) (*Run, error)
	// CreateApprovals stores new approvals; (run_id, approval_id) is
	// unique.
	CreateApprovals(ctx context.Context, approvals []*Approval) error
	// GetApproval returns one approval of a run.
	GetApproval(ctx context.Context, runID, approvalID string) (*Approval, error)
	// ListApprovals returns a run's approvals, oldest first.
	ListApprovals(ctx context.Context, runID string) ([]*Approval, error)
	// UpdateApproval writes a's state, decision, decided_at, execution
	// and result if the stored approval is still in state from with
	// execution fromExecution (compare and set); otherwise it writes
	// nothing and the error wraps ErrConflict.
	UpdateApproval(ctx context.Context, a *Approval, from ApprovalState, fromExecution string) error

	// AcquireLock takes the named lock for owner until now+ttl. It succeeds
	// when the lock is free, expired, or already held by owner (which renews
	// it); otherwise it returns an error wrapping ErrBusy. It is atomic
	// across processes sharing the store.
	AcquireLock(ctx context.Context, key, owner string, ttl time.Duration) error
	// RenewLock extends a lock owner holds; ErrNotFound if owner lost it.
	RenewLock(ctx context.Context, key, owner string, ttl time.Duration) error
	// ReleaseLock frees the lock if owner holds it; releasing a lock one does
	// not hold is not an error.
	ReleaseLock(ctx context.Context, key, owner string) error
	// ReleaseLocksOf frees every lock owner holds (the locks of a run whose
	// process died, so its session and user slots are free at once).
	ReleaseLocksOf(ctx context.Context, owner string) error
	// LockHeld reports whether the named lock has a holder, even one whose
	// lease has expired: AcquireLock would take such a lock over, but a
	// lock stored with a new run (CreateRunWith) would conflict with it.
	LockHeld(ctx context.Context, key string) (bool, error)
	// LockOwner returns the owner of the named lock while its lease runs;
	// ErrNotFound when it has none, or its lease has expired.
	LockOwner(ctx context.Context, key string) (string, error)

	Close() error
}

// RunFilter selects runs.
type RunFilter struct {
	UserID    string
	SessionID string
	// States, when not empty, keeps only runs in one of these states.
	States []RunState
	// Since, when set, keeps runs created at or after it.
	Since time.Time
	Page  Page
}

// RunTail is what a run's end stores with it ([Store.EndRun]): the messages
// that end its history (its answer) and the events that end its log (the
// final event last); or what its start stores ([Store.CreateRunWith]):
// the first of each.
type RunTail struct {
	Messages []Message
	Events   []Event
}
