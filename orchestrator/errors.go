package orchestrator

import (
	"errors"
	"fmt"
	"time"
)

// The error vocabulary of wunder. Every package wraps these with %w and every
// protocol edge (gateway, a2a, mcpserver, connectapi) owns one table that maps
// them to its own codes. Nothing outside this file invents a new sentinel.
var (
	// ErrNotFound: the session, run or other object does not exist, or is not
	// visible to the caller (the two are never told apart).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the request conflicts with the current state (e.g. a
	// run that already finished cannot be cancelled).
	ErrConflict = errors.New("conflict")
	// ErrInvalidArgument: the request is malformed or a field is out of range.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrToolNotFound: a requested tool name is not in the caller's catalog.
	ErrToolNotFound = errors.New("tool not found")
	// ErrUnauthenticated: no or wrong credentials.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrPermissionDenied: the principal may not do this.
	ErrPermissionDenied = errors.New("permission denied")
	// ErrBusy: the user (or session) already has a running run. HTTP 429.
	ErrBusy = errors.New("busy")
	// ErrUnavailable: the service cannot take the request now (queue full,
	// no model configured). HTTP 503; see [RetryAfter].
	ErrUnavailable = errors.New("unavailable")
	// ErrCanceled: the run was cancelled.
	ErrCanceled = errors.New("canceled")
)

// KeyedError is an error that names its sentence, so that a front-end can
// say it in the request's language: its key names a format in the
// front-ends' message catalog (internal/i18n) and its args fill it. Error
// is the English message, as fmt.Errorf would have made it; Unwrap gives
// the sentinel. Only the core's most common refusals carry one; any other
// error is shown as its sentinel's sentence and its English detail.
type KeyedError struct {
	err  error
	key  string
	args []any
}

func (m *KeyedError) Error() string { return m.err.Error() }
func (m *KeyedError) Unwrap() error { return m.err }

// MessageKey is the catalog key of m's sentence and the values it takes.
func (m *KeyedError) MessageKey() (string, []any) { return m.key, m.args }

// messagef is fmt.Errorf("%w: "+format, sentinel, args...) naming its
// sentence key; the catalog's English entry for key is the same format,
// sentinel text first (a gateway test checks each call).
func messagef(sentinel error, key, format string, args ...any) error {
	return &KeyedError{err: fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...), key: key, args: args}
}

// PausedError is the refusal (ErrBusy, 429 over HTTP) of a run whose
// user's slot is held by a run paused for a person: it names that run, so
// a front-end can say where to decide it. errors.Is finds ErrBusy, and
// its message is a KeyedError's ("busy_user_paused").
type PausedError struct {
	UserID, RunID, SessionID string
	State                    RunState // RunWaitingApproval or RunWaitingInput
	err                      error
}

func (e *PausedError) Error() string { return e.err.Error() }
func (e *PausedError) Unwrap() error { return e.err }

// retryAfterError decorates an error with a hint for the client.
type retryAfterError struct {
	err   error
	after time.Duration
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }

// WithRetryAfter attaches a retry hint to err; [RetryAfter] reads it back.
func WithRetryAfter(err error, after time.Duration) error {
	return &retryAfterError{err: err, after: after}
}

// RetryAfter reports the retry hint attached to err, if any.
func RetryAfter(err error) (time.Duration, bool) {
	var ra *retryAfterError
	if errors.As(err, &ra) {
		return ra.after, true
	}
	return 0, false
}

// invalidf returns an ErrInvalidArgument with a message.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, args...))
}
