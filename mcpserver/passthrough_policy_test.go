package mcpserver_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/mcpserver"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// policyEnv is the pass-through to an upstream with tools, resources and
// prompts, allow-lists on it, two users (alice's tool access denies
// up@write), and the orchestrator whose policy and audit serve it.
type policyEnv struct {
	url string
	o   *orchestrator.Orchestrator
	up  *recordingUpstream // what reached the upstream
}

// newPolicyEnvUp's streamable-HTTP upstream is stateless when stateless is
// set (and so serves 2026-07-28).
func newPolicyEnvUp(t *testing.T, transport string, stateless bool) *policyEnv {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "policy-upstream", Version: "1"}, nil)
	obj := map[string]any{"type": "object"}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	for _, name := range []string{"read", "write", "secret"} {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(name + " ran"), nil
		})
	}
	s.AddTool(&mcp.Tool{Name: "fails", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := text("it broke")
		r.IsError = true
		return r, nil
	})
	for _, uri := range []string{"file:///pub/a.txt", "file:///priv/key"} {
		s.AddResource(&mcp.Resource{URI: uri, Name: uri}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "content of " + uri}}}, nil
		})
	}
	for _, name := range []string{"greet", "leak"} {
		s.AddPrompt(&mcp.Prompt{Name: name}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: name}}}}, nil
		})
	}
	rec := &recordingUpstream{}
	var sdk http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	if transport == mcptools.TransportSSE {
		sdk = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.bodies = append(rec.bodies, string(body))
		rec.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ts := srv.URL
	set, err := mcptools.New([]mcptools.ServerConfig{{Name: "up", Transport: transport, URL: ts,
		AllowTools: []string{"read", "write", "fails"}, AllowResources: []string{"file:///pub/*"}, AllowPrompts: []string{"greet"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	reg := orchestrator.NewRegistry("", nil)
	reg.SetAccess(accessRules{"alice": {Denied: []string{"up@write"}}})
	reg.SetPolicy(orchestrator.PolicyOptions{AllowLists: set})
	o := orchestrator.New(orchestratortest.NewMemStore(), orchestratortest.Models{}, reg, nil)
	t.Cleanup(func() { _ = o.Close(context.Background()) })
	_, url := serve(t, o, &mcpserver.Options{Upstreams: set}, map[string]string{"alice": "alice", "bob": "bob"})
	return &policyEnv{url: url + "/wunder/mcp/up", o: o, up: rec}
}

type accessRules map[string]*orchestrator.ToolAccess

func (a accessRules) ToolAccess(_ context.Context, u string) (*orchestrator.ToolAccess, error) {
	return a[u], nil
}

// sessionAt is a session of user whose client asks for protocol version.
func (e *policyEnv) sessionAt(t *testing.T, user, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: e.url, HTTPClient: &http.Client{Transport: bearer(user)}},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func names[T any](items []T, name func(T) string) []string {
	var out []string
	for _, it := range items {
		out = append(out, name(it))
	}
	slices.Sort(out)
	return out
}

// The pass-through lists what the policy lets the session's user see, and
// refuses, without forwarding, a call, read or get of anything else; over
// an upstream reached by HTTP as over one reached by a connection. Every
// tools/call is audited.
//
// It holds for every revision on either side: a 2026-07-28 client (no
// session: the gateway holds the upstream's where it needs one) and a
// 2025-11-25 client, in front of a stateless upstream (2026-07-28) and a
// session-based one (2025-11-25 at most over HTTP), and over SSE.
func TestPassThroughPolicy(t *testing.T) {
	for _, c := range []struct {
		name, transport, client string
		stateless               bool
	}{
		{"http/2025-client/stateful-upstream", mcptools.TransportStreamableHTTP, "2025-11-25", false},
		{"http/2025-client/stateless-upstream", mcptools.TransportStreamableHTTP, "2025-11-25", true},
		{"http/2026-client/stateful-upstream", mcptools.TransportStreamableHTTP, "2026-07-28", false},
		{"http/2026-client/stateless-upstream", mcptools.TransportStreamableHTTP, "2026-07-28", true},
		{"sse/2025-client", mcptools.TransportSSE, "2025-11-25", false},
		{"sse/2026-client", mcptools.TransportSSE, "2026-07-28", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newPolicyEnvUp(t, c.transport, c.stateless)
			rec := e.up
			alice, bob := e.sessionAt(t, "alice", c.client), e.sessionAt(t, "bob", c.client)
			for _, cs := range []*mcp.ClientSession{alice, bob} {
				if got := cs.InitializeResult().ProtocolVersion; got != c.client {
					t.Fatalf("the client's revision through the pass-through = %s, want %s", got, c.client)
				}
				if stateless := cs.ID() == ""; stateless != (c.client >= "2026-07-28") {
					t.Errorf("session id %q for a %s client", cs.ID(), c.client)
				}
			}
			tools := func(cs *mcp.ClientSession) []string {
				res, err := cs.ListTools(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				return names(res.Tools, func(x *mcp.Tool) string { return x.Name })
			}
			if got, want := tools(alice), []string{"fails", "read"}; !slices.Equal(got, want) {
				t.Errorf("alice's tools/list = %v, want %v (write denied to her, secret not in allow_tools)", got, want)
			}
			if got, want := tools(bob), []string{"fails", "read", "write"}; !slices.Equal(got, want) {
				t.Errorf("bob's tools/list = %v, want %v", got, want)
			}
			call := func(cs *mcp.ClientSession, tool string) (*mcp.CallToolResult, error) {
				return cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"k": "v"}})
			}
			for _, c := range []struct {
				cs       *mcp.ClientSession
				tool, by string
			}{{alice, "write", "denied_tools"}, {alice, "secret", "allow_tools"}, {bob, "secret", "allow_tools"}} {
				_, err := call(c.cs, c.tool)
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != -32001 || !strings.Contains(rpcErr.Message, c.by) {
					t.Errorf("a call of hidden %s: %v; want -32001 naming %s", c.tool, err, c.by)
				}
			}
			if got := rec.received(`"name":"secret"`); len(got) != 0 {
				t.Errorf("a refused call reached the upstream: %q", got)
			}
			if got := rec.received(`"name":"write"`); len(got) != 0 {
				t.Errorf("alice's refused write reached the upstream: %q", got)
			}
			if res, err := call(bob, "write"); err != nil || res.IsError {
				t.Fatalf("bob's write: %v %+v", err, res)
			}
			if res, err := call(alice, "fails"); err != nil || !res.IsError {
				t.Fatalf("fails: %v %+v", err, res)
			}

			// Resources and prompts: allow_resources and allow_prompts.
			rl, err := alice.ListResources(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(rl.Resources, func(r *mcp.Resource) string { return r.URI }); !slices.Equal(got, []string{"file:///pub/a.txt"}) {
				t.Errorf("resources/list = %v", got)
			}
			if _, err := alice.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "file:///priv/key"}); err == nil || !strings.Contains(err.Error(), "allow_resources") {
				t.Errorf("reading a hidden resource: %v", err)
			}
			if r, err := alice.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "file:///pub/a.txt"}); err != nil || r.Contents[0].Text != "content of file:///pub/a.txt" {
				t.Errorf("reading an allowed resource: %v %+v", err, r)
			}
			pl, err := bob.ListPrompts(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(pl.Prompts, func(p *mcp.Prompt) string { return p.Name }); !slices.Equal(got, []string{"greet"}) {
				t.Errorf("prompts/list = %v", got)
			}
			if _, err := bob.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "leak"}); err == nil || !strings.Contains(err.Error(), "allow_prompts") {
				t.Errorf("getting a hidden prompt: %v", err)
			}
			if got := rec.received(`file:///priv/key`); len(got) != 0 {
				t.Errorf("a refused read reached the upstream: %q", got)
			}

			// The audit: each tools/call, with its outcome and reason.
			recs, err := e.o.Audit(t.Context(), orchestrator.AuditFilter{Via: orchestrator.ViaPassthrough})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				if r.FrontEnd != orchestrator.FrontendMCP || (r.Outcome == orchestrator.OutcomeDenied) != (r.Reason != "") {
					t.Errorf("record %+v", r)
				}
				got = append(got, r.UserID+" "+r.Tool+" "+r.Outcome)
			}
			slices.Sort(got)
			want := []string{"alice up@fails error", "alice up@secret denied", "alice up@write denied", "bob up@secret denied", "bob up@write allowed"}
			if !slices.Equal(got, want) {
				t.Errorf("audit = %q, want %q", got, want)
			}

			// How the upstream was spoken to: a 2026 client's requests go
			// unchanged to an upstream that serves 2026-07-28, and on the
			// gateway's own session (one per user, opened with its own
			// initialize, without the SEP-2575 _meta keys) to one that
			// does not; a 2025 client's on its own session.
			inits := rec.received(`"method":"initialize"`)
			gateways := rec.received(`"clientInfo":{"name":"wunder"`)
			modern := rec.received(`"io.modelcontextprotocol/protocolVersion"`)
			switch {
			case c.client < "2026-07-28":
				if len(inits) != 2 || len(gateways) != 0 {
					t.Errorf("a 2025 client's sessions: %d initialize upstream, %d of the gateway; want the clients' 2", len(inits), len(gateways))
				}
			case c.stateless:
				if len(inits) != 0 || len(modern) == 0 {
					t.Errorf("2026 to a stateless upstream: %d initialize, %d 2026 requests; want none and all", len(inits), len(modern))
				}
			default:
				// Only the gateway's question, once per route, over HTTP:
				// does the upstream serve 2026-07-28 itself?
				asked := 0
				if c.transport == mcptools.TransportStreamableHTTP {
					asked = 1
				}
				probes := rec.received(`"method":"server/discover"`)
				if len(inits) != 2 || len(gateways) != 2 || len(modern) != asked || len(probes) != asked {
					t.Errorf("2026 to a session upstream: %d initialize (%d the gateway's), %d with 2026 _meta (%d server/discover); want 2, 2, %d (%[5]d)",
						len(inits), len(gateways), len(modern), len(probes), asked)
				}
			}
		})
	}
}
