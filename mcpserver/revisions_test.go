package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/mcpserver"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// The revisions every test of this file names: the sessionless one and
// those with sessions.
const current = "2026-07-28"

var older = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// In the default configuration a go-sdk client negotiates 2026-07-28
// (server/discover, no session) and runs wunder@run with progress, while
// clients of every older revision get a session id on the same server and
// run it too. Lists say how long they may be cached, and that they are the
// caller's own (private).
func TestRevisionsSideBySide(t *testing.T) {
	t.Parallel()
	turns := make([]orchestratortest.Turn, 1+len(older))
	for i := range turns {
		turns[i] = orchestratortest.Turn{Content: "the answer"}
	}
	e := newEnv(t, mcpserver.Options{}, turns...)
	progress := make(chan string, 64)
	cs := connect(t, e.url+"/wunder/mcp", nil, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		select {
		case progress <- r.Params.Message:
		default:
		}
	}})
	if v := cs.InitializeResult().ProtocolVersion; v != current || cs.ID() != "" {
		t.Fatalf("default client: revision %q session %q, want %s without a session", v, cs.ID(), current)
	}
	params := &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": "hello"}}
	params.SetProgressToken("p")
	res, err := cs.CallTool(t.Context(), params)
	if err != nil || res.IsError {
		t.Fatalf("wunder__run at %s: %v %+v", current, err, res)
	}
	if !strings.Contains(text(res), `"answer":"the answer"`) {
		t.Errorf("wunder__run at %s: %s", current, text(res))
	}
	if msg := <-progress; msg == "" {
		t.Error("a progress notification without a message")
	}
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if list.CacheScope != "private" || list.TTLMs != 30000 || len(list.Tools) != 2 {
		t.Errorf("tools/list at %s: cacheScope %q ttlMs %d, %d tools; want private, 30000, 2", current, list.CacheScope, list.TTLMs, len(list.Tools))
	}

	for _, v := range older {
		old := connectAt(t, e.url+"/wunder/mcp", nil, nil, v)
		if got := old.InitializeResult().ProtocolVersion; got != v || old.ID() == "" {
			t.Errorf("client at %s: negotiated %q, session %q; want %s with a session", v, got, old.ID(), v)
			continue
		}
		res, err := old.CallTool(t.Context(), &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": "hello"}})
		if err != nil || res.IsError {
			t.Errorf("wunder__run at %s: %v %+v", v, err, res)
		}
	}
}

// A 2025-11-25 client on the default server still gets its session and is
// asked through elicitation/create, while a 2026-07-28 client of the same
// server is asked through an input-required result: both approve, and
// the tool runs once for each.
func TestElicitationBesideInputRequired(t *testing.T) {
	t.Parallel()
	turns := append(deployTurns(`{"env":"prod"}`), deployTurns(`{"env":"dev"}`)...)
	e := newApprovalEnv(t, mcpserver.Options{}, turns...)
	approve := []*mcp.ElicitResult{accept(map[string]any{"decision": "approve"})}
	oldEl, newEl := &elicitations{answers: approve}, &elicitations{answers: slices.Clone(approve)}
	old := connectAt(t, e.url+"/wunder/mcp", nil, &mcp.ClientOptions{ElicitationHandler: oldEl.handler}, legacy)
	cur := connect(t, e.url+"/wunder/mcp", nil, &mcp.ClientOptions{ElicitationHandler: newEl.handler})
	if old.ID() == "" || cur.ID() != "" || cur.InitializeResult().ProtocolVersion != current {
		t.Fatalf("sessions: %s %q, %s %q", legacy, old.ID(), current, cur.ID())
	}
	for _, cs := range []*mcp.ClientSession{old, cur} {
		res, out := runTask(t, cs, map[string]any{"task": "deploy it", "tool_names": []string{"deploy"}})
		if res.IsError || out.State != orchestrator.RunFinished || out.Answer != "all done" {
			t.Fatalf("result %+v: %s", out, text(res))
		}
	}
	if got := e.deploy.called(); !slices.Equal(got, []string{`{"env":"prod"}`, `{"env":"dev"}`}) {
		t.Errorf("deploy ran %q", got)
	}
	for _, el := range []*elicitations{oldEl, newEl} {
		if reqs := el.requests(); len(reqs) != 1 || !strings.Contains(reqs[0].Message, "deploy") {
			t.Errorf("elicitations %+v, want one about deploy", reqs)
		}
	}
}

