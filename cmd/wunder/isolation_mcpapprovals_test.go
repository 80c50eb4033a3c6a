package main

import (
	"net/http"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpApprovalRows are the isolation matrix's row of wunder__approve. Alice
// starts two runs with wunder__run (a client without elicitation, so each
// call answers with the approval it waits for: approval_mode suggest makes
// write_file ask); she decides the first, and the others try the second,
// still pending. MCP acts as the token's user: bob's token and the API key
// (mcp.server.user_id) find neither.
func (f *fixture) mcpApprovalRows() []matrixRow {
	var once sync.Once
	var waiting [2]mcpOutput
	setup := func(t *testing.T) {
		once.Do(func() {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "matrix", Version: "1"}, nil).Connect(t.Context(),
				&mcp.StreamableClientTransport{Endpoint: f.s.url + "/wunder/mcp", HTTPClient: &http.Client{Transport: headerRT{hdr: bearerOf(f.alice)}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			for i := range waiting {
				res, out := mcpCallTool(t, cs, "wunder__run", map[string]any{"task": "write a note", "tool_names": []string{"write_file"}, "approval_mode": "suggest"})
				if res.IsError || out.State != "waiting_approval" || len(out.Approvals) != 1 {
					t.Fatalf("alice's MCP run %d does not wait for one approval: %+v %s", i, out, resultText(res))
				}
				waiting[i] = out
			}
		})
	}
	return []matrixRow{{frontend: "MCP", resource: "approval", action: "decide (wunder__approve)", want: [4]string{ok, denied, na, denied},
		try: func(t *testing.T, c caller) string {
			if c.names != "" && c.hdr["X-API-Key"] == "" {
				return na
			}
			setup(t)
			w := waiting[1]
			if c.name == "alice" {
				w = waiting[0]
			}
			return f.mcpCall(t, c, "wunder__approve", map[string]any{"run_id": w.RunID, "approval_id": w.Approvals[0].ApprovalID, "decision": "approve"})
		}}}
}
