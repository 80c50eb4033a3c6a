package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/internal/testutil/fakellm"
)

// taskParams and taskReply are the tasks/* methods' params and results
// as a go-sdk client sends them (custom methods: go-sdk knows no tasks).
type taskParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

type taskReply struct {
	mcp.ResultBase
	TaskID        string              `json:"taskId"`
	Status        string              `json:"status"`
	Result        *mcp.CallToolResult `json:"result"`
	InputRequests mcp.InputRequestMap `json:"inputRequests"`
}

// taskSession connects a go-sdk client that sends tasks/get, tasks/cancel
// and tasks/result, at revision version ("": 2026-07-28), with headers hdr.
func taskSession(t *testing.T, url, version string, hdr map[string]string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, opts)
	for _, m := range []string{"tasks/get", "tasks/cancel"} {
		if err := mcp.AddSendingCustomMethod[*taskParams, *taskReply](c, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := mcp.AddSendingCustomMethod[*taskParams, *mcp.CallToolResult](c, "tasks/result"); err != nil {
		t.Fatal(err)
	}
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url + "/wunder/mcp", HTTPClient: &http.Client{Transport: headerRT{hdr: hdr}}},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// startTask sends a 2025-11-25 session's tools/call of wunder__run with
// params.task as raw JSON-RPC (go-sdk's CallToolParams has no task) and
// returns the task id.
func startTask(t *testing.T, url string, hdr map[string]string, cs *mcp.ClientSession, args map[string]any) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "wunder__run", "arguments": args, "task": map[string]any{"ttl": 60000}}})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/wunder/mcp", bytes.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": "2025-11-25"} {
		req.Header.Set(k, v)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var msg struct {
			Result struct {
				Task struct {
					TaskID string `json:"taskId"`
					Status string `json:"status"`
				} `json:"task"`
			} `json:"result"`
		}
		line, _ := strings.CutPrefix(sc.Text(), "data: ")
		if json.Unmarshal([]byte(line), &msg) == nil && msg.Result.Task.TaskID != "" {
			if msg.Result.Task.Status != "working" {
				t.Fatalf("CreateTaskResult: %s", line)
			}
			return msg.Result.Task.TaskID
		}
	}
	t.Fatalf("tools/call with task: no task (HTTP %d)", resp.StatusCode)
	return ""
}

// A task is its run, kept in the store: a task started on one process
// that waits for an approval is found, input_required, on the process
// started after kill -9 of the first; tasks/result there asks for the
// decision by elicitation and returns the run's answer, and a 2026-07-28
// client reads the same task, completed, with the result inlined.
func TestMCPTaskProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("process suite skipped in -short mode")
	}
	model := httptest.NewServer(&fakellm.Server{Chunks: 4})
	t.Cleanup(model.Close)
	dir, port := dataDir(t), freePort(t)
	cfgPath := writeFaultConfig(t, dir, port, model.URL, "", "approvals:\n  tools: [write_file]")
	a := startWunder(t, cfgPath, port)
	id := startTask(t, a.URL, nil, taskSession(t, a.URL, "2025-11-25", nil, nil), map[string]any{"task": "write a note", "tool_names": []string{"write_file"}})
	awaitApproval(t, a.URL, nil, "wunder", id)
	a.Kill9(t)

	b := startWunder(t, cfgPath, port)
	var asked atomic.Int32
	cs := taskSession(t, b.URL, "2025-11-25", nil, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "approve"}}, nil
	}})
	got, err := mcp.CallCustomMethod[*taskParams, *taskReply](t.Context(), cs, "tasks/get", &taskParams{TaskID: id})
	if err != nil || got.Status != "input_required" {
		t.Fatalf("tasks/get on the new process: %v %+v, want input_required", err, got)
	}
	res, err := mcp.CallCustomMethod[*taskParams, *mcp.CallToolResult](t.Context(), cs, "tasks/result", &taskParams{TaskID: id})
	if err != nil || res.IsError || !strings.Contains(resultText(res), `"state":"finished"`) || asked.Load() != 1 {
		t.Fatalf("tasks/result on the new process: %v, %d elicitations: %+v", err, asked.Load(), res)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "workspaces", "wunder", "notes.txt")); err != nil || string(got) != "hello from fakellm" {
		t.Errorf("notes.txt: %q %v", got, err)
	}
	cur := taskSession(t, b.URL, "", nil, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{
		Extensions: map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}})
	got, err = mcp.CallCustomMethod[*taskParams, *taskReply](t.Context(), cur, "tasks/get", &taskParams{TaskID: id})
	if err != nil || got.Status != "completed" || got.Result == nil || !strings.Contains(resultText(got.Result), `"state":"finished"`) {
		t.Fatalf("tasks/get at 2026-07-28: %v %+v", err, got)
	}
}

// awaitApproval follows run id (of user, as hdr says) over REST until it
// asks for an approval and is stored waiting.
func awaitApproval(t *testing.T, url string, hdr map[string]string, user, id string) {
	t.Helper()
	c := client.New(url, "", &http.Client{Transport: headerRT{hdr: hdr}})
	for ev, err := range c.Follow(t.Context(), user, id, 0, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == "approval_required" {
			break
		}
	}
	waitFor(t, 10*time.Second, "the run to be stored waiting", func() bool {
		r, err := c.GetRun(t.Context(), user, id)
		return err == nil && r.State == "waiting_approval"
	})
}