// From 2026-07-28 approvals are input requests: two approvals of a round
// are asked at once, keyed by approval id, and decided together; an
// answer that cannot be used is asked again with the problem, and decline
// rejects.
func TestInputRequiredSeveral(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, mcpserver.Options{}, deployTurns(`{"env":"prod"}`, `{"env":"dev"}`)...)
	var rounds [][]*mcp.ElicitParams
	var round []*mcp.ElicitParams
	el := &elicitations{}
	handler := func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		el.mu.Lock()
		defer el.mu.Unlock()
		round = append(round, req.Params)
		if len(round) == 2 || strings.Contains(req.Params.Message, "could not be used") {
			rounds = append(rounds, round)
			round = nil
		}
		switch {
		case strings.Contains(req.Params.Message, "could not be used"):
			return accept(map[string]any{"decision": "edit", "arguments": `{"env":"staging"}`}), nil
		case strings.Contains(req.Params.Message, `"prod"`):
			return accept(map[string]any{"decision": "edit", "arguments": "not json"}), nil
		}
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	cs := connect(t, e.url+"/wunder/mcp", nil, &mcp.ClientOptions{ElicitationHandler: handler})
	res, out := runTask(t, cs, map[string]any{"task": "deploy twice", "tool_names": []string{"deploy"}})
	if res.IsError || out.State != orchestrator.RunFinished || out.Answer != "all done" {
		t.Fatalf("result %+v: %s", out, text(res))
	}
	if got := e.deploy.called(); !slices.Equal(got, []string{`{"env":"staging"}`}) {
		t.Errorf("deploy ran %q, want once, edited (dev was declined)", got)
	}
	if len(rounds) != 2 || len(rounds[0]) != 2 || len(rounds[1]) != 1 || !strings.Contains(rounds[1][0].Message, "arguments must be a JSON object") {
		t.Errorf("rounds of input requests: %d %v", len(rounds), rounds)
	}
	if results := toolResults(e.model); !slices.ContainsFunc(results, func(r string) bool { return strings.Contains(r, "declined") }) {
		t.Errorf("the model did not read the rejection: %q", results)
	}
}

// Two rounds in a row of unusable answers end the call with the error
// result that lists what is pending, as elicitation does; a 2026-07-28
// client without elicitation gets what is pending at once.
func TestInputRequiredGivesUp(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, mcpserver.Options{}, deployTurns(`{"env":"prod"}`)[0], deployTurns(`{"env":"dev"}`)[0]) // neither run ends
	bad := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return accept(map[string]any{"decision": "edit", "arguments": "[1]"}), nil
	}
	cs := connect(t, e.url+"/wunder/mcp", nil, &mcp.ClientOptions{ElicitationHandler: bad})
	res, out := runTask(t, cs, map[string]any{"task": "deploy it", "tool_names": []string{"deploy"}})
	if !res.IsError || out.State != orchestrator.RunWaitingApproval || len(out.Approvals) != 1 || !strings.Contains(text(res), "failed twice") {
		t.Fatalf("result %+v: %s", out, text(res))
	}
	plain := connect(t, e.url+"/wunder/mcp", nil, nil)
	res, again := runTask(t, plain, map[string]any{"task": "deploy it", "tool_names": []string{"deploy"}})
	if res.IsError || again.State != orchestrator.RunWaitingApproval || len(again.Approvals) != 1 {
		t.Fatalf("without elicitation: %+v %s", again, text(res))
	}
	if len(e.deploy.called()) != 0 {
		t.Error("deploy ran without a decision")
	}
}

