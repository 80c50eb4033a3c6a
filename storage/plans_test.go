package storage

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/wunder/wunder/memory"
	"github.com/wunder/wunder/monitor"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// recorder keeps every statement the store sends, as sent.
type recorder struct {
	mu    sync.Mutex
	on    bool
	stmts []string
}

func (r *recorder) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (r *recorder) AfterQuery(_ context.Context, e *bun.QueryEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.on {
		r.stmts = append(r.stmts, e.Query)
	}
}

// bigTables are the tables that grow with use: a statement that reads
// one of them without an index is O(table), not O(page).
var bigTables = []string{"sessions", "runs", "events", "messages", "tool_logs", "approvals", "memory_records", "memory_tasks", "session_locks"}

// Every statement the hot path and the list routes send is answered
// through an index on both backends, with a seeded history in the store:
// no read of a growing table grows with the table (issue 13). The workload
// is the core's own — runs with a tool, one continuing a session, one
// cancelled — and then every list and replay the front-ends call; each
// statement it sent is EXPLAINed as sent. PostgreSQL is asked with
// enable_seqscan off, so a sequential scan in its plan means no index can
// serve the statement at all. The seed leaves the planner fresh
// statistics, which PostgreSQL's autovacuum keeps up in use but a SQLite
// database has only if something runs ANALYZE, and wunder does not: so
// SQLite is asked again with the statistics dropped, as a server's own
// database would be.
func TestQueryPlansStayIndexed(t *testing.T) {
	type variant struct {
		name    string
		be      backend
		noStats bool
	}
	var variants []variant
	for _, be := range backends() {
		variants = append(variants, variant{be.name, be, false})
		if be.name == BackendSQLite {
			variants = append(variants, variant{be.name + "/unanalyzed", be, true})
		}
	}
	for _, v := range variants {
		be := v.be
		t.Run(v.name, func(t *testing.T) {
			s := open(t, be.fresh(t))
			ctx := t.Context()
			if err := s.Seed(ctx, SeedOptions{Sessions: 2000, Events: 20000}); err != nil {
				t.Fatal(err)
			}
			if v.noStats {
				// Dropping the table changes the schema: every connection
				// reloads it, without statistics, before its next statement.
				if _, err := s.db.ExecContext(ctx, "DROP TABLE sqlite_stat1"); err != nil {
					t.Fatal(err)
				}
			}
			rec := &recorder{}
			s.db = s.db.WithQueryHook(rec)
			rec.on = true
			planWorkload(t, s)
			rec.mu.Lock()
			stmts := slices.Clone(rec.stmts)
			rec.mu.Unlock()
			if len(stmts) < 30 {
				t.Fatalf("the workload sent %d statements; the hook is not seeing them", len(stmts))
			}
			seen := map[string]bool{}
			explained, keyset := 0, 0
			for _, q := range stmts {
				verb := strings.ToUpper(strings.Fields(q)[0])
				if verb != "SELECT" && verb != "UPDATE" && verb != "DELETE" && verb != "WITH" {
					continue // inserts, transactions, pragmas, NOTIFY
				}
				shape := literals.ReplaceAllString(q, "?")
				if seen[shape] {
					continue
				}
				seen[shape] = true
				explained++
				plan := explain(t, s, q)
				if testing.Verbose() {
					t.Logf("%s\n%s", q, plan)
				}
				if table, bad := fullScan(be.name, q, plan); bad {
					t.Errorf("reads %s without an index:\n  %s\nplan:\n%s", table, q, plan)
				}
				if strings.Contains(q, keysetCondition) {
					keyset++
					if !keysetBound[be.name].MatchString(plan) {
						t.Errorf("pages after a key by reading up to it, not by the index's range:\n  %s\nplan:\n%s", q, plan)
					}
				}
			}
			if keyset < 4 {
				t.Errorf("%d statements paged after a key; the workload pages sessions, runs (a user's, a session's, every user's) and users so", keyset)
			}
			t.Logf("%s: %d statements, %d shapes explained, %d after a key", v.name, len(stmts), explained, keyset)
		})
	}
}

// literals are the values written into a statement, for its shape.
var literals = regexp.MustCompile(`'(?:[^']|'')*'|\b\d+\b`)

func explain(t *testing.T, s *Store, q string) string {
	t.Helper()
	ctx := t.Context()
	var lines []string
	if s.backend == BackendSQLite {
		rows, err := s.db.DB.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q)
		if err != nil {
			t.Fatalf("explain %s: %v", q, err)
		}
		defer rows.Close()
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, detail)
		}
		return strings.Join(lines, "\n")
	}
	conn, err := s.db.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET enable_seqscan = off"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), "RESET enable_seqscan") //nolint:errcheck
	rows, err := conn.QueryContext(ctx, "EXPLAIN "+q)
	if err != nil {
		t.Fatalf("explain %s: %v", q, err)
	}
	defer rows.Close()
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

