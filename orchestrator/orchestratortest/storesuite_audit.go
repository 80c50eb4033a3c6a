package orchestratortest

import (
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// auditTests pin the audit (the tool log read back, filtered, newest
// first, a keyset page at a time) and the usage meter (runs, tokens,
// execution time and tool calls per user in a window).
func (st *storeSuite) auditTests() map[string]func(*testing.T) {
	return map[string]func(*testing.T){
		"ListToolLogs": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			logs := []*orchestrator.ToolLog{
				{UserID: "alice", Tool: "read_file", Via: orchestrator.ViaRun, FrontEnd: "http", Outcome: orchestrator.OutcomeAllowed, RunID: "r1", SessionID: "s1", DurationMS: 3, CreatedAt: at(0)},
				{UserID: "alice", Tool: "fs@write", Via: orchestrator.ViaPassthrough, FrontEnd: "mcp", Outcome: orchestrator.OutcomeDenied, Reason: "not allowed", CreatedAt: at(time.Second)},
				{UserID: "bob", Tool: "read_file", Via: orchestrator.ViaCatalog, FrontEnd: "mcp", Outcome: orchestrator.OutcomeError, IsError: true, CreatedAt: at(time.Second)},
				{UserID: "bob", Tool: "read_file", Via: orchestrator.ViaRun, Outcome: orchestrator.OutcomeAllowed, CreatedAt: at(2 * time.Second)},
			}
			for _, l := range logs {
				mustDo(t, "AppendToolLog", s.AppendToolLog(ctx, l))
			}
			all, err := s.ListToolLogs(ctx, orchestrator.AuditFilter{})
			mustDo(t, "ListToolLogs", err)
			wantLen(t, "the whole audit", 4, size(all, nil))
			// Newest first; equal times newest id first.
			if all[0].UserID != "bob" || all[0].Via != orchestrator.ViaRun || all[3].Tool != "read_file" || all[3].UserID != "alice" {
				t.Fatalf("order: %+v", all)
			}
			if all[1].ID <= all[2].ID {
				t.Fatalf("equal times not newest id first: ids %d, %d", all[1].ID, all[2].ID)
			}
			d := all[2] // alice's denial
			if d.Outcome != orchestrator.OutcomeDenied || d.Reason != "not allowed" || d.FrontEnd != "mcp" || d.Tool != "fs@write" {
				t.Fatalf("the denial read back as %+v", d)
			}
			for _, c := range []struct {
				f    orchestrator.AuditFilter
				want int
			}{
				{orchestrator.AuditFilter{UserID: "alice"}, 2},
				{orchestrator.AuditFilter{Tool: "read_file"}, 3},
				{orchestrator.AuditFilter{Outcome: orchestrator.OutcomeDenied}, 1},
				{orchestrator.AuditFilter{Via: orchestrator.ViaRun}, 2},
				{orchestrator.AuditFilter{Since: at(time.Second)}, 3},
				{orchestrator.AuditFilter{UserID: "bob", Outcome: orchestrator.OutcomeError}, 1},
				{orchestrator.AuditFilter{UserID: "carol"}, 0},
			} {
				got, err := s.ListToolLogs(ctx, c.f)
				mustDo(t, "ListToolLogs", err)
				if len(got) != c.want {
					t.Errorf("ListToolLogs(%+v) = %d records, want %d", c.f, len(got), c.want)
				}
			}
			// Keyset pages of one: every record once, in order.
			var seen []int64
			var after *orchestrator.PageKey
			for range 6 {
				page, err := s.ListToolLogs(ctx, orchestrator.AuditFilter{Page: orchestrator.Page{Limit: 1, After: after}})
				mustDo(t, "ListToolLogs(page)", err)
				if len(page) == 0 {
					break
				}
				seen = append(seen, page[0].ID)
				after = orchestrator.AuditKey(page[0])
			}
			want := []int64{all[0].ID, all[1].ID, all[2].ID, all[3].ID}
			diff(t, "ids page by page", want, seen)
			_, err = s.ListToolLogs(ctx, orchestrator.AuditFilter{Page: orchestrator.Page{After: &orchestrator.PageKey{At: at(0), ID: "run_x"}}})
			wantErr(t, "ListToolLogs(a key of another listing)", err, orchestrator.ErrInvalidArgument)
		},
		"Usage": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "a1", "alice", at(0))
			createSession(t, s, "b1", "bob", at(0))
			started, ended := at(0), at(90*time.Second)
			runs := []*orchestrator.Run{
				{ID: "ra1", SessionID: "a1", UserID: "alice", State: orchestrator.RunFinished, CreatedAt: at(0), StartedAt: &started, FinishedAt: &ended,
					Usage: orchestrator.Usage{InputTokens: 100, OutputTokens: 10, TotalTokens: 110}},
				{ID: "ra2", SessionID: "a1", UserID: "alice", State: orchestrator.RunFinished, CreatedAt: at(time.Minute), StartedAt: &started, FinishedAt: &ended,
					Usage: orchestrator.Usage{InputTokens: 50, OutputTokens: 5, TotalTokens: 55}},
				{ID: "rb1", SessionID: "b1", UserID: "bob", State: orchestrator.RunQueued, CreatedAt: at(time.Minute)},
			}
			for _, r := range runs {
				mustDo(t, "CreateRun", s.CreateRun(ctx, r))
			}
			for _, l := range []*orchestrator.ToolLog{
				{UserID: "alice", Tool: "t", Outcome: orchestrator.OutcomeAllowed, CreatedAt: at(0)},
				{UserID: "alice", Tool: "t", Outcome: orchestrator.OutcomeError, CreatedAt: at(time.Minute)},
				{UserID: "alice", Tool: "t", Outcome: orchestrator.OutcomeDenied, CreatedAt: at(time.Minute)},
				{UserID: "carol", Tool: "t", Outcome: orchestrator.OutcomeDenied, CreatedAt: at(time.Minute)},
			} {
				mustDo(t, "AppendToolLog", s.AppendToolLog(ctx, l))
			}
			got, err := s.Usage(ctx, orchestrator.UsageFilter{}, at(time.Hour))
			mustDo(t, "Usage", err)
			want := []orchestrator.UserUsage{
				{UserID: "alice", Runs: 2, RunSeconds: 180, InputTokens: 150, OutputTokens: 15, ToolCalls: 2, DeniedCalls: 1},
				{UserID: "bob", Runs: 1},
				{UserID: "carol", DeniedCalls: 1},
			}
			diff(t, "Usage", want, roundSeconds(got))
			got, err = s.Usage(ctx, orchestrator.UsageFilter{UserID: "alice", Since: at(time.Minute)}, at(time.Hour))
			mustDo(t, "Usage(alice since a minute)", err)
			want = []orchestrator.UserUsage{{UserID: "alice", Runs: 1, RunSeconds: 90, InputTokens: 50, OutputTokens: 5, ToolCalls: 1, DeniedCalls: 1}}
			diff(t, "Usage(alice since a minute)", want, roundSeconds(got))
			// A run still going counts to now.
			going := at(30 * time.Minute)
			r := &orchestrator.Run{ID: "rb2", SessionID: "b1", UserID: "bob", State: orchestrator.RunRunning, CreatedAt: going, StartedAt: &going}
			mustDo(t, "CreateRun", s.CreateRun(ctx, r))
			got, err = s.Usage(ctx, orchestrator.UsageFilter{UserID: "bob"}, at(time.Hour))
			mustDo(t, "Usage(bob)", err)
			diff(t, "Usage(bob, a run going)", []orchestrator.UserUsage{{UserID: "bob", Runs: 2, RunSeconds: 1800}}, roundSeconds(got))
		},
	}
}

// roundSeconds rounds RunSeconds to milliseconds: SQL date arithmetic
// (julianday) is a double.
func roundSeconds(us []orchestrator.UserUsage) []orchestrator.UserUsage {
	for i := range us {
		us[i].RunSeconds = float64(int64(us[i].RunSeconds*1000+0.5)) / 1000
	}
	return us
}
