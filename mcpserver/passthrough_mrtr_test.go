//lint:file-ignore SA1019 sampling and roots are deprecated in 2026-07-28 (SEP-2577) and part of 2025-11-25, whose upstreams this tests

package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/mcpserver"
)

// askingUpstream is a go-sdk v1.8.0 server with sessions (2025-11-25) whose
// tools ask their client in the middle of a call, as such a server does:
//
//   - ask: elicitation/create for a name, answers "hello <name>" (or the
//     action, or the error the client's side gave);
//   - ask-twice: two elicitations in a row;
//   - sample: sampling/createMessage, answers the model's text;
//   - roots: roots/list, answers the roots' URIs;
//   - flood: an elicitation, then 1500 progress notifications before its
//     answer (more than a parked call keeps);
//   - wait: an elicitation whose end (an answer or the call's
//     cancellation) it reports on waited.
type askingUpstream struct {
	url    string
	waited chan error
}

func newAskingUpstream(t *testing.T) *askingUpstream {
	t.Helper()
	u := &askingUpstream{waited: make(chan error, 4)}
	s := askingServer(u.waited)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	u.url = ts.URL
	return u
}

// askingServer is the asking upstream's server, for any transport; wait
// reports its end on waited.
func askingServer(waited chan<- error) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "asking", Version: "1"}, nil)
	obj := map[string]any{"type": "object"}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	name := func(ctx context.Context, ss *mcp.ServerSession, msg string) string {
		res, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: msg, RequestedSchema: nameSchema})
		switch {
		case err != nil:
			return "error: " + err.Error()
		case res.Action != "accept":
			return res.Action
		}
		n, _ := res.Content["name"].(string)
		return n
	}
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("hello " + name(ctx, req.Session, "Your name?")), nil
	})
	s.AddTool(&mcp.Tool{Name: "ask-twice", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := name(ctx, req.Session, "First name?")
		b := name(ctx, req.Session, "Last name?")
		return text(a + " " + b), nil
	})
	s.AddTool(&mcp.Tool{Name: "sample", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "a haiku"}}}})
		if err != nil {
			return text("error: " + err.Error()), nil
		}
		return text("the model said: " + res.Content.(*mcp.TextContent).Text), nil
	})
	s.AddTool(&mcp.Tool{Name: "roots", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return text("error: " + err.Error()), nil
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		return text("roots: " + strings.Join(uris, ",")), nil
	})
	s.AddTool(&mcp.Tool{Name: "flood", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := name(ctx, req.Session, "Your name?")
		for i := range 1500 {
			if req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i)}) != nil {
				break
			}
		}
		return text("flooded " + n), nil
	})
	s.AddTool(&mcp.Tool{Name: "wait", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		_, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Nobody answers this", RequestedSchema: nameSchema})
		select {
		case waited <- err:
		default: // nobody reads it (the stdio helper)
		}
		return text("waited"), nil
	})
	return s
}

// nameSchema is the requested schema of the upstream's questions.
var nameSchema = map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}

// gatewayTo serves the pass-through /wunder/mcp/up in front of u.
func (u *askingUpstream) gatewayTo(t *testing.T, opts mcpserver.Options, tokens map[string]string) string {
	t.Helper()
	set, err := mcptools.New([]mcptools.ServerConfig{{Name: "up", Transport: mcptools.TransportStreamableHTTP, URL: u.url}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	opts.Upstreams = set
	return newEnvTokens(t, opts, tokens).url + "/wunder/mcp/up"
}

// answering is a 2026-07-28 client's options that answer every question:
// the name "ada", a model's "five seven five", the root file:///work.
func answering(asked *atomic.Int32) *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			name := "ada"
			if req.Params.Message == "Last name?" {
				name = "lovelace"
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			asked.Add(1)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "five seven five"}}, nil
		},
	}
}

