package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/orchestrator"
)

// Event retention on both backends: the events and tool logs of runs that
// ended before the cutoff go, the runs and their answers stay, a replay
// still ends with the final event, and runs that ended after the cutoff
// keep everything.
func TestJanitorPrunesOldEvents(t *testing.T) {
	backends := map[string]string{"sqlite": ""}
	if dsn := os.Getenv("WUNDER_TEST_POSTGRES_DSN"); dsn != "" || os.Getenv("WUNDER_REQUIRE_POSTGRES") == "1" {
		backends["postgres"] = pgSchema(t)
	}
	for name, dsn := range backends {
		t.Run(name, func(t *testing.T) {
			s := startServer(t, func(c *config.Config) {
				c.Storage.Postgres.DSN = dsn
				c.Storage.EventRetentionDays = 1
				c.Storage.AuditRetentionDays = 1
			})
			c := client.New(s.url, "", nil)
			var runIDs []string
			calls := map[string]int{}
			for _, user := range []string{"alice", "bob"} {
				run, err := c.Submit(t.Context(), client.RunRequest{UserID: user, Question: "write a note", ToolNames: []string{"write_file", "read_file"}, ToolCallMode: "function_call"})
				if err != nil {
					t.Fatal(err)
				}
				for ev, err := range c.Follow(t.Context(), user, run.ID, 0, nil) {
					if err != nil {
						t.Fatal(err)
					}
					if ev.Type == "tool_result" {
						calls[user]++
					}
				}
				runIDs = append(runIDs, run.ID)
			}
			// Tool logs are written in the background (monitoring data): a
			// run's may be stored after its end. The passes below count
			// them, so wait until each call's log is there.
			for user, n := range calls {
				waitFor(t, 30*time.Second, fmt.Sprintf("the logs of %s's %d tool calls", user, n), func() bool {
					stats, err := s.app.store.ToolCallStats(t.Context(), orchestrator.ToolLogFilter{UserID: user})
					if err != nil {
						t.Fatal(err)
					}
					return len(stats) >= n
				})
			}
			j := s.app.janitor
			// As of now nothing ended a day ago.
			if rep, err := j.runOnce(t.Context(), time.Now()); err != nil || rep.Runs != 0 || rep.ToolLogs != 0 {
				t.Fatalf("a pass now: %+v %v; want nothing pruned", rep, err)
			}
			// Two days on, both runs are past the retention.
			rep, err := j.runOnce(t.Context(), time.Now().Add(48*time.Hour))
			if err != nil || rep.Runs != 2 || rep.ToolLogs < 2 {
				t.Fatalf("a pass two days on: %+v %v; want 2 runs and their tool logs pruned", rep, err)
			}
			for i, user := range []string{"alice", "bob"} {
				var evs []client.Event
				for ev, err := range c.Follow(t.Context(), user, runIDs[i], 0, nil) {
					if err != nil {
						t.Fatal(err)
					}
					evs = append(evs, ev)
				}
				if len(evs) != 1 || evs[0].Type != "final" {
					t.Fatalf("replay of a pruned run: %d events %+v, want only the final one", len(evs), evs)
				}
				if f := finalOf(t, evs); f.State != "finished" || !strings.Contains(f.Answer, "hello from fakellm") {
					t.Errorf("pruned run's final: %+v", f)
				}
				run, err := c.GetRun(t.Context(), user, runIDs[i])
				if err != nil || run.State != "finished" || run.Answer == "" {
					t.Errorf("the pruned run itself: %+v %v", run, err)
				}
			}
			if rep, err := j.runOnce(t.Context(), time.Now().Add(48*time.Hour)); err != nil || rep != (janitorReport{}) {
				t.Errorf("a second pass: %+v %v; want nothing left to prune", rep, err)
			}
		})
	}
}

// Workspace retention deletes old files and the directories that were old
// or emptied by the pass, and keeps everything recent, a directory made
// empty today, and the workspace itself.
func TestJanitorPrunesOldWorkspaceFiles(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "alice")
	old := time.Now().Add(-10 * 24 * time.Hour)
	write := func(rel string, mtime time.Time) {
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(rel), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	write("old.txt", old)
	write("new.txt", time.Now())
	write("stale/deep/old.md", old)   // stale/ and stale/deep/ empty out
	write("mixed/old.md", old)        // mixed/ keeps new.md
	write("mixed/new.md", time.Now()) //
	_ = os.MkdirAll(filepath.Join(ws, "made-today"), 0o755)
	_ = os.MkdirAll(filepath.Join(ws, "empty-old"), 0o755)
	_ = os.Chtimes(filepath.Join(ws, "empty-old"), old, old)
	_ = os.Symlink("/etc/passwd", filepath.Join(ws, "link")) // its own time is now: kept, never followed

	files, dirs, err := pruneWorkspaces(t.Context(), root, time.Now().Add(-7*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if files != 3 || dirs != 3 {
		t.Errorf("pruned %d files and %d directories, want 3 and 3", files, dirs)
	}
	for rel, want := range map[string]bool{
		"old.txt": false, "new.txt": true, "stale": false, "mixed/old.md": false, "mixed/new.md": true,
		"made-today": true, "empty-old": false, "link": true, ".": true,
	} {
		_, err := os.Lstat(filepath.Join(ws, rel))
		if got := err == nil; got != want {
			t.Errorf("%s exists = %v, want %v", rel, got, want)
		}
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Errorf("the link's target: %v", err)
	}
}