// The requestState names a run, and is no credential: bob retrying with
// the state of alice's input-required result finds no such run, and the
// approval stays pending for alice, who decides it with her own retry.
func TestInputRequiredIsScopedToTheCaller(t *testing.T) {
	t.Parallel()
	e := newApprovalEnvTokens(t, mcpserver.Options{}, map[string]string{"alice": "alice", "bob": "bob"}, deployTurns(`{"env":"prod"}`)...)
	never := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		t.Error("the client middleware was not to answer")
		return nil, nil
	}
	manual := &mcp.ClientOptions{ElicitationHandler: never, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}
	alice := connect(t, e.url+"/wunder/mcp", &http.Client{Transport: bearer("alice")}, manual)
	bob := connect(t, e.url+"/wunder/mcp", &http.Client{Transport: bearer("bob")}, manual)
	call := &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": "deploy it", "tool_names": []string{"deploy"}}}
	res, err := alice.CallTool(t.Context(), call)
	if err != nil || !res.NeedsInput() || len(res.InputRequests) != 1 || res.RequestState == "" {
		t.Fatalf("alice's call: %v %+v", err, res)
	}
	var id string
	for id = range res.InputRequests {
	}
	retry := *call
	retry.InputResponses = mcp.InputResponseMap{id: accept(map[string]any{"decision": "approve"})}
	retry.RequestState = res.RequestState
	if _, err := bob.CallTool(t.Context(), &retry); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("bob's retry with alice's state: %v, want not found", err)
	}
	if len(e.deploy.called()) != 0 {
		t.Fatal("bob's answer ran alice's tool")
	}
	retry.RequestState = "not-a-state"
	if _, err := alice.CallTool(t.Context(), &retry); err == nil || !strings.Contains(err.Error(), "requestState") {
		t.Errorf("a state wunder did not issue: %v", err)
	}
	retry.RequestState = res.RequestState
	res, err = alice.CallTool(t.Context(), &retry)
	if err != nil || res.IsError || res.NeedsInput() || !strings.Contains(text(res), "all done") {
		t.Fatalf("alice's retry: %v %+v", err, res)
	}
	if len(e.deploy.called()) != 1 {
		t.Errorf("deploy ran %d times, want once", len(e.deploy.called()))
	}
}

// post sends one JSON-RPC message to /wunder/mcp with headers, and returns
// the status and the body.
func post(t *testing.T, url string, hdr map[string]string, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// meta is the SEP-2575 _meta of a 2026-07-28 request.
const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// server/discover lists 2026-07-28 and the older revisions, in the default
// configuration and stateless alike; a request naming 2026-07-28 only in
// _meta is told the header is required (-32020) rather than refused the
// revision (-32022).
func TestDiscoverListsRevisions(t *testing.T) {
	t.Parallel()
	for _, stateless := range []bool{false, true} {
		e := newEnv(t, mcpserver.Options{Stateless: stateless})
		status, body := post(t, e.url+"/wunder/mcp", map[string]string{"Mcp-Protocol-Version": current, "Mcp-Method": "server/discover"},
			`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta+`}}`)
		var resp struct {
			Result struct {
				SupportedVersions []string `json:"supportedVersions"`
				CacheScope        string   `json:"cacheScope"`
			} `json:"result"`
		}
		_ = json.Unmarshal([]byte(dataOf(body)), &resp)
		if status != http.StatusOK || !slices.Contains(resp.Result.SupportedVersions, current) || !slices.Contains(resp.Result.SupportedVersions, legacy) ||
			resp.Result.CacheScope != "private" {
			t.Errorf("stateless %v: server/discover: %d %s", stateless, status, body)
		}
		status, body = post(t, e.url+"/wunder/mcp", nil, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+meta+`}}`)
		if status != http.StatusBadRequest || !strings.Contains(body, "-32020") {
			t.Errorf("stateless %v: _meta without the header: %d %s, want 400 -32020", stateless, status, body)
		}
	}
}

// dataOf is the JSON of a response that may be an event stream.
func dataOf(body string) string {
	for line := range strings.SplitSeq(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			return d
		}
	}
	return body
}

// Mcp-Method and Mcp-Name must match the body: a mismatch is HTTP 400 with
// -32020 and the tool does not run; matching headers run it.
func TestStandardHeadersChecked(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{}, orchestratortest.Turn{Content: "ran"})
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wunder__run","arguments":{"task":"x"},` + meta + `}}`
	for _, hdr := range []map[string]string{
		{"Mcp-Method": "tools/call", "Mcp-Name": "wunder__approve"},
		{"Mcp-Method": "tools/list", "Mcp-Name": "wunder__run"},
		{"Mcp-Method": "tools/call"},
		{"Mcp-Name": "wunder__run"},
	} {
		hdr["Mcp-Protocol-Version"] = current
		status, body := post(t, e.url+"/wunder/mcp", hdr, call)
		if status != http.StatusBadRequest || !strings.Contains(body, "-32020") {
			t.Errorf("%v: %d %s, want 400 -32020", hdr, status, body)
		}
	}
	if runs, _ := e.o.ListRuns(t.Context(), orchestrator.RunFilter{UserID: "wunder"}); len(runs) != 0 || len(e.model.Requests()) != 0 {
		t.Fatalf("a refused call ran: %d runs", len(runs))
	}
	status, body := post(t, e.url+"/wunder/mcp", map[string]string{"Mcp-Protocol-Version": current, "Mcp-Method": "tools/call", "Mcp-Name": "wunder__run"}, call)
	if status != http.StatusOK || !strings.Contains(body, `\"answer\":\"ran\"`) {
		t.Errorf("matching headers: %d %s", status, body)
	}
}

