package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPStdio drives `wunder mcp stdio` with a go-sdk client over pipes:
// wunder__run runs a task on the scripted model.
func TestMCPStdio(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "wunder.yaml")
	cfg := "data_dir: " + dir + "\nllm:\n  models:\n    demo: {provider: scripted}\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	root := newRootCmd()
	root.SetArgs([]string{"mcp", "stdio", "--config", cfgPath})
	root.SetIn(inR)
	root.SetOut(outW)
	root.SetErr(io.Discard)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx); outW.Close() }()

	c := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": "hello"}})
	if err != nil || res.IsError {
		t.Fatalf("wunder__run: %v %+v", err, res)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	if m["answer"] == nil || m["answer"] == "" || m["session_id"] == "" || m["run_id"] == "" {
		t.Errorf("structured result %s", raw)
	}
	_ = cs.Close()
	inW.Close()
	cancel()
	if err := <-done; err != nil {
		t.Logf("command ended with %v", err)
	}
}
