package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
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

// The tests of tasks drive real go-sdk v1.8.0 clients: a session (or, at
// 2026-07-28, none) and the tasks/* methods as the SDK's custom methods.
// go-sdk knows no tasks, so what it cannot say is sent as raw JSON-RPC
// over HTTP: a 2025-11-25 tools/call's params.task, and the wire shapes
// its types decode away (capabilities.tasks, execution, resultType task).

// taskArgs are the params of tasks/*.
type taskArgs struct {
	mcp.ParamsBase
	TaskID         string               `json:"taskId,omitempty"`
	Cursor         string               `json:"cursor,omitempty"`
	InputResponses mcp.InputResponseMap `json:"inputResponses,omitempty"`
}

// taskReply is any result of tasks/get, tasks/cancel, tasks/list and
// tasks/update, at either revision.
type taskReply struct {
	mcp.ResultBase
	ResultType     string              `json:"resultType"`
	TaskID         string              `json:"taskId"`
	Status         string              `json:"status"`
	StatusMessage  string              `json:"statusMessage"`
	CreatedAt      string              `json:"createdAt"`
	LastUpdatedAt  string              `json:"lastUpdatedAt"`
	PollInterval   int                 `json:"pollInterval"`
	PollIntervalMs int                 `json:"pollIntervalMs"`
	Tasks          []taskReply         `json:"tasks"`
	NextCursor     string              `json:"nextCursor"`
	Result         *mcp.CallToolResult `json:"result"`
	Error          *jsonrpc.Error      `json:"error"`
	InputRequests  mcp.InputRequestMap `json:"inputRequests"`
}

// taskClient connects a go-sdk client that can send the tasks/* methods,
// at revision version ("": the SDK's latest, 2026-07-28).
func taskClient(t *testing.T, url string, hc *http.Client, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "tasks", Version: "1"}, opts)
	for _, m := range []string{"tasks/get", "tasks/list", "tasks/cancel", "tasks/update"} {
		if err := mcp.AddSendingCustomMethod[*taskArgs, *taskReply](c, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := mcp.AddSendingCustomMethod[*taskArgs, *mcp.CallToolResult](c, "tasks/result"); err != nil {
		t.Fatal(err)
	}
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func taskCall(t *testing.T, cs *mcp.ClientSession, method, id string) (*taskReply, error) {
	t.Helper()
	return mcp.CallCustomMethod[*taskArgs, *taskReply](t.Context(), cs, method, &taskArgs{TaskID: id})
}

// rpcAnswer is a JSON-RPC answer read raw.
type rpcAnswer struct {
	status int
	header http.Header
	Result map[string]json.RawMessage `json:"result"`
	Error  *jsonrpc.Error             `json:"error"`
}

// rpc posts one JSON-RPC request with hdr and reads its answer, from a
// JSON body or the SSE stream that carries it.
func rpc(t *testing.T, url string, hdr map[string]string, method string, params any) rpcAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
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
	a := rpcAnswer{status: resp.StatusCode, header: resp.Header}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		line := sc.Text()
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			line = data
		} else if strings.HasPrefix(line, "event:") || strings.HasPrefix(line, "id:") || line == "" {
			continue
		}
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal([]byte(line), &probe) == nil && string(probe.ID) == "7" {
			if err := json.Unmarshal([]byte(line), &a); err != nil {
				t.Fatalf("%s: %v: %s", method, err, line)
			}
			return a
		}
	}
	t.Fatalf("%s: no answer (HTTP %d)", method, resp.StatusCode)
	return a
}

func field[T any](t *testing.T, m map[string]json.RawMessage, key string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(m[key], &v); err != nil {
		t.Fatalf("%s: %v (%s)", key, err, m[key])
	}
	return v
}

// sessionHeaders are the headers of a 2025-11-25 session's requests.
func sessionHeaders(cs *mcp.ClientSession) map[string]string {
	return map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": legacy}
}

