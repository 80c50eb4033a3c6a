package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/monitor"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

type env struct {
	srv   *httptest.Server
	h     http.Handler // what srv serves, for a test that calls it directly
	gw    *gateway.Server
	o     *orchestrator.Orchestrator
	model *orchestratortest.ScriptedModel
	files *orchestratortest.Files
}

type envOpts struct {
	gw      gateway.Options
	orch    orchestrator.Options
	turns   []orchestratortest.Turn
	noModel bool
	extra   []orchestrator.Toolset
}

func newEnv(t testing.TB, eo envOpts) *env {
	t.Helper()
	e := &env{model: orchestratortest.NewScriptedModel(eo.turns...), files: orchestratortest.NewFiles()}
	models := orchestratortest.Models{Model: e.model, Settings: orchestrator.ModelSettings{Name: "scripted", ToolCallMode: orchestrator.ModeToolCall, MaxRounds: 5, Stream: true}}
	if eo.noModel {
		models = orchestratortest.Models{}
	}
	reg := orchestrator.NewRegistry("", nil, append([]orchestrator.Toolset{e.files.Toolset()}, eo.extra...)...)
	e.o = orchestrator.New(orchestratortest.NewMemStore(), models, reg, &eo.orch)
	if eo.gw.Monitor == nil {
		eo.gw.Monitor = monitor.New(e.o)
	}
	e.gw = gateway.New(e.o, &eo.gw)
	e.h = e.gw.Handler()
	e.srv = httptest.NewServer(e.h)
	t.Cleanup(func() {
		e.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.o.Close(ctx)
	})
	return e
}

func (e *env) do(t *testing.T, method, path, body string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" || method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		req.Header.Set("Content-Type", "application/json") // as every JSON client does; a test that means otherwise sets hdr
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type sseEvent struct {
	id, typ string
	ev      orchestrator.Event
}

// readSSE parses a whole event stream.
func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	for ev, err := range sse.Read(r) {
		if err != nil {
			t.Fatalf("reading the stream: %v", err)
		}
		cur := sseEvent{id: ev.ID, typ: ev.Type}
		if err := json.Unmarshal(ev.Data, &cur.ev); err != nil {
			t.Fatalf("event data %q: %v", ev.Data, err)
		}
		out = append(out, cur)
	}
	return out
}

type problem struct {
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Code      string `json:"code"`
	Detail    string `json:"detail"`
	RequestID string `json:"request_id"`
}

func wantProblem(t *testing.T, resp *http.Response, status int, code string) problem {
	t.Helper()
	var p problem
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d content type %q body %s; want problem %d %s", resp.StatusCode, ct, b, status, code)
	}
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != status || p.Status != status || p.Code != code || p.Detail == "" || p.RequestID == "" {
		t.Fatalf("problem = %d %+v; want %d %s", resp.StatusCode, p, status, code)
	}
	return p
}

var writeRead = []orchestratortest.Turn{
	{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("write_file", `{"path":"a.txt","content":"hi"}`)}},
	{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("read_file", `{"path":"a.txt"}`)}},
	{Content: "a.txt says hi", Usage: &orchestrator.Usage{InputTokens: 3, OutputTokens: 2, TotalTokens: 5}},
}

func TestWunderStreams(t *testing.T) {
	e := newEnv(t, envOpts{turns: writeRead})
	resp := e.do(t, "POST", "/wunder", `{"user_id":"alice","question":"write then read","tool_names":["write_file","read_file"]}`)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	runID := resp.Header.Get("X-Run-Id")
	evs := readSSE(t, resp.Body)
	for i, ev := range evs {
		if ev.id != strconv.Itoa(i+1) || ev.ev.Seq != int64(i+1) || ev.typ != ev.ev.Type || ev.ev.RunID != runID {
			t.Fatalf("event %d: id %s type %s = %+v", i, ev.id, ev.typ, ev.ev)
		}
	}
	last := evs[len(evs)-1]
	var f orchestrator.FinalData
	_ = json.Unmarshal(last.ev.Data, &f)
	if last.typ != "final" || f.Answer != "a.txt says hi" || f.StopReason != "model_response" {
		t.Fatalf("last = %s %+v", last.typ, f)
	}
	seen := map[string]bool{}
	for _, ev := range evs {
		seen[ev.typ] = true
	}
	for _, typ := range []string{"progress", "llm_request", "llm_output_delta", "llm_output", "tool_call", "tool_result", "token_usage", "final"} {
		if !seen[typ] {
			t.Errorf("no %s event", typ)
		}
	}
}

