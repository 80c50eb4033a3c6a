package orchestratortest

import (
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// approvalTests pin what approvals rely on: approvals and a waiting run's
// round round-trip, a decision and an execution mark are compare-and-set
// (one of several racing writers wins), a waiting run is claimed by
// exactly one instance, and deleting the session removes its approvals.
func (st *storeSuite) approvalTests() map[string]func(*testing.T) {
	waitingRun := func(t *testing.T, s orchestrator.Store, id string) *orchestrator.Run {
		t.Helper()
		r := &orchestrator.Run{ID: id, SessionID: "s1", UserID: "u1", State: orchestrator.RunRunning, Owner: "a", CreatedAt: at(0)}
		mustDo(t, "CreateRun", s.CreateRun(t.Context(), r))
		r.State = orchestrator.RunWaitingApproval
		r.Pending = &orchestrator.PendingRound{Round: 2, Content: "I will write it", Locks: []string{"session:s1", "user:u1#0"},
			Calls: []orchestrator.PendingToolCall{
				{Call: orchestrator.ToolCall{ID: "c1", Name: "write_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)}, ApprovalID: "ap1"},
				{Call: orchestrator.ToolCall{ID: "c2", Name: "nope", Arguments: json.RawMessage(`{}`)}, Err: "unknown tool"},
			}}
		mustDo(t, "UpdateRun(waiting)", s.UpdateRun(t.Context(), r))
		return r
	}
	approval := func(run, id string) *orchestrator.Approval {
		exp := at(time.Hour).Truncate(time.Microsecond).UTC()
		return &orchestrator.Approval{ID: id, RunID: run, SessionID: "s1", UserID: "u1", Round: 2, CallID: "c1",
			Kind: orchestrator.KindAuthorization, Tool: "write_file", Arguments: json.RawMessage(`{"path":"a.txt"}`),
			Reason: "approval mode suggest", Decisions: []string{"approve", "edit", "reject", "cancel"},
			State: orchestrator.ApprovalPending, CreatedAt: at(1), ExpiresAt: &exp}
	}
	return map[string]func(*testing.T){
		"PendingRoundRoundTrips": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			want := waitingRun(t, s, "r1").Pending
			got, err := s.GetRun(ctx, "r1")
			mustDo(t, "GetRun", err)
			diff(t, "Pending", want, got.Pending)
			got.Pending = nil
			mustDo(t, "UpdateRun(clear)", s.UpdateRun(ctx, got))
			again, err := s.GetRun(ctx, "r1")
			mustDo(t, "GetRun", err)
			if again.Pending != nil {
				t.Fatalf("Pending after clearing = %+v, want nil", again.Pending)
			}
		},
		"ApprovalsRoundTrip": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			waitingRun(t, s, "r1")
			a1, a2 := approval("r1", "ap1"), approval("r1", "ap2")
			a2.Kind, a2.Missing, a2.CreatedAt = orchestrator.KindParamRequired, json.RawMessage(`{"type":"object","required":["path"]}`), at(2)
			mustDo(t, "CreateApprovals", s.CreateApprovals(ctx, []*orchestrator.Approval{a1, a2}))
			list, err := s.ListApprovals(ctx, "r1")
			mustDo(t, "ListApprovals", err)
			diff(t, "ListApprovals", []*orchestrator.Approval{a1, a2}, list)
			got, err := s.GetApproval(ctx, "r1", "ap2")
			mustDo(t, "GetApproval", err)
			diff(t, "GetApproval", a2, got)
			checkUTC(t, got.CreatedAt, *got.ExpiresAt)
			_, err = s.GetApproval(ctx, "r1", "nope")
			wantErr(t, "GetApproval(missing)", err, orchestrator.ErrNotFound)
			_, err = s.GetApproval(ctx, "other", "ap1")
			wantErr(t, "GetApproval(other run)", err, orchestrator.ErrNotFound)
			wantErr(t, "CreateApprovals(again)", s.CreateApprovals(ctx, []*orchestrator.Approval{approval("r1", "ap1")}), orchestrator.ErrConflict)
			wantErr(t, "CreateApprovals(no run)", s.CreateApprovals(ctx, []*orchestrator.Approval{approval("nope", "ap9")}), orchestrator.ErrNotFound)
			wantErr(t, "CreateApprovals(no id)", s.CreateApprovals(ctx, []*orchestrator.Approval{approval("r1", "")}), orchestrator.ErrInvalidArgument)
			none, err := s.ListApprovals(ctx, "unknown")
			mustDo(t, "ListApprovals(unknown run)", err)
			wantLen(t, "ListApprovals(unknown run)", 0, size(none, nil))
		},
		"DecisionIsRecordedOnce": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			waitingRun(t, s, "r1")
			mustDo(t, "CreateApprovals", s.CreateApprovals(ctx, []*orchestrator.Approval{approval("r1", "ap1")}))
			var won atomic.Int32
			race(8, func(i int) {
				a := approval("r1", "ap1")
				decided := at(time.Duration(10 + i))
				a.State, a.DecidedAt = orchestrator.ApprovalEdited, &decided
				a.Decision = &orchestrator.ApprovalDecision{Decision: "edit", Arguments: json.RawMessage(`{"path":"b.txt"}`), Reason: "n" + string(rune('a'+i)), By: "u1"}
				if s.UpdateApproval(ctx, a, orchestrator.ApprovalPending, "") == nil {
					won.Add(1)
				}
			})
			if won.Load() != 1 {
				t.Fatalf("%d racing decisions were recorded, want exactly 1", won.Load())
			}
			got, err := s.GetApproval(ctx, "r1", "ap1")
			mustDo(t, "GetApproval", err)
			if got.State != orchestrator.ApprovalEdited || got.Decision == nil || string(got.Decision.Arguments) != `{"path":"b.txt"}` || got.DecidedAt == nil {
				t.Fatalf("decided approval = %+v (decision %+v)", got, got.Decision)
			}
			late := approval("r1", "ap1")
			late.State = orchestrator.ApprovalRejected
			wantErr(t, "UpdateApproval(second decision)", s.UpdateApproval(ctx, late, orchestrator.ApprovalPending, ""), orchestrator.ErrConflict)
			wantErr(t, "UpdateApproval(missing)", s.UpdateApproval(ctx, approval("r1", "zz"), orchestrator.ApprovalPending, ""), orchestrator.ErrNotFound)
		},
		"ExecutionMarkIsCompareAndSet": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			waitingRun(t, s, "r1")
			mustDo(t, "CreateApprovals", s.CreateApprovals(ctx, []*orchestrator.Approval{approval("r1", "ap1")}))
			a, err := s.GetApproval(ctx, "r1", "ap1")
			mustDo(t, "GetApproval", err)
			a.State, a.Decision = orchestrator.ApprovalApproved, &orchestrator.ApprovalDecision{Decision: "approve", By: "u1"}
			mustDo(t, "UpdateApproval(approve)", s.UpdateApproval(ctx, a, orchestrator.ApprovalPending, ""))
			var started atomic.Int32
			race(8, func(int) {
				b := *a
				b.Execution = orchestrator.ExecutionStarted
				if s.UpdateApproval(ctx, &b, orchestrator.ApprovalApproved, "") == nil {
					started.Add(1)
				}
			})
			if started.Load() != 1 {
				t.Fatalf("%d executions were marked started, want exactly 1", started.Load())
			}
			done := *a
			done.Execution, done.Result = orchestrator.ExecutionDone, &orchestrator.ApprovalResult{Content: "wrote 3 bytes"}
			mustDo(t, "UpdateApproval(done)", s.UpdateApproval(ctx, &done, orchestrator.ApprovalApproved, orchestrator.ExecutionStarted))
			got, err := s.GetApproval(ctx, "r1", "ap1")
			mustDo(t, "GetApproval", err)
			if got.Execution != orchestrator.ExecutionDone || got.Result == nil || got.Result.Content != "wrote 3 bytes" || got.State != orchestrator.ApprovalApproved {
				t.Fatalf("executed approval = %+v (result %+v)", got, got.Result)
			}
		},
		"ClaimWaitingHasOneWinner": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			waitingRun(t, s, "r1")
			r2 := &orchestrator.Run{ID: "r2", SessionID: "s1", UserID: "u1", State: orchestrator.RunRunning, Owner: "a", CreatedAt: at(0)}
			mustDo(t, "CreateRun", s.CreateRun(ctx, r2))
			var won atomic.Int32
			var winner atomic.Value
			race(8, func(i int) {
				me := "inst" + string(rune('a'+i))
				if r, err := s.ClaimWaiting(ctx, "r1", me); err == nil {
					won.Add(1)
					winner.Store(me)
					if r.State != orchestrator.RunRunning || r.Owner != me || r.Pending == nil || r.Pending.Round != 2 {
						t.Errorf("claimed run = %+v, want running, owned by %s, with its pending round", r, me)
					}
				}
			})
			if won.Load() != 1 {
				t.Fatalf("%d claims of one waiting run won, want exactly 1", won.Load())
			}
			got, err := s.GetRun(ctx, "r1")
			mustDo(t, "GetRun", err)
			if got.Owner != winner.Load().(string) || got.State != orchestrator.RunRunning {
				t.Fatalf("after the claim the run is %s owned by %q, want running owned by %v", got.State, got.Owner, winner.Load())
			}
			_, err = s.ClaimWaiting(ctx, "r2", "me")
			wantErr(t, "ClaimWaiting(running)", err, orchestrator.ErrConflict)
			_, err = s.ClaimWaiting(ctx, "nope", "me")
			wantErr(t, "ClaimWaiting(missing)", err, orchestrator.ErrNotFound)
			_, err = s.ClaimWaiting(ctx, "r1", "")
			wantErr(t, "ClaimWaiting(no owner)", err, orchestrator.ErrInvalidArgument)
		},
		"DeleteSessionRemovesApprovals": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			waitingRun(t, s, "r1")
			mustDo(t, "CreateApprovals", s.CreateApprovals(ctx, []*orchestrator.Approval{approval("r1", "ap1")}))
			mustDo(t, "DeleteSession", s.DeleteSession(ctx, "s1"))
			list, err := s.ListApprovals(ctx, "r1")
			mustDo(t, "ListApprovals", err)
			wantLen(t, "ListApprovals after DeleteSession", 0, size(list, nil))
		},
	}
}
