package skills_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/adapters/skills"
	"github.com/wunder/wunder/orchestrator"
)

// memConnector serves every skill MCP server in process: a real go-sdk
// server (tool forecast) reached over in-memory transports.
type memConnector struct {
	connects, releases atomic.Int32
	fail               error
	released           chan string
}

func (c *memConnector) Check(srv skills.MCPServer) error {
	if _, ok := srv.Config["url"].(string); !ok {
		return errors.New("url is required")
	}
	return nil
}

func (c *memConnector) Connect(ctx context.Context, srv skills.MCPServer) ([]orchestrator.Tool, func(), error) {
	c.connects.Add(1)
	if c.fail != nil {
		return nil, nil, c.fail
	}
	server := mcp.NewServer(&mcp.Implementation{Name: srv.Name, Version: "1"}, nil)
	type in struct {
		City string `json:"city"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "forecast", Description: "weather by city"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny in " + a.City}}}, nil, nil
	})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		return nil, nil, err
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return nil, nil, err
	}
	tools := []orchestrator.Tool{&remoteTool{cs: cs, server: srv.Name, name: "forecast"}}
	return tools, func() {
		_ = cs.Close()
		_ = ss.Wait()
		c.releases.Add(1)
		if c.released != nil {
			c.released <- srv.Name
		}
	}, nil
}

type remoteTool struct {
	cs           *mcp.ClientSession
	server, name string
}

func (t *remoteTool) Spec() orchestrator.ToolSpec {
	return orchestrator.ToolSpec{Name: t.server + "@" + t.name, Description: "remote", InputSchema: json.RawMessage(`{"type":"object"}`), Source: orchestrator.SourceMCP}
}

func (t *remoteTool) Call(ctx context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
	res, err := t.cs.CallTool(ctx, &mcp.CallToolParams{Name: t.name, Arguments: inv.Arguments})
	if err != nil {
		return orchestrator.ErrorResult(err.Error()), nil
	}
	return &orchestrator.ToolResult{Content: res.Content[0].(*mcp.TextContent).Text}, nil
}

// weatherSkill brings its own MCP server and the caller's read_file.
const weatherSkill = "---\nname: weather\ndescription: weather reports\ntools: [read_file, nosuch_tool]\n" +
	"mcpServers:\n  wx:\n    transport: streamable-http\n    url: http://127.0.0.1:9/mcp\n---\nUse wx@forecast.\n"

// fakeTool is a tool of the caller's catalog.
type fakeTool struct{ name string }

func (f fakeTool) Spec() orchestrator.ToolSpec {
	return orchestrator.ToolSpec{Name: f.name, Description: "fake", InputSchema: json.RawMessage(`{"type":"object"}`), Source: "builtin"}
}
func (f fakeTool) Call(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
	return &orchestrator.ToolResult{Content: "ok"}, nil
}

func catalog(names ...string) func(string) (orchestrator.Tool, bool) {
	return func(n string) (orchestrator.Tool, bool) {
		if slices.Contains(names, n) {
			return fakeTool{n}, true
		}
		return nil, false
	}
}

func names(tools []orchestrator.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Spec().Name)
	}
	return out
}

// TestSkillBroughtToolsAndMCPOnlyWhileLoaded: a skill's tools and its MCP
// server's tools are offered only while it is loaded; the server is
// connected once for concurrent prompts, and closed when idle.
func TestSkillBroughtToolsAndMCPOnlyWhileLoaded(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "weather", weatherSkill, map[string]string{})
	conn := &memConnector{released: make(chan string, 4)}
	set := skills.New(&skills.Options{Paths: []string{root}, RetentionTurns: 2, MCP: conn, MCPIdle: 60 * time.Millisecond})
	t.Cleanup(func() { _ = set.Close() })
	load := []orchestrator.PastCall{{Turn: 0, Name: "load_skill", Arguments: json.RawMessage(`{"name":"weather"}`)}}
	in := orchestrator.PromptContext{UserID: "bob", Selected: []string{"load_skill"}, Lookup: catalog("read_file", "weather")}

	c, err := set.ContributePrompt(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(c.Tools); !slices.Equal(got, []string{"load_skill"}) || conn.connects.Load() != 0 {
		t.Fatalf("not loaded: tools %v, %d connects", got, conn.connects.Load())
	}

	in.Calls = load
	var wg sync.WaitGroup
	var mu sync.Mutex
	var got []orchestrator.Contribution
	for range 8 {
		wg.Go(func() {
			c, err := set.ContributePrompt(t.Context(), in)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			got = append(got, c)
			mu.Unlock()
		})
	}
	wg.Wait()
	if n := conn.connects.Load(); n != 1 {
		t.Errorf("%d connects for 8 concurrent prompts, want 1", n)
	}
	c = got[0]
	if tools := names(c.Tools); !slices.Contains(tools, "read_file") || !slices.Contains(tools, "wx@forecast") {
		t.Fatalf("loaded: tools %v", tools)
	}
	if !strings.Contains(c.Prompt, "tool nosuch_tool is not available to you") {
		t.Errorf("the prompt does not say what is missing:\n%s", c.Prompt)
	}
	var wx orchestrator.Tool
	for _, tl := range c.Tools {
		if tl.Spec().Name == "wx@forecast" {
			wx = tl
		}
	}
	if res := call(t, wx, "bob", `{"city":"Oslo"}`); res.IsError || res.Content != "sunny in Oslo" {
		t.Errorf("wx@forecast: %+v", res)
	}

	// Past retention the tools are gone, and the idle server is closed.
	in.Turn = 2
	c, _ = set.ContributePrompt(t.Context(), in)
	if tools := names(c.Tools); slices.Contains(tools, "wx@forecast") || slices.Contains(tools, "read_file") {
		t.Errorf("after retention: tools %v", tools)
	}
	select {
	case <-conn.released:
	case <-time.After(5 * time.Second):
		t.Fatal("the idle MCP server was not closed")
	}
	if res := call(t, wx, "bob", `{"city":"Oslo"}`); !res.IsError || !strings.Contains(res.Content, "disconnected") {
		t.Errorf("a call after the close: %+v", res)
	}
	// Loaded again, it connects again.
	in.Turn, in.Calls = 3, append(load, orchestrator.PastCall{Turn: 3, Name: "load_skill", Arguments: json.RawMessage(`{"name":"weather"}`)})
	c, _ = set.ContributePrompt(t.Context(), in)
	if !slices.Contains(names(c.Tools), "wx@forecast") || conn.connects.Load() != 2 {
		t.Errorf("reloaded: tools %v, %d connects", names(c.Tools), conn.connects.Load())
	}
	_ = set.Close()
	if conn.releases.Load() != 2 {
		t.Errorf("%d releases after Close, want 2", conn.releases.Load())
	}
}

// TestSkillMCPNeverShadowsAndFailuresAreTold: a server tool whose name the
// caller's catalog has is left out; a server that fails is said in the
// prompt and not dialled again at once.
func TestSkillMCPNeverShadowsAndFailuresAreTold(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "weather", weatherSkill, map[string]string{})
	conn := &memConnector{}
	set := skills.New(&skills.Options{Paths: []string{root}, MCP: conn})
	t.Cleanup(func() { _ = set.Close() })
	in := orchestrator.PromptContext{UserID: "bob", Selected: []string{"weather"}, Preload: []string{"weather"}, Lookup: catalog("read_file", "wx@forecast", "weather")}
	c, _ := set.ContributePrompt(t.Context(), in)
	if slices.ContainsFunc(c.Tools, func(t orchestrator.Tool) bool { _, ok := t.(fakeTool); return !ok && t.Spec().Name == "wx@forecast" }) ||
		!strings.Contains(c.Prompt, "wx@forecast of MCP server wx is left out") {
		t.Errorf("shadowing: tools %v\n%s", names(c.Tools), c.Prompt)
	}

	failing := &memConnector{fail: fmt.Errorf("connection refused")}
	set2 := skills.New(&skills.Options{Paths: []string{root}, MCP: failing})
	t.Cleanup(func() { _ = set2.Close() })
	in.Lookup = catalog("read_file", "weather")
	for range 3 {
		c, _ = set2.ContributePrompt(t.Context(), in)
	}
	if !strings.Contains(c.Prompt, "MCP server wx is unavailable: connection refused") || failing.connects.Load() != 1 {
		t.Errorf("failure: %d connects\n%s", failing.connects.Load(), c.Prompt)
	}
}

// TestUserSkillsMCPNeedsAllowUserCode: a user's skill connects no MCP
// server unless allow_user_code, never a stdio one (refused at upload).
func TestUserSkillsMCPNeedsAllowUserCode(t *testing.T) {
	for _, allow := range []bool{false, true} {
		st := newShared()
		conn := &memConnector{}
		r := st.replica(t, func(o *skills.Options) { o.MCP, o.AllowUserCode, o.Paths = conn, allow, nil })
		ctx := t.Context()
		zip := zipOf(t, entry{name: "SKILL.md", data: weatherSkill})
		if _, err := r.set.Upload(ctx, "alice", zip); err != nil {
			t.Fatal(err)
		}
		c, _ := r.set.ContributePrompt(ctx, orchestrator.PromptContext{UserID: "alice", Preload: []string{"alice@weather"}})
		has := slices.Contains(names(c.Tools), "wx@forecast")
		if has != allow || (!allow && !strings.Contains(c.Prompt, "allow_user_code is off")) {
			t.Errorf("allow_user_code=%v: tools %v\n%s", allow, names(c.Tools), c.Prompt)
		}
		stdio := strings.Replace(weatherSkill, "transport: streamable-http\n    url: http://127.0.0.1:9/mcp", "transport: stdio\n    command: /bin/sh", 1)
		if _, err := r.set.Upload(ctx, "alice", zipOf(t, entry{name: "SKILL.md", data: stdio})); !errors.Is(err, orchestrator.ErrInvalidArgument) ||
			!strings.Contains(err.Error(), "stdio") {
			t.Errorf("a user's stdio server: %v", err)
		}
		noURL := strings.Replace(weatherSkill, "    url: http://127.0.0.1:9/mcp\n", "", 1)
		if _, err := r.set.Upload(ctx, "", zipOf(t, entry{name: "SKILL.md", data: noURL})); !errors.Is(err, orchestrator.ErrInvalidArgument) ||
			!strings.Contains(err.Error(), "url is required") {
			t.Errorf("a server the connector refuses: %v", err)
		}
	}
}

// TestToolRuleAppliesToLoadSkill: a skill the caller's catalog lacks (their
// tool rule forbids it) is not offered by load_skill, nor preloaded.
func TestToolRuleAppliesToLoadSkill(t *testing.T) {
	set := skills.New(&skills.Options{Paths: []string{repoSkills}})
	c, _ := set.ContributePrompt(t.Context(), orchestrator.PromptContext{UserID: "bob", Selected: []string{"load_skill"},
		Preload: []string{"data-report"}, Lookup: catalog("load_skill", "code-review")})
	if !strings.Contains(c.Prompt, "- code-review: ") || strings.Contains(c.Prompt, "data-report") || strings.Contains(c.Prompt, "chinese-writing") {
		t.Errorf("offered beyond the caller's catalog:\n%s", c.Prompt)
	}
}
