package orchestratortest

import (
	"fmt"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

func (st *storeSuite) runTests() map[string]func(*testing.T) {
	started, finished := at(time.Second), at(time.Minute)
	full := orchestrator.Run{ID: "r1", SessionID: "s1", UserID: "u1", State: orchestrator.RunFinished,
		StopReason: orchestrator.StopFinalTool, Question: "Wie spät? ⏰", Answer: "late", Error: "none",
		ModelName: "qwen", Usage: orchestrator.Usage{InputTokens: 1 << 40, OutputTokens: 2, TotalTokens: 1<<40 + 2},
		LastSeq: 42, CreatedAt: at(0), StartedAt: &started, FinishedAt: &finished}
	stored := func(r orchestrator.Run) *orchestrator.Run {
		r.CreatedAt, r.StartedAt, r.FinishedAt = us(r.CreatedAt), usp(r.StartedAt), usp(r.FinishedAt)
		return &r
	}
	return map[string]func(*testing.T){
		"CountRuns": st.countRuns, // optional: orchestrator.RunCounter
		"CreateGet": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			in := full
			startedCopy := *full.StartedAt
			in.StartedAt = &startedCopy
			mustDo(t, "CreateRun", s.CreateRun(ctx, &in))
			startedCopy = at(time.Hour) // the store must not keep the caller's pointer
			got, err := s.GetRun(ctx, "r1")
			mustDo(t, "GetRun", err)
			diff(t, "GetRun", stored(full), got)
			checkUTC(t, got.CreatedAt, *got.StartedAt, *got.FinishedAt)
			// Nil times stay nil.
			bare := orchestrator.Run{ID: "r2", SessionID: "s1", UserID: "u1", State: orchestrator.RunQueued, CreatedAt: at(0)}
			mustDo(t, "CreateRun", s.CreateRun(ctx, &bare))
			got, err = s.GetRun(ctx, "r2")
			mustDo(t, "GetRun", err)
			diff(t, "GetRun(bare)", stored(bare), got)
		},
		"CreateErrors": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			createRun(t, s, "r1", "s1", "u1", at(0))
			wantErr(t, "CreateRun(duplicate)", s.CreateRun(ctx, &orchestrator.Run{ID: "r1", SessionID: "s1"}), orchestrator.ErrConflict)
			wantErr(t, "CreateRun(unknown session)", s.CreateRun(ctx, &orchestrator.Run{ID: "r2", SessionID: "nope"}), orchestrator.ErrNotFound)
			wantErr(t, "CreateRun(empty id)", s.CreateRun(ctx, &orchestrator.Run{SessionID: "s1"}), orchestrator.ErrInvalidArgument)
			wantErr(t, "CreateRun(empty session)", s.CreateRun(ctx, &orchestrator.Run{ID: "r3"}), orchestrator.ErrInvalidArgument)
			wantErr(t, "CreateRun(nil)", s.CreateRun(ctx, nil), orchestrator.ErrInvalidArgument)
			_, err := s.GetRun(ctx, "r2")
			wantErr(t, "GetRun(after failed create)", err, orchestrator.ErrNotFound)
			_, err = s.GetRun(ctx, "nope")
			wantErr(t, "GetRun(missing)", err, orchestrator.ErrNotFound)
			before := time.Now().Add(-time.Second)
			r := &orchestrator.Run{ID: "r4", SessionID: "s1", State: orchestrator.RunQueued}
			mustDo(t, "CreateRun(zero time)", s.CreateRun(ctx, r))
			if r.CreatedAt.Before(before) {
				t.Errorf("CreateRun left CreatedAt %v; want now", r.CreatedAt)
			}
		},
		"Update": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			createSession(t, s, "s2", "u2", at(0))
			initial := orchestrator.Run{ID: "r1", SessionID: "s1", UserID: "u1", State: orchestrator.RunQueued, Question: "q", ModelName: "m", CreatedAt: at(0)}
			in := initial
			mustDo(t, "CreateRun", s.CreateRun(ctx, &in))
			upd := full
			upd.SessionID, upd.UserID, upd.Question, upd.ModelName, upd.CreatedAt = "s2", "u2", "other", "other", at(time.Hour)
			mustDo(t, "UpdateRun", s.UpdateRun(ctx, &upd))
			want := full
			want.SessionID, want.UserID, want.Question, want.ModelName, want.CreatedAt = "s1", "u1", "q", "m", at(0)
			got, err := s.GetRun(ctx, "r1")
			mustDo(t, "GetRun", err)
			diff(t, "GetRun after UpdateRun", stored(want), got)
			// Clearing a time stores nil.
			want.FinishedAt, want.State = nil, orchestrator.RunCancelling
			mustDo(t, "UpdateRun", s.UpdateRun(ctx, &want))
			got, err = s.GetRun(ctx, "r1")
			mustDo(t, "GetRun", err)
			diff(t, "GetRun after clearing FinishedAt", stored(want), got)
			wantErr(t, "UpdateRun(missing)", s.UpdateRun(ctx, &orchestrator.Run{ID: "nope", SessionID: "s1"}), orchestrator.ErrNotFound)
			wantErr(t, "UpdateRun(nil)", s.UpdateRun(ctx, nil), orchestrator.ErrInvalidArgument)
			// The returned run is a copy.
			got.StartedAt = &finished
			got.State = orchestrator.RunFailed
			again, err := s.GetRun(ctx, "r1")
			mustDo(t, "GetRun", err)
			diff(t, "GetRun after mutating a result", stored(want), again)
		},
		"ListFilters": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			createSession(t, s, "s2", "u1", at(0))
			createSession(t, s, "s3", "u2", at(0))
			for i, r := range []struct {
				id, sess, user string
				state          orchestrator.RunState
			}{
				{"r1", "s1", "u1", orchestrator.RunFinished}, {"r2", "s1", "u1", orchestrator.RunRunning},
				{"r3", "s2", "u1", orchestrator.RunQueued}, {"r4", "s3", "u2", orchestrator.RunFailed},
				{"r5", "s3", "u2", orchestrator.RunRunning},
			} {
				run := &orchestrator.Run{ID: r.id, SessionID: r.sess, UserID: r.user, State: r.state, CreatedAt: at(time.Duration(i) * time.Second)}
				mustDo(t, "CreateRun", s.CreateRun(ctx, run))
			}
			running, failed := orchestrator.RunRunning, orchestrator.RunFailed
			for _, c := range []struct {
				f    orchestrator.RunFilter
				want []string
			}{
				{orchestrator.RunFilter{}, []string{"r5", "r4", "r3", "r2", "r1"}},
				{orchestrator.RunFilter{UserID: "u1"}, []string{"r3", "r2", "r1"}},
				{orchestrator.RunFilter{SessionID: "s1"}, []string{"r2", "r1"}},
				{orchestrator.RunFilter{UserID: "u1", SessionID: "s3"}, []string{}},
				{orchestrator.RunFilter{UserID: "u2", SessionID: "s3"}, []string{"r5", "r4"}},
				{orchestrator.RunFilter{States: []orchestrator.RunState{running}}, []string{"r5", "r2"}},
				{orchestrator.RunFilter{UserID: "u2", States: []orchestrator.RunState{running, failed}}, []string{"r5", "r4"}},
				{orchestrator.RunFilter{States: []orchestrator.RunState{orchestrator.RunCancelled}}, []string{}},
				{orchestrator.RunFilter{Page: orchestrator.Page{Limit: 2}}, []string{"r5", "r4"}},
				{orchestrator.RunFilter{Page: orchestrator.Page{Limit: 2, After: &orchestrator.PageKey{At: at(3 * time.Second), ID: "r4"}}}, []string{"r3", "r2"}},
				{orchestrator.RunFilter{Page: orchestrator.Page{After: &orchestrator.PageKey{At: at(time.Second), ID: "r2"}}}, []string{"r1"}},
				{orchestrator.RunFilter{UserID: "u1", Page: orchestrator.Page{Limit: 1, After: &orchestrator.PageKey{At: at(2 * time.Second), ID: "r3"}}}, []string{"r2"}},
				{orchestrator.RunFilter{Page: orchestrator.Page{After: &orchestrator.PageKey{At: at(3 * time.Second), ID: "r4"}}}, []string{"r3", "r2", "r1"}},
				{orchestrator.RunFilter{Page: orchestrator.Page{Limit: 1, After: &orchestrator.PageKey{At: at(3 * time.Second), ID: "r4"}}}, []string{"r3"}},
				{orchestrator.RunFilter{UserID: "u1", Page: orchestrator.Page{After: &orchestrator.PageKey{At: at(2 * time.Second), ID: "r3"}}}, []string{"r2", "r1"}},
				{orchestrator.RunFilter{SessionID: "s1", Page: orchestrator.Page{After: &orchestrator.PageKey{At: at(time.Second), ID: "r2"}}}, []string{"r1"}},
				{orchestrator.RunFilter{States: []orchestrator.RunState{running}, Page: orchestrator.Page{After: &orchestrator.PageKey{At: at(4 * time.Second), ID: "r5"}}}, []string{"r2"}},
				// A key between two items: the page starts at the older one.
				{orchestrator.RunFilter{Page: orchestrator.Page{After: &orchestrator.PageKey{At: at(2 * time.Second), ID: "r9"}}}, []string{"r3", "r2", "r1"}},
				{orchestrator.RunFilter{Page: orchestrator.Page{After: &orchestrator.PageKey{At: at(2 * time.Second), ID: "r0"}}}, []string{"r2", "r1"}},
			} {
				list, err := s.ListRuns(ctx, c.f)
				mustDo(t, "ListRuns", err)
				got := []string{}
				for _, r := range list {
					got = append(got, r.ID)
				}
				diff(t, fmt.Sprintf("ListRuns(%+v) ids", c.f), c.want, got)
			}
			list, err := s.ListRuns(ctx, orchestrator.RunFilter{SessionID: "s2"})
			mustDo(t, "ListRuns", err)
			diff(t, "ListRuns(s2)", []*orchestrator.Run{{ID: "r3", SessionID: "s2", UserID: "u1", State: orchestrator.RunQueued, CreatedAt: us(at(2 * time.Second))}}, list)
		},
	}
}
