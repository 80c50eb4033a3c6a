package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/internal/testutil/fakellm"
	"github.com/wunder/wunder/internal/testutil/wunderproc"
)

// The fault suite: a real wunder process is killed with SIGKILL while its
// runs are in a model call and in a running tool, and started again one
// second later on the same store. With resume_interrupted: false, every interrupted run must end (failed,
// stop_reason interrupted) well before the lock TTL (30 s) could have
// freed anything, its follower must get the rest of the log through a
// final event, the user's next run in the same session must be accepted,
// and no child of the killed process may live on. On SQLite and, when
// WUNDER_TEST_POSTGRES_DSN is set, on PostgreSQL.
//
// The figures (kill -> terminal, restart -> terminal) are logged; `make
// faults` runs this suite with -v.

// startWunder starts this test binary as `wunder serve` on a free port
// (internal/testutil/wunderproc: a child that runs wunder's main).
func startWunder(t *testing.T, cfgPath string, port int) *wunderproc.Proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "--config", cfgPath)
	cmd.Env = append(os.Environ(), asWunderEnv+"=1")
	return wunderproc.Run(t, cmd, "http://127.0.0.1:"+strconv.Itoa(port))
}

func TestFaultKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("process fault suite skipped in -short mode")
	}
	backends := map[string]string{"sqlite": ""}
	if os.Getenv("WUNDER_TEST_POSTGRES_DSN") != "" || os.Getenv("WUNDER_REQUIRE_POSTGRES") == "1" {
		backends["postgres"] = pgSchema(t)
	}
	for name, dsn := range backends {
		t.Run(name, func(t *testing.T) { faultKill9(t, dsn) })
	}
}

