package orchestratortest

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// ownerTests pin the fencing contract crash recovery relies on: a run's
// writes are fenced by its owner, exactly one of several claims wins, a
// cancel request never overwrites a run's end, and a dead run's locks can
// be freed by owner.
func (st *storeSuite) ownerTests() map[string]func(*testing.T) {
	newRun := func(t *testing.T, s orchestrator.Store, id, owner string, state orchestrator.RunState) *orchestrator.Run {
		t.Helper()
		r := &orchestrator.Run{ID: id, SessionID: "s1", UserID: "u1", State: state, Owner: owner, CreatedAt: at(0)}
		mustDo(t, "CreateRun", s.CreateRun(t.Context(), r))
		return r
	}
	return map[string]func(*testing.T){
		"OwnerRoundTrips": func(t *testing.T) {
			s := st.open(t)
			createSession(t, s, "s1", "u1", at(0))
			newRun(t, s, "r1", "host:1:2:abc", orchestrator.RunRunning)
			got, err := s.GetRun(t.Context(), "r1")
			mustDo(t, "GetRun", err)
			if got.Owner != "host:1:2:abc" {
				t.Fatalf("Owner = %q, want %q", got.Owner, "host:1:2:abc")
			}
		},
		"UpdateRunIsFencedByOwner": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			r := newRun(t, s, "r1", "a", orchestrator.RunRunning)
			mustDo(t, "ClaimRun", s.ClaimRun(ctx, "r1", "a", "b"))
			late := *r
			late.State, late.Answer = orchestrator.RunFinished, "late write of the dead owner"
			wantErr(t, "UpdateRun(by the old owner)", s.UpdateRun(ctx, &late), orchestrator.ErrConflict)
			got, err := s.GetRun(ctx, "r1")
			mustDo(t, "GetRun", err)
			if got.State != orchestrator.RunRunning || got.Answer != "" || got.Owner != "b" {
				t.Fatalf("after a fenced write the run is %+v; want it untouched and owned by b", got)
			}
			late.Owner = "b"
			mustDo(t, "UpdateRun(by the new owner)", s.UpdateRun(ctx, &late))
			wantErr(t, "UpdateRun(missing)", s.UpdateRun(ctx, &orchestrator.Run{ID: "nope", Owner: "b"}), orchestrator.ErrNotFound)
		},
		"ClaimRun": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			newRun(t, s, "r1", "dead", orchestrator.RunRunning)
			newRun(t, s, "done", "dead", orchestrator.RunFinished)
			wantErr(t, "ClaimRun(wrong from)", s.ClaimRun(ctx, "r1", "other", "me"), orchestrator.ErrConflict)
			wantErr(t, "ClaimRun(terminal)", s.ClaimRun(ctx, "done", "dead", "me"), orchestrator.ErrConflict)
			wantErr(t, "ClaimRun(missing)", s.ClaimRun(ctx, "nope", "dead", "me"), orchestrator.ErrNotFound)
			var won atomic.Int32
			race(8, func(i int) {
				if s.ClaimRun(ctx, "r1", "dead", "reaper"+string(rune('a'+i))) == nil {
					won.Add(1)
				}
			})
			if won.Load() != 1 {
				t.Fatalf("%d of 8 concurrent claims won; want exactly 1", won.Load())
			}
		},
		"RequestCancel": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			for _, c := range []struct {
				from, want orchestrator.RunState
			}{
				{orchestrator.RunQueued, orchestrator.RunCancelling},
				{orchestrator.RunRunning, orchestrator.RunCancelling},
				{orchestrator.RunWaitingApproval, orchestrator.RunCancelling},
				{orchestrator.RunCancelling, orchestrator.RunCancelling},
				{orchestrator.RunFinished, orchestrator.RunFinished},
				{orchestrator.RunFailed, orchestrator.RunFailed},
				{orchestrator.RunCancelled, orchestrator.RunCancelled},
			} {
				id := "r-" + string(c.from)
				newRun(t, s, id, "a", c.from)
				got, err := s.RequestCancel(ctx, id)
				mustDo(t, "RequestCancel("+string(c.from)+")", err)
				if got.State != c.want {
					t.Errorf("RequestCancel of a %s run left it %s; want %s", c.from, got.State, c.want)
				}
			}
			_, err := s.RequestCancel(ctx, "nope")
			wantErr(t, "RequestCancel(missing)", err, orchestrator.ErrNotFound)
		},
		"ReleaseLocksOf": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			ttl := time.Hour
			mustDo(t, "AcquireLock", s.AcquireLock(ctx, "session:s1", "run1", ttl))
			mustDo(t, "AcquireLock", s.AcquireLock(ctx, "user:u1#0", "run1", ttl))
			mustDo(t, "AcquireLock", s.AcquireLock(ctx, "session:s2", "run2", ttl))
			mustDo(t, "ReleaseLocksOf", s.ReleaseLocksOf(ctx, "run1"))
			mustDo(t, "AcquireLock(freed session)", s.AcquireLock(ctx, "session:s1", "run3", ttl))
			mustDo(t, "AcquireLock(freed slot)", s.AcquireLock(ctx, "user:u1#0", "run3", ttl))
			wantErr(t, "AcquireLock(other owner's lock kept)", s.AcquireLock(ctx, "session:s2", "run3", ttl), orchestrator.ErrBusy)
		},
	}
}