func callText(t *testing.T, cs *mcp.ClientSession, tool string) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %+v", tool, res)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// A 2025-11-25 upstream's elicitation, sampling and roots reach a
// 2026-07-28 client (go-sdk v1.8.0, which answers input-required results
// itself) through the pass-through as input requests, and the call goes on
// with the answers, one question or several.
func TestPassThroughUpstreamQuestionsBecomeInputRequests(t *testing.T) {
	t.Parallel()
	up := newAskingUpstream(t)
	url := up.gatewayTo(t, mcpserver.Options{}, nil)
	var asked atomic.Int32
	cs := askedClient(t, url, &asked)
	if cs.ID() != "" {
		t.Fatalf("a 2026-07-28 client got session %q", cs.ID())
	}
	askEveryKind(t, cs, &asked)
}

// askedClient is a 2026-07-28 client of url that answers every question
// (answering(asked)) and has the root file:///work.
func askedClient(t *testing.T, url string, asked *atomic.Int32) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, answering(asked))
	c.AddRoots(&mcp.Root{URI: "file:///work", Name: "work"})
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// askEveryKind calls the asking upstream's tools that ask (an
// elicitation, two, a sampling, roots) through cs, whose client answers
// with answering(asked) and has the root file:///work, and checks each
// answer and that the client was asked four times.
func askEveryKind(t *testing.T, cs *mcp.ClientSession, asked *atomic.Int32) {
	t.Helper()
	for _, c := range []struct{ tool, want string }{
		{"ask", "hello ada"},
		{"ask-twice", "ada lovelace"},
		{"sample", "the model said: five seven five"},
		{"roots", "roots: file:///work"},
	} {
		if got := callText(t, cs, c.tool); got != c.want {
			t.Errorf("%s: %q, want %q", c.tool, got, c.want)
		}
	}
	if n := asked.Load(); n != 4 {
		t.Errorf("the client was asked %d times, want 4 (ask, ask-twice twice, sample)", n)
	}
}

// A client that did not declare a capability is not asked: the
// upstream's question is refused upstream naming the capability, and
// whether the call can do without is the upstream's (SEP-2322). A method
// outside the revisions is 404 -32601, as a 2026-07-28 server answers it.
func TestPassThroughQuestionWithoutCapability(t *testing.T) {
	t.Parallel()
	up := newAskingUpstream(t)
	url := up.gatewayTo(t, mcpserver.Options{}, nil)
	cs := clientAt(t, url, "2026-07-28", nil)
	if got := callText(t, cs, "ask"); !strings.Contains(got, "did not declare the elicitation capability") {
		t.Fatalf("ask of a client without elicitation: %q; want the refusal naming the capability", got)
	}
	const capsMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	status, body := post(t, url, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "sample"},
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sample","arguments":{},`+capsMeta+`}}`)
	if status != http.StatusOK || !strings.Contains(body, "did not declare the sampling capability") || strings.Contains(body, "input_required") {
		t.Errorf("sampling of a client with elicitation only: HTTP %d %s; want the upstream's answer to the refusal", status, body)
	}
	status, body = post(t, url, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "unknown/method"},
		`{"jsonrpc":"2.0","id":4,"method":"unknown/method","params":{`+capsMeta+`}}`)
	if status != http.StatusNotFound || !strings.Contains(body, `"code":-32601`) {
		t.Errorf("an unknown method: HTTP %d %s; want 404 -32601", status, body)
	}
}

