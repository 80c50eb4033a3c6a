package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/testutil/fakellm"
)

// server is a real wunder (config -> storage -> adapters -> core ->
// gateway) on a loopback port, with an OpenAI-compatible fake model.
type server struct {
	url  string
	dir  string
	fake *fakellm.Server
	app  *app
	// conns are the server's open client connections; dropConns closes
	// them (a network failure, for the reconnect tests).
	conns *connTracker
}

// dataDir is a temporary data dir the sandbox user may pass through
// (storage makes its own 0755; t.TempDir makes 0700).
func dataDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func startServer(t testing.TB, mutate func(c *config.Config)) *server {
	t.Helper()
	fake := &fakellm.Server{Chunks: 6}
	modelSrv := httptest.NewServer(fake)
	t.Cleanup(modelSrv.Close)

	dir := dataDir(t)
	cfg := config.Default()
	cfg.DataDir = dir
	if _, err := exec.LookPath("bwrap"); err != nil && os.Getenv("CI") != "true" {
		t.Log("!!! bubblewrap is not installed: commands in this test run unconfined (sandbox.mode: none)")
		cfg.Sandbox.Mode = config.SandboxNone
	}
	m := config.NewModel()
	m.Provider, m.BaseURL, m.Model = config.ProviderLocal, modelSrv.URL+"/v1", "fake"
	m.Retry.InitialBackoffMillis = 10
	cfg.LLM.Models = map[string]config.Model{"fake": m}
	if mutate != nil {
		mutate(cfg)
	}
	s, _ := serveConfig(t, cfg)
	s.dir, s.fake = dir, fake
	return s
}

