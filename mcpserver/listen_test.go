package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/mcpserver"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// changingToolset gives each user the tools set for them, changed while
// wunder serves (as a user adds an MCP server or another user shares a
// skill).
type changingToolset struct {
	mu    sync.Mutex
	tools map[string][]string
}

func (*changingToolset) Name() string { return "changing" }

func (c *changingToolset) set(user string, names ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tools[user] = names
}

func (c *changingToolset) Tools(_ context.Context, user string) ([]orchestrator.Tool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []orchestrator.Tool
	for _, n := range c.tools[user] {
		out = append(out, orchestratortest.NewTool(n, true, func(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
			return &orchestrator.ToolResult{Content: "ok"}, nil
		}))
	}
	return out, nil
}

func newListenEnv(t *testing.T, opts mcpserver.Options) (*changingToolset, *mcpserver.Handler, string) {
	t.Helper()
	ts := &changingToolset{tools: map[string][]string{"alice": {"notes@read"}, "bob": {"notes@read"}}}
	reg := orchestrator.NewRegistry("", nil, ts)
	models := orchestratortest.Models{Model: orchestratortest.NewScriptedModel(), Settings: orchestrator.ModelSettings{Name: "scripted", ToolCallMode: orchestrator.ModeFunctionCall, MaxRounds: 2}}
	o := orchestrator.New(orchestratortest.NewMemStore(), models, reg, nil)
	t.Cleanup(func() { _ = o.Close(context.Background()) })
	opts.Catalog = o
	h, url := serve(t, o, &opts, map[string]string{"alice": "alice", "bob": "bob"})
	return ts, h, url + "/wunder/mcp"
}

// listChanged connects a go-sdk v1.8.0 client (2026-07-28, which opens
// subscriptions/listen for a server announcing tools.listChanged) as tok,
// counting its tools/list_changed notifications.
func listChanged(t *testing.T, url, tok string) (*mcp.ClientSession, chan struct{}) {
	t.Helper()
	changed := make(chan struct{}, 16)
	cs := connect(t, url, &http.Client{Transport: bearer(tok)}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	return cs, changed
}

// waitFor polls cond until it holds, failing the test after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func received(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("no tools/list_changed for %s", what)
	}
}

func TestListenNotifiesTheUserWhoseCatalogChanged(t *testing.T) {
	t.Parallel()
	tools, h, url := newListenEnv(t, mcpserver.Options{ListChangedPoll: 20 * time.Millisecond})
	alice, aliceChanged := listChanged(t, url, "alice")
	bob, bobChanged := listChanged(t, url, "bob")
	if caps := alice.InitializeResult().Capabilities; caps.Tools == nil || !caps.Tools.ListChanged {
		t.Fatalf("server/discover capabilities %+v: want tools.listChanged", caps.Tools)
	}
	waitFor(t, "both listen streams", func() bool {
		return mcpserver.ListenStreams(h, "alice") == 1 && mcpserver.ListenStreams(h, "bob") == 1
	})

	tools.set("alice", "notes@read", "notes@write")
	received(t, aliceChanged, "alice, whose catalog changed")
	if names := toolNames(t, alice); !slices.Contains(names, "notes__write") {
		t.Fatalf("alice re-listed %v: want notes@write", names)
	}

	// bob's catalog is his own: he hears of his change, once, and of
	// none of alice's.
	tools.set("bob", "calendar@today")
	received(t, bobChanged, "bob, whose catalog changed")
	if n := len(bobChanged); n != 0 {
		t.Fatalf("bob got %d more tools/list_changed: alice's change reached him", n)
	}
	if names := toolNames(t, bob); !slices.Contains(names, "calendar__today") || slices.Contains(names, "notes__write") {
		t.Fatalf("bob re-listed %v", names)
	}

	// No change, no notification: another change of alice's is the next
	// one she hears of.
	tools.set("alice", "notes@read")
	received(t, aliceChanged, "alice's second change")
	if n := len(aliceChanged); n != 0 {
		t.Fatalf("alice got %d notifications for one change", n)
	}

	// A closed client's stream ends, and with the last one its watcher.
	_ = bob.Close()
	waitFor(t, "bob's stream to end", func() bool { return mcpserver.ListenStreams(h, "bob") == 0 })

	// Close ends the streams still open (a stopping server's shutdown
	// waits for no listen stream).
	h.Close()
	waitFor(t, "alice's stream to end at Close", func() bool { return mcpserver.ListenStreams(h, "alice") == 0 })
}