var (
	// SQLite names a table by its alias in the statement, when it has one
	// (bun's "run_row" for runs).
	sqliteScan = regexp.MustCompile(`(?m)^SCAN (\w+)( USING (?:COVERING )?INDEX \w+)?$`)
	pgSeqScan  = regexp.MustCompile(`Seq Scan on (\w+)`)
)

// keysetCondition is how a page after a key starts (storage's newestFirst),
// and keysetBound what the plan shows when the index's range does that
// work: the row comparison is a bound of the index search, so the page is
// read alone however deep it is, rather than a filter over every row up
// to it.
const keysetCondition = ", id) < ("

var keysetBound = map[string]*regexp.Regexp{
	BackendSQLite:   regexp.MustCompile(`USING (?:COVERING )?INDEX \w+ \(.*\(\w+,id\)<\(\?,\?\)\)`),
	BackendPostgres: regexp.MustCompile(`Index (?:Only )?Scan.*\n\s+Index Cond: .*ROW\(`),
}

// onlyOrderedByScan are statements that read a whole table, or a whole
// index of one, by design, with why that is acceptable.
var onlyOrderedByScan = map[string]string{
	// The admin's user list (GET /wunder/admin/users) ranks users by their
	// last activity: it aggregates every session, through the covering
	// index (user_id, updated_at). Keeping per-user counters instead would
	// add a write to every run. A page after a key (HAVING) aggregates
	// them all too.
	`ORDER BY last_active DESC, user_id ASC`: "the admin user list aggregates every session",
}

// fullScan reports a big table the plan reads whole: without any index,
// or through a whole index and then sorted (SQLite's temporary B-tree),
// so that the cost grows with the table rather than the page.
func fullScan(backend, q, plan string) (string, bool) {
	for frag := range onlyOrderedByScan {
		if strings.Contains(q, frag) {
			return "", false
		}
	}
	big := func(name string) bool {
		return slices.Contains(bigTables, name) || slices.Contains(bigTables, strings.TrimSuffix(name, "_row")+"s")
	}
	if backend != BackendSQLite {
		for _, m := range pgSeqScan.FindAllStringSubmatch(plan, -1) {
			if big(m[1]) {
				return m[1], true
			}
		}
		return "", false
	}
	sorted := strings.Contains(plan, "USE TEMP B-TREE FOR ORDER BY")
	for _, m := range sqliteScan.FindAllStringSubmatch(plan, -1) {
		if big(m[1]) && (m[2] == "" || sorted) {
			return m[1], true
		}
	}
	return "", false
}