func TestWunderJSON(t *testing.T) {
	e := newEnv(t, envOpts{turns: writeRead})
	resp := e.do(t, "POST", "/wunder", `{"user_id":"alice","question":"q","tool_names":["write_file","read_file"],"stream":false,"tool_call_mode":"function_call"}`)
	var got struct {
		SessionID, RunID, Answer, StopReason, State string `json:",omitempty"`
		Usage                                       orchestrator.Usage
	}
	body, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	var raw map[string]any
	_ = json.Unmarshal(body, &raw)
	for _, k := range []string{"session_id", "run_id", "answer", "usage", "stop_reason"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("response lacks %s: %s", k, body)
		}
	}
	if raw["answer"] != "a.txt says hi" || raw["stop_reason"] != "model_response" {
		t.Fatalf("body %s", body)
	}
	if c, _ := e.files.Get("alice", "a.txt"); c != "hi" {
		t.Fatalf("file = %q", c)
	}
}

func TestResumeWithLastEventID(t *testing.T) {
	e := newEnv(t, envOpts{turns: writeRead})
	resp := e.do(t, "POST", "/wunder/runs", `{"user_id":"bob","question":"q","tool_names":["write_file","read_file"]}`)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("submit: %d", resp.StatusCode)
	}
	var run orchestrator.Run
	_ = json.NewDecoder(resp.Body).Decode(&run)
	if resp.Header.Get("Location") != "/wunder/runs/"+run.ID {
		t.Fatalf("location %q", resp.Header.Get("Location"))
	}
	all := readSSE(t, e.do(t, "GET", "/wunder/runs/"+run.ID+"/events?user_id=bob", "").Body)
	for _, cut := range []int{1, 3, len(all) - 1} {
		rest := readSSE(t, e.do(t, "GET", "/wunder/runs/"+run.ID+"/events", "", "Last-Event-ID", strconv.Itoa(cut)).Body)
		if len(rest) != len(all)-cut || rest[0].ev.Seq != int64(cut+1) {
			t.Fatalf("resume after %d: %d events from %d; want %d", cut, len(rest), rest[0].ev.Seq, len(all)-cut)
		}
	}
	rest := readSSE(t, e.do(t, "GET", "/wunder/runs/"+run.ID+"/events?after=2", "").Body)
	if rest[0].ev.Seq != 3 {
		t.Fatalf("?after=2 starts at %d", rest[0].ev.Seq)
	}
}

