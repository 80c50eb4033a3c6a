package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/orchestrator"
)

// The hostile corpus of issue 9, against every front-end of a real server
// on a real store (the NUL bugs only showed with real drivers): NUL, control
// characters and invalid UTF-8 in every field and id of every route and
// method. Not one answer may be a 5xx, a JSON-RPC -32603 or a Connect
// internal/unknown error.

// hostileValues are the strings put into each field and id.
var hostileValues = []string{
	"\x00", "sess_\x00", "r\x00", "run_\x00x", "#say hi\x00there", "\x01\x1f\x7f", "\xff\xfe", "a\xc3",
	"\u0085\u2028", "\\u0000", "../x", "a..b", `'";--`, strings.Repeat("\x00\xff", 200),
}

// jsonQuote quotes v as a JSON string literal. raw=false escapes control
// characters (so NUL arrives as \u0000, as a JSON client sends it) but keeps
// invalid UTF-8 bytes raw; raw=true escapes only quote and backslash, which
// makes control characters invalid JSON.
func jsonQuote(v string, raw bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(v); {
		r, n := utf8.DecodeRuneInString(v[i:])
		switch {
		case v[i] == '"' || v[i] == '\\':
			b.WriteByte('\\')
			b.WriteByte(v[i])
		case !raw && v[i] < 0x20:
			fmt.Fprintf(&b, `\u%04x`, v[i])
		case r == utf8.RuneError && n == 1:
			b.WriteByte(v[i]) // an invalid byte, as is
		default:
			b.WriteString(v[i : i+n])
		}
		i += n
	}
	b.WriteByte('"')
	return b.String()
}

// hostileCase is one request; check says what a good answer is.
type hostileCase struct {
	name, method, path, contentType string
	body                            []byte
}

// bodies expands a template whose @@ is a JSON string for each hostile value
// in both quotings.
func bodies(name, method, path, contentType, tmpl string) []hostileCase {
	var out []hostileCase
	for i, v := range hostileValues {
		for _, raw := range []bool{false, true} {
			out = append(out, hostileCase{name: fmt.Sprintf("%s/%d/raw=%v", name, i, raw), method: method, path: path,
				contentType: contentType, body: []byte(strings.ReplaceAll(tmpl, "@@", jsonQuote(v, raw)))})
		}
	}
	return out
}

// paths expands a path template whose {} is a path-escaped hostile value
// (or, after "?", a query-escaped one).
func paths(name, method, tmpl string) []hostileCase {
	var out []hostileCase
	for i, v := range hostileValues {
		esc := url.PathEscape(v)
		if q := strings.Index(tmpl, "?"); q >= 0 && strings.Index(tmpl, "{}") > q {
			esc = url.QueryEscape(v)
		}
		out = append(out, hostileCase{name: fmt.Sprintf("%s/%d", name, i), method: method, path: strings.ReplaceAll(tmpl, "{}", esc)})
	}
	return out
}