// The session-based revisions get no list-changed notification (it would
// come on the session's GET stream), so their initialize does not announce
// one: they re-list after ttlMs.
func TestListenNotAnnouncedToSessions(t *testing.T) {
	t.Parallel()
	_, _, url := newListenEnv(t, mcpserver.Options{})
	cs := connectSession(t, url, &http.Client{Transport: bearer("alice")}, nil)
	if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || caps.Tools.ListChanged {
		t.Fatalf("initialize at %s announced %+v: want tools without listChanged", legacy, caps.Tools)
	}
	// Without a catalog the list never changes, and nothing is announced.
	e := newEnv(t, mcpserver.Options{})
	if caps := connect(t, e.url+"/wunder/mcp", nil, nil).InitializeResult().Capabilities; caps.Tools == nil || caps.Tools.ListChanged {
		t.Fatalf("without a catalog: %+v, want no listChanged", caps.Tools)
	}
}

// A user's listen streams are bounded, with an error naming the bound
// (for the request's id); another user's are not affected.
func TestListenStreamsBounded(t *testing.T) {
	t.Parallel()
	_, h, url := newListenEnv(t, mcpserver.Options{MaxListens: 1})
	listChanged(t, url, "alice")
	waitFor(t, "alice's stream", func() bool { return mcpserver.ListenStreams(h, "alice") == 1 })

	listen := func(tok string) (*http.Response, []byte) {
		body := `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "subscriptions/listen")
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = resp.Body.Close() })
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			return resp, b
		}
		return resp, nil
	}
	resp, body := listen("alice")
	var e struct {
		ID    any `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if resp.StatusCode != http.StatusTooManyRequests || json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error.Message, "mcp.server.max_listens") || e.ID != 7.0 {
		t.Fatalf("alice's second stream: %d %s", resp.StatusCode, body)
	}
	if resp, body := listen("bob"); resp.StatusCode != http.StatusOK {
		t.Fatalf("bob's first stream: %d %s", resp.StatusCode, body)
	}
	waitFor(t, "bob's stream", func() bool { return mcpserver.ListenStreams(h, "bob") == 1 })
}

// subscriptions/listen is a method of 2026-07-28, which has no sessions: on
// a session of an older revision (whose initialize says tools.listChanged
// false, the session's server never being told of the catalog's changes)
// it is refused as a method the revision lacks, rather than acknowledged
// with list changes that would never come.
func TestListenRefusedOnASession(t *testing.T) {
	t.Parallel()
	_, _, url := newListenEnv(t, mcpserver.Options{ListChangedPoll: time.Hour})
	cs := connectSession(t, url, &http.Client{Transport: bearer("alice")}, nil)
	if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || caps.Tools.ListChanged {
		t.Fatalf("a %s session's tools capability %+v; want listChanged false", legacy, caps.Tools)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url,
		strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`))
	for k, v := range map[string]string{"Authorization": "Bearer alice", "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": legacy} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The answer is the stream's first message; a listen acknowledged
	// would hold the stream open after its acknowledgement instead.
	var msg struct {
		ID     int                 `json:"id"`
		Method string              `json:"method"`
		Error  *struct{ Code int } `json:"error"`
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && d != "" {
			if err := json.Unmarshal([]byte(d), &msg); err != nil {
				t.Fatalf("%v: %s", err, d)
			}
			break
		}
	}
	if msg.ID != 7 || msg.Error == nil || msg.Error.Code != -32601 {
		t.Fatalf("subscriptions/listen on a %s session: %+v (method %q); want error -32601 for id 7", legacy, msg, msg.Method)
	}
}
