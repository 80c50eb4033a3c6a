package orchestratortest

import (
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// monitorTests pin what the monitor reads: runs since a time, and tool
// calls of a window, filtered and newest first, up to a limit.
func (st *storeSuite) monitorTests() map[string]func(*testing.T) {
	return map[string]func(*testing.T){
		"ListUserStats": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "a1", "alice", at(0))
			createSession(t, s, "a2", "alice", at(time.Minute))
			createSession(t, s, "b1", "bob", at(2*time.Minute))
			for i, sess := range []string{"a1", "a1", "a2"} {
				r := &orchestrator.Run{ID: "r" + string(rune('0'+i)), SessionID: sess, UserID: "alice", State: orchestrator.RunFinished, CreatedAt: at(0)}
				mustDo(t, "CreateRun", s.CreateRun(ctx, r))
			}
			got, err := s.ListUserStats(ctx, orchestrator.Page{})
			mustDo(t, "ListUserStats", err)
			want := []orchestrator.UserStats{
				{UserID: "bob", Sessions: 1, Runs: 0, LastActive: at(2 * time.Minute).Truncate(time.Microsecond).UTC()},
				{UserID: "alice", Sessions: 2, Runs: 3, LastActive: at(time.Minute).Truncate(time.Microsecond).UTC()},
			}
			diff(t, "ListUserStats", want, got)
			page, err := s.ListUserStats(ctx, orchestrator.Page{Limit: 1, After: orchestrator.UserStatsKey(got[0])})
			mustDo(t, "ListUserStats(page)", err)
			diff(t, "ListUserStats(limit 1, after bob)", want[1:], page)
			// As recently active: by id, after the key's.
			createSession(t, s, "c1", "carol", at(time.Minute))
			createSession(t, s, "a0", "aaron", at(time.Minute))
			page, err = s.ListUserStats(ctx, orchestrator.Page{After: orchestrator.UserStatsKey(want[1])})
			mustDo(t, "ListUserStats(after alice)", err)
			diff(t, "ListUserStats(after alice) ids", []string{"carol"}, statsIDs(page))
			page, err = s.ListUserStats(ctx, orchestrator.Page{Limit: 2, After: orchestrator.UserStatsKey(want[0])})
			mustDo(t, "ListUserStats(after bob)", err)
			diff(t, "ListUserStats(limit 2, after bob) ids", []string{"aaron", "alice"}, statsIDs(page))
		},
		"DeleteUserData": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "a1", "alice", at(0))
			createSession(t, s, "b1", "bob", at(0))
			for _, r := range []*orchestrator.Run{{ID: "ra", SessionID: "a1", UserID: "alice"}, {ID: "rb", SessionID: "b1", UserID: "bob"}} {
				r.State, r.CreatedAt = orchestrator.RunFinished, at(0)
				mustDo(t, "CreateRun", s.CreateRun(ctx, r))
				mustDo(t, "AppendEvents", s.AppendEvents(ctx, []orchestrator.Event{{RunID: r.ID, SessionID: r.SessionID, Seq: 1, Type: "final", Time: at(0)}}))
				mustDo(t, "AppendToolLog", s.AppendToolLog(ctx, &orchestrator.ToolLog{RunID: r.ID, SessionID: r.SessionID, UserID: r.UserID, Tool: "t", CreatedAt: at(0)}))
				mustDo(t, "AppendMessages", s.AppendMessages(ctx, r.SessionID, []orchestrator.Message{{Role: "user", Content: "hi", CreatedAt: at(0)}}))
			}
			mustDo(t, "DeleteUserData", s.DeleteUserData(ctx, "alice"))
			_, err := s.GetSession(ctx, "a1")
			wantErr(t, "GetSession(deleted user's)", err, orchestrator.ErrNotFound)
			_, err = s.GetRun(ctx, "ra")
			wantErr(t, "GetRun(deleted user's)", err, orchestrator.ErrNotFound)
			evs, err := s.ListEvents(ctx, "ra", 0, 0)
			mustDo(t, "ListEvents", err)
			wantLen(t, "events of the deleted user's run", 0, size(evs, nil))
			left, err := s.ToolCallStats(ctx, orchestrator.ToolLogFilter{})
			mustDo(t, "ToolCallStats", err)
			if len(left) != 1 || left[0].UserID != "bob" {
				t.Fatalf("tool logs after deleting alice = %+v, want bob's only", left)
			}
			if _, err := s.GetRun(ctx, "rb"); err != nil {
				t.Fatalf("bob's run after deleting alice: %v", err)
			}
			msgs, err := s.ListMessages(ctx, "b1", 0)
			mustDo(t, "ListMessages", err)
			wantLen(t, "bob's messages", 1, size(msgs, nil))
		},
		"ListRunsSince": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			for i, id := range []string{"old", "edge", "new"} {
				r := &orchestrator.Run{ID: id, SessionID: "s1", UserID: "u1", State: orchestrator.RunFinished, CreatedAt: at(time.Duration(i) * time.Minute)}
				mustDo(t, "CreateRun", s.CreateRun(ctx, r))
			}
			got, err := s.ListRuns(ctx, orchestrator.RunFilter{Since: at(time.Minute)})
			mustDo(t, "ListRuns", err)
			if len(got) != 2 || got[0].ID != "new" || got[1].ID != "edge" {
				t.Fatalf("ListRuns(since 1m) = %v, want new, edge", runIDs(got))
			}
		},
		"ToolCallStats": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			logs := []orchestrator.ToolLog{
				{RunID: "r", UserID: "u1", Tool: "read_file", DurationMS: 5, CreatedAt: at(0)},
				{RunID: "r", UserID: "u1", Tool: "read_file", DurationMS: 7, IsError: true, CreatedAt: at(time.Minute)},
				{RunID: "r", UserID: "u2", Tool: "write_file", DurationMS: 9, CreatedAt: at(2 * time.Minute)},
				{RunID: "r", UserID: "u2", Tool: "read_file", DurationMS: 11, CreatedAt: at(3 * time.Minute)},
			}
			for i := range logs {
				mustDo(t, "AppendToolLog", s.AppendToolLog(ctx, &logs[i]))
			}
			all, err := s.ToolCallStats(ctx, orchestrator.ToolLogFilter{Since: at(time.Minute)})
			mustDo(t, "ToolCallStats", err)
			if len(all) != 3 || all[0].DurationMS != 11 || all[2].DurationMS != 7 || !all[2].IsError || all[0].UserID != "u2" {
				t.Fatalf("ToolCallStats(since 1m) = %+v, want the three newest, newest first", all)
			}
			checkUTC(t, all[0].CreatedAt)
			reads, err := s.ToolCallStats(ctx, orchestrator.ToolLogFilter{Tool: "read_file", UserID: "u1"})
			mustDo(t, "ToolCallStats(tool, user)", err)
			if len(reads) != 2 || reads[0].Tool != "read_file" || reads[1].UserID != "u1" {
				t.Fatalf("ToolCallStats(read_file, u1) = %+v", reads)
			}
			one, err := s.ToolCallStats(ctx, orchestrator.ToolLogFilter{Limit: 1})
			mustDo(t, "ToolCallStats(limit 1)", err)
			if len(one) != 1 || one[0].DurationMS != 11 {
				t.Fatalf("ToolCallStats(limit 1) = %+v, want the newest", one)
			}
		},
	}
}

func runIDs(runs []*orchestrator.Run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.ID
	}
	return out
}
