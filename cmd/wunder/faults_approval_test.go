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
	c := client.New(a.URL, "", nil)
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
		return err == nil && r.State == "waiting_approval"
	})
	a.Kill9(t)
	b2 := startWunder(t, cfgPath, port)
	list := listApprovals(t, b2.URL, run.ID)
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
			resp, err := http.Post(b2.URL+"/wunder/runs/"+run.ID+"/approvals/"+list[0].ID, "application/json", strings.NewReader(`{"decision":"approve"}`))
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
	evs := collectFollowAfter(t, client.New(b2.URL, "", nil), "waiter", run.ID, seen)
	if len(evs) == 0 || evs[0].Seq != seen+1 {
		t.Fatalf("after the restart the follower got %v; want the log from seq %d", evs, seen+1)
	}
	if f := finalOf(t, evs); f.State != "finished" || !strings.Contains(f.Answer, "counted") {
		t.Fatalf("the approved run ended %+v", f)
	}
	if b, _ := os.ReadFile(count); string(b) != "ran\n" {
		t.Fatalf("count.txt = %q; the approved command must run exactly once", b)
	}
	if l := listApprovals(t, b2.URL, run.ID); l[0].State != "approved" || l[0].Execution != "done" {
		t.Fatalf("approval after the run = %+v", l[0])
	}
}

// TestFaultKill9WhileWaitingA2A: the same over A2A. A task started with
// SendMessage waits (input-required) for approval of execute_command; the
// server is killed with -9 and restarted; the task is still input-required
// with the same approval, and an answer on its taskId ("approve") lets it
// finish, the command run exactly once.
func TestFaultKill9WhileWaitingA2A(t *testing.T) {
	if testing.Short() {
		t.Skip("process fault suite skipped in -short mode")
	}
	model := httptest.NewServer(&fakellm.Server{Chunks: 4})
	t.Cleanup(model.Close)
	dir, port := dataDir(t), freePort(t)
	cfgPath := writeFaultConfig(t, dir, port, model.URL, "", "")
	extra := "approvals:\n  tools: [execute_command]\na2a:\n  server:\n    tool_names: [execute_command]\n"
	b, _ := os.ReadFile(cfgPath)
	if err := os.WriteFile(cfgPath, append(b, extra...), 0o600); err != nil {
		t.Fatal(err)
	}
	type task struct {
		ID     string `json:"id"`
		Status struct {
			State   string `json:"state"`
			Message struct {
				Parts []struct {
					Data struct {
						ApprovalID string `json:"approval_id"`
						Tool       string `json:"tool"`
					} `json:"data"`
				} `json:"parts"`
			} `json:"message"`
		} `json:"status"`
		Artifacts []struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"artifacts"`
	}
	call := func(url, method, params string) task {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/a2a",
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`))
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Wunder-User", "waiter")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Error != nil {
			t.Fatalf("%s: %s, %v", method, out.Error, err)
		}
		var tk task
		if method == "SendMessage" {
			var sr struct {
				Task task `json:"task"`
			}
			_ = json.Unmarshal(out.Result, &sr)
			return sr.Task
		}
		_ = json.Unmarshal(out.Result, &tk)
		return tk
	}
	asked := func(tk task) string {
		t.Helper()
		if tk.Status.State != "TASK_STATE_INPUT_REQUIRED" || len(tk.Status.Message.Parts) != 2 || tk.Status.Message.Parts[1].Data.Tool != "execute_command" {
			t.Fatalf("task %+v; want input-required for execute_command", tk)
		}
		return tk.Status.Message.Parts[1].Data.ApprovalID
	}
	a := startWunder(t, cfgPath, port)
	started := call(a.URL, "SendMessage", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"run: sh -c 'echo ran >> count.txt; echo counted'"}]}}`)
	id := asked(started)
	c := client.New(a.URL, "", nil)
	waitFor(t, 10*time.Second, "the run to be stored waiting", func() bool {
		r, err := c.GetRun(t.Context(), "waiter", started.ID)
		return err == nil && r.State == "waiting_approval"
	})
	a.Kill9(t)
	b2 := startWunder(t, cfgPath, port)
	if again := asked(call(b2.URL, "GetTask", `{"id":"`+started.ID+`"}`)); again != id {
		t.Fatalf("after the restart the task asks for %s; want %s", again, id)
	}
	count := filepath.Join(dir, "workspaces", "waiter", "count.txt")
	if _, err := os.Stat(count); err == nil {
		t.Fatal("the command ran before it was approved")
	}
	done := call(b2.URL, "SendMessage", `{"message":{"messageId":"m2","role":"ROLE_USER","taskId":"`+started.ID+`","parts":[{"text":"approve"}]}}`)
	if done.Status.State != "TASK_STATE_COMPLETED" || len(done.Artifacts) != 1 || !strings.Contains(done.Artifacts[0].Parts[0].Text, "counted") {
		t.Fatalf("after approve the task is %+v", done)
	}
	if b, _ := os.ReadFile(count); string(b) != "ran\n" {
		t.Fatalf("count.txt = %q; the approved command must run exactly once", b)
	}
}