// At 2025-11-25 wunder offers tasks (capabilities.tasks; execution on
// wunder__run only) and a tools/call with params.task answers at once
// with the task, whose id is the run's; tasks/get says working while the
// run runs, tasks/list lists it, tasks/result waits for the end and
// returns what a plain call returns, related to the task; tasks/cancel of
// the ended task is -32602. Older revisions are offered none.
func TestTaskLegacy(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	e := newEnv(t, mcpserver.Options{}, orchestratortest.Turn{Content: "the answer", Wait: gate})
	url := e.url + "/wunder/mcp"

	init := func(version string) rpcAnswer {
		return rpc(t, url, nil, "initialize", map[string]any{"protocolVersion": version, "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "raw", "version": "1"}})
	}
	caps := field[map[string]json.RawMessage](t, init(legacy).Result, "capabilities")
	if got := string(caps["tasks"]); got != `{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}` {
		t.Errorf("capabilities.tasks at %s = %s", legacy, got)
	}
	if old := field[map[string]json.RawMessage](t, init("2025-06-18").Result, "capabilities"); old["tasks"] != nil {
		t.Errorf("capabilities.tasks at 2025-06-18 = %s, want none", old["tasks"])
	}

	cs := taskClient(t, url, nil, legacy, nil)
	list := rpc(t, url, sessionHeaders(cs), "tools/list", map[string]any{})
	for _, tool := range field[[]map[string]json.RawMessage](t, list.Result, "tools") {
		want := ""
		if string(tool["name"]) == `"wunder__run"` {
			want = `{"taskSupport":"optional"}`
		}
		if string(tool["execution"]) != want {
			t.Errorf("tool %s: execution %s, want %q", tool["name"], tool["execution"], want)
		}
	}

	created := rpc(t, url, sessionHeaders(cs), "tools/call", map[string]any{"name": "wunder__run", "arguments": map[string]any{"task": "hello"},
		"task": map[string]any{"ttl": 60000}})
	if created.Error != nil {
		t.Fatalf("tools/call with task: %+v", created.Error)
	}
	task := field[map[string]json.RawMessage](t, created.Result, "task")
	id := field[string](t, task, "taskId")
	if st := field[string](t, task, "status"); st != "working" || string(task["ttl"]) != "null" || string(task["pollInterval"]) != "2000" ||
		task["createdAt"] == nil || task["lastUpdatedAt"] == nil {
		t.Errorf("CreateTaskResult.task = %s", created.Result["task"])
	}
	if created.Result["content"] != nil || !strings.Contains(string(created.Result["_meta"]), "model-immediate-response") {
		t.Errorf("CreateTaskResult = %+v", created.Result)
	}
	run, err := e.o.GetRun(t.Context(), "wunder", id)
	if err != nil {
		t.Fatalf("the task's id is no run: %v", err)
	}

	got, err := taskCall(t, cs, "tasks/get", id)
	if err != nil || got.TaskID != id || got.Status != "working" || got.PollInterval != 2000 || got.CreatedAt == "" {
		t.Fatalf("tasks/get while the run runs: %v %+v", err, got)
	}
	listed, err := mcp.CallCustomMethod[*taskArgs, *taskReply](t.Context(), cs, "tasks/list", &taskArgs{})
	if err != nil || len(listed.Tasks) != 1 || listed.Tasks[0].TaskID != id || listed.NextCursor != "" {
		t.Fatalf("tasks/list: %v %+v", err, listed)
	}

	close(gate)
	res, err := mcp.CallCustomMethod[*taskArgs, *mcp.CallToolResult](t.Context(), cs, "tasks/result", &taskArgs{TaskID: id})
	if err != nil || res.IsError {
		t.Fatalf("tasks/result: %v %+v", err, res)
	}
	var out mcpserver.RunOutput
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil || out.Answer != "the answer" || out.RunID != id || out.SessionID != run.SessionID || out.State != orchestrator.RunFinished {
		t.Errorf("tasks/result structured content %s: %v", raw, err)
	}
	if !strings.Contains(text(res), `"answer":"the answer"`) {
		t.Errorf("tasks/result content: %s", text(res))
	}
	if rel, _ := res.Meta["io.modelcontextprotocol/related-task"].(map[string]any); rel["taskId"] != id {
		t.Errorf("tasks/result _meta = %v, want related-task %s", res.Meta, id)
	}
	if got, err := taskCall(t, cs, "tasks/get", id); err != nil || got.Status != "completed" {
		t.Errorf("tasks/get after the end: %v %+v", err, got)
	}
	if _, err := taskCall(t, cs, "tasks/cancel", id); !isCode(err, jsonrpc.CodeInvalidParams) || !strings.Contains(err.Error(), "terminal status 'completed'") {
		t.Errorf("tasks/cancel of a completed task: %v, want -32602", err)
	}
	if _, err := taskCall(t, cs, "tasks/get", "run_nope"); !isCode(err, jsonrpc.CodeInvalidParams) {
		t.Errorf("tasks/get of no task: %v, want -32602", err)
	}
	// A plain call stays a plain call, and its run is no task.
	plain, pout := runTask(t, connectSession(t, url, nil, nil), map[string]any{"task": "plain"})
	if plain.IsError {
		t.Fatalf("plain wunder__run: %s", text(plain))
	}
	if _, err := taskCall(t, cs, "tasks/get", pout.RunID); !isCode(err, jsonrpc.CodeInvalidParams) {
		t.Errorf("tasks/get of a plain call's run: %v, want -32602", err)
	}
	// Only wunder__run is a task.
	if a := rpc(t, url, sessionHeaders(cs), "tools/call", map[string]any{"name": "wunder__approve", "arguments": map[string]any{}, "task": map[string]any{}}); a.Error == nil || a.Error.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("wunder__approve as a task: %+v, want -32601", a.Error)
	}
}

func isCode(err error, code int64) bool {
	var e *jsonrpc.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code == code
}

// A caller that leaves tasks/result leaves the run running (it ends as
// it would have), and tasks/cancel cancels a task and its run.
func TestTaskLegacyCancel(t *testing.T) {
	t.Parallel()
	first, second := make(chan struct{}), make(chan struct{})
	defer close(second)
	e := newEnv(t, mcpserver.Options{}, orchestratortest.Turn{Content: "kept", Wait: first}, orchestratortest.Turn{Content: "never", Wait: second})
	url := e.url + "/wunder/mcp"
	sent := make(chan struct{}, 1)
	cs := taskClient(t, url, &http.Client{Transport: sentRT{method: "tasks/result", sent: sent}}, legacy, nil)
	newTask := func() string {
		created := rpc(t, url, sessionHeaders(cs), "tools/call", map[string]any{"name": "wunder__run", "arguments": map[string]any{"task": "hello"}, "task": map[string]any{}})
		return field[string](t, field[map[string]json.RawMessage](t, created.Result, "task"), "taskId")
	}
	kept, cancelled := newTask(), newTask()

	ctx, leave := context.WithCancel(t.Context())
	left := make(chan error, 1)
	go func() {
		_, err := mcp.CallCustomMethod[*taskArgs, *mcp.CallToolResult](ctx, cs, "tasks/result", &taskArgs{TaskID: kept})
		left <- err
	}()
	<-sent // the server has the request
	leave()
	if err := <-left; err == nil {
		t.Fatal("tasks/result answered before the run ended")
	}
	if got, err := taskCall(t, cs, "tasks/get", kept); err != nil || got.Status != "working" {
		t.Fatalf("tasks/get after the caller left tasks/result: %v %+v, want working", err, got)
	}
	close(first)
	res, err := mcp.CallCustomMethod[*taskArgs, *mcp.CallToolResult](t.Context(), cs, "tasks/result", &taskArgs{TaskID: kept})
	if err != nil || res.IsError || !strings.Contains(text(res), `"answer":"kept"`) {
		t.Fatalf("tasks/result of the task its caller left once: %v %+v, want its answer", err, res)
	}

	got, err := taskCall(t, cs, "tasks/cancel", cancelled)
	if err != nil || got.TaskID != cancelled || got.Status != "cancelled" {
		t.Fatalf("tasks/cancel: %v %+v", err, got)
	}
	res, err = mcp.CallCustomMethod[*taskArgs, *mcp.CallToolResult](t.Context(), cs, "tasks/result", &taskArgs{TaskID: cancelled})
	if err != nil || !res.IsError || !strings.Contains(text(res), `"state":"cancelled"`) {
		t.Fatalf("tasks/result of the cancelled task: %v %+v", err, res)
	}
	if r, err := e.o.GetRun(t.Context(), "wunder", cancelled); err != nil || r.State != orchestrator.RunCancelled {
		t.Errorf("the run: %v %+v, want cancelled", err, r)
	}
}

// sentRT signals sent once the body of a request of method has been
// handed to the connection whole.
type sentRT struct {
	method string
	sent   chan struct{}
}

func (s sentRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body == nil || r.Method != http.MethodPost {
		return http.DefaultTransport.RoundTrip(r)
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(b))
	if bytes.Contains(b, []byte(`"method":"`+s.method+`"`)) {
		r.Body = &signalAtEOF{Reader: bytes.NewReader(b), sent: s.sent}
	}
	return http.DefaultTransport.RoundTrip(r)
}

type signalAtEOF struct {
	*bytes.Reader
	sent chan struct{}
}

func (s *signalAtEOF) Read(p []byte) (int, error) {
	n, err := s.Reader.Read(p)
	if s.Len() == 0 { // all of it handed to the transport
		select {
		case s.sent <- struct{}{}:
		default:
		}
	}
	return n, err
}

func (s *signalAtEOF) Close() error { return nil }

// A task waiting for approval is input_required; at 2025-11-25 tasks/result
// asks the client by elicitation, related to the task, and goes on to the
// answer.
func TestTaskLegacyElicit(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, mcpserver.Options{}, deployTurns(`{"env":"prod"}`)...)
	url := e.url + "/wunder/mcp"
	el := &elicitations{answers: []*mcp.ElicitResult{accept(map[string]any{"decision": "approve"})}}
	cs := taskClient(t, url, nil, legacy, &mcp.ClientOptions{ElicitationHandler: el.handler})
	created := rpc(t, url, sessionHeaders(cs), "tools/call", map[string]any{"name": "wunder__run",
		"arguments": map[string]any{"task": "deploy it", "tool_names": []string{"deploy"}}, "task": map[string]any{}})
	id := field[string](t, field[map[string]json.RawMessage](t, created.Result, "task"), "taskId")
	if _, err := e.o.Wait(t.Context(), "wunder", id, 0, nil); err != nil {
		t.Fatal(err) // paused
	}
	if got, err := taskCall(t, cs, "tasks/get", id); err != nil || got.Status != "input_required" {
		t.Fatalf("tasks/get of a run waiting for approval: %v %+v", err, got)
	}
	res, err := mcp.CallCustomMethod[*taskArgs, *mcp.CallToolResult](t.Context(), cs, "tasks/result", &taskArgs{TaskID: id})
	if err != nil || res.IsError || !strings.Contains(text(res), `"answer":"all done"`) {
		t.Fatalf("tasks/result: %v %+v", err, res)
	}
	if got := e.deploy.called(); !slices.Equal(got, []string{`{"env":"prod"}`}) {
		t.Errorf("deploy ran %q", got)
	}
	reqs := el.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d elicitations, want 1", len(reqs))
	}
	if rel, _ := reqs[0].Meta["io.modelcontextprotocol/related-task"].(map[string]any); rel["taskId"] != id {
		t.Errorf("elicitation _meta = %v, want related-task %s", reqs[0].Meta, id)
	}
}

