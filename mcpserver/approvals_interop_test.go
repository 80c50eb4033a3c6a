package mcpserver_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/testutil/mcpnpm"
	"github.com/wunder/wunder/mcpserver"
	"github.com/wunder/wunder/orchestrator"
)

// tsElicit runs testdata/mcp/elicit_client.mjs: a client of the official
// TypeScript SDK (pinned) that declares elicitation, calls tool and answers
// with answers; it returns the elicitation requests and the tool's result.
func tsElicit(t *testing.T, url, tool string, args map[string]any, answers ...map[string]any) (asked []map[string]any, structured mcpserver.RunOutput, isError bool) {
	t.Helper()
	node := mcpnpm.Node(t)
	a, _ := json.Marshal(args)
	ans, _ := json.Marshal(answers)
	cmd := exec.Command(node, filepath.Join(mcpnpm.Dir(t), "elicit_client.mjs"), url, tool, string(a), string(ans))
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("elicit_client.mjs: %v\n%s%s", err, out, stderr)
	}
	var got struct {
		Asked  []map[string]any `json:"asked"`
		Result struct {
			IsError           bool                `json:"isError"`
			StructuredContent mcpserver.RunOutput `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("elicit_client.mjs printed %s: %v", out, err)
	}
	return got.Asked, got.Result.StructuredContent, got.Result.IsError
}

// Interop: the official TypeScript SDK client, which refuses an
// elicitation request whose requestedSchema is not the spec's flat object
// of primitives, approves one call and edits another (param_required: the
// missing property is a form field).
func TestTypeScriptClientElicitation(t *testing.T) {
	e := newApprovalEnv(t, mcpserver.Options{}, deployTurns(`{"env":"prod"}`, `{}`)...)
	asked, out, isError := tsElicit(t, e.url+"/wunder/mcp", "wunder__run", map[string]any{"task": "deploy twice", "tool_names": []string{"deploy"}},
		map[string]any{"action": "accept", "content": map[string]any{"decision": "approve"}},
		map[string]any{"action": "accept", "content": map[string]any{"decision": "edit", "env": "qa", "reason": "qa first"}})
	if isError || out.State != orchestrator.RunFinished || out.Answer != "all done" {
		t.Fatalf("result %+v (error %v)", out, isError)
	}
	if got := e.deploy.called(); !slices.Equal(got, []string{`{"env":"prod"}`, `{"env":"qa"}`}) {
		t.Errorf("deploy ran %q", got)
	}
	if len(asked) != 2 {
		t.Fatalf("%d elicitations, want 2", len(asked))
	}
	if msg, _ := asked[0]["message"].(string); !strings.Contains(msg, "deploy") {
		t.Errorf("first message: %q", msg)
	}
}

// Interop: decline through the TypeScript client rejects the call; the
// run answers without it.
func TestTypeScriptClientDecline(t *testing.T) {
	e := newApprovalEnv(t, mcpserver.Options{}, deployTurns(`{"env":"prod"}`)...)
	_, out, isError := tsElicit(t, e.url+"/wunder/mcp", "wunder__run", map[string]any{"task": "deploy it", "tool_names": []string{"deploy"}},
		map[string]any{"action": "decline"})
	if isError || out.State != orchestrator.RunFinished || len(e.deploy.called()) != 0 {
		t.Fatalf("result %+v (error %v), deploy %q", out, isError, e.deploy.called())
	}
}