// writeFaultConfig writes the configuration of a fault-suite server: the
// fake model, commands for the tool scenarios, SQLite or PostgreSQL (dsn),
// and extra YAML under concurrency.
func writeFaultConfig(t *testing.T, dir string, port int, modelURL, dsn, concurrency string) string {
	t.Helper()
	storage := "storage:\n  backend: sqlite\n"
	if dsn != "" {
		storage = fmt.Sprintf("storage:\n  backend: postgres\n  postgres:\n    dsn: %q\n", dsn)
	}
	cfg := fmt.Sprintf(`data_dir: %q
server:
  host: 127.0.0.1
  port: %d
concurrency:
%s
security:
  allow_commands: [sh, sleep, echo]
llm:
  default: fake
  models:
    fake:
      provider: local
      base_url: %q
      model: fake
%s`, dir, port, concurrency, modelURL+"/v1", storage)
	cfgPath := filepath.Join(dir, "wunder.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfgPath
}

// With concurrency.resume_interrupted (the default), a run killed in a running tool goes
// on after the restart: its follower sees "resumed", the tool (whose result
// was never stored) runs again, and the run finishes.
func TestFaultKill9Resume(t *testing.T) {
	if testing.Short() {
		t.Skip("process fault suite skipped in -short mode")
	}
	model := httptest.NewServer(&fakellm.Server{Chunks: 4})
	t.Cleanup(model.Close)
	dir, port := dataDir(t), freePort(t)
	cfgPath := writeFaultConfig(t, dir, port, model.URL, "", "  lock_ttl_s: 30")
	a := startWunder(t, cfgPath, port)
	c := client.New(a.URL, "", nil)
	run, err := c.Submit(t.Context(), client.RunRequest{UserID: "resume", ToolNames: []string{"execute_command"},
		// The first call blocks until it is killed; the call after the
		// resumption finds started.txt and finishes at once.
		Question: "run: sh -c 'if [ -e started.txt ]; then echo again >> started.txt; echo slept; else echo started > started.txt; sleep 60; fi'"})
	if err != nil {
		t.Fatal(err)
	}
	var seen int64
	for ev, err := range c.Follow(t.Context(), "resume", run.ID, 0, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if seen = ev.Seq; ev.Type == "tool_call" {
			break
		}
	}
	started := filepath.Join(dir, "workspaces", "resume", "started.txt")
	waitFor(t, 10*time.Second, "the command to start", func() bool { _, err := os.Stat(started); return err == nil })
	a.Kill9(t)
	time.Sleep(time.Second) // the scenario: restart one second later
	b := startWunder(t, cfgPath, port)
	evs := collectFollowAfter(t, client.New(b.URL, "", nil), "resume", run.ID, seen)
	if len(evs) == 0 || evs[0].Seq != seen+1 || evs[0].Type != "progress" || !strings.Contains(string(evs[0].Data), "resumed") {
		t.Fatalf("after the restart the follower got %v; want progress resumed at seq %d", evs, seen+1)
	}
	if f := finalOf(t, evs); f.State != "finished" || !strings.Contains(f.Answer, "slept") {
		t.Fatalf("resumed run ended %+v", f)
	}
	if b, _ := os.ReadFile(started); string(b) != "started\nagain\n" {
		t.Fatalf("started.txt = %q; the tool whose result was never stored should have run again, once", b)
	}
}

func faultKill9(t *testing.T, dsn string) {
	fake := &fakellm.Server{Chunks: 4}
	model := httptest.NewServer(fake)
	t.Cleanup(model.Close)
	dir := dataDir(t)
	port := freePort(t)
	cfgPath := writeFaultConfig(t, dir, port, model.URL, dsn, "  lock_ttl_s: 30\n  resume_interrupted: false")
	a := startWunder(t, cfgPath, port)
	c := client.New(a.URL, "", nil)
	// One run in a model call that never ends, one in a tool whose
	// grandchild sleeps far longer than the test (its argument, 31.7,
	// marks it in the process table) and would then write a file.
	inModel, err := c.Submit(t.Context(), client.RunRequest{UserID: "fault-model", Question: "#hang think forever"})
	if err != nil {
		t.Fatal(err)
	}
	inTool, err := c.Submit(t.Context(), client.RunRequest{UserID: "fault-tool", ToolNames: []string{"execute_command"},
		Question: "run: sh -c 'echo started > started.txt; sleep 31.7; echo late > late.txt'"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int64{}
	for _, w := range []struct {
		run  *client.Run
		user string
		typ  string
	}{{inModel, "fault-model", "llm_request"}, {inTool, "fault-tool", "tool_call"}} {
		for ev, err := range c.Follow(t.Context(), w.user, w.run.ID, 0, nil) {
			if err != nil {
				t.Fatal(err)
			}
			seen[w.run.ID] = ev.Seq
			if ev.Type == w.typ {
				break
			}
		}
	}
	// The command runs once its tool_call is stored: wait until it has
	// written its first file, which also proves where its files land.
	workspace := filepath.Join(dir, "workspaces", "fault-tool")
	waitFor(t, 10*time.Second, "the command to start", func() bool {
		_, err := os.Stat(filepath.Join(workspace, "started.txt"))
		return err == nil
	})

	killed := time.Now()
	a.Kill9(t)
	time.Sleep(time.Second) // the scenario: restart one second later
	restarted := time.Now()
	b := startWunder(t, cfgPath, port)
	cb := client.New(b.URL, "", nil)

	for _, r := range []*client.Run{inModel, inTool} {
		var evs []client.Event
		for ev, err := range cb.Follow(t.Context(), r.UserID, r.ID, seen[r.ID], nil) {
			if err != nil {
				t.Fatalf("follow %s after the restart: %v", r.ID, err)
			}
			evs = append(evs, ev)
		}
		ended := time.Now()
		if len(evs) == 0 || evs[0].Seq != seen[r.ID]+1 {
			t.Fatalf("resuming %s after seq %d gave %v", r.ID, seen[r.ID], evs)
		}
		f := finalOf(t, evs)
		if f.State != "failed" || f.StopReason != "interrupted" {
			t.Fatalf("run %s ended %+v; want failed, interrupted", r.ID, f)
		}
		if got := getRun(t, b.URL, r.UserID, r.ID); got["state"] != "failed" {
			t.Fatalf("run %s reads %v after the restart", r.ID, got["state"])
		}
		if ended.Sub(restarted) > 25*time.Second {
			t.Fatalf("run %s ended %v after the restart: that is the lock TTL at work, not recovery", r.ID, ended.Sub(restarted))
		}
		t.Logf("run %s: terminal %v after the kill, %v after the restart", r.ID, ended.Sub(killed).Round(time.Millisecond), ended.Sub(restarted).Round(time.Millisecond))
		// The user's next run in the same session is accepted.
		next, err := cb.Submit(t.Context(), client.RunRequest{UserID: r.UserID, SessionID: r.SessionID, Question: "hello again"})
		if err != nil {
			t.Fatalf("next run of %s in session %s: %v", r.UserID, r.SessionID, err)
		}
		if f := finalOf(t, collectFollow(t, cb, r.UserID, next.ID)); f.State != "finished" {
			t.Fatalf("next run ended %+v", f)
		}
	}
	// No child of the killed process lives on: the grandchild sleeping
	// 31.7 s is gone (SIGKILL is delivered asynchronously: wait, bounded,
	// for it to take effect), so it never writes late.txt.
	waitFor(t, 5*time.Second, "the killed server's grandchild to die", func() bool { return len(pidsWithArg("31.7")) == 0 })
	if _, err := os.Stat(filepath.Join(workspace, "late.txt")); err == nil {
		t.Fatal("a grandchild of the killed server wrote late.txt")
	}
}

// pidsWithArg lists the processes with arg among their arguments.
func pidsWithArg(arg string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for _, a := range strings.Split(string(b), "\x00") {
			if a == arg {
				out = append(out, e.Name())
				break
			}
		}
	}
	return out
}

func collectFollow(t *testing.T, c *client.Client, user, runID string) []client.Event {
	t.Helper()
	return collectFollowAfter(t, c, user, runID, 0)
}

func collectFollowAfter(t *testing.T, c *client.Client, user, runID string, after int64) []client.Event {
	t.Helper()
	var evs []client.Event
	for ev, err := range c.Follow(t.Context(), user, runID, after, nil) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// waitFor polls cond until it holds, failing after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