func restCorpus() []hostileCase {
	var cs []hostileCase
	for _, stream := range []string{"true", "false"} {
		for _, f := range []string{`"user_id":@@,"question":"hi"`, `"user_id":"h","question":@@`,
			`"user_id":"h","question":"hi","session_id":@@`, `"user_id":"h","question":"hi","tool_names":[@@]`,
			`"user_id":"h","question":"hi","model_name":@@`, `"user_id":"h","question":"hi","tool_call_mode":@@`,
			`"user_id":"h","question":"hi","language":@@`, `@@:1,"user_id":"h","question":"hi"`} {
			cs = append(cs, bodies("POST /wunder stream="+stream+" {"+f+"}", "POST", "/wunder", "application/json", `{"stream":`+stream+","+f+"}")...)
		}
	}
	for _, f := range []string{`"user_id":@@,"question":"hi"`, `"user_id":"h","question":@@`, `"user_id":"h","question":"hi","session_id":@@`} {
		cs = append(cs, bodies("POST /wunder/runs {"+f+"}", "POST", "/wunder/runs", "application/json", "{"+f+"}")...)
	}
	for _, f := range []string{`"user_id":@@`, `"user_id":"h","tool_names":[@@]`, `"user_id":"h","model_name":@@`} {
		cs = append(cs, bodies("POST /wunder/system_prompt {"+f+"}", "POST", "/wunder/system_prompt", "application/json", "{"+f+"}")...)
	}
	cs = append(cs, paths("GET run", "GET", "/wunder/runs/{}?user_id=h")...)
	cs = append(cs, paths("GET run user", "GET", "/wunder/runs/run_x?user_id={}")...)
	cs = append(cs, paths("GET events", "GET", "/wunder/runs/{}/events?user_id=h")...)
	cs = append(cs, paths("POST cancel", "POST", "/wunder/runs/{}/cancel?user_id=h")...)
	for _, q := range []string{"user_id", "session_id", "state", "limit", "offset", "cursor"} {
		cs = append(cs, paths("GET runs "+q, "GET", "/wunder/runs?user_id=h&"+q+"={}")...)
	}
	cs = append(cs, paths("GET sessions", "GET", "/wunder/sessions?user_id={}")...)
	cs = append(cs, paths("GET sessions cursor", "GET", "/wunder/sessions?user_id=h&cursor={}")...)
	// Cursors whose checksum holds, with times no item has and no store
	// holds.
	issuer, _ := orchestrator.NewPager("cursor", "", 1, "any")
	for _, year := range []int{-30000, 0, 10000, 200000} {
		tok := issuer.Cursor(&orchestrator.PageKey{At: time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC), ID: "run_x"})
		for _, list := range []string{"runs", "sessions"} {
			cs = append(cs, hostileCase{name: fmt.Sprintf("GET %s cursor in year %d", list, year), method: "GET", path: "/wunder/" + list + "?user_id=h&cursor=" + tok})
		}
	}
	cs = append(cs, paths("GET session", "GET", "/wunder/sessions/{}?user_id=h")...)
	cs = append(cs, paths("GET session user", "GET", "/wunder/sessions/sess_x?user_id={}")...)
	cs = append(cs, paths("DELETE session", "DELETE", "/wunder/sessions/{}?user_id=h")...)
	cs = append(cs, paths("GET tools", "GET", "/wunder/tools?user_id={}")...)
	// The workspace API (workspace_escape_test.go has its escape corpus).
	for _, route := range []string{"GET /wunder/workspace", "DELETE /wunder/workspace", "GET /wunder/workspace/content",
		"GET /wunder/workspace/archive", "GET /wunder/workspace/download"} {
		method, path, _ := strings.Cut(route, " ")
		cs = append(cs, paths(route+" path", method, path+"?user_id=h&path={}")...)
		cs = append(cs, paths(route+" user", method, path+"?path=a&user_id={}")...)
	}
	for _, q := range []string{"query", "path", "glob", "regex", "limit"} {
		cs = append(cs, paths("GET /wunder/workspace/search "+q, "GET", "/wunder/workspace/search?user_id=h&query=x&"+q+"={}")...)
	}
	for route, fields := range map[string][]string{
		"dir": {`"user_id":"h","path":@@`}, "file": {`"user_id":"h","path":@@,"content":"x","create_if_missing":true`, `"user_id":"h","path":"f","content":@@,"create_if_missing":true`},
		"move":  {`"user_id":"h","source":@@,"destination":"d"`, `"user_id":"h","source":"s","destination":@@`},
		"copy":  {`"user_id":"h","source":@@,"destination":"d"`, `"user_id":"h","source":"s","destination":@@`},
		"batch": {`"user_id":"h","action":@@,"paths":["a"]`, `"user_id":"h","action":"delete","paths":[@@]`, `"user_id":"h","action":"move","paths":["a"],"destination":@@`},
	} {
		for _, f := range fields {
			cs = append(cs, bodies("POST /wunder/workspace/"+route+" {"+f+"}", "POST", "/wunder/workspace/"+route, "application/json", "{"+f+"}")...)
		}
	}
	return cs
}

// connectEnvelope frames a message for a Connect streaming call.
func connectEnvelope(msg []byte) []byte {
	b := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(b[1:], uint32(len(msg)))
	return append(b, msg...)
}

