package mcpserver_test

import (
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/mcpserver"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// /wunder/mcp declares neither prompts nor (without MCP Apps) resources,
// and answers their methods as not found, at either revision: go-sdk
// would answer empty lists, and a client would take the server to offer
// what it says it does not.
func TestUndeclaredCapabilitiesAreNotServed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{}, orchestratortest.Turn{Content: "ok"})
	for _, version := range []string{"", legacy} {
		cs := connectAt(t, e.url+"/wunder/mcp", nil, nil, version)
		if caps := cs.InitializeResult().Capabilities; caps.Prompts != nil || caps.Resources != nil {
			t.Errorf("revision %q: declares prompts %v, resources %v", version, caps.Prompts, caps.Resources)
		}
		for name, call := range map[string]func() error{
			"prompts/list":   func() error { _, err := cs.ListPrompts(t.Context(), nil); return err },
			"prompts/get":    func() error { _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "x"}); return err },
			"resources/list": func() error { _, err := cs.ListResources(t.Context(), nil); return err },
			"resources/read": func() error {
				_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "file:///x"})
				return err
			},
		} {
			var rpcErr *jsonrpc.Error
			if err := call(); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound {
				t.Errorf("revision %q: %s = %v; want method not found (-32601)", version, name, err)
			}
		}
	}
}