// tasksCaps declares the tasks extension (2026-07-28, per request).
var tasksCaps = &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{
	Extensions:  map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}},
	Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}},
}}

// v2Headers are the headers and _meta of a raw 2026-07-28 request that
// declares the tasks extension.
func v2Call(t *testing.T, url, method, name string, params map[string]any, declare bool) rpcAnswer {
	t.Helper()
	caps := map[string]any{}
	if declare {
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	}
	params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": current,
		"io.modelcontextprotocol/clientCapabilities": caps, "io.modelcontextprotocol/clientInfo": map[string]any{"name": "raw", "version": "1"}}
	hdr := map[string]string{"Mcp-Protocol-Version": current, "Mcp-Method": method}
	if name != "" {
		hdr["Mcp-Name"] = name
	}
	return rpc(t, url, hdr, method, params)
}

// At 2026-07-28 wunder offers the tasks extension in server/discover;
// wunder__run of a client that declares it answers with a flat
// CreateTaskResult (resultType task); tasks/get inlines the input
// requests of the run's approvals, which tasks/update answers (input.go's
// decisions), and at the end the result a plain call gives (no
// related-task). tasks/result and tasks/list are not the extension's; a
// client that declares no extension gets -32021 and a plain result; a
// mismatched Mcp-Name is -32020 with HTTP 400.
func TestTaskExtension(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, mcpserver.Options{}, append(deployTurns(`{"env":"prod"}`), orchestratortest.Turn{Content: "plain"})...)
	url := e.url + "/wunder/mcp"
	cs := taskClient(t, url, nil, "", tasksCaps)
	if v := cs.InitializeResult().ProtocolVersion; v != current {
		t.Fatalf("negotiated %s", v)
	}
	if _, ok := cs.InitializeResult().Capabilities.Extensions["io.modelcontextprotocol/tasks"]; !ok {
		t.Errorf("server/discover capabilities %+v lack the tasks extension", cs.InitializeResult().Capabilities)
	}

	created := v2Call(t, url, "tools/call", "wunder__run", map[string]any{"name": "wunder__run",
		"arguments": map[string]any{"task": "deploy it", "tool_names": []string{"deploy"}}}, true)
	if created.Error != nil {
		t.Fatalf("tools/call: %+v", created.Error)
	}
	r := created.Result
	id := field[string](t, r, "taskId")
	if field[string](t, r, "resultType") != "task" || field[string](t, r, "status") != "working" || string(r["ttlMs"]) != "null" ||
		string(r["pollIntervalMs"]) != "2000" || r["task"] != nil || r["ttl"] != nil || r["content"] != nil || r["requestState"] != nil {
		t.Errorf("CreateTaskResult = %+v", r)
	}
	if _, err := e.o.Wait(t.Context(), "wunder", id, 0, nil); err != nil {
		t.Fatal(err) // paused for the approval
	}
	got, err := taskCall(t, cs, "tasks/get", id)
	if err != nil || got.ResultType != "complete" || got.Status != "input_required" || len(got.InputRequests) != 1 || got.Result != nil {
		t.Fatalf("tasks/get of a run waiting for approval: %v %+v", err, got)
	}
	answers := mcp.InputResponseMap{"nope": accept(map[string]any{"decision": "approve"})}
	for key, req := range got.InputRequests {
		if p, ok := req.(*mcp.ElicitParams); !ok || !strings.Contains(p.Message, "deploy") {
			t.Errorf("input request %s = %+v", key, req)
		}
		answers[key] = accept(map[string]any{"decision": "approve"})
	}
	// An answer that cannot be used is refused, the approval still pending.
	bad := mcp.InputResponseMap{}
	for key := range got.InputRequests {
		bad[key] = accept(map[string]any{"decision": "maybe"})
	}
	if _, err := mcp.CallCustomMethod[*taskArgs, *taskReply](t.Context(), cs, "tasks/update", &taskArgs{TaskID: id, InputResponses: bad}); !isCode(err, jsonrpc.CodeInvalidParams) {
		t.Errorf("tasks/update with an unusable answer: %v, want -32602", err)
	}
	ack, err := mcp.CallCustomMethod[*taskArgs, *taskReply](t.Context(), cs, "tasks/update", &taskArgs{TaskID: id, InputResponses: answers})
	if err != nil || ack.ResultType != "complete" || ack.TaskID != "" {
		t.Fatalf("tasks/update: %v %+v", err, ack)
	}
	if _, err := e.o.Wait(t.Context(), "wunder", id, 0, nil); err != nil {
		t.Fatal(err) // ended
	}
	got, err = taskCall(t, cs, "tasks/get", id)
	if err != nil || got.Status != "completed" || got.Result == nil || got.Result.IsError || !strings.Contains(text(got.Result), `"answer":"all done"`) {
		t.Fatalf("tasks/get after the end: %v %+v", err, got)
	}
	if got.Result.Meta["io.modelcontextprotocol/related-task"] != nil {
		t.Errorf("inlined result carries related-task: %v", got.Result.Meta)
	}
	if d := e.deploy.called(); !slices.Equal(d, []string{`{"env":"prod"}`}) {
		t.Errorf("deploy ran %q", d)
	}
	if ack, err := taskCall(t, cs, "tasks/cancel", id); err != nil || ack.ResultType != "complete" {
		t.Errorf("tasks/cancel of an ended task: %v %+v, want an empty ack", err, ack)
	}
	for _, m := range []string{"tasks/result", "tasks/list"} {
		if _, err := taskCall(t, cs, m, id); !isCode(err, jsonrpc.CodeMethodNotFound) {
			t.Errorf("%s at %s: %v, want -32601", m, current, err)
		}
	}
	if _, err := taskCall(t, cs, "tasks/get", "run_nope"); !isCode(err, jsonrpc.CodeInvalidParams) {
		t.Errorf("tasks/get of no task: %v, want -32602", err)
	}

	if a := v2Call(t, url, "tasks/get", id, map[string]any{"taskId": id}, false); a.Error == nil || a.Error.Code != mcp.CodeMissingRequiredClientCapabilities ||
		!strings.Contains(string(a.Error.Data), `"io.modelcontextprotocol/tasks"`) {
		t.Errorf("tasks/get without the extension: %+v, want -32021 naming it", a.Error)
	}
	if a := v2Call(t, url, "tasks/get", "other", map[string]any{"taskId": id}, true); a.status != http.StatusBadRequest || a.Error == nil || a.Error.Code != mcp.CodeHeaderMismatch {
		t.Errorf("tasks/get with a mismatched Mcp-Name: HTTP %d %+v, want 400 -32020", a.status, a.Error)
	}
	plain := v2Call(t, url, "tools/call", "wunder__run", map[string]any{"name": "wunder__run", "arguments": map[string]any{"task": "hi"}}, false)
	if plain.Error != nil || plain.Result["taskId"] != nil || field[string](t, plain.Result, "resultType") != "complete" {
		t.Errorf("wunder__run without the extension: %+v %+v, want a plain result", plain.Error, plain.Result)
	}
}

