package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/testutil/fakellm"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/storage"
)

// mcpOutput is the structured result of wunder__run and wunder__approve.
type mcpOutput struct {
	Answer    string `json:"answer"`
	RunID     string `json:"run_id"`
	SessionID string `json:"session_id"`
	State     string `json:"state"`
	Approvals []struct {
		ApprovalID string   `json:"approval_id"`
		Tool       string   `json:"tool"`
		Decisions  []string `json:"decisions"`
	} `json:"approvals"`
}

func mcpCallTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, mcpOutput) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out mcpOutput
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %s: %v", name, raw, err)
	}
	return res, out
}

func mcpSession(t *testing.T, url string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, opts).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url + "/wunder/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// The wired server: approvals.tools names write_file; a go-sdk client with
// elicitation approves it from inside the wunder__run call, and the file is
// written.
func TestMCPApprovalElicitationWired(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.Approvals.Tools = []string{"write_file"} })
	asked := make(chan string, 4)
	cs := mcpSession(t, s.url, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked <- r.Params.Message
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "approve"}}, nil
	}})
	res, out := mcpCallTool(t, cs, "wunder__run", map[string]any{"task": "write a note", "tool_names": []string{"write_file"}})
	if res.IsError || out.State != "finished" {
		t.Fatalf("wunder__run: %+v %+v", out, res.Content)
	}
	if len(asked) != 1 {
		t.Errorf("%d elicitations, want 1", len(asked))
	} else if msg := <-asked; !strings.Contains(msg, "write_file") || !strings.Contains(msg, "notes.txt") {
		t.Errorf("elicitation: %q", msg)
	}
	if b, err := os.ReadFile(filepath.Join(s.dir, "workspaces", "wunder", "notes.txt")); err != nil || string(b) != "hello from fakellm" {
		t.Errorf("notes.txt: %q %v", b, err)
	}
}

// A run left waiting by wunder__run (a client without elicitation)
// survives kill -9 and a restart; wunder__approve on the new process
// finishes it, and write_file ran once. On SQLite and, when
// WUNDER_TEST_POSTGRES_DSN is set, on PostgreSQL.
func TestMCPApprovalSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("process fault suite skipped in -short mode")
	}
	t.Run("sqlite", func(t *testing.T) { mcpApprovalKill9(t, "") })
	t.Run("postgres", func(t *testing.T) { mcpApprovalKill9(t, pgSchema(t)) })
}

func mcpApprovalKill9(t *testing.T, dsn string) {
	model := httptest.NewServer(&fakellm.Server{Chunks: 4})
	t.Cleanup(model.Close)
	dir, port := dataDir(t), freePort(t)
	// (writeFaultConfig's last argument is YAML after the concurrency
	// section: a top-level key fits there.)
	cfgPath := writeFaultConfig(t, dir, port, model.URL, dsn, "approvals:\n  tools: [write_file]")
	a := startWunder(t, cfgPath, port)
	res, out := mcpCallTool(t, mcpSession(t, a.URL, nil), "wunder__run", map[string]any{"task": "write a note", "tool_names": []string{"write_file"}})
	if res.IsError || out.State != "waiting_approval" || len(out.Approvals) != 1 || out.Approvals[0].Tool != "write_file" {
		t.Fatalf("wunder__run: %+v %+v", out, res.Content)
	}
	// The call answers at the first approval_required event; the run is
	// stored waiting_approval a moment later, after its log is flushed (the
	// API shows the live run's state before that). The scenario is a kill
	// while the run waits: wait for the state in the store.
	opts := storage.Options{SQLitePath: filepath.Join(dir, "wunder.db")}
	if dsn != "" {
		opts = storage.Options{Backend: "postgres", PostgresDSN: dsn}
	}
	st, err := storage.Open(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the run to be stored waiting_approval", func() bool {
		r, err := st.GetRun(t.Context(), out.RunID)
		return err == nil && r.State == orchestrator.RunWaitingApproval
	})
	_ = st.Close()
	a.Kill9(t)
	b := startWunder(t, cfgPath, port)
	cs := mcpSession(t, b.URL, nil)
	res, fin := mcpCallTool(t, cs, "wunder__approve", map[string]any{"run_id": out.RunID, "approval_id": out.Approvals[0].ApprovalID, "decision": "approve"})
	if res.IsError || fin.State != "finished" || fin.RunID != out.RunID || fin.Answer == "" {
		t.Fatalf("wunder__approve after the restart: %+v %s", fin, resultText(res))
	}
	if got, err := os.ReadFile(filepath.Join(dir, "workspaces", "wunder", "notes.txt")); err != nil || string(got) != "hello from fakellm" {
		t.Errorf("notes.txt: %q %v", got, err)
	}
	calls := 0
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for ev, err := range client.New(b.URL, "", nil).Follow(ctx, "wunder", out.RunID, 0, nil) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == "tool_call" && strings.Contains(string(ev.Data), "write_file") {
			calls++
		}
	}
	if calls != 1 {
		t.Errorf("write_file was called %d times, want once", calls)
	}
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text + "\n")
		}
	}
	return b.String()
}
