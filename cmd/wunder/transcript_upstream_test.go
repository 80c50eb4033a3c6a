package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The upstream servers of the transcripts, in process on httptest. A
// case's config.yaml names one by placeholder (as an mcp.servers URL or an
// a2a.services endpoint), and the harness starts it before the gateway
// reads the configuration:
//
//   - <upstream>: a go-sdk v1.8.0 MCP server (the pass-through cases of
//     testdata/transcripts/mcp-passthrough) served with sessions, as a
//     2025-11-25 server is;
//   - <upstream-stateless>: the same served without sessions (2026-07-28);
//   - <mcp-apps>: a go-sdk MCP server with an MCP App (appUpstream in
//     mcp_apps_test.go; testdata/transcripts/mcp-apps): show_weather names
//     the page ui://weather/view.html, refresh_weather is for the app
//     alone, explain_weather for the model alone;
//   - <a2a-peer>: an a2a-go v2 agent (startPassPeer in
//     a2a_passthrough_test.go; testdata/transcripts/a2a-passthrough): it
//     answers "echo: <text>", leaves a task "wait" input-required, and
//     wants the bearer token peer-secret.
//
// The <upstream> server's tools answer the same way every time, so that what the
// gateway relays can be pinned letter by letter:
//
//   - echo: a text of its arguments;
//   - secret: never reached in a case whose allow_tools hides it;
//   - broken: a tool error (a result with isError);
//   - fail: a JSON-RPC error of the upstream's own, code -32050 with data;
//   - ask: asks its client's name (elicitation/create, a 2025-11-25
//     upstream's request of its own) and greets it, or says what the
//     client did instead.
var transcriptUpstreams = map[string]func(*testing.T) string{
	"<upstream>":           func(t *testing.T) string { return transcriptUpstream(t, false) },
	"<upstream-stateless>": func(t *testing.T) string { return transcriptUpstream(t, true) },
	"<mcp-apps>":           appUpstream,
	"<a2a-peer>":           func(t *testing.T) string { return startPassPeer(t).url },
}

// failCode is the code of the upstream's own JSON-RPC error (in the
// implementation-defined server range).
const failCode = -32050

// withUpstreams replaces each upstream placeholder of a case's
// config.yaml with the URL of a server started for the case.
func withUpstreams(t *testing.T, cfg []byte) []byte {
	s := string(cfg)
	for name, start := range transcriptUpstreams {
		if strings.Contains(s, name) {
			s = strings.ReplaceAll(s, name, start(t))
		}
	}
	return []byte(s)
}

// transcriptUpstream serves the upstream and returns its URL.
func transcriptUpstream(t *testing.T, stateless bool) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "upstream", Title: "transcript upstream", Version: "1.0.0"}, nil)
	obj := map[string]any{"type": "object"}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	s.AddTool(&mcp.Tool{Name: "echo", Description: "says its arguments back", InputSchema: obj},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("echo " + string(req.Params.Arguments)), nil
		})
	s.AddTool(&mcp.Tool{Name: "secret", Description: "a tool the policy hides", InputSchema: obj},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("the secret"), nil
		})
	s.AddTool(&mcp.Tool{Name: "broken", Description: "fails as a tool", InputSchema: obj},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var res mcp.CallToolResult
			res.SetError(errors.New("the disk is full"))
			return &res, nil
		})
	s.AddTool(&mcp.Tool{Name: "ask", Description: "asks the client's name", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
			switch {
			case err != nil:
				return text("not asked: " + err.Error()), nil
			case res.Action != "accept":
				return text("the client chose " + res.Action), nil
			}
			return text(fmt.Sprintf("hello %v", res.Content["name"])), nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", Description: "fails as a server", InputSchema: obj},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: failCode, Message: "the upstream's database is down", Data: []byte(`{"retry":false}`)}
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: stateless})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}