func TestBadRequests(t *testing.T) {
	// POST /wunder carries attachments: its limit is AttachmentBodyBytes
	// (TestAttachmentBodyLimit checks the two apart).
	e := newEnv(t, envOpts{turns: writeRead, gw: gateway.Options{MaxBodyBytes: 256, AttachmentBodyBytes: 256}})
	big := `{"user_id":"u","question":"` + strings.Repeat("x", 300) + `"}`
	cases := []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
		code                     string
	}{
		{"body over the limit", "POST", "/wunder", big, nil, 413, "body_too_large"},
		{"malformed JSON", "POST", "/wunder", `{"user_id":"u",`, nil, 400, "invalid_json"},
		{"not an object", "POST", "/wunder", `[1,2]`, nil, 400, "invalid_json"},
		{"trailing data", "POST", "/wunder", `{"user_id":"u","question":"q"} {}`, nil, 400, "invalid_json"},
		{"wrong type", "POST", "/wunder", `{"user_id":7,"question":"q"}`, nil, 400, "invalid_json"},
		{"empty body", "POST", "/wunder", ``, nil, 400, "invalid_json"},
		{"unknown field", "POST", "/wunder", `{"user_id":"u","question":"q","tool_name":["x"]}`, nil, 400, "unknown_field"},
		{"wrong media type", "POST", "/wunder", `{}`, []string{"Content-Type", "text/plain"}, 415, "unsupported_media_type"},
		{"no media type", "POST", "/wunder", `{"user_id":"u","question":"q"}`, []string{"Content-Type", ""}, 415, "unsupported_media_type"},
		{"missing user_id", "POST", "/wunder", `{"question":"q"}`, nil, 400, "missing_user_id"},
		{"missing question", "POST", "/wunder", `{"user_id":"u"}`, nil, 400, "missing_question"},
		{"bad user_id", "POST", "/wunder", `{"user_id":"../etc","question":"q"}`, nil, 400, "invalid_argument"},
		{"unknown tool", "POST", "/wunder", `{"user_id":"u","question":"q","tool_names":["rm_rf"]}`, nil, 400, "tool_not_found"},
		{"unknown session", "POST", "/wunder", `{"user_id":"u","question":"q","session_id":"sess_nope"}`, nil, 404, "session_not_found"},
		{"bad tool_call_mode", "POST", "/wunder", `{"user_id":"u","question":"q","tool_call_mode":"xml"}`, nil, 400, "invalid_argument"},
		{"unknown run", "GET", "/wunder/runs/run_nope", "", nil, 404, "not_found"},
		{"events of unknown run", "GET", "/wunder/runs/run_nope/events", "", nil, 404, "not_found"},
		{"cancel unknown run", "POST", "/wunder/runs/run_nope/cancel", "", nil, 404, "not_found"},
		{"unknown session history", "GET", "/wunder/sessions/sess_nope?user_id=u", "", nil, 404, "not_found"},
		{"sessions without user", "GET", "/wunder/sessions", "", nil, 400, "missing_user_id"},
		{"tools without user", "GET", "/wunder/tools", "", nil, 400, "missing_user_id"},
		{"bad paging", "GET", "/wunder/sessions?user_id=u&limit=-1", "", nil, 400, "invalid_argument"},
		{"bad cursor", "GET", "/wunder/sessions?user_id=u&cursor=%25%25", "", nil, 400, "invalid_argument"},
		{"cursor not issued here", "GET", "/wunder/runs?user_id=u&cursor=bm8tZG90", "", nil, 400, "invalid_argument"},
		{"wrong method", "GET", "/wunder", "", nil, 405, "method_not_allowed"},
		{"no such route", "GET", "/nope", "", nil, 404, "route_not_found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantProblem(t, e.do(t, c.method, c.path, c.body, c.hdr...), c.status, c.code)
		})
	}
	// Bad Last-Event-ID on a real run.
	resp := e.do(t, "POST", "/wunder/runs", `{"user_id":"u","question":"q"}`)
	var run orchestrator.Run
	_ = json.NewDecoder(resp.Body).Decode(&run)
	wantProblem(t, e.do(t, "GET", "/wunder/runs/"+run.ID+"/events", "", "Last-Event-ID", "abc"), 400, "invalid_argument")
}

func TestNoModelConfigured(t *testing.T) {
	e := newEnv(t, envOpts{noModel: true})
	p := wantProblem(t, e.do(t, "POST", "/wunder", `{"user_id":"u","question":"q"}`), 503, "unavailable")
	if !strings.Contains(p.Detail, "no model configured") {
		t.Fatalf("detail %q", p.Detail)
	}
}

