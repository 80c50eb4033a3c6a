package main

import (
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpTaskRows are the isolation matrix's rows of MCP tasks (wunder__run
// as a task): alice starts one at 2025-11-25 that waits for an approval
// (approval_mode suggest makes write_file ask), and each caller asks for
// it with tasks/get at either revision and cancels it with tasks/cancel.
// A task is its run, looked up as the caller: bob's token and the API key
// (mcp.server.user_id) find nothing, and alice's task still waits.
func (f *fixture) mcpTaskRows() []matrixRow {
	var once sync.Once
	var id string
	setup := func(t *testing.T) {
		once.Do(func() {
			cs := taskSession(t, f.s.url, "2025-11-25", bearerOf(f.alice), nil)
			id = startTask(t, f.s.url, bearerOf(f.alice), cs, map[string]any{"task": "write a note", "tool_names": []string{"write_file"}, "approval_mode": "suggest"})
			awaitApproval(t, f.s.url, bearerOf(f.alice), "", id)
		})
	}
	try := func(version, method string) func(t *testing.T, c caller) string {
		return func(t *testing.T, c caller) string {
			if c.names != "" && c.hdr["X-API-Key"] == "" {
				return na
			}
			setup(t)
			var opts *mcp.ClientOptions
			if version == "" {
				opts = &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{Extensions: map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}
			}
			cs := taskSession(t, f.s.url, version, c.hdr, opts)
			got, err := mcp.CallCustomMethod[*taskParams, *taskReply](t.Context(), cs, method, &taskParams{TaskID: id})
			switch {
			case err != nil && strings.Contains(err.Error(), "not found"):
				return denied
			case err != nil:
				return "error: " + err.Error()
			case method == "tasks/get" && got.Status != "input_required":
				return "status " + got.Status
			}
			return ok
		}
	}
	// alice's cancel comes last: the others must find her task waiting.
	return []matrixRow{
		{frontend: "MCP", resource: "task", action: "get (tasks/get, 2025-11-25)", want: [4]string{ok, denied, na, denied}, try: try("2025-11-25", "tasks/get")},
		{frontend: "MCP", resource: "task", action: "get (tasks/get, 2026-07-28 extension)", want: [4]string{ok, denied, na, denied}, try: try("", "tasks/get")},
		{frontend: "MCP", resource: "task", action: "cancel (tasks/cancel, 2025-11-25)", want: [4]string{ok, denied, na, denied}, try: try("2025-11-25", "tasks/cancel")},
	}
}
