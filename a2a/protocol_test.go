package a2a_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/sse"
)

// postRaw sends a raw body to /a2a with an optional A2A-Version header.
func postRaw(t *testing.T, e *env, version, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/a2a", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

type rpcResp struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// post sends a raw body to /a2a with an optional A2A-Version header and
// returns the decoded JSON-RPC answer; it fails on any status but 200.
func post(t *testing.T, e *env, version, body string) rpcResp {
	t.Helper()
	resp := postRaw(t, e, version, body)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("HTTP %d (JSON-RPC errors travel with 200): %s", resp.StatusCode, b)
	}
	var r rpcResp
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return r
}

func TestJSONRPCErrors(t *testing.T) {
	e := newEnv(t, nil)
	cases := []struct {
		name, version, body string
		code                int
	}{
		{"parse error", "1.0", `{"jsonrpc":"2.0","id":1,"method":`, -32700},
		{"not an object", "", `[1,2,3]`, -32700},
		{"no jsonrpc", "1.0", `{"id":1,"method":"GetTask","params":{"id":"x"}}`, -32600},
		{"bad id", "1.0", `{"jsonrpc":"2.0","id":{"a":1},"method":"GetTask","params":{"id":"x"}}`, -32600},
		{"no method", "", `{"jsonrpc":"2.0","id":1}`, -32600},
		{"unknown method", "1.0", `{"jsonrpc":"2.0","id":1,"method":"tasks/explode"}`, -32601},
		{"unknown method without id", "1.0", `{"jsonrpc":"2.0","method":"tasks/explode"}`, -32601},
		{"unknown method, bad id", "", `{"jsonrpc":"2.0","id":{"a":1},"method":"tasks/explode"}`, -32601},
		{"known method without id", "1.0", `{"jsonrpc":"2.0","method":"GetTask","params":{"id":"x"}}`, -32600},
		{"0.3 has no list", "", `{"jsonrpc":"2.0","id":1,"method":"tasks/list","params":{}}`, -32601},
		{"params not object", "1.0", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":["x"]}`, -32602},
		{"missing id", "1.0", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{}}`, -32602},
		{"negative history", "1.0", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x","historyLength":-1}}`, -32602},
		{"negative history send", "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"historyLength":-1}}}`, -32602},
		{"negative history list", "1.0", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"historyLength":-2}}`, -32602},
		{"no message", "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`, -32602},
		{"empty parts", "", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[]}}}`, -32602},
		{"bad part kind", "", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"messageId":"m","role":"user","parts":[{"kind":"hologram"}]}}}`, -32602},
		{"file only", "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"raw":"aGk=","mediaType":"image/png"}]}}}`, -32005},
		{"agent role", "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}}`, -32602},
		{"unknown context", "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","contextId":"sess_nope","parts":[{"text":"hi"}]}}}`, -32602},
		{"task not found 1.0", "1.0", `{"jsonrpc":"2.0","id":"a","method":"GetTask","params":{"id":"run_nope"}}`, -32001},
		{"task not found 0.3", "", `{"jsonrpc":"2.0","id":"a","method":"tasks/get","params":{"id":"run_nope"}}`, -32001},
		{"cancel not found", "", `{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"id":"run_nope"}}`, -32001},
		{"resubscribe not found", "", `{"jsonrpc":"2.0","id":2,"method":"tasks/resubscribe","params":{"id":"run_nope"}}`, -32001},
		{"push unsupported", "1.0", `{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"t","url":"https://example.com/hook"}}`, -32003},
		{"push unsupported 0.3", "", `{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/get","params":{"id":"t"}}`, -32003},
		{"unknown version", "9.9", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`, -32009},
		{"version contradicts method", "1.0", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`, -32009},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, e, tc.version, tc.body)
			if r.Error == nil || r.Error.Code != tc.code {
				t.Fatalf("got %+v result %s, want error %d", r.Error, r.Result, tc.code)
			}
			if r.JSONRPC != "2.0" {
				t.Fatalf("jsonrpc = %q", r.JSONRPC)
			}
			if tc.version == "1.0" {
				var data []map[string]any
				if err := json.Unmarshal(r.Error.Data, &data); err != nil || len(data) == 0 ||
					data[0]["@type"] != "type.googleapis.com/google.rpc.ErrorInfo" || data[0]["domain"] != "a2a-protocol.org" || data[0]["reason"] == "" {
					t.Fatalf("1.0 error data must hold a google.rpc.ErrorInfo: %s", r.Error.Data)
				}
			}
		})
	}
}