func TestBusyAndQueueFull(t *testing.T) {
	gate := make(chan struct{})
	started := make(chan struct{})
	e := newEnv(t, envOpts{
		orch:  orchestrator.Options{MaxActiveRuns: 1, QueueSize: -1, QueueRetryAfter: 3 * time.Second},
		turns: []orchestratortest.Turn{{Content: "slow", Wait: gate, Started: started}, {Content: "ok"}},
	})
	first := e.do(t, "POST", "/wunder/runs", `{"user_id":"alice","question":"q"}`)
	if first.StatusCode != 202 {
		t.Fatalf("first %d", first.StatusCode)
	}
	<-started
	wantProblem(t, e.do(t, "POST", "/wunder", `{"user_id":"alice","question":"again"}`), 429, "busy")
	resp := e.do(t, "POST", "/wunder", `{"user_id":"bob","question":"q"}`)
	wantProblem(t, resp, 503, "unavailable")
	if resp.Header.Get("Retry-After") != "3" {
		t.Fatalf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	close(gate)
}

func TestCancelOverHTTP(t *testing.T) {
	started := make(chan struct{})
	e := newEnv(t, envOpts{turns: []orchestratortest.Turn{{Content: "x", Wait: make(chan struct{}), Started: started}}})
	resp := e.do(t, "POST", "/wunder", `{"user_id":"u","question":"q"}`)
	runID := resp.Header.Get("X-Run-Id")
	<-started
	if c := e.do(t, "POST", "/wunder/runs/"+runID+"/cancel?user_id=u", ""); c.StatusCode != 202 {
		t.Fatalf("cancel %d", c.StatusCode)
	}
	evs := readSSE(t, resp.Body)
	var f orchestrator.FinalData
	_ = json.Unmarshal(evs[len(evs)-1].ev.Data, &f)
	if f.State != orchestrator.RunCancelled {
		t.Fatalf("final %+v", f)
	}
	wantProblem(t, e.do(t, "POST", "/wunder/runs/"+runID+"/cancel", ""), 409, "conflict")
	wantProblem(t, e.do(t, "POST", "/wunder/runs/"+runID+"/cancel?user_id=mallory", ""), 404, "not_found")
}

func TestAPIKey(t *testing.T) {
	e := newEnv(t, envOpts{gw: gateway.Options{APIKey: "s3cret"}, turns: []orchestratortest.Turn{{Content: "ok"}}})
	wantProblem(t, e.do(t, "GET", "/wunder/tools?user_id=u", ""), 401, "unauthenticated")
	wantProblem(t, e.do(t, "GET", "/wunder/tools?user_id=u", "", "X-API-Key", "wrong"), 401, "unauthenticated")
	if r := e.do(t, "GET", "/wunder/tools?user_id=u", "", "X-API-Key", "s3cret"); r.StatusCode != 200 {
		t.Fatalf("X-API-Key: %d", r.StatusCode)
	}
	if r := e.do(t, "GET", "/wunder/tools?user_id=u", "", "Authorization", "Bearer s3cret"); r.StatusCode != 200 {
		t.Fatalf("bearer: %d", r.StatusCode)
	}
	if r := e.do(t, "GET", "/healthz", ""); r.StatusCode != 200 {
		t.Fatalf("healthz needs no key: %d", r.StatusCode)
	}
}

// Lists page by cursor: pages of two walk every session and run once, in
// the order of the whole list, and the last page has no next cursor.
func TestListsPageByCursor(t *testing.T) {
	var turns []orchestratortest.Turn
	for range 5 {
		turns = append(turns, orchestratortest.Turn{Content: "ok"})
	}
	e := newEnv(t, envOpts{turns: turns})
	for i := range 5 {
		resp := e.do(t, "POST", "/wunder", fmt.Sprintf(`{"user_id":"u","question":"q%d","stream":false}`, i))
		if resp.StatusCode != 200 {
			t.Fatalf("run %d: %d", i, resp.StatusCode)
		}
	}
	type item struct {
		SessionID string `json:"session_id"`
		RunID     string `json:"run_id"`
	}
	list := func(path string) ([]item, string) {
		t.Helper()
		resp := e.do(t, "GET", path, "")
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		var body struct {
			Sessions, Runs []item
			Next           *string `json:"next_cursor"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Next == nil {
			t.Fatalf("GET %s: %+v, %v (next_cursor always present)", path, body, err)
		}
		return append(body.Sessions, body.Runs...), *body.Next
	}
	for _, c := range []struct {
		path string
		id   func(item) string
	}{
		{"/wunder/sessions?user_id=u", func(i item) string { return i.SessionID }},
		{"/wunder/runs?user_id=u", func(i item) string { return i.RunID }},
	} {
		all, next := list(c.path)
		if len(all) != 5 || next != "" {
			t.Fatalf("%s: %d items, next %q; want 5 and none", c.path, len(all), next)
		}
		var want, got []string
		for _, x := range all {
			want = append(want, c.id(x))
		}
		cursor := ""
		for page := 0; page < 3; page++ {
			items, next := list(c.path + "&limit=2&cursor=" + url.QueryEscape(cursor))
			for _, x := range items {
				got = append(got, c.id(x))
			}
			if (page < 2) != (next != "") {
				t.Fatalf("%s page %d: next cursor %q", c.path, page, next)
			}
			cursor = next
		}
		if !slices.Equal(want, got) {
			t.Fatalf("%s by cursor: %v; want %v", c.path, got, want)
		}
	}
}

func TestSessionsToolsAndPrompt(t *testing.T) {
	e := newEnv(t, envOpts{turns: []orchestratortest.Turn{{Content: "first"}, {Content: "second"}}})
	resp := e.do(t, "POST", "/wunder", `{"user_id":"u","question":"hello","stream":false}`)
	var first struct {
		SessionID string `json:"session_id"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&first)
	resp = e.do(t, "POST", "/wunder", `{"user_id":"u","question":"again","stream":false,"session_id":"`+first.SessionID+`"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("second run %d", resp.StatusCode)
	}
	var list struct{ Sessions []orchestrator.Session }
	_ = json.NewDecoder(e.do(t, "GET", "/wunder/sessions?user_id=u", "").Body).Decode(&list)
	if len(list.Sessions) != 1 || list.Sessions[0].Title != "hello" {
		t.Fatalf("sessions %+v", list)
	}
	var hist struct {
		Messages []orchestrator.Message `json:"messages"`
	}
	_ = json.NewDecoder(e.do(t, "GET", "/wunder/sessions/"+first.SessionID+"?user_id=u", "").Body).Decode(&hist)
	if len(hist.Messages) != 4 || hist.Messages[3].Content != "second" {
		t.Fatalf("history %+v", hist.Messages)
	}
	wantProblem(t, e.do(t, "GET", "/wunder/sessions/"+first.SessionID+"?user_id=other", ""), 404, "not_found")
	if r := e.do(t, "DELETE", "/wunder/sessions/"+first.SessionID+"?user_id=u", ""); r.StatusCode != 204 {
		t.Fatalf("delete %d", r.StatusCode)
	}
	var groups map[string][]orchestrator.CatalogEntry
	_ = json.NewDecoder(e.do(t, "GET", "/wunder/tools?user_id=u", "").Body).Decode(&groups)
	n := 0
	for _, g := range orchestrator.CatalogGroups {
		list, present := groups[g]
		if !present {
			t.Errorf("catalog has no group %q: %v", g, groups)
		}
		for _, tl := range list {
			n++
			if tl.WireName == "" || tl.InputSchema == nil || tl.Description == "" {
				t.Errorf("catalog entry %+v lacks a wire name, schema or description", tl)
			}
		}
	}
	if n != 6 || len(groups) != len(orchestrator.CatalogGroups) {
		t.Fatalf("catalog = %+v; want the 6 tools (ask_user, final_response, plan, read_file, reply, write_file) in the %d groups and nothing else", groups, len(orchestrator.CatalogGroups))
	}
	var prompt struct{ Prompt string }
	_ = json.NewDecoder(e.do(t, "POST", "/wunder/system_prompt", `{"user_id":"u","tool_names":["read_file"],"language":"zh"}`).Body).Decode(&prompt)
	if !strings.Contains(prompt.Prompt, "read_file") || !strings.Contains(prompt.Prompt, "工具") {
		t.Fatalf("prompt %q", prompt.Prompt)
	}
}

func TestCORS(t *testing.T) {
	e := newEnv(t, envOpts{gw: gateway.Options{CORS: gateway.CORSOptions{AllowOrigins: []string{"https://app.example"}, AllowMethods: []string{"POST"}, AllowHeaders: []string{"Content-Type"}}}})
	r := e.do(t, "OPTIONS", "/wunder", "", "Origin", "https://app.example", "Access-Control-Request-Method", "POST")
	if r.StatusCode != 204 || r.Header.Get("Access-Control-Allow-Origin") != "https://app.example" || r.Header.Get("Access-Control-Allow-Methods") != "POST" {
		t.Fatalf("preflight %d %v", r.StatusCode, r.Header)
	}
	r = e.do(t, "OPTIONS", "/wunder", "", "Origin", "https://evil.example", "Access-Control-Request-Method", "POST")
	if r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("foreign origin allowed")
	}
}

type panicky struct{ gateway.Backend }

func (panicky) Tools(context.Context, string) ([]orchestrator.ToolSpec, error) { panic("bug") }

func TestPanicIsAProblem(t *testing.T) {
	srv := httptest.NewServer(gateway.New(panicky{}, nil).Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/wunder/tools?user_id=u")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	wantProblem(t, resp, 500, "internal")
}
