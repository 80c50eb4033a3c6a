package orchestrator

// Idempotent starts: a client that retries a submit (its connection
// broke, its replica died) with the same RunRequest.IdempotencyKey gets
// the run the first submit started, not a second one.
//
// The key is a lock in the store ("idem:" + user + ":" + key) whose owner
// names the run, taken before the run is created and kept, past the
// run's end, for Options.IdempotencyTTL: so any replica finds it, two
// submits racing with one key start one run, and a key is the user's
// own (another user's same key is another lock).

import (
	"context"
	"errors"
	"strings"
)

// maxIdempotencyKey bounds a key's length.
const maxIdempotencyKey = 255

// checkIdempotencyKey refuses a key that is too long or not printable
// ASCII without spaces.
func checkIdempotencyKey(key string) error {
	if len(key) > maxIdempotencyKey {
		return messagef(ErrInvalidArgument, "idempotency_key_invalid", "Idempotency-Key is longer than %d bytes", maxIdempotencyKey)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x21 || c > 0x7e {
			return messagef(ErrInvalidArgument, "idempotency_key_ascii", "Idempotency-Key must be printable ASCII without spaces")
		}
	}
	return nil
}

func idempotencyLock(userID, key string) string { return "idem:" + userID + ":" + key }

// idempotencyOwner is the owner of a key's lock: the run's id, prefixed so
// that ReleaseLocksOf(run) (the locks of a dead run) leaves it.
func idempotencyOwner(runID string) string { return "idem:" + runID }

// startIdempotent is Start with req.IdempotencyKey set.
func (o *Orchestrator) startIdempotent(ctx context.Context, req RunRequest) (*Run, error) {
	if err := checkIdempotencyKey(req.IdempotencyKey); err != nil {
		return nil, err
	}
	if err := o.validate(&req); err != nil { // its question as stored, to compare
		return nil, err
	}
	if r, err := o.startedBefore(ctx, req); r != nil || err != nil {
		return r, err
	}
	runID := newID("run_")
	key := idempotencyLock(req.UserID, req.IdempotencyKey)
	if err := o.store.AcquireLock(ctx, key, idempotencyOwner(runID), o.opts.IdempotencyTTL); err != nil {
		if !errors.Is(err, ErrBusy) {
			return nil, err
		}
		// Another submit with the key took it since: its run.
		if r, err := o.startedBefore(ctx, req); r != nil || err != nil {
			return r, err
		}
		return nil, idempotencyInProgress()
	}
	r, err := o.start(ctx, req, runID)
	if err != nil {
		o.releaseKeys([]string{key}, idempotencyOwner(runID))
	}
	return r, err
}

// startedBefore is the run a submit with req's key started, nil when the
// key names none. The run must be what req asks (its question, and its
// session when req names one), else the key is reused for another
// request: a conflict. A key whose run is not stored yet (its submit is
// still starting it) is a conflict too: try again.
func (o *Orchestrator) startedBefore(ctx context.Context, req RunRequest) (*Run, error) {
	owner, err := o.store.LockOwner(ctx, idempotencyLock(req.UserID, req.IdempotencyKey))
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r, err := o.GetRun(ctx, req.UserID, strings.TrimPrefix(owner, "idem:"))
	if errors.Is(err, ErrNotFound) {
		return nil, idempotencyInProgress()
	}
	if err != nil {
		return nil, err
	}
	if r.Question != req.Question || (req.SessionID != "" && r.SessionID != req.SessionID) {
		return nil, messagef(ErrConflict, "idempotency_key_reused", "Idempotency-Key was used for another request (run %s)", r.ID)
	}
	return r, nil
}

func idempotencyInProgress() error {
	return WithRetryAfter(messagef(ErrConflict, "idempotency_in_progress", "a request with this Idempotency-Key is still starting its run"), shutdownRetryAfter)
}