// The input-required result and its retry on the wire: the input request
// as the upstream asked it, a requestState that another user cannot use,
// that a different method cannot use, and that is refused once the call
// ended; an unanswered retry is asked again.
func TestPassThroughInputRequiredOnTheWire(t *testing.T) {
	t.Parallel()
	up := newAskingUpstream(t)
	url := up.gatewayTo(t, mcpserver.Options{}, map[string]string{"alice": "alice", "bob": "bob"})
	const capsMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
	hdr := func(user string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + user, "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "ask"}
	}
	call := func(extra string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask","arguments":{},` + capsMeta + extra + `}}`
	}
	status, body := post(t, url, hdr("alice"), call(""))
	var first struct {
		ID     int `json:"id"`
		Result struct {
			ResultType    string `json:"resultType"`
			InputRequests map[string]struct {
				Method string `json:"method"`
				Params struct {
					Message string `json:"message"`
				} `json:"params"`
			} `json:"inputRequests"`
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(lastMessage(body)), &first); err != nil || status != http.StatusOK || first.ID != 7 ||
		first.Result.ResultType != "input_required" || first.Result.RequestState == "" || len(first.Result.InputRequests) != 1 {
		t.Fatalf("first call: HTTP %d %s", status, body)
	}
	var key string
	for k, q := range first.Result.InputRequests {
		key = k
		if q.Method != "elicitation/create" || q.Params.Message != "Your name?" {
			t.Fatalf("input request %+v; want the upstream's elicitation", q)
		}
	}
	state := `,"requestState":"` + first.Result.RequestState + `"`
	answer := `,"inputResponses":{"` + key + `":{"action":"accept","content":{"name":"ada"}}}`

	// bob's retry with alice's state: not found, and the call still waits.
	if status, body := post(t, url, hdr("bob"), call(answer+state)); status != http.StatusBadRequest || !strings.Contains(body, "no call of yours") {
		t.Errorf("bob with alice's requestState: HTTP %d %s", status, body)
	}
	// Another method with the state: refused.
	other := `{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":{"name":"p",` + capsMeta + answer + state + `}}`
	if status, body := post(t, url, map[string]string{"Authorization": "Bearer alice", "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "prompts/get", "Mcp-Name": "p"}, other); status != http.StatusBadRequest || !strings.Contains(body, "tools/call call") {
		t.Errorf("prompts/get with a tools/call's requestState: HTTP %d %s", status, body)
	}
	// Without the answer: asked again, same question, same state.
	status, body = post(t, url, hdr("alice"), call(state))
	if status != http.StatusOK || !strings.Contains(body, `"input_required"`) || !strings.Contains(body, first.Result.RequestState) {
		t.Errorf("a retry without the answer: HTTP %d %s; want the question again", status, body)
	}
	// A state the gateway never issued.
	if status, body := post(t, url, hdr("alice"), call(answer+`,"requestState":"forged"`)); status != http.StatusBadRequest || !strings.Contains(body, "not one the gateway issued") {
		t.Errorf("a forged requestState: HTTP %d %s", status, body)
	}
	// alice answers: the call's result.
	status, body = post(t, url, hdr("alice"), call(answer+state))
	if status != http.StatusOK || !strings.Contains(body, "hello ada") || !strings.Contains(body, `"resultType":"complete"`) || !strings.Contains(body, `"id":7`) {
		t.Fatalf("the answered retry: HTTP %d %s", status, body)
	}
	// The call is over: its state names nothing now.
	if status, body := post(t, url, hdr("alice"), call(answer+state)); status != http.StatusBadRequest || !strings.Contains(body, "no call of yours") {
		t.Errorf("a retry after the call ended: HTTP %d %s", status, body)
	}
}

// rawAsk calls tool through url as a raw 2026-07-28 client that declares
// elicitation (meta: more _meta members, each followed by a comma), and
// returns the call's headers, its body with extra params (a retry's), and
// the requestState of its first answer, which must be input-required.
func rawAsk(t *testing.T, url, tool, meta string) (hdr map[string]string, call func(extra string) string, state string) {
	t.Helper()
	capsMeta := `"_meta":{` + meta + `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	hdr = map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
	call = func(extra string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{},` + capsMeta + extra + `}}`
	}
	_, body := post(t, url, hdr, call(""))
	var first struct {
		Result struct {
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(lastMessage(body)), &first) != nil || first.Result.RequestState == "" {
		t.Fatalf("first call of %s: %s", tool, body)
	}
	return hdr, call, first.Result.RequestState
}

// A parked call that nobody answers is cancelled upstream at
// Options.InputTimeout, and the late retry is told so.
func TestPassThroughParkedCallTimesOut(t *testing.T) {
	t.Parallel()
	up := newAskingUpstream(t)
	url := up.gatewayTo(t, mcpserver.Options{InputTimeout: 50 * time.Millisecond}, nil)
	hdr, call, state := rawAsk(t, url, "wait", "")
	// The upstream's question ends when the gateway cancels the call.
	select {
	case err := <-up.waited:
		if err == nil {
			t.Fatal("the upstream's question was answered; want it cancelled")
		}
	case <-t.Context().Done():
		t.Fatal("the parked call was never cancelled upstream")
	}
	_, body := post(t, url, hdr, call(`,"requestState":"`+state+`","inputResponses":{"input-0":{"action":"decline"}}`))
	if !strings.Contains(body, "waited longer than") && !strings.Contains(body, "did not take the answer") {
		t.Fatalf("the late retry: %s; want the error that the call waited too long", body)
	}
}

// lastMessage is the last JSON-RPC message of a body (plain JSON, or the
// data of an event stream's last event).
func lastMessage(body string) string {
	if !strings.Contains(body, "data: ") {
		return body
	}
	i := strings.LastIndex(body, "data: ")
	return strings.TrimSpace(strings.SplitN(body[i+len("data: "):], "\n", 2)[0])
}

// Behind a round-robin balancer on PostgreSQL, a 2026-07-28 client's call
// parks on one replica and its retries, with the answers, reach the
// other: each answer goes to the upstream session by its id, and the
// call's answer comes back through the store.
func TestPassThroughInputAcrossReplicas(t *testing.T) {
	t.Parallel()
	up := newAskingUpstream(t)
	set, err := mcptools.New([]mcptools.ServerConfig{{Name: "up", Transport: mcptools.TransportStreamableHTTP, URL: up.url}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	urls, _ := replicas(t, mcpserver.Options{Upstreams: set}, map[string]string{"alice": "alice"})
	// Each call goes to replica 0, where it parks; each retry (it carries
	// the requestState) to replica 1.
	rr := &roundRobin{urls: urls, token: "alice", pin: func(body string, _ []hop) (int, bool) {
		if !strings.Contains(body, `"tools/call"`) {
			return 0, false
		}
		if strings.Contains(body, `"requestState"`) {
			return 1, true
		}
		return 0, true
	}}
	var asked atomic.Int32
	cs := connectAt(t, urls[0]+"/wunder/mcp/up", &http.Client{Transport: rr}, answering(&asked), "2026-07-28")
	for _, c := range []struct{ tool, want string }{{"ask", "hello ada"}, {"ask-twice", "ada lovelace"}, {"sample", "the model said: five seven five"}} {
		if got := callText(t, cs, c.tool); got != c.want {
			t.Errorf("%s: %q, want %q", c.tool, got, c.want)
		}
	}
	calls := map[int]int{}
	for _, h := range rr.hops() {
		if h.what == "tools/call" {
			if h.status != http.StatusOK {
				t.Errorf("tools/call on replica %d: HTTP %d", h.replica, h.status)
			}
			calls[h.replica]++
		}
	}
	if calls[0] != 3 || calls[1] != 4 || asked.Load() != 4 {
		t.Errorf("tools/call per replica %v, questions %d; want the 3 calls on replica 0, their 4 retries on replica 1", calls, asked.Load())
	}
}

// A parked call keeps at most 1000 of the upstream's messages: one that
// sends more is cancelled upstream, and the retry following it ends with
// the error that names the bound.
func TestPassThroughParkedCallBounded(t *testing.T) {
	t.Parallel()
	up := newAskingUpstream(t)
	url := up.gatewayTo(t, mcpserver.Options{}, nil)
	hdr, call, state := rawAsk(t, url, "flood", `"progressToken":"p1",`)
	status, body := post(t, url, hdr, call(`,"requestState":"`+state+`","inputResponses":{"input-0":{"action":"accept","content":{"name":"ada"}}}`))
	last := lastMessage(body)
	if status != http.StatusOK || !strings.Contains(last, "more than 1000 messages") || strings.Contains(body, "flooded ada") {
		t.Fatalf("the retry of a call whose upstream floods it: HTTP %d, last message %s", status, last)
	}
	if n := strings.Count(body, "notifications/progress"); n == 0 || n >= 1000 {
		t.Errorf("the retry relayed %d progress notifications; want those the call kept, fewer than 1000", n)
	}
}