func TestHTTPMethodAndTrailingSlash(t *testing.T) {
	e := newEnv(t, nil)
	resp, err := http.Get(e.url + "/a2a")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r rpcResp
	_ = json.NewDecoder(resp.Body).Decode(&r)
	if resp.StatusCode != 200 || r.Error == nil || r.Error.Code != -32600 {
		t.Fatalf("GET /a2a: %d %+v", resp.StatusCode, r.Error)
	}
	req, _ := http.NewRequest(http.MethodPost, e.url+"/a2a/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`))
	req.Header.Set("Content-Type", "application/json")
	resp2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	_ = json.NewDecoder(resp2.Body).Decode(&r)
	if r.Error == nil || r.Error.Code != -32001 {
		t.Fatalf("POST /a2a/: %+v", r.Error)
	}
}

// TestWireShapes pins each version's JSON: 0.3 has kind and lower-case
// states, 1.0 has the StreamResponse wrapper, TASK_STATE_* and ROLE_*.
func TestWireShapes(t *testing.T) {
	e := newEnv(t, nil)
	r := post(t, e, "", `{"jsonrpc":"2.0","id":7,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`)
	if r.Error != nil {
		t.Fatal(r.Error.Message)
	}
	var t03 map[string]any
	_ = json.Unmarshal(r.Result, &t03)
	status, _ := t03["status"].(map[string]any)
	if t03["kind"] != "task" || status["state"] != "completed" {
		t.Fatalf("0.3 task: %s", r.Result)
	}
	hist, _ := t03["history"].([]any)
	if len(hist) != 2 || hist[0].(map[string]any)["role"] != "user" || hist[0].(map[string]any)["kind"] != "message" {
		t.Fatalf("0.3 history: %s", r.Result)
	}
	id := t03["id"].(string)
	r = post(t, e, "1.0", `{"jsonrpc":"2.0","id":8,"method":"GetTask","params":{"id":"`+id+`","historyLength":5}}`)
	var t10 map[string]any
	_ = json.Unmarshal(r.Result, &t10)
	if _, has := t10["kind"]; has || t10["status"].(map[string]any)["state"] != "TASK_STATE_COMPLETED" {
		t.Fatalf("1.0 task: %s", r.Result)
	}
	h0 := t10["history"].([]any)[0].(map[string]any)
	p0 := h0["parts"].([]any)[0].(map[string]any)
	if h0["role"] != "ROLE_USER" || p0["text"] != "hi" || p0["kind"] != nil {
		t.Fatalf("1.0 message: %v", h0)
	}
	r = post(t, e, "1.0", `{"jsonrpc":"2.0","id":9,"method":"SendMessage","params":{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"yo"}]}}}`)
	var wrap map[string]json.RawMessage
	_ = json.Unmarshal(r.Result, &wrap)
	if len(wrap["task"]) == 0 {
		t.Fatalf("1.0 SendMessage result must be {\"task\":...}: %s", r.Result)
	}
}

// ProtoJSON: the proto field names work as well as the lowerCamelCase
// ones, enums may be numbers, and a status filter that is unspecified or
// unrecognized (the @a2a-js/sdk 1.3.0 client's "UNRECOGNIZED") is no
// filter; a state of the spec no task is in matches nothing.
func TestProtoJSONParams(t *testing.T) {
	e := newEnv(t, nil)
	r := post(t, e, "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"message_id":"m1","role":1,"parts":[{"text":"hi"}],"metadata":{"keep_me":true}},"configuration":{"history_length":1}}}`)
	if r.Error != nil {
		t.Fatalf("SendMessage with proto field names: %+v", r.Error)
	}
	var sent struct {
		Task struct {
			ID        string `json:"id"`
			ContextID string `json:"contextId"`
			History   []any  `json:"history"`
		} `json:"task"`
	}
	if err := json.Unmarshal(r.Result, &sent); err != nil || sent.Task.ID == "" || len(sent.Task.History) != 1 {
		t.Fatalf("SendMessage result %s (%v); want a task with history_length 1 applied", r.Result, err)
	}
	r = post(t, e, "1.0", `{"jsonrpc":"2.0","id":2,"method":"ListTasks","params":{"context_id":"`+sent.Task.ContextID+`","page_size":5,"history_length":0,"include_artifacts":true}}`)
	if r.Error != nil || !strings.Contains(string(r.Result), sent.Task.ID) {
		t.Fatalf("ListTasks with proto field names: %+v %s", r.Error, r.Result)
	}
	count := func(status string) int {
		t.Helper()
		r := post(t, e, "1.0", `{"jsonrpc":"2.0","id":3,"method":"ListTasks","params":{"status":`+status+`}}`)
		if r.Error != nil {
			t.Fatalf("ListTasks status %s: %+v", status, r.Error)
		}
		var l struct{ Tasks []any }
		_ = json.Unmarshal(r.Result, &l)
		return len(l.Tasks)
	}
	for status, want := range map[string]int{`"UNRECOGNIZED"`: 1, `"TASK_STATE_UNSPECIFIED"`: 1, `"made-up"`: 1, `0`: 1, `99`: 1,
		`"TASK_STATE_COMPLETED"`: 1, `3`: 1, `"TASK_STATE_WORKING"`: 0, `"TASK_STATE_REJECTED"`: 0, `7`: 0} {
		if got := count(status); got != want {
			t.Errorf("ListTasks status %s: %d tasks; want %d", status, got, want)
		}
	}
}

// TestStream03 reads a 0.3 message/stream by hand: kinds, and final:true
// on the last status update only.
func TestStream03(t *testing.T) {
	e := newEnv(t, nil)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/a2a",
		strings.NewReader(`{"jsonrpc":"2.0","id":"s","method":"message/stream","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	var kinds []string
	var finals []bool
	for ev, err := range sse.Read(resp.Body) {
		if err != nil {
			t.Fatal(err)
		}
		var r rpcResp
		if err := json.Unmarshal(ev.Data, &r); err != nil || r.Error != nil || string(r.ID) != `"s"` {
			t.Fatalf("stream item %s: %v", ev.Data, err)
		}
		var obj struct {
			Kind  string `json:"kind"`
			Final bool   `json:"final"`
		}
		_ = json.Unmarshal(r.Result, &obj)
		kinds = append(kinds, obj.Kind)
		finals = append(finals, obj.Final)
	}
	// The working update is sent only when the Task went out as submitted
	// (a run that started at once is already working in the Task).
	got := strings.Join(kinds, ",")
	if got != "task,status-update,artifact-update,status-update" && got != "task,artifact-update,status-update" {
		t.Fatalf("kinds %v", kinds)
	}
	for i, f := range finals {
		if f != (i == len(finals)-1) {
			t.Fatalf("final flags %v: only the last status update is final", finals)
		}
	}
}

// TestScoping: a caller sees and cancels only its own tasks.
func TestScoping(t *testing.T) {
	e := newEnv(t, nil)
	send := func(user, body string) rpcResp {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/a2a", strings.NewReader(body))
		req.Header.Set("X-Wunder-User", user)
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r rpcResp
		_ = json.NewDecoder(resp.Body).Decode(&r)
		return r
	}
	r := send("alice", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"secret"}]}}}`)
	var wrap struct {
		Task struct{ ID string } `json:"task"`
	}
	_ = json.Unmarshal(r.Result, &wrap)
	for _, m := range []string{"GetTask", "CancelTask"} {
		if r := send("bob", `{"jsonrpc":"2.0","id":2,"method":"`+m+`","params":{"id":"`+wrap.Task.ID+`"}}`); r.Error == nil || r.Error.Code != -32001 {
			t.Fatalf("bob %s on alice's task: %+v", m, r.Error)
		}
	}
	r = send("bob", `{"jsonrpc":"2.0","id":3,"method":"ListTasks","params":{}}`)
	var list struct{ Tasks []any }
	_ = json.Unmarshal(r.Result, &list)
	if len(list.Tasks) != 0 {
		t.Fatalf("bob lists %d tasks", len(list.Tasks))
	}
	if r := send("alice", `{"jsonrpc":"2.0","id":4,"method":"GetTask","params":{"id":"`+wrap.Task.ID+`"}}`); r.Error != nil {
		t.Fatalf("alice GetTask: %v", r.Error)
	}
}

// A body must say it is JSON, on both bindings: a web page can post a
// typeless or text/plain body cross-site without a preflight.
func TestContentTypeRequired(t *testing.T) {
	e := newEnv(t, nil)
	send := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}}`
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/a2a", strings.NewReader(send))
		req.Header.Set("Content-Type", ct)
		req.Header.Set("A2A-Version", "1.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var r rpcResp
		_ = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if r.Error == nil || r.Error.Code != -32005 || !strings.Contains(r.Error.Message, "application/json") {
			t.Errorf("JSON-RPC with Content-Type %q: %+v, want -32005 naming application/json", ct, r.Error)
		}
		req, _ = http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/a2a/v1/message:send", strings.NewReader(`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`))
		req.Header.Set("Content-Type", ct)
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnsupportedMediaType || !strings.Contains(string(b), "CONTENT_TYPE_NOT_SUPPORTED") {
			t.Errorf("HTTP+JSON with Content-Type %q: %d %s", ct, resp.StatusCode, b)
		}
	}
	// application/a2a+json is JSON.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/a2a", strings.NewReader(send))
	req.Header.Set("Content-Type", "application/a2a+json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r rpcResp
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Error != nil {
		t.Fatalf("application/a2a+json: %v %+v", err, r.Error)
	}
}