func connectCorpus() []hostileCase {
	var cs []hostileCase
	unary := map[string][]string{
		"RunService/Submit": {`"user_id":@@,"question":"hi"`, `"user_id":"c","question":@@`, `"user_id":"c","question":"hi","session_id":@@`,
			`"user_id":"c","question":"hi","tool_names":[@@]`, `"user_id":"c","question":"hi","model_name":@@`, `"user_id":"c","question":"hi","language":@@`},
		"RunService/GetRun":            {`"user_id":"c","run_id":@@`, `"user_id":@@,"run_id":"run_x"`},
		"RunService/Cancel":            {`"user_id":"c","run_id":@@`, `"user_id":@@,"run_id":"run_x"`},
		"RunService/ListRuns":          {`"user_id":@@`, `"user_id":"c","session_id":@@`, `"user_id":"c","page_token":@@`},
		"SessionService/ListSessions":  {`"user_id":@@`},
		"SessionService/GetSession":    {`"user_id":"c","session_id":@@`, `"user_id":@@,"session_id":"sess_x"`},
		"SessionService/DeleteSession": {`"user_id":"c","session_id":@@`, `"user_id":@@,"session_id":"sess_x"`},
		"ToolService/ListTools":        {`"user_id":@@`},
	}
	for proc, fields := range unary {
		for _, f := range fields {
			cs = append(cs, bodies("Connect "+proc+" {"+f+"}", "POST", "/wunder.v1."+proc, "application/json", "{"+f+"}")...)
		}
	}
	streams := map[string][]string{
		"RunService/Run":    {`"user_id":@@,"question":"hi"`, `"user_id":"c","question":@@`, `"user_id":"c","question":"hi","session_id":@@`},
		"RunService/Follow": {`"user_id":"c","run_id":@@`, `"user_id":@@,"run_id":"run_x"`},
	}
	for proc, fields := range streams {
		for _, f := range fields {
			for _, c := range bodies("Connect "+proc+" {"+f+"}", "POST", "/wunder.v1."+proc, "application/connect+json", "{"+f+"}") {
				c.body = connectEnvelope(c.body)
				cs = append(cs, c)
			}
		}
	}
	return cs
}

