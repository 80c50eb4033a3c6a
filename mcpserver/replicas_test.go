package mcpserver_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/mcpserver"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
	"github.com/wunder/wunder/storage"
)

// Two replicas of wunder on one PostgreSQL database, in this process: two
// orchestrators and two MCP front-ends, each over its own storage.Store
// (its own pool) on the one schema, as two processes would be. A go-sdk
// v1.8.0 client at 2025-11-25 reaches them through a round robin that
// sends each of its HTTP requests to the other replica.

// postgresStores opens n stores on one fresh schema of
// WUNDER_TEST_POSTGRES_DSN (skipped without it, failed under
// WUNDER_REQUIRE_POSTGRES=1), dropped when the test ends.
func postgresStores(t *testing.T, n int) []*storage.Store {
	t.Helper()
	base := os.Getenv("WUNDER_TEST_POSTGRES_DSN")
	if base == "" {
		if os.Getenv("WUNDER_REQUIRE_POSTGRES") == "1" {
			t.Fatal("WUNDER_REQUIRE_POSTGRES=1 but WUNDER_TEST_POSTGRES_DSN is not set")
		}
		t.Skip("!!! WUNDER_TEST_POSTGRES_DSN not set: the two-replica tests SKIPPED !!!")
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	schema := "wunder_test_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(t.Context(), `CREATE SCHEMA `+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", base)
		if err == nil {
			_, err = admin.Exec(`DROP SCHEMA ` + schema + ` CASCADE`)
			_ = admin.Close()
		}
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	var stores []*storage.Store
	for range n {
		s, err := storage.Open(t.Context(), storage.Options{Backend: storage.BackendPostgres, PostgresDSN: base + sep + "search_path=" + schema,
			AutoMigrate: true, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		stores = append(stores, s)
	}
	return stores
}

// replicas serves two front-ends over two orchestrators on one database;
// opts (Sessions set per replica) and turns (each replica's model) are
// alike. It returns the replicas' base URLs.
func replicas(t *testing.T, opts mcpserver.Options, tokens map[string]string, turns ...orchestratortest.Turn) ([]string, []*storage.Store) {
	t.Helper()
	return replicasOf(t, opts, tokens, func(st orchestrator.Store) *orchestrator.Orchestrator {
		models := orchestratortest.Models{Model: orchestratortest.NewScriptedModel(turns...),
			Settings: orchestrator.ModelSettings{Name: "scripted", ToolCallMode: orchestrator.ModeFunctionCall, MaxRounds: 5, Stream: true}}
		return orchestrator.New(st, models, orchestrator.NewRegistry("", nil), nil)
	})
}

// replicasOf is replicas with each replica's orchestrator made by newOrch.
func replicasOf(t *testing.T, opts mcpserver.Options, tokens map[string]string, newOrch func(orchestrator.Store) *orchestrator.Orchestrator) ([]string, []*storage.Store) {
	t.Helper()
	var urls []string
	stores := postgresStores(t, 2)
	for _, st := range stores {
		o := newOrch(st)
		t.Cleanup(func() { _ = o.Close(context.Background()) })
		o2 := opts
		o2.Sessions = st
		_, u := serve(t, o, &o2, tokens)
		urls = append(urls, u)
	}
	return urls, stores
}

// roundRobin sends each request to the next replica (the request's own
// host is replaced), with a bearer token, and logs where each went.
type roundRobin struct {
	urls  []string
	token string
	// cut, when it returns true for a POST's body, makes the response a
	// stream cut after its first event (the server wrote it whole): the
	// client resumes it with GET and Last-Event-ID.
	cut func(body string) bool
	// pin, when it says so for a POST's body, sends it to that replica
	// instead of the next one.
	pin func(body string, hops []hop) (int, bool)

	mu   sync.Mutex
	n    int
	log  []hop
	gone bool // cut has been used
}

// methodRE finds a JSON-RPC message's method.
var methodRE = regexp.MustCompile(`"method":"([^"]+)"`)

// hop is one request and the replica that served it.
type hop struct {
	replica       int
	method, what  string // what: the JSON-RPC method, or the Last-Event-ID of a GET
	session       string
	status        int
	resumedAnswer bool // a GET with Last-Event-ID whose stream held a response
	cut           bool // its answer stream was cut after the first event
}

func (rr *roundRobin) RoundTrip(r *http.Request) (*http.Response, error) {
	var body string
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		body = string(b)
	}
	rr.mu.Lock()
	i := rr.n % len(rr.urls)
	rr.n++
	if rr.pin != nil {
		if p, ok := rr.pin(body, rr.log); ok {
			i = p
		}
	}
	rr.mu.Unlock()
	base, _ := url.Parse(rr.urls[i])
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = base.Scheme, base.Host, base.Host
	if rr.token != "" {
		r.Header.Set("Authorization", "Bearer "+rr.token)
	}
	h := hop{replica: i, method: r.Method, session: r.Header.Get("Mcp-Session-Id"), what: r.Header.Get("Last-Event-ID")}
	if r.Body != nil {
		r.Body = io.NopCloser(strings.NewReader(body))
		if m := methodRE.FindStringSubmatch(body); m != nil {
			h.what = m[1]
		} else if strings.Contains(body, `"result"`) {
			h.what = "answer"
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	h.status = resp.StatusCode
	rr.mu.Lock()
	cut := r.Method == http.MethodPost && rr.cut != nil && !rr.gone && rr.cut(body)
	if cut {
		rr.gone = true
		h.cut = true
	}
	rr.mu.Unlock()
	if cut || (r.Method == http.MethodGet && h.what != "") {
		all, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if cut {
			first, _, _ := strings.Cut(string(all), "\n\n")
			all = []byte(first + "\n\n")
		} else {
			h.resumedAnswer = strings.Contains(string(all), `"result"`)
		}
		resp.Body = io.NopCloser(bytes.NewReader(all))
	}
	rr.mu.Lock()
	rr.log = append(rr.log, h)
	rr.mu.Unlock()
	return resp, nil
}

func (rr *roundRobin) hops() []hop {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return append([]hop(nil), rr.log...)
}

// A session of /wunder/mcp moves between two replicas on every request:
// initialize on one, then lists, setLevel, calls of wunder@run (one of
// whose answer stream is cut and resumed with Last-Event-ID on the other
// replica), a GET stream on the replica that did not open it, and DELETE
// on one replica, after which the other answers 404. Another user's
// request with the session's id is refused on either replica.
func TestSessionsAcrossReplicas(t *testing.T) {
	t.Parallel()
	turns := []orchestratortest.Turn{{Content: "first"}, {Content: "second"}, {Content: "third"}}
	urls, stores := replicas(t, mcpserver.Options{}, map[string]string{"alice": "alice", "bob": "bob"}, turns...)
	calls := 0
	rr := &roundRobin{urls: urls, token: "alice", cut: func(body string) bool {
		if strings.Contains(body, `"tools/call"`) {
			calls++
			return calls == 2 // the second call's answer is resumed
		}
		return false
	}}
	cs := connectAt(t, urls[0]+"/wunder/mcp", &http.Client{Transport: rr}, nil, legacy)
	sid := cs.ID()
	if sid == "" {
		t.Fatal("no session id")
	}
	ctx := t.Context()
	for range 2 {
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(tools.Tools) == 0 {
			t.Fatal("no tools listed")
		}
	}
	//lint:ignore SA1019 logging is part of 2025-11-25, the revision of this session
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	// The level is the session's, in its record: a replica taking the
	// session over logs at it.
	rec, err := stores[1].MCPSession(ctx, sid)
	if err != nil || !strings.Contains(string(rec.State), `"logLevel":"debug"`) || rec.UserID != "alice" || rec.ProtocolVersion != legacy {
		t.Fatalf("the session's record: %+v, %v", rec, err)
	}
	var answers []string
	for _, task := range []string{"one", "two", "three"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": task}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			t.Fatalf("call %s: %+v", task, res.Content)
		}
		out, _ := res.StructuredContent.(map[string]any)
		a, _ := out["answer"].(string)
		answers = append(answers, a)
	}
	// Each replica's model answers in its own order.
	for _, a := range answers {
		if !slices.Contains([]string{"first", "second", "third"}, a) {
			t.Fatalf("answers %q", answers)
		}
	}

	// Where every request of the session went.
	served, called := map[int]int{}, map[int]bool{}
	var resumed, cut *hop
	opener := -1
	for _, h := range rr.hops() {
		if h.what == "initialize" {
			opener = h.replica
			continue
		}
		if h.session != sid {
			continue
		}
		if h.status/100 != 2 {
			t.Errorf("%s %s on replica %d: HTTP %d", h.method, h.what, h.replica, h.status)
		}
		served[h.replica]++
		if h.method == http.MethodGet && h.what != "" {
			resumed = &h
		}
		if h.what == "tools/call" {
			called[h.replica] = true
		}
		if h.cut {
			cut = &h
		}
	}
	if !called[0] || !called[1] {
		t.Errorf("wunder__run ran on replicas %v, want both", called)
	}
	if served[0] < 3 || served[1] < 3 {
		t.Errorf("requests of the session per replica: %v, want both to serve several", served)
	}
	if cut == nil || resumed == nil || !resumed.resumedAnswer || resumed.status != http.StatusOK {
		t.Fatalf("no GET with Last-Event-ID replayed the cut answer: cut %+v, resumed %+v", cut, resumed)
	}
	if resumed.replica == cut.replica {
		t.Errorf("the answer cut on replica %d was resumed on the same replica", cut.replica)
	}
	if opener < 0 {
		t.Fatal("no initialize seen")
	}
	other := 1 - opener

	// A GET stream on the replica that did not open the session.
	get := func(replica int, token string) int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, urls[replica]+"/wunder/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", legacy)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			buf := make([]byte, 5)
			if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != ": ok\n" {
				t.Errorf("GET stream on replica %d began %q, %v", replica, buf, err)
			}
		}
		return resp.StatusCode
	}
	// The client's own GET stream went to a replica after initialize;
	// unless that is the other one, a GET there opens one.
	standalone := slices.IndexFunc(rr.hops(), func(h hop) bool {
		return h.method == http.MethodGet && h.what == "" && h.session == sid && h.replica == other && h.status == http.StatusOK
	})
	if standalone < 0 {
		if got := get(other, "alice"); got != http.StatusOK {
			t.Errorf("GET stream on the other replica: HTTP %d", got)
		}
	}
	// The session is alice's on every replica.
	for replica := range urls {
		if got := get(replica, "bob"); got != http.StatusForbidden {
			t.Errorf("bob's GET of alice's session on replica %d: HTTP %d, want 403", replica, got)
		}
		status, _ := post(t, urls[replica]+"/wunder/mcp", map[string]string{"Authorization": "Bearer bob", "Mcp-Session-Id": sid, "Mcp-Protocol-Version": legacy},
			`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
		if status != http.StatusForbidden {
			t.Errorf("bob's POST in alice's session on replica %d: HTTP %d, want 403", replica, status)
		}
	}

	// DELETE on one replica ends the session on both.
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	hops := rr.hops()
	last := hops[len(hops)-1]
	if last.method != http.MethodDelete || last.status != http.StatusNoContent {
		t.Fatalf("the client's DELETE: %+v", last)
	}
	for replica := range urls {
		status, _ := post(t, urls[replica]+"/wunder/mcp", map[string]string{"Authorization": "Bearer alice", "Mcp-Session-Id": sid, "Mcp-Protocol-Version": legacy},
			`{"jsonrpc":"2.0","id":10,"method":"tools/list"}`)
		if status != http.StatusNotFound {
			t.Errorf("after DELETE on replica %d, a POST on replica %d: HTTP %d, want 404", last.replica, replica, status)
		}
	}
}

// A pass-through session moves between two replicas on every request: the
// upstream session (a go-sdk v1.8.0 server with sessions) is reused by the
// replica that did not open it, and when the upstream forgets it (a
// restart) it is opened anew with the client's initialize, once for both
// replicas, unseen by the client. Another user is refused on both
// replicas; DELETE on one ends it on both and upstream.
func TestPassThroughSessionsAcrossReplicas(t *testing.T) {
	t.Parallel()
	up := newRevisionUpstream(t, false)
	set, err := mcptools.New([]mcptools.ServerConfig{{Name: "up", Transport: mcptools.TransportStreamableHTTP, URL: up.url}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	urls, _ := replicas(t, mcpserver.Options{Upstreams: set}, map[string]string{"alice": "alice", "bob": "bob"})
	rr := &roundRobin{urls: urls, token: "alice"}
	cs := connectAt(t, urls[0]+"/wunder/mcp/up", &http.Client{Transport: rr}, nil, legacy)
	sid := cs.ID()
	for i := range 4 {
		arg := strconv.Itoa(i)
		if got, want := echo(t, cs, arg), `echo {"a":"`+arg+`"}`; got != want {
			t.Fatalf("echo: %q, want %q", got, want)
		}
	}
	if got := up.inits.Load(); got != 1 {
		t.Errorf("the upstream saw %d initialize requests before its restart, want 1 (its session reused)", got)
	}
	up.restart()
	for i := range 4 {
		arg := "after-" + strconv.Itoa(i)
		if got, want := echo(t, cs, arg), `echo {"a":"`+arg+`"}`; got != want {
			t.Fatalf("echo after the upstream's restart: %q, want %q", got, want)
		}
	}
	if got := up.inits.Load(); got != 2 {
		t.Errorf("the upstream saw %d initialize requests, want 2 (opened anew once, for both replicas)", got)
	}
	served := map[int]int{}
	for _, h := range rr.hops() {
		if h.session != sid || h.method != http.MethodPost {
			continue
		}
		if h.status/100 != 2 {
			t.Errorf("%s %s on replica %d: HTTP %d", h.method, h.what, h.replica, h.status)
		}
		served[h.replica]++
	}
	if served[0] < 3 || served[1] < 3 {
		t.Errorf("POSTs of the session per replica: %v, want both to serve several", served)
	}
	call := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	for replica := range urls {
		status, _ := post(t, urls[replica]+"/wunder/mcp/up", map[string]string{"Authorization": "Bearer bob", "Mcp-Session-Id": sid, "Mcp-Protocol-Version": legacy}, call)
		if status != http.StatusForbidden {
			t.Errorf("bob's call in alice's session on replica %d: HTTP %d, want 403", replica, status)
		}
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	hops := rr.hops()
	last := hops[len(hops)-1]
	if last.method != http.MethodDelete || last.status != http.StatusNoContent {
		t.Fatalf("the client's DELETE: %+v", last)
	}
	for replica := range urls {
		status, _ := post(t, urls[replica]+"/wunder/mcp/up", map[string]string{"Authorization": "Bearer alice", "Mcp-Session-Id": sid, "Mcp-Protocol-Version": legacy}, call)
		if status != http.StatusNotFound {
			t.Errorf("after DELETE on replica %d, a call on replica %d: HTTP %d, want 404", last.replica, replica, status)
		}
	}
}

// A wunder__run call on one replica asks its approval with
// elicitation/create; the client's answer goes to the other replica,
// which decides the approval from the session's record; the call on the
// first follows the run and answers with its end.
func TestElicitationAnsweredOnAnotherReplica(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var deployed []string
	// One model for both replicas, as an LLM is: the run may go on at
	// the replica that decided its approval.
	model := orchestratortest.NewScriptedModel(deployTurns(`{"env":"prod"}`)...)
	urls, _ := replicasOf(t, mcpserver.Options{}, map[string]string{"alice": "alice"}, func(st orchestrator.Store) *orchestrator.Orchestrator {
		tool := orchestratortest.NewTool("deploy", false, func(_ context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
			mu.Lock()
			deployed = append(deployed, string(inv.Arguments))
			mu.Unlock()
			return &orchestrator.ToolResult{Content: "deployed " + string(inv.Arguments)}, nil
		})
		tool.S.InputSchema = json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"}},"required":["env"]}`)
		reg := orchestrator.NewRegistry("", nil, orchestrator.StaticToolset{SetName: "ops", List: []orchestrator.Tool{tool}})
		models := orchestratortest.Models{Model: model,
			Settings: orchestrator.ModelSettings{Name: "scripted", ToolCallMode: orchestrator.ModeFunctionCall, MaxRounds: 5, Stream: true}}
		return orchestrator.New(st, models, reg, &orchestrator.Options{Approvals: orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}, Schemas: validator{}})
	})
	// The answer to the elicitation goes to the replica that did not
	// serve the call.
	rr := &roundRobin{urls: urls, token: "alice", pin: func(body string, hops []hop) (int, bool) {
		if strings.Contains(body, `"method"`) || !strings.Contains(body, `"result"`) {
			return 0, false
		}
		for i := len(hops) - 1; i >= 0; i-- {
			if hops[i].what == "tools/call" {
				return 1 - hops[i].replica, true
			}
		}
		return 0, false
	}}
	el := &elicitations{answers: []*mcp.ElicitResult{accept(map[string]any{"decision": "approve"})}}
	cs := connectAt(t, urls[0]+"/wunder/mcp", &http.Client{Transport: rr}, &mcp.ClientOptions{ElicitationHandler: el.handler}, legacy)
	res, out := runTask(t, cs, map[string]any{"task": "deploy it", "tool_names": []string{"deploy"}})
	if res.IsError || out.State != orchestrator.RunFinished || out.Answer != "all done" {
		for _, h := range rr.hops() {
			t.Logf("hop %+v", h)
		}
		t.Fatalf("result %+v: %s (%d elicitations)", out, text(res), len(el.requests()))
	}
	mu.Lock()
	got := slices.Clone(deployed)
	mu.Unlock()
	if !slices.Equal(got, []string{`{"env":"prod"}`}) {
		t.Errorf("deploy ran %q, want once", got)
	}
	if n := len(el.requests()); n != 1 {
		t.Errorf("%d elicitations, want 1", n)
	}
	call, answer := -1, -1
	for _, h := range rr.hops() {
		switch h.what {
		case "tools/call":
			call = h.replica
		case "answer":
			answer = h.replica
			if h.status != http.StatusAccepted {
				t.Errorf("the answer on replica %d: HTTP %d, want 202", h.replica, h.status)
			}
		}
	}
	if call < 0 || answer < 0 || call == answer {
		t.Errorf("the call went to replica %d and the answer to %d, want two replicas", call, answer)
	}
}

