package mcptools_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/adapters/mcptools"
)

// elicitingServer's tool "ask" elicits a form and reports the answer.
func elicitingServer(t *testing.T, schema map[string]any) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "asking", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "ask", Description: "asks the user", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "who are you?", RequestedSchema: schema})
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "elicit: " + err.Error()}}}, nil
			}
			b, _ := json.Marshal(res)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

func askWith(t *testing.T, policy string, schema map[string]any) (string, bool) {
	t.Helper()
	s, err := mcptools.New([]mcptools.ServerConfig{{Name: "a", Transport: mcptools.TransportStreamableHTTP, URL: elicitingServer(t, schema)}},
		&mcptools.Options{Elicitation: policy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	refreshAll(t, s)
	res := call(t, toolByName(t, s, "a@ask"), `{}`, nil)
	return res.Content, res.IsError
}

var withDefaults = map[string]any{"type": "object", "properties": map[string]any{
	"name": map[string]any{"type": "string", "default": "John Doe"},
	"age":  map[string]any{"type": "integer", "default": 30},
	"note": map[string]any{"type": "string"},
}, "required": []any{"name"}}

func TestElicitationPolicies(t *testing.T) {
	t.Parallel()
	if text, isErr := askWith(t, mcptools.ElicitDefaults, withDefaults); isErr || text != `{"action":"accept","content":{"age":30,"name":"John Doe"}}` {
		t.Errorf("defaults: %s (error %v)", text, isErr)
	}
	noDefault := map[string]any{"type": "object", "properties": map[string]any{"note": map[string]any{"type": "string"}}, "required": []any{"note"}}
	if text, isErr := askWith(t, mcptools.ElicitDefaults, noDefault); isErr || text != `{"action":"decline"}` {
		t.Errorf("defaults, a required field without one: %s (error %v)", text, isErr)
	}
	// The default policy advertises no elicitation: the server's request
	// fails on its side, and the tool reports it.
	if text, isErr := askWith(t, "", withDefaults); !isErr {
		t.Errorf("decline: %s, want the server to fail to elicit", text)
	}
	if _, err := mcptools.New(nil, &mcptools.Options{Elicitation: "ask"}); err == nil {
		t.Error("unknown policy accepted")
	}
}