// planWorkload drives the core over s: the writes of runs and the reads
// of every list and replay.
func planWorkload(t *testing.T, s *Store) {
	t.Helper()
	ctx := t.Context()
	release := make(chan struct{})
	tool := orchestratortest.NewTool("lookup", true, func(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		return &orchestrator.ToolResult{Content: "found"}, nil
	})
	model := orchestratortest.NewScriptedModel(
		orchestratortest.Turn{Content: "looking", ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("lookup", `{}`)}},
		orchestratortest.Turn{Content: "done"},
		orchestratortest.Turn{Content: "again"},
		orchestratortest.Turn{Content: "never", Wait: release},
	)
	models := orchestratortest.Models{Model: model, Settings: orchestrator.ModelSettings{Name: "m", ToolCallMode: orchestrator.ModeFunctionCall, MaxRounds: 4}}
	reg := orchestrator.NewRegistry("", nil, orchestrator.StaticToolset{SetName: "t", List: []orchestrator.Tool{tool}})
	o := orchestrator.New(s, models, reg, &orchestrator.Options{LockTTL: 3 * time.Second, Watcher: s.Watcher()})
	t.Cleanup(func() { close(release); _ = o.Close(context.Background()) })
	follow := func(id string) {
		for _, err := range o.Events(ctx, "", id, 0) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	first, err := o.Start(ctx, orchestrator.RunRequest{UserID: "plan_user", Question: "look it up", ToolNames: []string{"lookup"}})
	if err != nil {
		t.Fatal(err)
	}
	follow(first.ID)
	second, err := o.Start(ctx, orchestrator.RunRequest{UserID: "plan_user", SessionID: first.SessionID, Question: "and again"})
	if err != nil {
		t.Fatal(err)
	}
	follow(second.ID)
	hung, err := o.Start(ctx, orchestrator.RunRequest{UserID: "plan_user", Question: "wait"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Cancel(ctx, "plan_user", hung.ID); err != nil {
		t.Fatal(err)
	}
	follow(hung.ID)

	seedUser := "seed_user_000007"
	page := orchestrator.Page{Limit: 20}
	for _, user := range []string{"plan_user", seedUser} {
		sessions, err := o.ListSessions(ctx, user, page)
		if err != nil || len(sessions) == 0 {
			t.Fatalf("ListSessions(%s) = %d, %v", user, len(sessions), err)
		}
		if _, err := o.ListSessions(ctx, user, orchestrator.Page{Limit: 20, After: orchestrator.SessionKey(sessions[len(sessions)-1])}); err != nil {
			t.Fatal(err)
		}
		if _, err := o.GetSession(ctx, user, sessions[0].ID); err != nil {
			t.Fatal(err)
		}
		if _, err := o.History(ctx, user, sessions[0].ID, 100); err != nil {
			t.Fatal(err)
		}
		runs, err := o.ListRuns(ctx, orchestrator.RunFilter{UserID: user, Page: page})
		if err != nil || len(runs) == 0 {
			t.Fatalf("ListRuns(%s) = %d, %v", user, len(runs), err)
		}
		if _, err := o.ListRuns(ctx, orchestrator.RunFilter{SessionID: sessions[0].ID, Page: page}); err != nil {
			t.Fatal(err)
		}
		after := orchestrator.Page{Limit: 20, After: orchestrator.RunKey(runs[len(runs)-1])}
		if _, err := o.ListRuns(ctx, orchestrator.RunFilter{UserID: user, Page: after}); err != nil {
			t.Fatal(err)
		}
		if _, err := o.ListRuns(ctx, orchestrator.RunFilter{SessionID: sessions[0].ID, Page: after}); err != nil {
			t.Fatal(err)
		}
		if _, err := o.GetRun(ctx, user, runs[0].ID); err != nil {
			t.Fatal(err)
		}
		for _, err := range o.Events(ctx, user, runs[0].ID, 0) {
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, err := range o.Events(ctx, user, runs[0].ID, 2) {
			if err != nil {
				t.Fatal(err)
			}
		}
		if _, err := o.Approvals(ctx, user, runs[0].ID); err != nil {
			t.Fatal(err)
		}
		if _, err := o.CountRuns(ctx, orchestrator.RunFilter{UserID: user, States: []orchestrator.RunState{orchestrator.RunRunning}}); err != nil {
			t.Fatal(err)
		}
	}
	mon := monitor.New(o)
	for _, f := range []monitor.Filter{
		{Page: page},
		{States: []orchestrator.RunState{orchestrator.RunQueued, orchestrator.RunRunning, orchestrator.RunWaitingApproval, orchestrator.RunCancelling}, Page: page},
		{UserID: seedUser, Page: page},
		{Since: time.Now().Add(-time.Hour), Page: page},
		{Page: orchestrator.Page{Limit: 20, After: &orchestrator.PageKey{At: time.Now().Add(-time.Minute), ID: "run_"}}},
	} {
		if _, err := mon.Runs(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []monitor.ToolUsageFilter{{}, {Group: "hour"}, {Group: "user"}, {Tool: "lookup"}, {UserID: "plan_user"}} {
		if _, err := mon.ToolUsage(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	stats, err := o.Users(ctx, page)
	if err != nil || len(stats) == 0 {
		t.Fatalf("Users = %d, %v", len(stats), err)
	}
	if _, err := o.Users(ctx, orchestrator.Page{Limit: 20, After: orchestrator.UserStatsKey(stats[len(stats)-1])}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListUsers(ctx, orchestrator.Page{Limit: 20, After: &orchestrator.PageKey{ID: "plan_user"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := o.RecoverOrphans(ctx); err != nil {
		t.Fatal(err)
	}
	// Memory, through the store (the core's memory is off here).
	if _, err := s.ListMemoryTasks(ctx, memory.TaskFilter{UserID: "plan_user"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListMemoryTasks(ctx, memory.TaskFilter{States: []memory.TaskState{memory.Queued}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClaimMemoryTask(ctx, "plan_owner", time.Now(), time.Minute); err != nil && !errors.Is(err, orchestrator.ErrNotFound) {
		t.Fatal(err)
	}
	if _, err := s.ListMemoryRecords(ctx, "plan_user"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListMemoryUsers(ctx); err != nil {
		t.Fatal(err)
	}
	if err := o.DeleteSession(ctx, "plan_user", first.SessionID); err != nil {
		t.Fatal(err)
	}
}
