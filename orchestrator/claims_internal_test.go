package orchestrator

import (
	"context"
	"errors"
	"testing"
	"time"
)

// lockStore answers AcquireLock as a free store does and records who asked.
type lockStore struct {
	Store
	asked []string
}

func (s *lockStore) AcquireLock(_ context.Context, key, owner string, _ time.Duration) error {
	s.asked = append(s.asked, key+" "+owner)
	return nil
}

// acquireLock claims a key only while it asks the store, refuses a key
// another owner claims without asking, and leaves a claim its owner held
// before (a deferred start's) in place.
func TestAcquireLockClaims(t *testing.T) {
	ctx := t.Context()
	st := &lockStore{}
	o := &Orchestrator{store: st, opts: Options{OneProcess: true}, claims: map[string]string{}}

	if err := o.acquireLock(ctx, "k", "a", time.Minute); err != nil {
		t.Fatal(err)
	}
	if len(o.claims) != 0 {
		t.Fatalf("claims after acquireLock = %v; want none left", o.claims)
	}
	if ok, fresh := o.claim("k", "a"); !ok || !fresh {
		t.Fatalf("claim = %v, %v", ok, fresh)
	}
	if err := o.acquireLock(ctx, "k", "b", time.Minute); !errors.Is(err, ErrBusy) {
		t.Fatalf("acquireLock of a key another owner claims: %v; want ErrBusy", err)
	}
	if err := o.acquireLock(ctx, "k", "a", time.Minute); err != nil {
		t.Fatal(err)
	}
	if o.claims["k"] != "a" {
		t.Fatalf("claims = %v; a's own claim was dropped by its acquireLock", o.claims)
	}
	if want := []string{"k a", "k a"}; len(st.asked) != 2 || st.asked[0] != want[0] || st.asked[1] != want[1] {
		t.Fatalf("the store was asked %v; want %v (never for b)", st.asked, want)
	}

	// Without OneProcess nothing is claimed.
	o = &Orchestrator{store: st, claims: map[string]string{}}
	if ok, fresh := o.claim("k", "a"); !ok || fresh || len(o.claims) != 0 {
		t.Fatalf("claim without OneProcess = %v, %v, claims %v", ok, fresh, o.claims)
	}
}
