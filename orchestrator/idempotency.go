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
//
// The owner also names the instance that took the key. A key whose run
// was never stored, taken by an instance that has died since (killed
// between taking the key and storing the run), names nothing and never
// will: the next submit with the key frees it and starts the run, instead
// of answering "still starting" until the key expires.

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
// that ReleaseLocksOf(run) (the locks of a dead run) leaves it, and the
// instance that takes the key.
func (o *Orchestrator) idempotencyOwner(runID string) string {
	return "idem:" + runID + "@" + o.instance
}

// parseIdempotencyOwner splits a key's owner into its run and instance
// (none for a key taken before owners named it).
func parseIdempotencyOwner(owner string) (runID, instance string) {
	runID, instance, _ = strings.Cut(strings.TrimPrefix(owner, "idem:"), "@")
	return runID, instance
}

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
	// The key names this instance: hold its lease first, so no replica
	// takes it for dead while the run starts.
	if err := o.ensureLease(ctx); err != nil {
		return nil, err
	}
	runID := newID("run_")
	key := idempotencyLock(req.UserID, req.IdempotencyKey)
	if err := o.store.AcquireLock(ctx, key, o.idempotencyOwner(runID), o.opts.IdempotencyTTL); err != nil {
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
		o.releaseKeys([]string{key}, o.idempotencyOwner(runID))
	}
	return r, err
}

// startedBefore is the run a submit with req's key started, nil when the
// key names none. The run must be what req asks (its question, and its
// session when req names one), else the key is reused for another
// request: a conflict. A key whose run is not stored yet (its submit is
// still starting it) is a conflict too: try again — unless the instance
// that took the key has died, when the key is freed and nil returned.
func (o *Orchestrator) startedBefore(ctx context.Context, req RunRequest) (*Run, error) {
	key := idempotencyLock(req.UserID, req.IdempotencyKey)
	owner, err := o.store.LockOwner(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	runID, instance := parseIdempotencyOwner(owner)
	r, err := o.GetRun(ctx, req.UserID, runID)
	if errors.Is(err, ErrNotFound) {
		if instance == "" || instance == o.instance {
			return nil, idempotencyInProgress()
		}
		dead, err := o.ownerDead(ctx, instance)
		if err != nil {
			o.log.Warn("idempotency key: is its instance alive? not known", "key", key, "instance", instance, "err", err)
		}
		if err != nil || !dead {
			return nil, idempotencyInProgress()
		}
		// Its run may have been stored just before the instance died.
		if r, err := o.GetRun(ctx, req.UserID, runID); err == nil {
			return o.sameRequest(req, r)
		}
		o.log.Warn("idempotency key of a submit whose server died before storing its run: freed", "key", key, "instance", instance)
		if err := o.store.ReleaseLock(ctx, key, owner); err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return o.sameRequest(req, r)
}

// sameRequest returns r when it is what req asks, else a conflict: the
// key was reused for another request.
func (o *Orchestrator) sameRequest(req RunRequest, r *Run) (*Run, error) {
	if r.Question != req.Question || (req.SessionID != "" && r.SessionID != req.SessionID) {
		return nil, messagef(ErrConflict, "idempotency_key_reused", "Idempotency-Key was used for another request (run %s)", r.ID)
	}
	return r, nil
}

func idempotencyInProgress() error {
	return WithRetryAfter(messagef(ErrConflict, "idempotency_in_progress", "a request with this Idempotency-Key is still starting its run"), shutdownRetryAfter)
}