// Every lookup of a task is the caller's: another user's task id is not
// found, at either revision, and tasks/list lists the caller's own.
func TestTaskIsolation(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	defer close(gate)
	tokens := map[string]string{"tok-alice": "alice", "tok-bob": "bob"}
	e := newEnvTokens(t, mcpserver.Options{}, tokens, orchestratortest.Turn{Content: "x", Wait: gate}, orchestratortest.Turn{Content: "y", Wait: gate})
	url := e.url + "/wunder/mcp"
	as := func(tok string) *http.Client { return &http.Client{Transport: bearer(tok)} }
	alice := taskClient(t, url, as("tok-alice"), legacy, nil)
	hdr := sessionHeaders(alice)
	hdr["Authorization"] = "Bearer tok-alice"
	created := rpc(t, url, hdr, "tools/call", map[string]any{"name": "wunder__run", "arguments": map[string]any{"task": "mine"}, "task": map[string]any{}})
	id := field[string](t, field[map[string]json.RawMessage](t, created.Result, "task"), "taskId")
	if got, err := taskCall(t, alice, "tasks/get", id); err != nil || got.TaskID != id {
		t.Fatalf("alice's tasks/get: %v %+v", err, got)
	}

	bob := taskClient(t, url, as("tok-bob"), legacy, nil)
	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/result"} {
		var err error
		if m == "tasks/result" {
			_, err = mcp.CallCustomMethod[*taskArgs, *mcp.CallToolResult](t.Context(), bob, m, &taskArgs{TaskID: id})
		} else {
			_, err = taskCall(t, bob, m, id)
		}
		if !isCode(err, jsonrpc.CodeInvalidParams) || !strings.Contains(err.Error(), "not found") {
			t.Errorf("bob's %s of alice's task: %v, want not found", m, err)
		}
	}
	if l, err := mcp.CallCustomMethod[*taskArgs, *taskReply](t.Context(), bob, "tasks/list", &taskArgs{}); err != nil || len(l.Tasks) != 0 {
		t.Errorf("bob's tasks/list: %v %+v, want none", err, l)
	}
	bob2 := taskClient(t, url, as("tok-bob"), "", tasksCaps)
	if _, err := taskCall(t, bob2, "tasks/get", id); !isCode(err, jsonrpc.CodeInvalidParams) {
		t.Errorf("bob's tasks/get at %s: %v, want not found", current, err)
	}
	if r, err := e.o.GetRun(t.Context(), "alice", id); err != nil || r.State.Terminal() {
		t.Errorf("alice's run after bob's tries: %v %+v", err, r)
	}
}

