package usertools_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/adapters/usertools"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
	"github.com/wunder/wunder/toolconfig"
	"github.com/wunder/wunder/toolconfig/toolconfigtest"
)

type env struct {
	set     *usertools.Set
	conn    *fakeConnector
	configs *toolconfig.Configs
}

func newEnv(t *testing.T, opts *usertools.Options) *env {
	t.Helper()
	configs := toolconfig.NewConfigs(toolconfigtest.NewMemStore(), time.Minute)
	conn := &fakeConnector{slow: 10 * time.Second}
	if opts == nil {
		opts = &usertools.Options{}
	}
	if opts.DiscoveryTimeout == 0 {
		opts.DiscoveryTimeout = 2 * time.Second
	}
	set := usertools.New(configs, conn, opts)
	t.Cleanup(func() { _ = set.Close() })
	return &env{set: set, conn: conn, configs: configs}
}

// store writes a user's servers straight into the store, past every check
// of SetServers (a configuration written under another policy).
func (e *env) store(t *testing.T, user string, servers ...toolconfig.MCPServer) {
	t.Helper()
	if _, err := e.configs.Update(context.Background(), user, func(c *toolconfig.UserConfig) error {
		c.MCPServers = servers
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func srv(name, url string, shared ...string) toolconfig.MCPServer {
	cfg, _ := json.Marshal(map[string]any{"name": name, "url": url})
	return toolconfig.MCPServer{Name: name, Config: cfg, SharedTools: shared}
}

func (e *env) tools(t *testing.T, user string) map[string]orchestrator.Tool {
	t.Helper()
	list, err := e.set.Tools(context.Background(), user)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]orchestrator.Tool{}
	for _, tl := range list {
		out[tl.Spec().Name] = tl
	}
	return out
}

func keys(m map[string]orchestrator.Tool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func call(t *testing.T, tl orchestrator.Tool, user string) *orchestrator.ToolResult {
	t.Helper()
	res, err := tl.Call(context.Background(), &orchestrator.ToolInvocation{UserID: user, RunID: "r", Arguments: json.RawMessage(`{}`),
		Output: func(string, string) {}, Emit: func(string, any) {}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestOwnAndSharedTools: the owner sees every tool of her server as hers;
// another user sees only the shared one, as hers (Owner alice), and his
// call of it is his (user id), on her connection.
func TestOwnAndSharedTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.store(t, "alice", srv("files", "https://files.example/grep,cat", "grep"))
	e.store(t, "bob", srv("web", "https://web.example/search"))

	alice := e.tools(t, "alice")
	if got, want := keys(alice), []string{"alice@files@cat", "alice@files@grep"}; !slices.Equal(got, want) {
		t.Fatalf("alice's tools = %v, want %v", got, want)
	}
	bob := e.tools(t, "bob")
	if got, want := keys(bob), []string{"alice@files@grep", "bob@web@search"}; !slices.Equal(got, want) {
		t.Fatalf("bob's tools = %v, want %v", got, want)
	}
	for name, owner := range map[string]string{"alice@files@grep": "alice", "bob@web@search": "bob"} {
		if s := bob[name].Spec(); s.Owner != owner || s.Source != orchestrator.SourceMCP {
			t.Errorf("%s: owner %q source %q, want %q mcp", name, s.Owner, s.Source, owner)
		}
	}
	if d := bob["alice@files@grep"].Spec().Description; !strings.HasPrefix(d, "(shared by alice) ") {
		t.Errorf("shared tool's description %q does not say whose it is", d)
	}
	if d := alice["alice@files@grep"].Spec().Description; strings.Contains(d, "shared by") {
		t.Errorf("the owner's own tool says it is shared: %q", d)
	}
	if got := call(t, bob["alice@files@grep"], "bob").Content; got != "grep called by bob" {
		t.Errorf("bob's call of the shared tool = %q, want it made as bob", got)
	}
	if n := e.conn.opened.Load(); n != 2 {
		t.Errorf("%d connections opened, want 2 (one per server, shared by both users' listings)", n)
	}
	// carol shares nothing and has nothing: she sees alice's shared tool only.
	if got := keys(e.tools(t, "carol")); !slices.Equal(got, []string{"alice@files@grep"}) {
		t.Errorf("carol's tools = %v", got)
	}
}

// TestSharedCallsHideOwnersSecrets: what alice's server configuration
// holds secret never reaches bob through a result; alice reads it as is.
func TestSharedCallsHideOwnersSecrets(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	cfg := `{"name":"vault","url":"https://vault.example/leak?key=qs-secret-1","bearer_token":"tok-secret-2","headers":{"X-Key":"hdr-secret-3"}}`
	e.store(t, "alice", toolconfig.MCPServer{Name: "vault", Config: json.RawMessage(cfg), SharedTools: []string{"leak"}})
	res := call(t, e.tools(t, "bob")["alice@vault@leak"], "bob")
	b, _ := json.Marshal(res)
	for _, secret := range []string{"qs-secret-1", "tok-secret-2", "hdr-secret-3", "vault.example"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("bob's result carries alice's %q: %s", secret, b)
		}
	}
	if !strings.Contains(res.Content, "[redacted]") {
		t.Errorf("bob's result = %q, want the secrets replaced", res.Content)
	}
	if got := call(t, e.tools(t, "alice")["alice@vault@leak"], "alice").Content; !strings.Contains(got, "tok-secret-2") {
		t.Errorf("alice's own result = %q, want it unredacted", got)
	}
}

// TestSharingRulesOnUse: a stored configuration that shares more than the
// rules allow (written past SetServers) offers only what they allow: tools
// the server has, in allow_tools, permitted to the owner.
func TestSharingRulesOnUse(t *testing.T) {
	t.Parallel()
	access := accessRules{"alice": {Denied: []string{"alice@files@secret"}}}
	e := newEnv(t, &usertools.Options{Access: access, MaxServers: 2})
	allow, _ := json.Marshal(map[string]any{"name": "limited", "url": "https://l.example/a,b", "allow_tools": []string{"a"}})
	e.store(t, "alice",
		srv("files", "https://files.example/grep,secret", "grep", "secret", "nosuch"),
		toolconfig.MCPServer{Name: "limited", Config: allow, SharedTools: []string{"a", "b"}},
		srv("third", "https://t.example/x", "x"), // over max_servers: not used
	)
	e.store(t, "mallory", srv("bad.name", "https://m.example/x", "x"), srv("inside", "https://private.example/x", "x"))
	if got, want := keys(e.tools(t, "bob")), []string{"alice@files@grep", "alice@limited@a"}; !slices.Equal(got, want) {
		t.Errorf("bob's tools = %v, want %v", got, want)
	}
}

type accessRules map[string]*orchestrator.ToolAccess

func (a accessRules) ToolAccess(_ context.Context, user string) (*orchestrator.ToolAccess, error) {
	return a[user], nil
}

// TestSlowServerDoesNotHoldUpListings: a shared server that takes longer
// than the discovery timeout to list its tools is left out, and the
// listing returns in about the timeout with everyone else's tools.
func TestSlowServerDoesNotHoldUpListings(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &usertools.Options{DiscoveryTimeout: 300 * time.Millisecond})
	e.store(t, "alice", srv("slow", "https://slow/t", "t"))
	e.store(t, "carol", srv("fast", "https://fast/t", "t"))
	e.store(t, "bob", srv("own", "https://own/t"))
	start := time.Now()
	got := keys(e.tools(t, "bob"))
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("listing took %s with a slow server; want about the discovery timeout", d)
	}
	if want := []string{"bob@own@t", "carol@fast@t"}; !slices.Equal(got, want) {
		t.Errorf("bob's tools = %v, want %v (alice's slow server left out)", got, want)
	}
}

// TestFailedServerRetriedInBackground: a server that failed is tried again
// after RetryInterval; the listing that starts the retry does not wait for
// it, a later one sees its tools.
func TestFailedServerRetriedInBackground(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	now := time.Now()
	var mu sync.Mutex
	usertools.SetClock(e.set, func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	e.conn.setDown(errors.New("connection refused"))
	e.store(t, "alice", srv("flaky", "https://down/t"))
	if got := keys(e.tools(t, "alice")); len(got) != 0 {
		t.Fatalf("tools of a server that is down: %v", got)
	}
	e.conn.setDown(nil)
	if got := keys(e.tools(t, "alice")); len(got) != 0 {
		t.Fatalf("retried before RetryInterval: %v", got)
	}
	mu.Lock()
	now = now.Add(usertools.RetryInterval)
	mu.Unlock()
	e.tools(t, "alice") // starts the retry
	deadline := time.Now().Add(5 * time.Second)
	for {
		if got := keys(e.tools(t, "alice")); slices.Equal(got, []string{"alice@flaky@t"}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the retried server's tools never appeared")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestConnectionsFollowConfiguration: a changed configuration gets a new
// connection and the old one is closed; a removed server's connection is
// closed; an idle one is closed after IdleTTL; a call in flight keeps its
// connection open until it returns.
func TestConnectionsFollowConfiguration(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &usertools.Options{IdleTTL: time.Hour})
	now := time.Now()
	var mu sync.Mutex
	usertools.SetClock(e.set, func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	ctx := context.Background()
	set := func(servers ...string) {
		t.Helper()
		var raw []json.RawMessage
		for _, s := range servers {
			raw = append(raw, json.RawMessage(s))
		}
		if _, err := e.set.SetServers(ctx, "alice", raw); err != nil {
			t.Fatal(err)
		}
	}
	waitClosed := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for e.conn.closed.Load() != want {
			if time.Now().After(deadline) {
				t.Fatalf("%d connections closed, want %d", e.conn.closed.Load(), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	set(`{"name":"a","url":"https://one/wait,t"}`)
	tools := e.tools(t, "alice")
	// A call in flight on the first configuration...
	callCtx, cancel := context.WithCancel(ctx)
	done := make(chan *orchestrator.ToolResult)
	e.conn.waiting = make(chan struct{}, 1)
	go func() {
		res, _ := tools["alice@a@wait"].Call(callCtx, &orchestrator.ToolInvocation{UserID: "alice", Arguments: json.RawMessage(`{}`)})
		done <- res
	}()
	<-e.conn.waiting                          // the call holds its connection
	set(`{"name":"a","url":"https://two/t"}`) // ...survives the change,
	if got := keys(e.tools(t, "alice")); !slices.Equal(got, []string{"alice@a@t"}) {
		t.Fatalf("tools after the change: %v", got)
	}
	if n := e.conn.closed.Load(); n != 0 {
		t.Fatalf("%d connections closed while a call was in flight", n)
	}
	cancel()
	<-done
	waitClosed(1) // and its connection closes once it returns.
	// A tool of the old configuration answers, without reaching anything.
	if res := call(t, tools["alice@a@t"], "alice"); !res.IsError {
		t.Errorf("a call through a retired configuration: %+v, want an error result", res)
	}
	set() // removed
	waitClosed(2)
	set(`{"name":"b","url":"https://three/t"}`)
	e.tools(t, "alice")
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	e.tools(t, "bob") // any listing sweeps idle connections
	waitClosed(3)
	if err := e.set.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestExtraPrompt: the user's extra prompt is in that user's runs' system
// prompt only, cut to the limit when a longer one is stored.
func TestExtraPrompt(t *testing.T) {
	t.Parallel()
	e := newEnv(t, &usertools.Options{MaxExtraPromptChars: 20})
	ctx := context.Background()
	if got, err := e.set.SetExtraPrompt(ctx, "alice", "Answer in haiku."); err != nil || got != "Answer in haiku." {
		t.Fatalf("SetExtraPrompt = %q, %v", got, err)
	}
	if got, _ := e.set.ExtraPrompt(ctx, "alice"); got != "Answer in haiku." {
		t.Errorf("ExtraPrompt = %q", got)
	}
	c, err := e.set.ContributePrompt(ctx, orchestrator.PromptContext{UserID: "alice"})
	if err != nil || !strings.Contains(c.Prompt, "Answer in haiku.") {
		t.Errorf("alice's contribution = %q, %v", c.Prompt, err)
	}
	c, err = e.set.ContributePrompt(ctx, orchestrator.PromptContext{UserID: "bob", Language: "zh"})
	if err != nil || c.Prompt != "" {
		t.Errorf("bob's contribution = %q, %v; want none", c.Prompt, err)
	}
	for _, bad := range []string{strings.Repeat("字", 21), "bell\a", "nul\x00", "\xff\xfe"} {
		if _, err := e.set.SetExtraPrompt(ctx, "alice", bad); !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Errorf("SetExtraPrompt(%q) = %v, want invalid argument", bad, err)
		}
	}
	if got, _ := e.set.ExtraPrompt(ctx, "alice"); got != "Answer in haiku." {
		t.Errorf("a refused write changed the prompt to %q", got)
	}
	// Stored past the check (a lower limit since): cut on use.
	if _, err := e.configs.Update(ctx, "carol", func(c *toolconfig.UserConfig) error {
		c.ExtraPrompt = strings.Repeat("x", 100)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c, _ = e.set.ContributePrompt(ctx, orchestrator.PromptContext{UserID: "carol"})
	if strings.Count(c.Prompt, "x") != 20 {
		t.Errorf("carol's over-long prompt not cut to 20 characters: %q", c.Prompt)
	}
}

// TestToolsetContract runs the shared toolset suite over alice's own
// server and bob's view of her shared tool.
func TestToolsetContract(t *testing.T) {
	orchestratortest.RunToolsetTests(t, func(t *testing.T) orchestrator.Toolset {
		e := newEnv(t, nil)
		e.store(t, "alice", srv("files", "https://files.example/grep,cat", "grep"))
		return e.set
	}, orchestratortest.WithMinTools(2), orchestratortest.WithIsolation(func(t *testing.T, ts orchestrator.Toolset, a, b string) {
		list, err := ts.Tools(context.Background(), b)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range list {
			if s := tl.Spec(); s.Name != a+"@files@grep" || s.Owner != a {
				t.Errorf("%s sees %s (owner %q); only %s's shared tool is theirs to see", b, s.Name, s.Owner, a)
			}
		}
	}))
}
