package orchestratortest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// pauseTests pin SuspendRun: a run's pause (its waiting state and round,
// its approvals, its kept messages and the events that announce it) is
// stored in one write or not at all.
func (st *storeSuite) pauseTests() map[string]func(*testing.T) {
	return map[string]func(*testing.T){
		"SuspendRun": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			r := runningWithLock(t, s)
			ev := func(seq int64, typ string) orchestrator.Event {
				return orchestrator.Event{RunID: "r1", SessionID: "s1", Seq: seq, Type: typ, Data: []byte(`{"n":1}`), Time: at(time.Duration(seq))}
			}
			mustDo(t, "AppendEvents(1)", s.AppendEvents(ctx, []orchestrator.Event{ev(1, "progress")}))
			ap := func(id string) *orchestrator.Approval {
				return &orchestrator.Approval{ID: id, RunID: "r1", SessionID: "s1", UserID: "u1", Round: 1, CallID: "c-" + id,
					Kind: orchestrator.KindAuthorization, Tool: "write_file", Arguments: json.RawMessage(`{"path":"a.txt"}`),
					Decisions: []string{"approve", "reject"}, State: orchestrator.ApprovalPending, CreatedAt: at(2)}
			}
			waiting := *r
			waiting.State, waiting.LastSeq = orchestrator.RunWaitingApproval, 3
			waiting.Pending = &orchestrator.PendingRound{Round: 1, Content: "let me write",
				Calls: []orchestrator.PendingToolCall{{Call: orchestrator.ToolCall{ID: "c-ap1", Name: "write_file", Arguments: json.RawMessage(`{}`)}, ApprovalID: "ap1"}}}
			note := orchestrator.Message{Role: orchestrator.RoleAssistant, Content: "kept", RunID: "r1", CreatedAt: at(2)}
			tail := orchestrator.RunTail{Messages: []orchestrator.Message{note}, Events: []orchestrator.Event{ev(2, "approval_required"), ev(3, "approval_required")}}

			// unchanged checks that a refused pause wrote nothing of it.
			unchanged := func(what string) {
				t.Helper()
				got, err := s.GetRun(ctx, "r1")
				mustDo(t, "GetRun", err)
				aps, err := s.ListApprovals(ctx, "r1")
				mustDo(t, "ListApprovals", err)
				msgs, err := s.ListMessages(ctx, "s1", 0)
				mustDo(t, "ListMessages", err)
				evs, err := s.ListEvents(ctx, "r1", 0, 0)
				mustDo(t, "ListEvents", err)
				if got.State != orchestrator.RunRunning || got.Pending != nil || len(aps) != 0 || len(msgs) != 0 || len(evs) != 1 {
					t.Fatalf("after %s: run %s (pending %v), %d approvals, %d messages, %d events; want running, none, 0, 0, 1",
						what, got.State, got.Pending != nil, len(aps), len(msgs), len(evs))
				}
			}
			late := waiting
			late.Owner = "b"
			wantErr(t, "SuspendRun(not the owner)", s.SuspendRun(ctx, &late, []*orchestrator.Approval{ap("ap1"), ap("ap2")}, tail), orchestrator.ErrConflict)
			unchanged("a fenced pause")
			clash := orchestrator.RunTail{Events: []orchestrator.Event{ev(1, "approval_required")}}
			wantErr(t, "SuspendRun(events repeat a seq)", s.SuspendRun(ctx, &waiting, []*orchestrator.Approval{ap("ap1")}, clash), orchestrator.ErrConflict)
			unchanged("a pause whose events clash")
			wantErr(t, "SuspendRun(an approval repeated)", s.SuspendRun(ctx, &waiting, []*orchestrator.Approval{ap("ap1"), ap("ap1")}, tail), orchestrator.ErrConflict)
			unchanged("a pause whose approvals clash")
			wantErr(t, "SuspendRun(approval without id)", s.SuspendRun(ctx, &waiting, []*orchestrator.Approval{ap("")}, tail), orchestrator.ErrInvalidArgument)
			unchanged("a pause with an invalid approval")
			wantErr(t, "SuspendRun(missing run)", s.SuspendRun(ctx, &orchestrator.Run{ID: "nope", Owner: "a"}, nil, orchestrator.RunTail{}), orchestrator.ErrNotFound)
			wantErr(t, "SuspendRun(nil)", s.SuspendRun(ctx, nil, nil, orchestrator.RunTail{}), orchestrator.ErrInvalidArgument)

			mustDo(t, "SuspendRun", s.SuspendRun(ctx, &waiting, []*orchestrator.Approval{ap("ap1"), ap("ap2")}, tail))
			got, err := s.GetRun(ctx, "r1")
			mustDo(t, "GetRun", err)
			if got.State != orchestrator.RunWaitingApproval || got.LastSeq != 3 || got.Pending == nil || got.Pending.Calls[0].ApprovalID != "ap1" {
				t.Fatalf("after SuspendRun: run %+v; want waiting_approval at seq 3 with its round", got)
			}
			aps, err := s.ListApprovals(ctx, "r1")
			mustDo(t, "ListApprovals", err)
			if len(aps) != 2 || aps[0].ID != "ap1" || aps[1].ID != "ap2" || aps[0].State != orchestrator.ApprovalPending {
				t.Fatalf("approvals = %+v; want ap1, ap2 pending", aps)
			}
			msgs, err := s.ListMessages(ctx, "s1", 0)
			mustDo(t, "ListMessages", err)
			if len(msgs) != 1 || msgs[0].Content != "kept" {
				t.Fatalf("history = %+v; want the kept message", msgs)
			}
			evs, err := s.ListEvents(ctx, "r1", 0, 0)
			mustDo(t, "ListEvents", err)
			if len(evs) != 3 || evs[1].Type != "approval_required" || evs[2].Seq != 3 {
				t.Fatalf("events = %+v; want 1 and the two announcements", evs)
			}
			// The pause keeps the run's locks: a waiting run holds its session.
			wantErr(t, "AcquireLock(session, still held)", s.AcquireLock(ctx, "session:s1", "r2", time.Hour), orchestrator.ErrBusy)
			// And the waiting run is claimable, as any waiting run.
			claimed, err := s.ClaimWaiting(ctx, "r1", "c")
			mustDo(t, "ClaimWaiting", err)
			if claimed.State != orchestrator.RunRunning || claimed.Owner != "c" {
				t.Fatalf("claimed %+v", claimed)
			}
		},
	}
}