// a2aCorpus: task is a real task id, for the push config calls.
func a2aCorpus(task string) []hostileCase {
	msg10 := func(extra string) string {
		return `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]` + extra + `}}`
	}
	msg03 := func(extra string) string {
		return `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]` + extra + `}}`
	}
	params := map[string][]string{
		"SendMessage": {`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":@@}]}}`, msg10(`,"contextId":@@`),
			msg10(`,"taskId":@@`), `{"message":{"messageId":@@,"role":"ROLE_USER","parts":[{"text":"hi"}]}}`},
		"SendStreamingMessage": {`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":@@}]}}`, msg10(`,"contextId":@@`)},
		"GetTask":              {`{"id":@@}`},
		"CancelTask":           {`{"id":@@}`},
		"SubscribeToTask":      {`{"id":@@}`},
		"ListTasks":            {`{"contextId":@@}`, `{"pageToken":@@}`},
		"CreateTaskPushNotificationConfig": {`{"taskId":@@,"id":"p","url":"http://127.0.0.1:9/h"}`,
			`{"taskId":"` + task + `","id":@@,"url":"http://127.0.0.1:9/h"}`, `{"taskId":"` + task + `","id":"p","url":"http://127.0.0.1:9/h","token":@@}`},
		"GetTaskPushNotificationConfig":    {`{"taskId":@@,"id":"p"}`, `{"taskId":"` + task + `","id":@@}`},
		"ListTaskPushNotificationConfigs":  {`{"taskId":@@}`},
		"DeleteTaskPushNotificationConfig": {`{"taskId":@@,"id":"p"}`, `{"taskId":"` + task + `","id":@@}`},
		"message/send": {`{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":@@}]}}`,
			msg03(`,"contextId":@@`), msg03(`,"taskId":@@`)},
		"message/stream":    {`{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":@@}]}}`},
		"tasks/get":         {`{"id":@@}`},
		"tasks/cancel":      {`{"id":@@}`},
		"tasks/resubscribe": {`{"id":@@}`},
		"tasks/pushNotificationConfig/set": {`{"taskId":@@,"pushNotificationConfig":{"id":"p","url":"http://127.0.0.1:9/h"}}`,
			`{"taskId":"` + task + `","pushNotificationConfig":{"id":@@,"url":"http://127.0.0.1:9/h"}}`},
		"tasks/pushNotificationConfig/get":    {`{"id":@@,"pushNotificationConfigId":"p"}`, `{"id":"` + task + `","pushNotificationConfigId":@@}`},
		"tasks/pushNotificationConfig/list":   {`{"id":@@}`},
		"tasks/pushNotificationConfig/delete": {`{"id":@@,"pushNotificationConfigId":"p"}`, `{"id":"` + task + `","pushNotificationConfigId":@@}`},
	}
	var cs []hostileCase
	for method, ps := range params {
		for _, p := range ps {
			cs = append(cs, bodies("A2A "+method+" "+p, "POST", "/a2a", "application/json",
				`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+p+`}`)...)
		}
	}
	cs = append(cs, bodies("A2A method", "POST", "/a2a", "application/json", `{"jsonrpc":"2.0","id":1,"method":@@,"params":{}}`)...)
	cs = append(cs, bodies("A2A id", "POST", "/a2a", "application/json", `{"jsonrpc":"2.0","id":@@,"method":"GetTask","params":{"id":"x"}}`)...)
	return cs
}

// bad reports why an answer breaks the rule, or "".
func bad(status int, body []byte) string {
	switch {
	case status >= 500:
		return fmt.Sprintf("status %d", status)
	case bytes.Contains(body, []byte(`-32603`)):
		return "JSON-RPC internal error -32603"
	case bytes.Contains(body, []byte(`"code":"internal"`)), bytes.Contains(body, []byte(`"code":"unknown"`)):
		return "Connect internal/unknown error"
	}
	return ""
}

func runHostile(t *testing.T, base string, cs []hostileCase) {
	t.Helper()
	failures := 0
	for i, c := range cs {
		// A user of its own per case, so no case meets another's running
		// run (429 is a fine answer, but it would stop before the store).
		u := []byte(fmt.Sprintf(`"user_id":"hu%d"`, i))
		c.body = bytes.ReplaceAll(bytes.ReplaceAll(c.body, []byte(`"user_id":"h"`), u), []byte(`"user_id":"c"`), u)
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		req, err := http.NewRequestWithContext(ctx, c.method, base+c.path, bytes.NewReader(c.body))
		if err != nil {
			cancel()
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.contentType != "" {
			req.Header.Set("Content-Type", c.contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatalf("%s: %v", c.name, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if err != nil {
			t.Fatalf("%s: reading the answer: %v", c.name, err)
		}
		if why := bad(resp.StatusCode, body); why != "" {
			failures++
			if failures <= 20 {
				t.Errorf("%s %s %q: %s: %.300s", c.method, c.path, c.body, why, body)
			}
		}
	}
	t.Logf("%d hostile requests, %d bad answers", len(cs), failures)
}

// mcpHostile calls wunder__run and wunder__approve with each hostile value
// in each argument; the SDK client encodes them as JSON (NUL as \u0000, bad
// bytes as U+FFFD).
func mcpHostile(t *testing.T, base string) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "hostile", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + "/wunder/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	n, failures := 0, 0
	for i, v := range hostileValues {
		approve := func(k string) map[string]any {
			a := map[string]any{"run_id": "run_x", "approval_id": "appr_x", "decision": "approve"}
			a[k] = v
			return a
		}
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"wunder__run", map[string]any{"task": v}}, {"wunder__run", map[string]any{"task": "hi", "session_id": v}},
			{"wunder__run", map[string]any{"task": "hi", "tool_names": []string{v}}}, {"wunder__run", map[string]any{v: "x", "task": "hi"}},
			{"wunder__run", map[string]any{"task": "hi", "approval_mode": v}},
			{"wunder__approve", approve("run_id")}, {"wunder__approve", approve("approval_id")}, {"wunder__approve", approve("decision")},
			{"wunder__approve", approve("reason")}, {"wunder__approve", map[string]any{"run_id": "run_x", "approval_id": "appr_x", "decision": "edit", "arguments": map[string]any{v: v}}},
		} {
			n++
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			var werr *jsonrpc.Error
			switch {
			case errors.As(err, &werr) && werr.Code == jsonrpc.CodeInternalError:
				failures++
				t.Errorf("%s(%d: %q) = -32603 %s", c.tool, i, c.args, werr.Message)
			case err != nil && !errors.As(err, &werr):
				t.Fatalf("%s(%d: %q): transport error %v", c.tool, i, c.args, err)
			case err == nil && res.IsError && strings.Contains(fmt.Sprint(res.Content), "internal"):
				failures++
				t.Errorf("%s(%d: %q) = internal error result %v", c.tool, i, c.args, res.Content)
			}
		}
	}
	t.Logf("%d hostile MCP calls, %d bad answers", n, failures)
}

// postJSON posts body and decodes the JSON answer into out.
func postJSON(t *testing.T, u, body string, out any) int {
	t.Helper()
	resp, err := http.Post(u, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("POST %s: %d %s: %v", u, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode
}

func getRun(t *testing.T, base, user, id string) map[string]any {
	t.Helper()
	resp, err := http.Get(base + "/wunder/runs/" + id + "?user_id=" + url.QueryEscape(user))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var run map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&run); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET run %s: %d %v", id, resp.StatusCode, err)
	}
	return run
}

// The runs of issue 9 that broke the store: a NUL in the question, a NUL in
// a tool's output, and the user "a..b", who got no tools.
func checkHostileRuns(t *testing.T, s *server) {
	t.Helper()
	type answer struct {
		RunID  string `json:"run_id"`
		Answer string `json:"answer"`
	}
	var a answer
	if code := postJSON(t, s.url+"/wunder", `{"user_id":"nul1","question":"#say hi\u0000there","stream":false}`, &a); code != 200 {
		t.Fatalf("NUL question: %d %+v", code, a)
	}
	run := getRun(t, s.url, "nul1", a.RunID)
	if run["state"] != "finished" || run["question"] != "#say hi\ufffdthere" {
		t.Errorf("run with a NUL question reads back %v %q; want finished, NUL as U+FFFD", run["state"], run["question"])
	}

	// A tool whose output holds a NUL and an invalid byte: cat of such a
	// file.
	dir := filepath.Join(s.dir, "workspaces", "nul2")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nul.txt"), []byte("a\x00b\xffc"), 0o644); err != nil {
		t.Fatal(err)
	}
	a = answer{}
	if code := postJSON(t, s.url+"/wunder", `{"user_id":"nul2","question":"run: cat nul.txt","tool_names":["execute_command"],"stream":false}`, &a); code != 200 {
		t.Fatalf("NUL tool output: %d %+v", code, a)
	}
	run = getRun(t, s.url, "nul2", a.RunID)
	if run["state"] != "finished" || run["last_seq"].(float64) == 0 {
		t.Errorf("run whose tool output holds a NUL reads back %v last_seq %v; want finished with its events", run["state"], run["last_seq"])
	}
	var sess struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	resp, err := http.Get(s.url + "/wunder/sessions/" + run["session_id"].(string) + "?user_id=nul2")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&sess); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(sess.Messages, func(m struct{ Role, Content string }) bool { return strings.Contains(m.Content, "a\ufffdb\ufffdc") }) {
		t.Errorf("history lacks the tool output with U+FFFD for NUL and the bad byte: %+v", sess.Messages)
	}

	a = answer{}
	if code := postJSON(t, s.url+"/wunder", `{"user_id":"a..b","question":"write a note","tool_names":["write_file","read_file"],"stream":false}`, &a); code != 200 || !strings.Contains(a.Answer, "hello from fakellm") {
		t.Errorf("user a..b: %d %+v; want the note written and read back", code, a)
	}
}

func hostileSuite(t *testing.T, mutate func(c *config.Config)) {
	s := startServer(t, mutate)
	checkHostileRuns(t, s)
	var sent struct {
		Result struct {
			ID string `json:"id"`
		} `json:"result"`
	}
	postJSON(t, s.url+"/a2a", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`, &sent)
	if sent.Result.ID == "" {
		t.Fatal("A2A message/send gave no task id")
	}
	t.Run("REST", func(t *testing.T) { runHostile(t, s.url, restCorpus()) })
	t.Run("Connect", func(t *testing.T) { runHostile(t, s.url, connectCorpus()) })
	t.Run("A2A", func(t *testing.T) { runHostile(t, s.url, a2aCorpus(sent.Result.ID)) })
	t.Run("MCP", func(t *testing.T) { mcpHostile(t, s.url) })
}

func TestHostileCorpusSQLite(t *testing.T) { hostileSuite(t, nil) }

func TestHostileCorpusPostgres(t *testing.T) {
	dsn := pgSchema(t)
	hostileSuite(t, func(c *config.Config) { c.Storage.Postgres.DSN = dsn })
}