// mcp.server.stateless means stateless only: 2026-07-28 works, and a
// 2025-11-25 client gets no session (and so cannot be asked by
// elicitation: TestStatelessAnswersPending).
func TestStatelessOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, mcpserver.Options{Stateless: true}, orchestratortest.Turn{Content: "a"}, orchestratortest.Turn{Content: "b"})
	cur := connect(t, e.url+"/wunder/mcp", nil, nil)
	old := connectAt(t, e.url+"/wunder/mcp", nil, nil, legacy)
	if cur.InitializeResult().ProtocolVersion != current || old.InitializeResult().ProtocolVersion != legacy || cur.ID() != "" || old.ID() != "" {
		t.Fatalf("stateless: %s %q, %s %q; want no sessions", cur.InitializeResult().ProtocolVersion, cur.ID(), old.InitializeResult().ProtocolVersion, old.ID())
	}
	for _, cs := range []*mcp.ClientSession{cur, old} {
		if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": "x"}}); err != nil || res.IsError {
			t.Errorf("wunder__run: %v %+v", err, res)
		}
	}
}

// A session of the default server belongs to the user who opened it: bob
// naming alice's session id gets 403, on the server that also serves
// 2026-07-28 without sessions.
func TestSessionIsTheOpenersBesideSessionless(t *testing.T) {
	t.Parallel()
	e := newEnvTokens(t, mcpserver.Options{}, map[string]string{"alice": "alice", "bob": "bob"})
	alice := connectAt(t, e.url+"/wunder/mcp", &http.Client{Transport: bearer("alice")}, nil, legacy)
	status, body := post(t, e.url+"/wunder/mcp", map[string]string{"Authorization": "Bearer bob", "Mcp-Session-Id": alice.ID(), "Mcp-Protocol-Version": legacy},
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if status != http.StatusForbidden {
		t.Errorf("bob with alice's session: %d %s, want 403", status, body)
	}
	// Naming the sessionless revision with alice's session id is no way
	// around it either.
	status, body = post(t, e.url+"/wunder/mcp", map[string]string{"Authorization": "Bearer bob", "Mcp-Session-Id": alice.ID(), "Mcp-Protocol-Version": current,
		"Mcp-Method": "tools/list"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta+`}}`)
	if status != http.StatusForbidden {
		t.Errorf("bob with alice's session at %s: %d %s, want 403", current, status, body)
	}
}

// With mcp.server.stateless a 2026-07-28 client is asked for approvals
// with input requests all the same (they need no session).
func TestStatelessInputRequired(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, mcpserver.Options{Stateless: true}, deployTurns(`{"env":"prod"}`)...)
	el := &elicitations{answers: []*mcp.ElicitResult{accept(map[string]any{"decision": "approve"})}}
	cs := connect(t, e.url+"/wunder/mcp", nil, &mcp.ClientOptions{ElicitationHandler: el.handler})
	res, out := runTask(t, cs, map[string]any{"task": "deploy it", "tool_names": []string{"deploy"}})
	if res.IsError || out.State != orchestrator.RunFinished || len(el.requests()) != 1 || len(e.deploy.called()) != 1 {
		t.Fatalf("result %+v (%d input requests, deploy ran %d): %s", out, len(el.requests()), len(e.deploy.called()), text(res))
	}
}
