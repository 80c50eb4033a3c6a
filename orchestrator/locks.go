package orchestrator

// The store's locks a run holds: its session's, and one of its user's run slots,
// renewed by its heartbeat.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// sessionLockKey is the key of a session's lock.
func sessionLockKey(sessionID string) string { return "session:" + sessionID }

// acquireLocks takes the session lock and a per-user slot, in that order,
// and returns their keys, the session's first. A new session's lock
// (freshSession) is not taken here but stored with its first run
// (persistNew): one write less, and nobody else can know the session
// before that write. So is, for a new session, the user's first slot:
// keys then ends with it and folded is set; persistNew falls back to
// acquireSlot when that slot is taken.
func (o *Orchestrator) acquireLocks(ctx context.Context, req RunRequest, sessionID, runID string, freshSession bool) (keys []string, folded bool, err error) {
	keys, folded, err = o.acquireRunLocks(ctx, req, sessionID, runID, freshSession)
	if err != nil || o.opts.ClusterMaxRuns <= 0 {
		return keys, folded, err
	}
	// Last, so a run refused for its session or user takes no cluster
	// slot; held from now (never folded into the run's first write).
	key, err := o.acquireClusterSlot(ctx, runID)
	if err != nil {
		if !freshSession {
			o.releaseKeys(keys, runID)
		}
		return nil, false, err
	}
	return append(keys, key), folded, nil
}

// acquireRunLocks is acquireLocks' session lock and user slot.
func (o *Orchestrator) acquireRunLocks(ctx context.Context, req RunRequest, sessionID, runID string, freshSession bool) (keys []string, folded bool, err error) {
	sessKey := sessionLockKey(sessionID)
	if freshSession {
		if o.slotLimit(req) == 0 {
			return []string{sessKey}, false, nil
		}
		return []string{sessKey, userSlotKey(req.UserID, 0)}, true, nil
	}
	if err := o.acquireLock(ctx, sessKey, runID, o.opts.LockTTL); err != nil {
		if errors.Is(err, ErrBusy) {
			return nil, false, messagef(ErrBusy, "busy_session", "session %s already has a running run", sessionID)
		}
		return nil, false, err
	}
	if o.slotLimit(req) == 0 {
		return []string{sessKey}, false, nil
	}
	key, err := o.acquireSlot(ctx, req, runID)
	if err != nil {
		o.releaseKeys([]string{sessKey}, runID)
		return nil, false, err
	}
	return []string{sessKey, key}, false, nil
}

// userSlotKey is the key of a user's i-th run slot; every one starts
// with userSlotPrefix.
func userSlotKey(userID string, i int) string { return userSlotPrefix(userID) + strconv.Itoa(i) }

func userSlotPrefix(userID string) string { return "user:" + userID + "#" }

// slotLimit is how many runs the request's user may have at once, 0 when
// the global limit already bounds the user (no slot to take).
func (o *Orchestrator) slotLimit(req RunRequest) int {
	if req.Caller == CallerAgent {
		if o.opts.PerUserAgents >= o.opts.MaxActiveRuns {
			return 0
		}
		return o.opts.PerUserAgents
	}
	return o.opts.PerUser
}

// userAtLimit is acquireSlot's refusal when this process runs as many
// runs holding one of the user's slots as the request's limit, else nil:
// what a run whose slot was folded (not taken yet) is told before any
// other refusal.
func (o *Orchestrator) userAtLimit(ctx context.Context, req RunRequest) error {
	limit := o.slotLimit(req)
	prefix := userSlotPrefix(req.UserID)
	o.mu.Lock()
	n := 0
	for _, lr := range o.live {
		if lr.userID == req.UserID && slices.ContainsFunc(lr.locks, func(k string) bool { return strings.HasPrefix(k, prefix) }) &&
			!lr.snapshot().State.Terminal() {
			n++
		}
	}
	o.mu.Unlock()
	if n < limit {
		return nil
	}
	return o.userBusy(ctx, req.UserID, limit)
}

// userBusy is the refusal of a run whose user has limit runs already.
// When one of them is paused for a person (waiting_approval,
// waiting_input), which can hold the slot until its timeout, the refusal
// is a [PausedError] naming it: the person learns which run to decide.
func (o *Orchestrator) userBusy(ctx context.Context, userID string, limit int) error {
	paused, err := o.store.ListRuns(ctx, RunFilter{UserID: userID, States: []RunState{RunWaitingApproval, RunWaitingInput}, Page: Page{Limit: 1}})
	if err == nil && len(paused) > 0 {
		r := paused[0]
		return &PausedError{UserID: userID, RunID: r.ID, SessionID: r.SessionID, State: r.State,
			err: messagef(ErrBusy, "busy_user_paused", "user %s already has run %s %s; decide it, or cancel it, to start another", userID, r.ID, string(r.State))}
	}
	return busyUser(userID, limit)
}

