package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/internal/testutil/fakellm"
)

// A run waiting for an approval survives kill -9: after the restart the
// approval is still pending, a decision (sent twice, at once) resumes the
// run on the new process, the approved command runs exactly once, and the
// follower gets the rest of the log after the last event it saw. On
// SQLite and, when PostgreSQL is configured, on PostgreSQL.
func TestFaultKill9WhileWaiting(t *testing.T) {
	if testing.Short() {
		t.Skip("process fault suite skipped in -short mode")
	}
	backends := map[string]string{"sqlite": ""}
	if os.Getenv("WUNDER_TEST_POSTGRES_DSN") != "" || os.Getenv("WUNDER_REQUIRE_POSTGRES") == "1" {
		backends["postgres"] = pgSchema(t)
	}
	for name, dsn := range backends {
		t.Run(name, func(t *testing.T) { faultKill9WhileWaiting(t, dsn) })
	}
}

type approvalView struct {
	ID       string `json:"approval_id"`
	Tool     string `json:"tool"`
	State    string `json:"state"`
	Decision *struct {
		By string `json:"decided_by"`
	} `json:"decision"`
	Execution string `json:"execution"`
}

func listApprovals(t *testing.T, url, runID string) []approvalView {
	t.Helper()
	resp, err := http.Get(url + "/wunder/runs/" + runID + "/approvals")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Approvals []approvalView `json:"approvals"`
	}
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&out) != nil {
		t.Fatalf("GET approvals of %s: %d", runID, resp.StatusCode)
	}
	return out.Approvals
}

func faultKill9WhileWaiting(t *testing.T, dsn string) {
	model := httptest.NewServer(&fakellm.Server{Chunks: 4})
	t.Cleanup(model.Close)
	dir, port := dataDir(t), freePort(t)
	cfgPath := writeFaultConfig(t, dir, port, model.URL, dsn, "")
	extra := "approvals:\n  tools: [execute_command]\n"
	b, _ := os.ReadFile(cfgPath)
	if err := os.WriteFile(cfgPath, append(b, extra...), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startWunder(t, cfgPath, port)
	c := client.New(a.url, "", nil)
	run, err := c.Submit(t.Context(), client.RunRequest{UserID: "waiter", ToolNames: []string{"execute_command"},
		Question: "run: sh -c 'echo ran >> count.txt; echo counted'"})
	if err != nil {
		t.Fatal(err)
	}
	var seen int64
	for ev, err := range c.Follow(t.Context(), "waiter", run.ID, 0, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if seen = ev.Seq; ev.Type == "approval_required" {
			break
		}
	}
	waitFor(t, 10*time.Second, "the run to be stored waiting", func() bool {
		r, err := c.GetRun(t.Context(), "waiter", run.ID)
		return err == nil && r.State == "waiting_input"
	})
	a.kill9(t)
	b2 := startWunder(t, cfgPath, port)
	list := listApprovals(t, b2.url, run.ID)
	if len(list) != 1 || list[0].State != "pending" || list[0].Tool != "execute_command" {
		t.Fatalf("after the restart the approvals are %+v; want one pending", list)
	}
	count := filepath.Join(dir, "workspaces", "waiter", "count.txt")
	if _, err := os.Stat(count); err == nil {
		t.Fatal("the command ran before it was approved")
	}
	// The same decision twice, at once: one is recorded (200), the other
	// is told it was already decided (409).
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Go(func() {
			resp, err := http.Post(b2.url+"/wunder/runs/"+run.ID+"/approvals/"+list[0].ID, "application/json", strings.NewReader(`{"decision":"approve"}`))
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes[i] = resp.StatusCode
		})
	}
	wg.Wait()
	if fmt.Sprint(codes) != "[200 409]" && fmt.Sprint(codes) != "[409 200]" {
		t.Fatalf("two decisions answered %v; want one 200 and one 409", codes)
	}
	evs := collectFollowAfter(t, client.New(b2.url, "", nil), "waiter", run.ID, seen)
	if len(evs) == 0 || evs[0].Seq != seen+1 {
		t.Fatalf("after the restart the follower got %v; want the log from seq %d", evs, seen+1)
	}
	if f := finalOf(t, evs); f.State != "finished" || !strings.Contains(f.Answer, "counted") {
		t.Fatalf("the approved run ended %+v", f)
	}
	if b, _ := os.ReadFile(count); string(b) != "ran\n" {
		t.Fatalf("count.txt = %q; the approved command must run exactly once", b)
	}
	if l := listApprovals(t, b2.url, run.ID); l[0].State != "approved" || l[0].Execution != "done" {
		t.Fatalf("approval after the run = %+v", l[0])
	}
}
