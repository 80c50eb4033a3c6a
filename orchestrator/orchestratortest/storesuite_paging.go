package orchestratortest

import (
	"fmt"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/testutil/storetest"
	"github.com/wunder/wunder/orchestrator"
)

// pagingTests page each list through the one cursor helper
// ([orchestrator.NewPager], [orchestrator.CutPage]) while items are added
// between pages: some ahead of the cursor (newer, or a smaller id), which
// the pages already read cover and none shows; some behind it, which a
// later page shows. Every item is shown once (no duplicate), and every
// item that was behind the cursor when its page was read is shown (no
// gap), in the list's order. Times repeat, so ties are told apart by id.
func (st *storeSuite) pagingTests() map[string]func(*testing.T) {
	const n, size = 23, 4
	// seed is the time of item i of n: three items share each second.
	seed := func(i int) time.Time { return at(time.Duration(i/3) * time.Second) }
	// ahead and behind are the times of the items added before page p:
	// newer than every item, or older.
	ahead := func(p int) time.Time { return at(time.Hour + time.Duration(p)*time.Second) }
	behind := func(p int) time.Time { return at(-time.Duration(p+1) * time.Second) }
	return map[string]func(*testing.T){
		"RunsWhileAdding": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			createSession(t, s, "s1", "u1", at(0))
			add := func(id string, created time.Time) {
				mustDo(t, "CreateRun", s.CreateRun(ctx, &orchestrator.Run{ID: id, SessionID: "s1", UserID: "u1", State: orchestrator.RunFinished, CreatedAt: created}))
			}
			var want []string
			for i := range n {
				add(fmt.Sprintf("r%02d", i), seed(i))
			}
			for i := n - 1; i >= 0; i-- {
				want = append(want, fmt.Sprintf("r%02d", i))
			}
			var late []string
			got := storetest.PageThrough(t, size, "runs",
				func(p orchestrator.Page) ([]*orchestrator.Run, error) {
					return s.ListRuns(ctx, orchestrator.RunFilter{UserID: "u1", Page: p})
				},
				orchestrator.RunKey, func(r *orchestrator.Run) string { return r.ID },
				func(p int) {
					add(fmt.Sprintf("new%02d", p), ahead(p))
					add(fmt.Sprintf("old%02d", p), behind(p))
					late = append(late, fmt.Sprintf("old%02d", p))
				})
			diff(t, "runs paged while runs were added", append(want, late...), got)
		},
		"SessionsWhileAdding": func(t *testing.T) {
			s := st.open(t)
			var want []string
			for i := range n {
				createSession(t, s, fmt.Sprintf("s%02d", i), "u1", seed(i))
			}
			for i := n - 1; i >= 0; i-- {
				want = append(want, fmt.Sprintf("s%02d", i))
			}
			var late []string
			got := storetest.PageThrough(t, size, "sessions",
				func(p orchestrator.Page) ([]*orchestrator.Session, error) {
					return s.ListSessions(t.Context(), "u1", p)
				},
				orchestrator.SessionKey, func(x *orchestrator.Session) string { return x.ID },
				func(p int) {
					createSession(t, s, fmt.Sprintf("new%02d", p), "u1", ahead(p))
					createSession(t, s, fmt.Sprintf("old%02d", p), "u1", behind(p))
					late = append(late, fmt.Sprintf("old%02d", p))
				})
			diff(t, "sessions paged while sessions were added", append(want, late...), got)
		},
		"AuditWhileAdding": func(t *testing.T) {
			s, ctx := st.open(t), t.Context()
			add := func(tool string, created time.Time) {
				mustDo(t, "AppendToolLog", s.AppendToolLog(ctx, &orchestrator.ToolLog{RunID: "r", SessionID: "s", UserID: "u1", Tool: tool, CreatedAt: created}))
			}
			var want []string
			for i := range n {
				add(fmt.Sprintf("t%02d", i), seed(i))
			}
			for i := n - 1; i >= 0; i-- {
				want = append(want, fmt.Sprintf("t%02d", i))
			}
			var late []string
			got := storetest.PageThrough(t, size, "audit",
				func(p orchestrator.Page) ([]*orchestrator.ToolLog, error) {
					return s.ListToolLogs(ctx, orchestrator.AuditFilter{Page: p})
				},
				orchestrator.AuditKey, func(l *orchestrator.ToolLog) string { return l.Tool },
				func(p int) {
					add(fmt.Sprintf("new%02d", p), ahead(p))
					add(fmt.Sprintf("old%02d", p), behind(p))
					late = append(late, fmt.Sprintf("old%02d", p))
				})
			diff(t, "audit records paged while records were added", append(want, late...), got)
		},
		"UserStatsWhileAdding": func(t *testing.T) {
			// Most recently active first, then by id: a user added with an
			// id below the key's and the key's time is ahead of the cursor.
			s := st.open(t)
			var want []string
			for i := range n {
				createSession(t, s, fmt.Sprintf("s%02d", i), fmt.Sprintf("u%02d", i), seed(i))
			}
			for sec := (n - 1) / 3; sec >= 0; sec-- {
				for i := 3 * sec; i < min(3*sec+3, n); i++ {
					want = append(want, fmt.Sprintf("u%02d", i))
				}
			}
			var late []string
			got := storetest.PageThrough(t, size, "user_stats",
				func(p orchestrator.Page) ([]orchestrator.UserStats, error) {
					return s.ListUserStats(t.Context(), p)
				},
				orchestrator.UserStatsKey, func(u orchestrator.UserStats) string { return u.UserID },
				func(p int) {
					createSession(t, s, fmt.Sprintf("new%02d", p), fmt.Sprintf("new%02d", p), ahead(p))
					createSession(t, s, fmt.Sprintf("old%02d", p), fmt.Sprintf("old%02d", p), behind(p))
					late = append(late, fmt.Sprintf("old%02d", p))
				})
			diff(t, "users' statistics paged while users were added", append(want, late...), got)
		},
	}
}

func statsIDs(l []orchestrator.UserStats) []string {
	out := []string{}
	for _, u := range l {
		out = append(out, u.UserID)
	}
	return out
}
