package main

import (
	"context"
	"errors"
	"net/http"
	"strings"
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
		}}, f.mcpInputRequiredRow()}
}

// mcpInputRequiredRow is the row of the input-required retry (protocol
// 2026-07-28): alice's wunder__run calls answer input requests for their
// approvals and a requestState naming the run; she retries the first with
// her answer, the others retry the second with it. The state is no
// credential: the run is looked up as the caller.
func (f *fixture) mcpInputRequiredRow() matrixRow {
	var once sync.Once
	var waiting [2]*mcp.CallToolParams // the retries, answered "approve"
	manual := &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("not asked here")
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	}
	connect := func(t *testing.T, hdr map[string]string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "matrix", Version: "1"}, manual).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: f.s.url + "/wunder/mcp", HTTPClient: &http.Client{Transport: headerRT{hdr: hdr}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	setup := func(t *testing.T) {
		once.Do(func() {
			cs := connect(t, bearerOf(f.alice))
			defer cs.Close()
			for i := range waiting {
				call := &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": "write a note", "tool_names": []string{"write_file"}, "approval_mode": "suggest"}}
				res, err := cs.CallTool(t.Context(), call)
				if err != nil || !res.NeedsInput() || len(res.InputRequests) != 1 {
					t.Fatalf("alice's MCP run %d asks for no input: %v %+v", i, err, res)
				}
				retry := *call
				retry.RequestState, retry.InputResponses = res.RequestState, mcp.InputResponseMap{}
				for id := range res.InputRequests {
					retry.InputResponses[id] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "approve"}}
				}
				waiting[i] = &retry
			}
		})
	}
	return matrixRow{frontend: "MCP", resource: "approval", action: "decide (input-required retry, 2026-07-28)", want: [4]string{ok, denied, na, denied},
		try: func(t *testing.T, c caller) string {
			if c.names != "" && c.hdr["X-API-Key"] == "" {
				return na
			}
			setup(t)
			retry := waiting[1]
			if c.name == "alice" {
				retry = waiting[0]
			}
			cs := connect(t, c.hdr)
			defer cs.Close()
			res, err := cs.CallTool(t.Context(), retry)
			switch {
			case err != nil && strings.Contains(err.Error(), "not found"):
				return denied
			case err != nil:
				return "error: " + err.Error()
			case res.IsError || res.NeedsInput():
				return "tool error: " + resultText(res)
			}
			return ok
		}}
}
