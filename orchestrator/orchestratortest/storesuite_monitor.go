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
