package a2a_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The handler owns /a2a/ but answers only at its bindings' paths: JSON-RPC
// at /a2a and /a2a/, HTTP+JSON under /a2a/v1/. Any other path under /a2a/
// is 404 with a google.rpc.Status, never taken by JSON-RPC (which would
// answer 200 with -32600, and shadow a peer published at /a2a/{peer}).
func TestRoutesUnderTheNamespace(t *testing.T) {
	e := newEnv(t, nil)
	send := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"run_0000000000000000000000000a"}}`
	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, e.url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct{ method, path string }{
		{"POST", "/a2a/zzz/yyy"},
		{"POST", "/a2a/friend"},
		{"GET", "/a2a/friend/.well-known/agent-card.json"},
		{"POST", "/a2a/v2/message:send"},
		{"GET", "/a2a/.well-known/agent-card.json"},
	} {
		code, body := do(tc.method, tc.path, send)
		var st struct {
			Error struct {
				Code   int
				Status string
			}
		}
		if err := json.Unmarshal([]byte(body), &st); code != http.StatusNotFound || err != nil || st.Error.Code != 404 || st.Error.Status != "NOT_FOUND" {
			t.Errorf("%s %s = %d %s; want 404 with a google.rpc.Status NOT_FOUND", tc.method, tc.path, code, body)
		}
	}
	// The bindings still answer where they live.
	for _, path := range []string{"/a2a", "/a2a/"} {
		if code, body := do("POST", path, send); code != http.StatusOK || !strings.Contains(body, `"code":-32001`) {
			t.Errorf("JSON-RPC at %s = %d %s; want TaskNotFound", path, code, body)
		}
	}
	if code, body := do("GET", "/a2a/v1/tasks/run_0000000000000000000000000a", ""); code != http.StatusNotFound || !strings.Contains(body, "TASK_NOT_FOUND") {
		t.Errorf("HTTP+JSON GetTask = %d %s; want the binding's TASK_NOT_FOUND", code, body)
	}
}

// The version may come as the A2A-Version query parameter instead of the
// header (specification section 3.6.1), on both HTTP bindings; the header
// wins when both are sent.
func TestVersionAsQueryParameter(t *testing.T) {
	e := newEnv(t, nil)
	rpc := func(query, header, method string) string {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"id":"run_0000000000000000000000000a"}}`
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/a2a"+query, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if header != "" {
			req.Header.Set("A2A-Version", header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	// The method name picks the set and a named version must agree: the
	// query names it as the header does.
	if b := rpc("", "", "tasks/get"); !strings.Contains(b, `"code":-32001`) {
		t.Errorf("tasks/get without a version: %s; want TaskNotFound", b)
	}
	if b := rpc("?A2A-Version=1.0", "", "tasks/get"); !strings.Contains(b, `"code":-32009`) {
		t.Errorf("tasks/get with ?A2A-Version=1.0: %s; want -32009", b)
	}
	if b := rpc("?A2A-Version=1.0", "", "GetTask"); !strings.Contains(b, `"code":-32001`) {
		t.Errorf("GetTask with ?A2A-Version=1.0: %s; want TaskNotFound", b)
	}
	if b := rpc("?A2A-Version=9.9", "", "GetTask"); !strings.Contains(b, `"code":-32009`) {
		t.Errorf("?A2A-Version=9.9: %s; want -32009", b)
	}
	if b := rpc("", strings.Repeat("9", 4000), "GetTask"); !strings.Contains(b, `"code":-32009`) || len(b) > 600 {
		t.Errorf("a 4000-byte A2A-Version: %.300s (%d bytes); want -32009 echoing it cut", b, len(b))
	}
	if b := rpc("?A2A-Version=9.9", "1.0", "GetTask"); !strings.Contains(b, `"code":-32001`) {
		t.Errorf("header 1.0 and query 9.9: %s; want the header's 1.0", b)
	}
	resp, err := http.Get(e.url + "/a2a/v1/tasks/run_0000000000000000000000000a?A2A-Version=0.3")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "VERSION_NOT_SUPPORTED") {
		t.Errorf("HTTP+JSON with ?A2A-Version=0.3 = %d %s; want 400 VERSION_NOT_SUPPORTED", resp.StatusCode, b)
	}
}

// A request without an id is served no result, but bad params are
// reported as such first (-32602, as the A2A 0.3 TCK checks); good params
// without an id are still an invalid request.
func TestNoIDParamsFirst(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct {
		body string
		code int
	}{
		{`{"jsonrpc":"2.0","method":"message/send","params":{"":"not_a_dict"}}`, -32602},
		{`{"jsonrpc":"2.0","method":"message/send","params":"text"}`, -32602},
		{`{"jsonrpc":"2.0","method":"tasks/get","params":{"id":"x"}}`, -32600},
		{`{"jsonrpc":"aaa","method":"message/send","params":{}}`, -32600},
		{`{"jsonrpc":"2.0","params":{}}`, -32600},
		{`{"jsonrpc":"2.0","method":"message/ssend","params":{}}`, -32601},
		{`{"jsonrpc":"2.0","method":"message/send","params":{},"id":{"bad":"type"}}`, -32600},
	} {
		r := post(t, e, "", tc.body)
		if r.Error == nil || r.Error.Code != tc.code || string(r.ID) != "null" {
			t.Errorf("%s: %+v id %s; want %d with id null", tc.body, r.Error, r.ID, tc.code)
		}
	}
}