// serveConfig derives and validates cfg, then serves a wunder built on it
// on a loopback port until the test ends; stop shuts it down earlier, as a
// signal would (a restart on the same data dir).
func serveConfig(t testing.TB, cfg *config.Config) (s *server, stop func()) {
	t.Helper()
	cfg.Derive()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := build(ctx, cfg, newLogger(cfg))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	conns := &connTracker{Listener: ln, open: map[net.Conn]bool{}}
	done := make(chan error, 1)
	go func() { done <- a.serve(ctx, conns) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return &server{url: "http://" + ln.Addr().String(), app: a, conns: conns}, stop
}

func finalOf(t *testing.T, evs []client.Event) client.Final {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].Type != "final" {
		t.Fatalf("no final event")
	}
	var f client.Final
	if err := json.Unmarshal(evs[len(evs)-1].Data, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// The first test: against an OpenAI-compatible endpoint a run
// writes a file with write_file, reads it back with read_file and answers,
// in both tool-call modes, streaming and not; every event arrives in order
// with its seq, and a follower after the fact sees the same log.
func TestEndToEndWriteReadAnswer(t *testing.T) {
	s := startServer(t, nil)
	c := client.New(s.url, "", nil)
	for _, mode := range []string{"tool_call", "function_call"} {
		for _, stream := range []bool{true, false} {
			t.Run(mode+"/stream="+strconv.FormatBool(stream), func(t *testing.T) {
				user := "u-" + strings.ReplaceAll(mode, "_", "") + strconv.FormatBool(stream)
				req := client.RunRequest{UserID: user, Question: "please write a note and read it back", ToolNames: []string{"write_file", "读取文件"}, ToolCallMode: mode}
				var evs []client.Event
				if stream {
					for ev, err := range c.Ask(t.Context(), req) {
						if err != nil {
							t.Fatal(err)
						}
						evs = append(evs, ev)
					}
				} else {
					// stream:false answers JSON; follow the log afterwards.
					run, err := c.Submit(t.Context(), req)
					if err != nil {
						t.Fatal(err)
					}
					for ev, err := range c.Follow(t.Context(), user, run.ID, 0, nil) {
						if err != nil {
							t.Fatal(err)
						}
						evs = append(evs, ev)
					}
				}
				for i, ev := range evs {
					if ev.Seq != int64(i+1) {
						t.Fatalf("event %d has seq %d", i, ev.Seq)
					}
				}
				f := finalOf(t, evs)
				if f.State != "finished" || !strings.Contains(f.Answer, "hello from fakellm") {
					t.Fatalf("final = %+v", f)
				}
				b, err := os.ReadFile(filepath.Join(s.dir, "workspaces", user, "notes.txt"))
				if err != nil || string(b) != "hello from fakellm" {
					t.Fatalf("workspace file: %q %v", b, err)
				}
				var calls []string
				for _, ev := range evs {
					if ev.Type == "tool_result" {
						var d struct {
							Name    string
							IsError bool `json:"is_error"`
						}
						_ = json.Unmarshal(ev.Data, &d)
						if d.IsError {
							t.Errorf("%s failed: %s", d.Name, ev.Data)
						}
						calls = append(calls, d.Name)
					}
				}
				if strings.Join(calls, ",") != "write_file,read_file" {
					t.Fatalf("tool results %v", calls)
				}
			})
		}
	}
	// The JSON form of POST /wunder.
	resp, err := http.Post(s.url+"/wunder", "application/json", strings.NewReader(`{"user_id":"json","question":"write it","tool_names":["write_file","read_file"],"stream":false}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Answer, StopReason, SessionID string
	}
	var raw map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&raw)
	b, _ := json.Marshal(raw)
	_ = json.Unmarshal(b, &out)
	if resp.StatusCode != 200 || !strings.Contains(raw["answer"].(string), "hello from fakellm") || raw["stop_reason"] != "model_response" {
		t.Fatalf("%d %v", resp.StatusCode, raw)
	}
}

// Two concurrent runs of one user: one gets 429. Cancelling mid-tool ends
// the run as cancelled and leaves no child process.
func TestEndToEndBusyAndCancelMidCommand(t *testing.T) {
	s := startServer(t, nil)
	c := client.New(s.url, "", nil)
	script := `import os,subprocess,sys,time; p=subprocess.Popen(['sleep','300']); open('child.pid','w').write(str(p.pid)); ` +
		`open('child.ns','w').write(os.readlink('/proc/self/ns/pid')); print('started', flush=True); time.sleep(300)`
	run, err := c.Submit(t.Context(), client.RunRequest{UserID: "carol", Question: `run: python3 -c "` + script + `"`, ToolNames: []string{"execute_command"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Submit(t.Context(), client.RunRequest{UserID: "carol", Question: "another"})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != 429 || ce.Code != "busy" {
		t.Fatalf("second run of carol: %v, want 429 busy", err)
	}
	var cancelledAt time.Time
	var evs []client.Event
	for ev, err := range c.Follow(t.Context(), "carol", run.ID, 0, nil) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
		if ev.Type == "tool_output_delta" && strings.Contains(string(ev.Data), "started") && cancelledAt.IsZero() {
			cancelledAt = time.Now()
			if err := c.Cancel(t.Context(), "carol", run.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("cancel to final event over HTTP: %v", time.Since(cancelledAt))
	if cancelledAt.IsZero() {
		t.Fatalf("the command never started: %v", evs)
	}
	if f := finalOf(t, evs); f.State != "cancelled" || f.StopReason != "cancelled" {
		t.Fatalf("final = %+v", f)
	}
	pidText, err := os.ReadFile(filepath.Join(s.dir, "workspaces", "carol", "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	ns, err := os.ReadFile(filepath.Join(s.dir, "workspaces", "carol", "child.ns"))
	if err != nil {
		t.Fatal(err)
	}
	if own, _ := os.Readlink("/proc/self/ns/pid"); string(ns) != own {
		// Sandboxed: the pid is the namespace's own; no process of the
		// namespace may be left (the kernel reaps them asynchronously once
		// its init died, so wait for that OS fact, bounded).
		deadline := time.Now().Add(5 * time.Second)
		for nsAlive(string(ns)) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if nsAlive(string(ns)) {
			t.Fatalf("processes of the command's namespace %s survived the cancellation", ns)
		}
	} else if pid, _ := strconv.Atoi(strings.TrimSpace(string(pidText))); alive(pid) {
		t.Fatalf("child %d survived the cancellation", pid)
	}
	// The lock is free again.
	if _, err := c.Submit(t.Context(), client.RunRequest{UserID: "carol", Question: "again"}); err != nil {
		t.Fatal(err)
	}
}

// nsAlive reports whether a live process is in the PID namespace ns
// ("pid:[…]").
func nsAlive(ns string) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink("/proc/" + e.Name() + "/ns/pid"); err == nil && l == ns && alive(pid) {
			return true
		}
	}
	return false
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b))
	return len(fields) > 2 && fields[2] != "Z"
}

func TestNoModelIs503WithHowTo(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.LLM.Models = nil })
	resp, err := http.Post(s.url+"/wunder", "application/json", strings.NewReader(`{"user_id":"u","question":"q"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct{ Code, Detail string }
	_ = json.NewDecoder(resp.Body).Decode(&p)
	if resp.StatusCode != 503 || !strings.Contains(p.Detail, "WUNDER_LLM_BASE_URL") {
		t.Fatalf("%d %+v", resp.StatusCode, p)
	}
}

// pgSchema returns a DSN on a fresh PostgreSQL schema, dropped when the test
// ends; without WUNDER_TEST_POSTGRES_DSN the test is skipped (loudly), or
// fails when WUNDER_REQUIRE_POSTGRES=1 (CI).
func pgSchema(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("WUNDER_TEST_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("WUNDER_REQUIRE_POSTGRES") == "1" {
			t.Fatal("WUNDER_REQUIRE_POSTGRES=1 but WUNDER_TEST_POSTGRES_DSN is not set")
		}
		t.Skip("WUNDER_TEST_POSTGRES_DSN not set: PostgreSQL end-to-end tests SKIPPED")
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := "wunder_e2e_" + strings.ToLower(rand.Text()[:10])
	if _, err := admin.ExecContext(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	})
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "search_path=" + schema
}

// The write/read scenario on PostgreSQL.
func TestEndToEndPostgres(t *testing.T) {
	dsn := pgSchema(t)
	s := startServer(t, func(c *config.Config) { c.Storage.Postgres.DSN = dsn })
	c := client.New(s.url, "", nil)
	var evs []client.Event
	for ev, err := range c.Ask(t.Context(), client.RunRequest{UserID: "pg", Question: "write a note", ToolNames: []string{"write_file", "read_file"}, ToolCallMode: "function_call"}) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if f := finalOf(t, evs); f.State != "finished" || !strings.Contains(f.Answer, "hello from fakellm") {
		t.Fatalf("final = %+v", f)
	}
}

// Two replicas share one PostgreSQL: a user's lock holds across them, and a
// run of one replica is followed and cancelled through the other.
func TestTwoReplicasShareLocksRunsAndEvents(t *testing.T) {
	dsn := pgSchema(t)
	shared := func(c *config.Config) {
		c.Storage.Postgres.DSN = dsn
		c.Concurrency.LockTTLSeconds = 1 // heartbeat (and remote-cancel check) every 1/3 s
	}
	a := startServer(t, shared)
	b := startServer(t, shared)
	ca, cb := client.New(a.url, "", nil), client.New(b.url, "", nil)
	script := `import time; print('started', flush=True); time.sleep(300)`
	run, err := ca.Submit(t.Context(), client.RunRequest{UserID: "dora", Question: `run: python3 -c "` + script + `"`, ToolNames: []string{"execute_command"}})
	if err != nil {
		t.Fatal(err)
	}
	cancelled := false
	var evs []client.Event
	for ev, err := range cb.Follow(t.Context(), "dora", run.ID, 0, nil) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
		if ev.Type == "tool_output_delta" && !cancelled {
			cancelled = true
			_, err := cb.Submit(t.Context(), client.RunRequest{UserID: "dora", Question: "meanwhile"})
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Status != 429 {
				t.Fatalf("dora on replica b while her run lives on a: %v, want 429", err)
			}
			if err := cb.Cancel(t.Context(), "dora", run.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("replica b saw seq %d at %d", ev.Seq, i)
		}
	}
	if f := finalOf(t, evs); f.State != "cancelled" {
		t.Fatalf("final = %+v", f)
	}
}

// On PostgreSQL the replicas hear of each other's runs at once
// (LISTEN/NOTIFY): with a lock TTL of ten minutes, the owner's heartbeat
// (every 200 s) and the followers' safety-net poll (as rare) never come
// within the test, so the follower on replica b sees the run's events and
// the cancel sent to b stops the run on a only through notifications. The
// test's deadline is the failure bound, far below the heartbeat.
func TestReplicasReactAtOnceThroughNotifications(t *testing.T) {
	dsn := pgSchema(t)
	shared := func(c *config.Config) {
		c.Storage.Postgres.DSN = dsn
		c.Concurrency.LockTTLSeconds = 600
	}
	a := startServer(t, shared)
	b := startServer(t, shared)
	ca, cb := client.New(a.url, "", nil), client.New(b.url, "", nil)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	script := `import time; print('started', flush=True); time.sleep(300)`
	run, err := ca.Submit(ctx, client.RunRequest{UserID: "erin", Question: `run: python3 -c "` + script + `"`, ToolNames: []string{"execute_command"}})
	if err != nil {
		t.Fatal(err)
	}
	var cancelAt time.Time
	var final client.Event
	for ev, err := range cb.Follow(ctx, "erin", run.ID, 0, nil) {
		if err != nil {
			t.Fatalf("following run %s of replica a through b: %v (a notification missed: the poll comes only every 200 s)", run.ID, err)
		}
		if ev.Type == "tool_output_delta" && cancelAt.IsZero() {
			cancelAt = time.Now()
			if err := cb.Cancel(ctx, "erin", run.ID); err != nil {
				t.Fatal(err)
			}
		}
		final = ev
	}
	if f := finalOf(t, []client.Event{final}); f.State != "cancelled" {
		t.Fatalf("final = %+v; want cancelled", f)
	}
	t.Logf("cancel through replica b to final seen on b: %v (heartbeat would take up to %v)", time.Since(cancelAt), 200*time.Second)
}

// The plan tool through the wired server: a run writes its plan, the plan
// event is in the run's log and GET /wunder/runs/{id}/plan answers it; a run
// without a plan answers no steps; another user's run is 404.
func TestPlanThroughRealServer(t *testing.T) {
	s := startServer(t, nil)
	f := &fixture{s: s}
	plan := `{"steps":[{"title":"read the brief","status":"completed"},{"title":"write the answer","status":"running"}]}`
	var run struct {
		RunID string `json:"run_id"`
	}
	decodeInto(t, f.rest(t, "POST", "/wunder", `{"user_id":"pat","question":"call plan `+strings.ReplaceAll(plan, `"`, `\"`)+`","tool_names":["plan"],"stream":false}`, nil), 200, &run)
	var got struct {
		RunID string `json:"run_id"`
		Steps []struct{ Title, Status string }
	}
	decodeInto(t, f.rest(t, "GET", "/wunder/runs/"+run.RunID+"/plan?user_id=pat", "", nil), 200, &got)
	if got.RunID != run.RunID || len(got.Steps) != 2 || got.Steps[1].Title != "write the answer" || got.Steps[1].Status != "running" {
		t.Fatalf("plan = %+v", got)
	}
	r := f.rest(t, "GET", "/wunder/runs/"+run.RunID+"/events?user_id=pat", "", nil)
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if !strings.Contains(string(body), "event: plan\n") {
		t.Errorf("the run's events hold no plan event:\n%s", body)
	}
	mustStatus(t, f.rest(t, "GET", "/wunder/runs/"+run.RunID+"/plan?user_id=someone_else", "", nil), 404)
	decodeInto(t, f.rest(t, "POST", "/wunder", `{"user_id":"pat","question":"hello","stream":false}`, nil), 200, &run)
	decodeInto(t, f.rest(t, "GET", "/wunder/runs/"+run.RunID+"/plan?user_id=pat", "", nil), 200, &got)
	if len(got.Steps) != 0 {
		t.Errorf("plan of a run without one = %+v; want no steps", got)
	}
}

// Model failover through the wired server: the default model's provider
// answers 502, so after its retries the call moves to its fallback (the
// fake model), the switch is an llm_stream_retry event and token_usage
// names the model that answered.
func TestModelFailoverThroughRealServer(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":{"message":"bad gateway"}}`, http.StatusBadGateway)
	}))
	t.Cleanup(down.Close)
	s := startServer(t, func(c *config.Config) {
		p := config.NewModel()
		p.Provider, p.BaseURL, p.Model = config.ProviderLocal, down.URL+"/v1", "primary"
		p.Retry.MaxAttempts, p.Retry.InitialBackoffMillis = 2, 1
		p.Fallbacks = []string{"fake"}
		c.LLM.Models["primary"] = p
		c.LLM.Default = "primary"
	})
	c := client.New(s.url, "", nil)
	run, err := c.Submit(t.Context(), client.RunRequest{UserID: "quinn", Question: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	var switched bool
	var model string
	var evs []client.Event
	for ev, err := range c.Follow(t.Context(), "quinn", run.ID, 0, nil) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
		var d struct {
			Reason string
			Model  string
		}
		_ = json.Unmarshal(ev.Data, &d)
		switch ev.Type {
		case "llm_stream_retry":
			switched = switched || strings.Contains(d.Reason, "switching to fake")
		case "token_usage":
			model = d.Model
		}
	}
	if f := finalOf(t, evs); f.State != "finished" || !strings.Contains(f.Answer, "echo: hello") {
		t.Fatalf("final = %+v; want the fallback's answer", f)
	}
	if !switched || model != "fake" {
		t.Errorf("switch event %v, token_usage model %q; want the switch named and usage on fake", switched, model)
	}
}
