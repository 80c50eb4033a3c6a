package a2a_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/a2a"
	"github.com/wunder/wunder/orchestrator"
)

type restStatus struct {
	Error struct {
		Code    int
		Status  string
		Message string
		Details []map[string]any
	}
}

func restDo(t *testing.T, url, method, path, body string) (*http.Response, restStatus) {
	t.Helper()
	req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var st restStatus
	_ = json.Unmarshal(b, &st)
	return resp, st
}

// The HTTP+JSON binding's own answers: unknown routes, wrong methods, bad
// bodies and the error table as google.rpc.Status with HTTP statuses.
func TestRESTBindingErrors(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct {
		name, method, path, body string
		code                     int
		status, reason           string
	}{
		{"unknown route", "GET", "/a2a/v1/nothing", "", 404, "NOT_FOUND", ""},
		{"unknown task route", "GET", "/a2a/v1/tasks/run_x/else", "", 404, "NOT_FOUND", ""},
		{"wrong method", "DELETE", "/a2a/v1/message:send", "", 405, "UNIMPLEMENTED", ""},
		{"task not found", "GET", "/a2a/v1/tasks/run_nope", "", 404, "NOT_FOUND", "TASK_NOT_FOUND"},
		{"cancel not found", "POST", "/a2a/v1/tasks/run_nope:cancel", "", 404, "NOT_FOUND", "TASK_NOT_FOUND"},
		{"body not JSON", "POST", "/a2a/v1/message:send", "{", 400, "INVALID_ARGUMENT", "INVALID_PARAMS"},
		{"body not an object", "POST", "/a2a/v1/message:send", "[1]", 400, "INVALID_ARGUMENT", "INVALID_PARAMS"},
		{"no message", "POST", "/a2a/v1/message:send", "{}", 400, "INVALID_ARGUMENT", "INVALID_PARAMS"},
		{"bad history length", "GET", "/a2a/v1/tasks/run_x?historyLength=-1", "", 400, "INVALID_ARGUMENT", "INVALID_PARAMS"},
		{"push unsupported", "GET", "/a2a/v1/tasks/run_x/pushNotificationConfigs", "", 400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, st := restDo(t, e.url, tc.method, tc.path, tc.body)
			if resp.StatusCode != tc.code || st.Error.Status != tc.status || st.Error.Code != tc.code || st.Error.Message == "" {
				t.Fatalf("%s %s: HTTP %d %+v; want %d %s with a message", tc.method, tc.path, resp.StatusCode, st.Error, tc.code, tc.status)
			}
			if tc.code == 405 && resp.Header.Get("Allow") == "" {
				t.Error("405 without Allow")
			}
			if tc.reason != "" && (len(st.Error.Details) == 0 || st.Error.Details[0]["reason"] != tc.reason) {
				t.Errorf("details %v; want an ErrorInfo with reason %s", st.Error.Details, tc.reason)
			}
		})
	}
	// A GET's body is ignored, whatever it holds.
	if resp, st := restDo(t, e.url, "GET", "/a2a/v1/tasks", "not json"); resp.StatusCode != 200 {
		t.Errorf("GET tasks with a junk body: %d %+v", resp.StatusCode, st.Error)
	}
}

// Busy over HTTP+JSON is 429 with Retry-After and the RetryInfo;
// unavailable is 503.
func TestRESTBindingRetryable(t *testing.T) {
	for _, tc := range []struct {
		err    error
		code   int
		status string
	}{
		{orchestrator.WithRetryAfter(orchestrator.ErrBusy, 7*time.Second), 429, "RESOURCE_EXHAUSTED"},
		{orchestrator.ErrUnavailable, 503, "UNAVAILABLE"},
	} {
		srv := httptest.NewServer(a2a.New(refusing{tc.err}, nil))
		resp, st := restDo(t, srv.URL, "GET", "/a2a/v1/tasks/run_x", "")
		srv.Close()
		if resp.StatusCode != tc.code || st.Error.Status != tc.status || resp.Header.Get("Retry-After") == "" {
			t.Errorf("%v: HTTP %d %s, Retry-After %q; want %d %s with Retry-After", tc.err, resp.StatusCode, st.Error.Status, resp.Header.Get("Retry-After"), tc.code, tc.status)
		}
		if tc.code == 429 && resp.Header.Get("Retry-After") != "7" {
			t.Errorf("Retry-After = %q; want 7", resp.Header.Get("Retry-After"))
		}
	}
}
