package orchestrator

import (
	"context"
	"fmt"
	"time"
)

// Locks held in this process alone (Options.OneProcess).
//
// A person's run takes one of its user's slots, a lock in the store, so
// that a second run of that person, on any process sharing the store,
// meets it. A new session's run stores that slot with its start
// (persistNew): the start is then a write of its own, where an agent's
// short blocking run is stored in one write with its end (deferStart).
//
// When no other process takes runs from the store, a person's slot need
// not be in the store to be met: a new session's blocking run that runs at
// once claims its slot here (claimSlot), defers its start like an agent's,
// and stores the slot with its start, or never when it ends within the
// log's delay (CreateRunWith stores no lock with an ended run, and the run frees none).
// The slot's guarantee is kept because
//
//   - every lock this orchestrator takes from the store goes through
//     acquireLock, which refuses a key another owner claims here and,
//     while it asks the store, claims the key itself; so does persistNew
//     for the slot it stores with a run: a claim and a store row of one
//     key cannot be taken by two owners at once;
//   - claimSlot claims first and then reads the store: a slot stored by a
//     run of this process (taken before the claim, or waiting for an
//     approval) or left by a dead process is held, and the run takes its
//     slot from the store as before (persistNew's fallback);
//   - a claim lasts until the start is stored (the row holds the slot from
//     then on) or the run ends, before its final event is visible;
//   - no other process takes locks: OneProcess is only set for a store
//     this process holds alone (a SQLite database whose lock file,
//     <db>.sole, the server holds; storage.Options.Sole).

// claimSlot claims lr's folded user slot (locks[1]) in this process, for a
// run whose start is deferred; false when the slot is claimed or stored,
// or the store cannot say (persistNew then takes it from the store).
func (o *Orchestrator) claimSlot(ctx context.Context, lr *liveRun) bool {
	if !o.opts.OneProcess || len(lr.locks) != 2 {
		return false
	}
	key := lr.locks[1]
	if ok, fresh := o.claim(key, lr.id); !ok || !fresh {
		return false
	}
	if held, err := o.store.LockHeld(ctx, key); err != nil || held {
		o.unclaim(key, lr.id)
		return false
	}
	return true
}

// acquireLock is Store.AcquireLock for the runs of this orchestrator: with
// OneProcess, a key another owner claims here is busy, and the key is
// claimed while the store is asked.
func (o *Orchestrator) acquireLock(ctx context.Context, key, owner string, ttl time.Duration) error {
	ok, fresh := o.claim(key, owner)
	if !ok {
		return fmt.Errorf("%w: lock %s is held by another run", ErrBusy, key)
	}
	if fresh {
		defer o.unclaim(key, owner)
	}
	return o.store.AcquireLock(ctx, key, owner, ttl)
}

// claim claims key for owner in this process: ok is false when another
// owner claims it, fresh is true when the claim is new (its taker drops
// it; a claim owner had already stays). Without OneProcess it claims
// nothing and reports ok.
func (o *Orchestrator) claim(key, owner string) (ok, fresh bool) {
	if !o.opts.OneProcess {
		return true, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if holder, claimed := o.claims[key]; claimed {
		return holder == owner, false
	}
	o.claims[key] = owner
	return true, true
}

// unclaim drops owner's claim of key, if it has one.
func (o *Orchestrator) unclaim(key, owner string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.unclaimLocked(key, owner)
}

func (o *Orchestrator) unclaimLocked(key, owner string) {
	if o.claims[key] == owner {
		delete(o.claims, key)
	}
}

// dropClaimsLocked drops every claim of lr's locks: it has ended, or was
// never admitted.
func (o *Orchestrator) dropClaimsLocked(lr *liveRun) {
	if len(o.claims) == 0 {
		return
	}
	for _, k := range lr.locks {
		o.unclaimLocked(k, lr.id)
	}
}
