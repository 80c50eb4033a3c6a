package orchestratortest

import (
	"fmt"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

func (st *storeSuite) lockTests() map[string]func(*testing.T) {
	const ttl = time.Minute
	// expire is long enough for slow CI and short enough to wait out.
	const expire, wait = 20 * time.Millisecond, 150 * time.Millisecond
	return map[string]func(*testing.T){
		"AcquireRelease": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			mustDo(t, "AcquireLock(free)", s.AcquireLock(ctx, "k", "a", ttl))
			mustDo(t, "AcquireLock(same owner)", s.AcquireLock(ctx, "k", "a", ttl))
			wantErr(t, "AcquireLock(other owner)", s.AcquireLock(ctx, "k", "b", ttl), orchestrator.ErrBusy)
			mustDo(t, "ReleaseLock(non-owner)", s.ReleaseLock(ctx, "k", "b"))
			wantErr(t, "AcquireLock(after non-owner release)", s.AcquireLock(ctx, "k", "b", ttl), orchestrator.ErrBusy)
			mustDo(t, "ReleaseLock(owner)", s.ReleaseLock(ctx, "k", "a"))
			mustDo(t, "AcquireLock(after release)", s.AcquireLock(ctx, "k", "b", ttl))
			wantErr(t, "AcquireLock(previous owner)", s.AcquireLock(ctx, "k", "a", ttl), orchestrator.ErrBusy)
			mustDo(t, "ReleaseLock(never held)", s.ReleaseLock(ctx, "free", "a"))
			// Keys are independent.
			mustDo(t, "AcquireLock(other key)", s.AcquireLock(ctx, "k2", "a", ttl))
		},
		"Held": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			held := func(what, key string, want bool) {
				t.Helper()
				if got, err := s.LockHeld(ctx, key); err != nil || got != want {
					t.Fatalf("LockHeld(%s) = %v, %v; want %v", what, got, err, want)
				}
			}
			held("never taken", "k", false)
			mustDo(t, "AcquireLock", s.AcquireLock(ctx, "k", "a", ttl))
			held("taken", "k", true)
			held("another key", "k2", false)
			mustDo(t, "ReleaseLock", s.ReleaseLock(ctx, "k", "a"))
			held("released", "k", false)
			// An expired lock still has its holder, until taken over or
			// released.
			mustDo(t, "AcquireLock(expiring at once)", s.AcquireLock(ctx, "k", "a", time.Nanosecond))
			held("expired", "k", true)
		},
		"Owner": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			wantErr(t, "LockOwner(never taken)", func() error { _, err := s.LockOwner(ctx, "k"); return err }(), orchestrator.ErrNotFound)
			mustDo(t, "AcquireLock", s.AcquireLock(ctx, "k", "a", ttl))
			if owner, err := s.LockOwner(ctx, "k"); err != nil || owner != "a" {
				t.Fatalf("LockOwner(taken) = %q, %v; want a", owner, err)
			}
			wantErr(t, "LockOwner(another key)", func() error { _, err := s.LockOwner(ctx, "k2"); return err }(), orchestrator.ErrNotFound)
			mustDo(t, "ReleaseLock", s.ReleaseLock(ctx, "k", "a"))
			wantErr(t, "LockOwner(released)", func() error { _, err := s.LockOwner(ctx, "k"); return err }(), orchestrator.ErrNotFound)
			// Unlike LockHeld, an expired lease has no owner.
			mustDo(t, "AcquireLock(expiring at once)", s.AcquireLock(ctx, "k", "a", time.Nanosecond))
			time.Sleep(time.Millisecond) // past a lease of a nanosecond, not a synchronisation
			wantErr(t, "LockOwner(expired)", func() error { _, err := s.LockOwner(ctx, "k"); return err }(), orchestrator.ErrNotFound)
		},
		"Renew": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			mustDo(t, "AcquireLock", s.AcquireLock(ctx, "k", "a", expire))
			mustDo(t, "RenewLock(owner)", s.RenewLock(ctx, "k", "a", ttl))
			time.Sleep(wait)
			wantErr(t, "AcquireLock(renewed lock)", s.AcquireLock(ctx, "k", "b", ttl), orchestrator.ErrBusy)
			wantErr(t, "RenewLock(non-owner)", s.RenewLock(ctx, "k", "b", ttl), orchestrator.ErrNotFound)
			wantErr(t, "RenewLock(missing)", s.RenewLock(ctx, "nope", "a", ttl), orchestrator.ErrNotFound)
			mustDo(t, "ReleaseLock", s.ReleaseLock(ctx, "k", "a"))
			wantErr(t, "RenewLock(released)", s.RenewLock(ctx, "k", "a", ttl), orchestrator.ErrNotFound)
			// Past expiry, with nobody else taking it, the owner may renew.
			mustDo(t, "AcquireLock", s.AcquireLock(ctx, "k2", "a", expire))
			time.Sleep(wait)
			mustDo(t, "RenewLock(expired, untaken)", s.RenewLock(ctx, "k2", "a", ttl))
			wantErr(t, "AcquireLock(renewed lock)", s.AcquireLock(ctx, "k2", "b", ttl), orchestrator.ErrBusy)
		},
		"ExpiredTakenOver": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			mustDo(t, "AcquireLock", s.AcquireLock(ctx, "k", "a", expire))
			time.Sleep(wait)
			mustDo(t, "AcquireLock(expired, other owner)", s.AcquireLock(ctx, "k", "b", ttl))
			wantErr(t, "AcquireLock(previous owner)", s.AcquireLock(ctx, "k", "a", ttl), orchestrator.ErrBusy)
			wantErr(t, "RenewLock(previous owner)", s.RenewLock(ctx, "k", "a", ttl), orchestrator.ErrNotFound)
			mustDo(t, "ReleaseLock(previous owner)", s.ReleaseLock(ctx, "k", "a"))
			mustDo(t, "RenewLock(new owner)", s.RenewLock(ctx, "k", "b", ttl))
		},
		"Invalid": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			wantErr(t, "AcquireLock(ttl 0)", s.AcquireLock(ctx, "k", "a", 0), orchestrator.ErrInvalidArgument)
			wantErr(t, "AcquireLock(ttl < 0)", s.AcquireLock(ctx, "k", "a", -time.Second), orchestrator.ErrInvalidArgument)
			wantErr(t, "AcquireLock(empty key)", s.AcquireLock(ctx, "", "a", ttl), orchestrator.ErrInvalidArgument)
			wantErr(t, "AcquireLock(empty owner)", s.AcquireLock(ctx, "k", "", ttl), orchestrator.ErrInvalidArgument)
			mustDo(t, "AcquireLock", s.AcquireLock(ctx, "k", "a", ttl))
			wantErr(t, "RenewLock(ttl 0)", s.RenewLock(ctx, "k", "a", 0), orchestrator.ErrInvalidArgument)
		},
		"ConcurrentAcquire": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			const n = 16
			for round := range 5 {
				key := fmt.Sprintf("race-%d", round)
				if round%2 == 1 { // odd rounds race for an expired lock
					mustDo(t, "AcquireLock", s.AcquireLock(ctx, key, "old", expire))
					time.Sleep(wait)
				}
				errs := make([]error, n)
				race(n, func(i int) { errs[i] = s.AcquireLock(ctx, key, fmt.Sprintf("owner-%d", i), ttl) })
				winners := 0
				for i, err := range errs {
					if err == nil {
						winners++
						mustDo(t, "RenewLock(winner)", s.RenewLock(ctx, key, fmt.Sprintf("owner-%d", i), ttl))
						continue
					}
					wantErr(t, fmt.Sprintf("round %d: AcquireLock(owner-%d)", round, i), err, orchestrator.ErrBusy)
				}
				if winners != 1 {
					t.Errorf("round %d: %d of %d concurrent AcquireLock calls won; want exactly 1", round, winners, n)
				}
			}
		},
	}
}

// Helpers shared by the suite's files.
