package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/internal/config"
)

// Model faults through the real wiring (fake model on the OpenAI wire, the
// LLM adapter with its retries, the core, the gateway): each leaves its run
// in a defined state with an error that says what happened, stored as the
// client was told, and the user's next run is accepted.
func TestFaultModel(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		m := c.LLM.Models["fake"]
		m.TimeoutSeconds = 2
		m.Retry.MaxAttempts = 2
		c.LLM.Models["fake"] = m
	})
	c := client.New(s.url, "", nil)
	for _, tc := range []struct {
		name, question, state, errPart string
	}{
		{"http 500", "#500 please", "failed", "500"},
		{"cut stream", "#cut please", "failed", "stream"},
		{"hang past the timeout", "#hang please", "failed", "timed out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user := "fault-" + strings.ReplaceAll(tc.name, " ", "-")
			run, err := c.Submit(t.Context(), client.RunRequest{UserID: user, Question: tc.question})
			if err != nil {
				t.Fatal(err)
			}
			f := finalOf(t, collectFollow(t, c, user, run.ID))
			if f.State != tc.state || !strings.Contains(f.Error, tc.errPart) {
				t.Fatalf("final = %+v; want %s with an error about %q", f, tc.state, tc.errPart)
			}
			if got := getRun(t, s.url, user, run.ID); got["state"] != f.State || got["error"] != f.Error {
				t.Fatalf("stored run says %v (%v), the client was told %s (%q)", got["state"], got["error"], f.State, f.Error)
			}
			next, err := c.Submit(t.Context(), client.RunRequest{UserID: user, SessionID: run.SessionID, Question: "hello"})
			if err != nil {
				t.Fatalf("next run: %v", err)
			}
			if f := finalOf(t, collectFollow(t, c, user, next.ID)); f.State != "finished" {
				t.Fatalf("next run = %+v", f)
			}
		})
	}
}

// A hanging model call is cancelled at once: the run ends cancelled, not
// after the model's timeout.
func TestFaultModelHangCancelled(t *testing.T) {
	s := startServer(t, nil)
	c := client.New(s.url, "", nil)
	run, err := c.Submit(t.Context(), client.RunRequest{UserID: "hang-cancel", Question: "#hang forever"})
	if err != nil {
		t.Fatal(err)
	}
	for ev, err := range c.Follow(t.Context(), "hang-cancel", run.ID, 0, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == "llm_request" {
			break
		}
	}
	start := time.Now()
	if err := c.Cancel(t.Context(), "hang-cancel", run.ID); err != nil {
		t.Fatal(err)
	}
	f := finalOf(t, collectFollow(t, c, "hang-cancel", run.ID))
	if f.State != "cancelled" {
		t.Fatalf("final = %+v", f)
	}
	t.Logf("cancel -> final: %v", time.Since(start).Round(time.Millisecond))
}

// PostgreSQL restarted in the middle of runs: every run ends in a defined
// state (finished, when the store is back within the retry budget; failed
// with the store's error otherwise), stored as its client was told. It
// restarts the whole cluster, so it runs only when asked for: `make faults`
// sets WUNDER_FAULTS_PG_RESTART=1.
func TestFaultPostgresRestart(t *testing.T) {
	if os.Getenv("WUNDER_FAULTS_PG_RESTART") != "1" {
		t.Skip("restarts PostgreSQL: run with WUNDER_FAULTS_PG_RESTART=1 (make faults)")
	}
	versions, err := os.ReadDir("/etc/postgresql")
	if err != nil || len(versions) == 0 {
		t.Fatalf("no local PostgreSQL cluster to restart: %v", err)
	}
	dsn := pgSchema(t)
	s := startServer(t, func(c *config.Config) {
		c.Storage.Backend, c.Storage.Postgres.DSN = "postgres", dsn
	})
	s.fake.ChunkDelay = 150 * time.Millisecond // each run streams for about a second
	c := client.New(s.url, "", nil)
	var runs []*client.Run
	for i := range 4 {
		run, err := c.Submit(t.Context(), client.RunRequest{UserID: fmt.Sprintf("pg-restart-%d", i), Question: "tell me a long story"})
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
	}
	// The restart must hit runs in flight, or it proves nothing.
	inFlight := 0
	for _, run := range runs {
		if st := getRun(t, s.url, run.UserID, run.ID)["state"]; st == "running" || st == "queued" {
			inFlight++
		}
	}
	if inFlight == 0 {
		t.Fatal("every run ended before PostgreSQL was restarted")
	}
	t.Logf("%d of %d runs in flight at the restart", inFlight, len(runs))
	restart := exec.Command("pg_ctlcluster", "--skip-systemctl-redirect", versions[0].Name(), "main", "restart")
	if out, err := restart.CombinedOutput(); err != nil {
		t.Fatalf("restart PostgreSQL: %v\n%s", err, out)
	}
	for _, run := range runs {
		f := finalOf(t, collectFollow(t, c, run.UserID, run.ID))
		got := getRun(t, s.url, run.UserID, run.ID)
		t.Logf("run %s: %s %q (stored %v)", run.ID, f.State, f.Error, got["state"])
		if got["state"] != f.State || (f.State != "finished" && !strings.Contains(f.Error, "store")) {
			t.Fatalf("run %s: told %+v, stored %+v", run.ID, f, got)
		}
	}
}