// Over an SSE upstream (a connection per session, no session id to
// reuse) each replica that serves the session dials its own connection and
// initializes it with the client's stored initialize: the client sees one
// session all along, and DELETE ends it on both replicas.
func TestPassThroughSSESessionsAcrossReplicas(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "sse-up", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo " + string(req.Params.Arguments)}}}, nil
	})
	var mu sync.Mutex
	var clients []string // the clientInfo names of the initialize requests the upstream got
	sse := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, ok := peek(r); ok && strings.Contains(b, `"method":"initialize"`) {
			mu.Lock()
			clients = append(clients, clientNameRE.FindString(b))
			mu.Unlock()
		}
		sse.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	set, err := mcptools.New([]mcptools.ServerConfig{{Name: "up", Transport: mcptools.TransportSSE, URL: ts.URL}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	urls, _ := replicas(t, mcpserver.Options{Upstreams: set}, map[string]string{"alice": "alice"})
	rr := &roundRobin{urls: urls, token: "alice"}
	cs := connectAt(t, urls[0]+"/wunder/mcp/up", &http.Client{Transport: rr}, nil, legacy)
	sid := cs.ID()
	for i := range 4 {
		arg := strconv.Itoa(i)
		if got, want := echo(t, cs, arg), `echo {"a":"`+arg+`"}`; got != want {
			t.Fatalf("echo: %q, want %q", got, want)
		}
	}
	mu.Lock()
	got := slices.Clone(clients)
	mu.Unlock()
	// The client's own initialize, once per replica's connection.
	if len(got) != 2 || got[0] != got[1] || got[0] != `"name":"test"` {
		t.Errorf("the upstream's initialize requests came from %q, want the client's twice (a connection per replica)", got)
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	for replica := range urls {
		status, _ := post(t, urls[replica]+"/wunder/mcp/up", map[string]string{"Authorization": "Bearer alice", "Mcp-Session-Id": sid, "Mcp-Protocol-Version": legacy},
			`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
		if status != http.StatusNotFound {
			t.Errorf("after DELETE, a request on replica %d: HTTP %d, want 404", replica, status)
		}
	}
}

// clientNameRE finds the client's name in an initialize request.
var clientNameRE = regexp.MustCompile(`"name":"[^"]*"`)