// tasks/list pages with the core's cursor: every task once, newest first.
func TestTaskListPages(t *testing.T) {
	t.Parallel()
	const n = 53 // more than a page (50)
	turns := make([]orchestratortest.Turn, n)
	for i := range turns {
		turns[i] = orchestratortest.Turn{Content: "done"}
	}
	e := newEnv(t, mcpserver.Options{}, turns...)
	url := e.url + "/wunder/mcp"
	cs := taskClient(t, url, nil, legacy, nil)
	var ids []string
	for range n {
		created := rpc(t, url, sessionHeaders(cs), "tools/call", map[string]any{"name": "wunder__run", "arguments": map[string]any{"task": "t"}, "task": map[string]any{}})
		ids = append(ids, field[string](t, field[map[string]json.RawMessage](t, created.Result, "task"), "taskId"))
	}
	var listed []string
	cursor := ""
	for pages := 0; ; pages++ {
		l, err := mcp.CallCustomMethod[*taskArgs, *taskReply](t.Context(), cs, "tasks/list", &taskArgs{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range l.Tasks {
			listed = append(listed, tk.TaskID)
		}
		if cursor = l.NextCursor; cursor == "" {
			break
		}
		if pages > n {
			t.Fatal("tasks/list does not end")
		}
	}
	slices.Reverse(ids)
	if !slices.Equal(listed, ids) {
		t.Errorf("tasks/list listed %d tasks %v, want %d newest first", len(listed), listed, len(ids))
	}
	if _, err := mcp.CallCustomMethod[*taskArgs, *taskReply](t.Context(), cs, "tasks/list", &taskArgs{Cursor: "garbage"}); !isCode(err, jsonrpc.CodeInvalidParams) {
		t.Errorf("tasks/list with a bad cursor: %v, want -32602", err)
	}
}
