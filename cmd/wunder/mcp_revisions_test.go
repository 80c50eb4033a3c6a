package main

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/testutil/fakellm"
)

// The real binary in its default configuration serves both revisions on
// /wunder/mcp: a go-sdk client negotiates 2026-07-28 without a session
// and is asked for an approval with an input-required result; it answers
// on a new process after kill -9 of the one that asked (the requestState
// names the stored run, not anything the process kept). A 2025-11-25
// client of the new process gets a session and is asked through
// elicitation.
func TestMCPRevisionsProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("process suite skipped in -short mode")
	}
	model := httptest.NewServer(&fakellm.Server{Chunks: 4})
	t.Cleanup(model.Close)
	dir, port := dataDir(t), freePort(t)
	cfgPath := writeFaultConfig(t, dir, port, model.URL, "", "approvals:\n  tools: [write_file]")
	a := startWunder(t, cfgPath, port)
	answer := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "approve"}}, nil
	}
	manual := &mcp.ClientOptions{ElicitationHandler: answer, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}
	cur := mcpSession(t, a.URL, manual)
	if v := cur.InitializeResult().ProtocolVersion; v != "2026-07-28" || cur.ID() != "" {
		t.Fatalf("default client: %q session %q, want 2026-07-28 without a session", v, cur.ID())
	}
	call := &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": "write a note", "tool_names": []string{"write_file"}}}
	res, err := cur.CallTool(t.Context(), call)
	if err != nil || !res.NeedsInput() || len(res.InputRequests) != 1 {
		t.Fatalf("wunder__run at 2026-07-28: %v %+v", err, res)
	}
	retry := *call
	retry.RequestState, retry.InputResponses = res.RequestState, mcp.InputResponseMap{}
	for id, ir := range res.InputRequests {
		if p, ok := ir.(*mcp.ElicitParams); !ok || !strings.Contains(p.Message, "write_file") {
			t.Fatalf("input request %s: %+v", id, ir)
		}
		retry.InputResponses[id] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "approve"}}
	}
	a.Kill9(t)
	b := startWunder(t, cfgPath, port)
	res, err = mcpSession(t, b.URL, manual).CallTool(t.Context(), &retry)
	if err != nil || res.IsError || res.NeedsInput() || !strings.Contains(resultText(res), `"state":"finished"`) {
		t.Fatalf("the retry on the new process: %v %s", err, resultText(res))
	}
	if got, err := os.ReadFile(filepath.Join(dir, "workspaces", "wunder", "notes.txt")); err != nil || string(got) != "hello from fakellm" {
		t.Errorf("notes.txt: %q %v", got, err)
	}

	var asked atomic.Int32
	old, err := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return answer(ctx, r)
	}}).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: b.URL + "/wunder/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if old.ID() == "" || old.InitializeResult().ProtocolVersion != "2025-11-25" {
		t.Fatalf("2025-11-25 client: session %q revision %q", old.ID(), old.InitializeResult().ProtocolVersion)
	}
	res, out := mcpCallTool(t, old, "wunder__run", map[string]any{"task": "write a note", "tool_names": []string{"write_file"}})
	if res.IsError || out.State != "finished" || asked.Load() != 1 {
		t.Fatalf("wunder__run at 2025-11-25: %+v, %d elicitations: %s", out, asked.Load(), resultText(res))
	}
}
