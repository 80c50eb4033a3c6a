package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/mcpserver"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

type env struct {
	model *orchestratortest.ScriptedModel
	o     *orchestrator.Orchestrator
	h     *mcpserver.Handler
	url   string
}

func newEnv(t testing.TB, opts mcpserver.Options, turns ...orchestratortest.Turn) *env {
	t.Helper()
	return newEnvTokens(t, opts, nil, turns...)
}

// newEnvTokens is newEnv behind a stand-in gateway that knows tokens (see
// serve).
func newEnvTokens(t testing.TB, opts mcpserver.Options, tokens map[string]string, turns ...orchestratortest.Turn) *env {
	t.Helper()
	e := &env{model: orchestratortest.NewScriptedModel(turns...)}
	models := orchestratortest.Models{Model: e.model, Settings: orchestrator.ModelSettings{Name: "scripted", ToolCallMode: orchestrator.ModeFunctionCall, MaxRounds: 5, Stream: true}}
	// wunder@run is in the catalog (as if a tool source offered it), so the
	// test can see that the run it starts never gets it.
	self := orchestratortest.NewTool(mcpserver.RunTool, true, func(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		return &orchestrator.ToolResult{Content: "recursed"}, nil
	})
	reg := orchestrator.NewRegistry("", nil, orchestrator.StaticToolset{SetName: "x", List: []orchestrator.Tool{self}})
	e.o = orchestrator.New(orchestratortest.NewMemStore(), models, reg, nil)
	t.Cleanup(func() { _ = e.o.Close(context.Background()) })
	e.h, e.url = serve(t, e.o, &opts, tokens)
	return e
}

// serve mounts the front-end over o on a test server, as the gateway does:
// its paths behind a stand-in for the gateway's authenticator, which puts
// a principal on the context. With tokens, a bearer token names its user
// and anything else is 401 with the handler's challenge; without, every
// request is the anonymous local operator (a server with no API key).
func serve(t testing.TB, o *orchestrator.Orchestrator, opts *mcpserver.Options, tokens map[string]string) (*mcpserver.Handler, string) {
	t.Helper()
	h := mcpserver.New(o, opts)
	mux := http.NewServeMux()
	for _, p := range h.Paths() {
		mux.Handle(p, asGateway(h, tokens))
	}
	for _, p := range h.PublicPaths() {
		mux.Handle(p, h)
	}
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	t.Cleanup(h.Close)
	return h, ts.URL
}

// asGateway stands in for the gateway's authenticator in front of h.
func asGateway(h *mcpserver.Handler, tokens map[string]string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := &orchestrator.Principal{Kind: orchestrator.CredentialAnonymous}
		if tokens != nil {
			tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			user, ok := tokens[tok]
			if !ok {
				w.Header().Set("WWW-Authenticate", h.Challenge(r))
				http.Error(w, "unauthenticated", http.StatusUnauthorized)
				return
			}
			p = &orchestrator.Principal{UserID: user, Roles: []string{orchestrator.UserRoleUser}, Kind: orchestrator.CredentialToken}
		}
		h.ServeHTTP(w, r.WithContext(orchestrator.WithPrincipal(r.Context(), p)))
	})
}

// connectSession is connect for a client of 2025-11-25, the newest
// revision with sessions (a go-sdk v1.8.0 client asks for 2026-07-28,
// which has none).
func connectSession(t testing.TB, url string, hc *http.Client, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectAt(t, url, hc, opts, legacy)
}

// connect connects a go-sdk client as it connects by default: at revision
// 2026-07-28 (server/discover, no session) where the server offers it.
func connect(t testing.TB, url string, hc *http.Client, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectAt(t, url, hc, opts, "")
}

// legacy is the newest revision with sessions (initialize, Mcp-Session-Id,
// requests from the server such as elicitation).
const legacy = "2025-11-25"

// connectAt connects a go-sdk client asking for revision version ("": the
// SDK's latest).
func connectAt(t testing.TB, url string, hc *http.Client, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestRunTool(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{}, orchestratortest.Turn{Content: "the answer", Usage: &orchestrator.Usage{InputTokens: 3, OutputTokens: 2, TotalTokens: 5}})
	progress := make(chan string, 64)
	cs := connect(t, e.url+"/wunder/mcp", nil, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		select {
		case progress <- r.Params.Message:
		default:
		}
	}})
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"wunder__approve", "wunder__run"}) {
		t.Fatalf("tools = %q, want wunder__approve and wunder__run", names)
	}
	params := &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": "hello", "tool_names": []string{"final_response"}}}
	params.SetProgressToken("p1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("result is an error: %+v", res.Content)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out mcpserver.RunOutput
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if out.Answer != "the answer" || out.SessionID == "" || out.RunID == "" || out.Usage.TotalTokens != 5 {
		t.Errorf("output = %+v", out)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, `"answer":"the answer"`) {
		t.Errorf("text = %s", text)
	}
	for _, req := range e.model.Requests() {
		for _, s := range req.Tools {
			if s.Name == mcpserver.RunTool || s.Name == "wunder__run" {
				t.Errorf("the run was offered %s", s.Name)
			}
		}
	}
	// The client hands notifications to its handler asynchronously; the
	// test's deadline bounds the wait for the first one.
	if msg := <-progress; msg == "" {
		t.Error("a progress notification without a message")
	}

	// Continue the session.
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": "again", "session_id": out.SessionID}})
	if err != nil || res.IsError {
		t.Fatalf("second call: %v %+v", err, res)
	}
}

func TestRunToolErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{}, orchestratortest.Turn{Content: "x"})
	cs := connect(t, e.url+"/wunder/mcp", nil, nil)
	for _, args := range []map[string]any{
		{"task": ""},
		{"task": "x", "tool_names": []string{"nope"}},
		{"task": "x", "session_id": "missing"},
		{"task": "x", "tool_names": []string{mcpserver.RunTool}},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wunder__run", Arguments: args})
		if err == nil && !res.IsError {
			t.Errorf("%v: accepted, want an error", args)
		}
		t.Logf("%v: %v", args, err)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope", Arguments: map[string]any{}}); err == nil {
		t.Error("unknown tool accepted")
	}
}

func TestCancelCancelsRun(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	e := newEnv(t, mcpserver.Options{}, orchestratortest.Turn{Content: "x", Wait: make(chan struct{}), Started: started})
	cs := connect(t, e.url+"/wunder/mcp", nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": "slow"}})
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("cancelled call returned no error")
	}
	// A blocking call's run is stored with its first write (at most the
	// log's delay after it starts) or its end: wait for it to be listed.
	var runs []*orchestrator.Run
	for deadline := time.Now().Add(10 * time.Second); ; {
		var err error
		runs, err = e.o.ListRuns(context.Background(), orchestrator.RunFilter{UserID: "wunder"})
		if err != nil || len(runs) > 1 {
			t.Fatalf("runs: %v %d", err, len(runs))
		}
		if len(runs) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cancelled run was never stored")
		}
		time.Sleep(time.Millisecond)
	}
	// The run ends cancelled; follow its event log to the final event.
	final := false
	for ev, err := range e.o.Events(context.Background(), "wunder", runs[0].ID, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == orchestrator.EventFinal {
			final = true
			var fd orchestrator.FinalData
			_ = json.Unmarshal(ev.Data, &fd)
			if fd.State != orchestrator.RunCancelled {
				t.Errorf("final state %s, want cancelled", fd.State)
			}
		}
	}
	if !final {
		t.Error("the run's event log ended without a final event")
	}
}

func TestBearerAuth(t *testing.T) {
	t.Parallel()
	e := newEnvTokens(t, mcpserver.Options{}, map[string]string{"k": "alice"}, orchestratortest.Turn{Content: "hi"})
	resp, err := http.Post(e.url+"/wunder/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=\""+e.url+"/.well-known/oauth-protected-resource/wunder/mcp") {
		t.Fatalf("no token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	meta, err := http.Get(e.url + "/.well-known/oauth-protected-resource/wunder/mcp")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(meta.Body)
	meta.Body.Close()
	if meta.StatusCode != 200 || !strings.Contains(string(body), `"resource":"`+e.url+`/wunder/mcp"`) {
		t.Fatalf("metadata: %d %s", meta.StatusCode, body)
	}
	hc := &http.Client{Transport: bearer("k")}
	cs := connect(t, e.url+"/wunder/mcp", hc, nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": "x"}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	if runs, _ := e.o.ListRuns(context.Background(), orchestrator.RunFilter{UserID: "alice"}); len(runs) != 1 {
		t.Errorf("runs of alice: %d, want 1 (the token's user)", len(runs))
	}
}

// The handler checks no credential, but serves nobody the gateway did not
// authenticate: mounted without a principal on the context, it answers
// 401 pointing to its protected-resource metadata.
func TestNoPrincipalIsUnauthenticated(t *testing.T) {
	t.Parallel()
	o := orchestrator.New(orchestratortest.NewMemStore(), orchestratortest.Models{}, orchestrator.NewRegistry("", nil), nil)
	t.Cleanup(func() { _ = o.Close(context.Background()) })
	h := mcpserver.New(o, nil)
	t.Cleanup(h.Close)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	for _, hdr := range []string{"", "Bearer anything", "Bearer principal"} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.URL+"/wunder/mcp", strings.NewReader(`{}`))
		if hdr != "" {
			req.Header.Set("Authorization", hdr)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := `Bearer resource_metadata="` + ts.URL + `/.well-known/oauth-protected-resource/wunder/mcp"`; resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != want {
			t.Errorf("Authorization %q without a principal: %d %q; want 401 %q", hdr, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
		}
	}
}

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}
