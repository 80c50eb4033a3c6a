package mcpserver_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/mcpserver"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// userToolset offers alice one more tool than anybody else.
type userToolset struct{}

func (userToolset) Name() string { return "per-user" }

func (userToolset) Tools(_ context.Context, user string) ([]orchestrator.Tool, error) {
	if user != "alice" {
		return nil, nil
	}
	return []orchestrator.Tool{orchestratortest.NewTool("vault@secret", true, func(_ context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		return &orchestrator.ToolResult{Content: "secret of " + inv.UserID}, nil
	})}, nil
}

// newCatalogEnv serves /wunder/mcp with the catalog exposed; with auth, the
// tokens "alice" and "bob" authenticate as those users, else everybody is
// the default user.
func newCatalogEnv(t *testing.T, withAuth bool) (*orchestrator.Orchestrator, string) {
	t.Helper()
	return newCatalogEnvPaged(t, withAuth, 0)
}

// newCatalogEnvPaged is newCatalogEnv with pages of tools/list of
// pageSize tools (0: the default).
func newCatalogEnvPaged(t *testing.T, withAuth bool, pageSize int) (*orchestrator.Orchestrator, string) {
	t.Helper()
	self := orchestratortest.NewTool(mcpserver.RunTool, true, func(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		return &orchestrator.ToolResult{Content: "recursed"}, nil
	})
	stream := orchestratortest.NewTool("fs@grep", true, func(_ context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		inv.Output("stdout", "line 1")
		inv.Output("stdout", "line 2")
		return &orchestrator.ToolResult{Content: "2 matches for " + string(inv.Arguments), Data: map[string]int{"matches": 2}}, nil
	})
	fails := orchestratortest.NewTool("fs@rm", false, func(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		return nil, errors.New("permission denied by the workspace")
	})
	fails.S.Description = "" // every tool still gets a description
	reg := orchestrator.NewRegistry("", nil,
		orchestrator.StaticToolset{SetName: "x", List: []orchestrator.Tool{self, stream, fails}}, userToolset{})
	models := orchestratortest.Models{Model: orchestratortest.NewScriptedModel(), Settings: orchestrator.ModelSettings{Name: "scripted", ToolCallMode: orchestrator.ModeFunctionCall, MaxRounds: 2}}
	o := orchestrator.New(orchestratortest.NewMemStore(), models, reg, nil)
	t.Cleanup(func() { _ = o.Close(context.Background()) })
	var tokens map[string]string
	if withAuth {
		tokens = map[string]string{"alice": "alice", "bob": "bob"}
	}
	h, url := serve(t, o, &mcpserver.Options{Catalog: o}, tokens)
	if pageSize > 0 {
		mcpserver.SetToolsPageSize(h, pageSize)
	}
	return o, url + "/wunder/mcp"
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
		names = append(names, tool.Name)
	}
	return names
}

func TestCatalogListIsPerPrincipal(t *testing.T) {
	t.Parallel()
	_, url := newCatalogEnv(t, true)
	alice := connect(t, url, &http.Client{Transport: bearer("alice")}, nil)
	bob := connect(t, url, &http.Client{Transport: bearer("bob")}, nil)
	if got, want := toolNames(t, alice), []string{"wunder__approve", "wunder__run", "fs__grep", "fs__rm", "vault__secret"}; !slices.Equal(got, want) {
		t.Errorf("alice's tools = %q, want %q (wunder@run and wunder@approve once, no final_response)", got, want)
	}
	if got, want := toolNames(t, bob), []string{"wunder__approve", "wunder__run", "fs__grep", "fs__rm"}; !slices.Equal(got, want) {
		t.Errorf("bob's tools = %q, want %q", got, want)
	}
	// Calls run as the caller: bob cannot reach alice's tool.
	res, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: "vault__secret", Arguments: map[string]any{}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "secret of alice" {
		t.Fatalf("alice's call: %v %+v", err, res)
	}
	_, err = bob.CallTool(context.Background(), &mcp.CallToolParams{Name: "vault__secret", Arguments: map[string]any{}})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 {
		t.Fatalf("bob's call of alice's tool: %v, want JSON-RPC -32602", err)
	}
}

func TestCatalogCallProgressAndErrors(t *testing.T) {
	t.Parallel()
	o, url := newCatalogEnv(t, true)
	progress := make(chan string, 8)
	cs := connect(t, url, &http.Client{Transport: bearer("bob")}, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		progress <- r.Params.Message
	}})
	params := &mcp.CallToolParams{Name: "fs__grep", Arguments: map[string]any{"q": "x"}}
	params.SetProgressToken("g1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("fs__grep: %v %+v", err, res)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; text != `2 matches for {"q":"x"}` {
		t.Errorf("text = %q", text)
	}
	if sc, _ := res.StructuredContent.(map[string]any); sc["matches"] != float64(2) {
		t.Errorf("structured content = %#v", res.StructuredContent)
	}
	// The client hands notifications to its handler asynchronously: wait
	// for both (the test's deadline bounds the wait).
	if got := []string{<-progress, <-progress}; !slices.Equal(got, []string{"line 1", "line 2"}) {
		t.Errorf("progress = %q", got)
	}

	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fs__rm", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "permission denied by the workspace") {
		t.Fatalf("failing tool: %v %+v", err, res)
	}
	for _, name := range []string{"nope", "final_response"} {
		var rpcErr *jsonrpc.Error
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}}); !errors.As(err, &rpcErr) {
			t.Errorf("%s: %v, want a JSON-RPC error", name, err)
		}
	}
	// Each call is audited as the MCP catalog's: the grep allowed, the rm
	// an error.
	recs, err := o.Audit(context.Background(), orchestrator.AuditFilter{UserID: "bob", Via: orchestrator.ViaCatalog})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Tool+" "+r.Outcome+" "+r.FrontEnd)
	}
	if want := []string{"fs@rm error mcp", "fs@grep allowed mcp"}; !slices.Equal(got, want) {
		t.Errorf("audit = %q, want %q", got, want)
	}
	// wunder@run is still served by the SDK (here: a protocol error for a
	// missing task), never by the catalog's own wunder@run.
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": ""}})
	if err == nil && (res == nil || !res.IsError) {
		t.Fatalf("wunder__run with no task: %+v", res)
	}
}

func TestCatalogLogNotifications(t *testing.T) {
	t.Parallel()
	_, url := newCatalogEnv(t, true)
	logc := make(chan any, 8)
	// logging/setLevel is a session's (2026-07-28 has no such method).
	cs := connectAt(t, url, &http.Client{Transport: bearer("bob")}, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
		logc <- r.Params.Data
	}}, legacy)
	//lint:ignore SA1019 tests the catalog's MCP log notifications (SEP-2577 deprecation, still served)
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fs__grep", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	logs := []any{<-logc, <-logc}
	if d, _ := logs[0].(map[string]any); d["delta"] != "line 1" || d["stream"] != "stdout" {
		t.Errorf("first log = %#v", logs[0])
	}
}