// busyUser is userBusy's refusal without a paused run to name.
func busyUser(userID string, limit int) error {
	if limit == 1 {
		return messagef(ErrBusy, "busy_user", "user %s already has a running run", userID)
	}
	return messagef(ErrBusy, "busy_user_n", "user %s already has %d running runs", userID, limit)
}

// acquireSlot takes the first free slot of the request's user.
func (o *Orchestrator) acquireSlot(ctx context.Context, req RunRequest, runID string) (string, error) {
	limit := o.slotLimit(req)
	for i := range limit {
		key := userSlotKey(req.UserID, i)
		err := o.acquireLock(ctx, key, runID, o.opts.LockTTL)
		if err == nil {
			return key, nil
		}
		if !errors.Is(err, ErrBusy) {
			return "", err
		}
	}
	return "", o.userBusy(ctx, req.UserID, limit)
}

// clusterSlotPrefix begins the key of every cluster slot.
const clusterSlotPrefix = "cluster#"

func isClusterSlot(key string) bool { return strings.HasPrefix(key, clusterSlotPrefix) }

// acquireClusterSlot takes a free cluster slot (Options.ClusterMaxRuns)
// for runID. It tries the slots from a random one on, so that replicas
// starting runs at once seldom ask for the same; a full cluster costs a
// try of every slot before its refusal.
func (o *Orchestrator) acquireClusterSlot(ctx context.Context, runID string) (string, error) {
	n := o.opts.ClusterMaxRuns
	from := rand.IntN(n)
	for i := range n {
		key := clusterSlotPrefix + strconv.Itoa((from+i)%n)
		err := o.acquireLock(ctx, key, runID, o.opts.LockTTL)
		if err == nil {
			return key, nil
		}
		if !errors.Is(err, ErrBusy) {
			return "", err
		}
	}
	return "", WithRetryAfter(messagef(ErrUnavailable, "cluster_full", "%d runs are in flight across the cluster, its limit", n), o.opts.QueueRetryAfter)
}

func (o *Orchestrator) releaseLocks(lr *liveRun) { o.releaseKeys(lr.locks, lr.id) }

// releaseClusterSlot frees lr's cluster slot, the one lock taken before
// its start is stored (acquireLocks), when its deferred start is stored
// with its end: that write frees no lock.
func (o *Orchestrator) releaseClusterSlot(lr *liveRun) {
	o.releaseKeys(slices.DeleteFunc(slices.Clone(lr.locks), func(k string) bool { return !isClusterSlot(k) }), lr.id)
}

func (o *Orchestrator) releaseKeys(keys []string, owner string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, k := range keys {
		if err := o.store.ReleaseLock(ctx, k, owner); err != nil {
			o.log.Warn("lock not released; it expires with its ttl", "key", k, "owner", owner, "err", err)
		}
	}
}

// startHeartbeat renews lr's locks every LockTTL/3 and watches the store
// for a cancellation requested by another process. It lives as long as the
// run's context, which complete cancels (so does Close, through baseCtx), so
// it also ends when the run was cancelled before the heartbeat started.
func (o *Orchestrator) startHeartbeat(lr *liveRun) {
	ctx := lr.ctx
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		defer close(lr.hbDone)
		t := time.NewTicker(o.opts.LockTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			for _, k := range lr.locks {
				if lr.log.pendingStart() != nil && !isClusterSlot(k) {
					continue // not stored yet: its start stores them (a cluster slot is held already)
				}
				err := o.store.RenewLock(ctx, k, lr.id, o.opts.LockTTL)
				if err == nil || ctx.Err() != nil {
					continue
				}
				o.log.Warn("lock renewal failed", "key", k, "run_id", lr.id, "err", err)
				if !errors.Is(err, ErrNotFound) {
					continue // the store is away: the lease still runs
				}
				// The lease expired. Take it again unless another run has:
				// then this run no longer has its session (or slot) to
				// itself, and must stop rather than run beside that one.
				if err := o.acquireLock(ctx, k, lr.id, o.opts.LockTTL); errors.Is(err, ErrBusy) {
					o.log.Error("run lost its lock to another run; stopping it", "key", k, "run_id", lr.id)
					lr.abort(fmt.Errorf("lock %s was lost to another run while this run was stalled", k))
				}
			}
			r, err := o.store.GetRun(ctx, lr.id)
			switch {
			case err != nil:
			case r.Owner != o.instance:
				o.log.Error("run taken over by another instance; stopping it here", "run_id", lr.id, "owner", r.Owner)
				lr.markLost()
			case r.State == RunCancelling:
				o.cancelLive(lr)
			}
		}
	}()
}
