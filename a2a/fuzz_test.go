package a2a_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzServe: any body, under either version header, gets HTTP 200 and a
// JSON-RPC response (result or error), never a panic.
func FuzzServe(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tasks/get","params":{"id":"x","historyLength":2}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":5,"pageToken":"7","status":"TASK_STATE_WORKING"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/get","params":{"id":"x"}}`,
		`{"jsonrpc":"2.0","id":null,"method":"agent/getAuthenticatedExtendedCard"}`,
		`{`, `[]`, `""`,
	} {
		f.Add([]byte(s), true)
	}
	e := newEnv(f, nil)
	f.Fuzz(func(t *testing.T, body []byte, v10 bool) {
		if bytes.Contains(body, []byte("Send")) || bytes.Contains(body, []byte("message/")) || bytes.Contains(body, []byte("resubscribe")) || bytes.Contains(body, []byte("Subscribe")) {
			t.Skip("methods that start runs or streams are covered by the interop tests")
		}
		req := httptest.NewRequest(http.MethodPost, "/a2a", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if v10 {
			req.Header.Set("A2A-Version", "1.0")
		}
		rec := httptest.NewRecorder()
		e.h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("HTTP %d", rec.Code)
		}
		var r rpcResp
		if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || r.JSONRPC != "2.0" || (r.Error == nil && r.Result == nil) {
			t.Fatalf("not a JSON-RPC response: %s", rec.Body.String())
		}
	})
}
