package builtin

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// TestToolsetContract runs the shared toolset suite on the built-in tools,
// with a per-user isolation check: a file alice writes is not bob's.
func TestToolsetContract(t *testing.T) {
	orchestratortest.RunToolsetTests(t, func(t *testing.T) orchestrator.Toolset {
		return newTestSet(t, Options{AllowCommands: []string{"python3"}})
	}, orchestratortest.WithMinTools(5),
		orchestratortest.WithBlockingCall("execute_command", json.RawMessage(`{"command":"python3 -u -c \"print('ready'); import time; time.sleep(120)\""}`)),
		orchestratortest.WithIsolation(func(t *testing.T, ts orchestrator.Toolset, a, b string) {
			call := func(user, name, args string) *orchestrator.ToolResult {
				t.Helper()
				tools, err := ts.Tools(context.Background(), user)
				if err != nil {
					t.Fatal(err)
				}
				for _, tl := range tools {
					if tl.Spec().Name == name {
						res, err := tl.Call(context.Background(), &orchestrator.ToolInvocation{UserID: user, Arguments: json.RawMessage(args),
							Output: func(string, string) {}, Emit: func(string, any) {}})
						if err != nil {
							t.Fatal(err)
						}
						return res
					}
				}
				t.Fatalf("no tool %s", name)
				return nil
			}
			if res := call(a, "write_file", `{"path":"secret.txt","content":"only alice"}`); res.IsError {
				t.Fatalf("write_file: %s", res.Content)
			}
			if res := call(b, "read_file", `{"path":"secret.txt"}`); !res.IsError {
				t.Errorf("bob reads alice's file: %q", res.Content)
			}
		}))
}
