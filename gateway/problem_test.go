package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/orchestrator"
)

// stub is a Backend whose tool catalog answers err (a catalog when nil)
// and whose system prompt echoes the request; every other method is
// nil's (a test that reaches one fails loudly). calls counts what
// reached it.
type stub struct {
	gateway.Backend
	// mu guards err, which a test may change between requests.
	mu    sync.Mutex
	err   error
	calls atomic.Int32
}

func (b *stub) setErr(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.err = err
}

func (b *stub) ToolCatalog(context.Context, string) (map[string][]orchestrator.CatalogEntry, error) {
	b.calls.Add(1)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return nil, b.err
	}
	return map[string][]orchestrator.CatalogEntry{}, nil
}

func (b *stub) SystemPrompt(_ context.Context, req orchestrator.PromptRequest) (string, error) {
	b.calls.Add(1)
	return "prompt for " + req.UserID, nil
}

// logs is a log the test reads back, one JSON object a line.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// lines are the log's records that have msg.
func (l *logs) lines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.buf.String()), "\n") {
		var rec map[string]any
		if line == "" {
			continue
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// stubServer serves a gateway over b with opts, logging into the
// returned log.
func stubServer(t *testing.T, b gateway.Backend, opts gateway.Options) (*httptest.Server, *gateway.Server, *logs) {
	t.Helper()
	l := &logs{}
	opts.Logger = slog.New(slog.NewJSONHandler(l, nil))
	gw := gateway.New(b, &opts)
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	return srv, gw, l
}

// send sends a request to srv with headers (name, value, ...).
func send(t *testing.T, srv *httptest.Server, method, path, body string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
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

// The one error table: every sentinel of the core, however wrapped,
// becomes its status and code, the more specific first; the problem's
// type is the code's anchor in docs/http.md and its title the status's
// text; a retry hint becomes Retry-After in whole seconds, at least one.
func TestErrorTable(t *testing.T) {
	for _, tc := range []struct {
		err         error
		status      int
		code, retry string
	}{
		{fmt.Errorf("%w: %w: no tool x", orchestrator.ErrInvalidArgument, orchestrator.ErrToolNotFound), 400, "tool_not_found", ""},
		{fmt.Errorf("%w: limit", orchestrator.ErrInvalidArgument), 400, "invalid_argument", ""},
		{fmt.Errorf("wrapped twice: %w", fmt.Errorf("%w: run r", orchestrator.ErrNotFound)), 404, "not_found", ""},
		{orchestrator.ErrConflict, 409, "conflict", ""},
		{orchestrator.WithRetryAfter(fmt.Errorf("%w: one run at a time", orchestrator.ErrBusy), 2500*time.Millisecond), 429, "busy", "2"},
		{orchestrator.WithRetryAfter(orchestrator.ErrUnavailable, 300*time.Millisecond), 503, "unavailable", "1"},
		{orchestrator.ErrUnavailable, 503, "unavailable", ""},
		{orchestrator.ErrUnauthenticated, 401, "unauthenticated", ""},
		{orchestrator.ErrPermissionDenied, 403, "permission_denied", ""},
		{orchestrator.ErrCanceled, 499, "canceled", ""},
	} {
		srv, _, _ := stubServer(t, &stub{err: tc.err}, gateway.Options{})
		resp := send(t, srv, "GET", "/wunder/tools?user_id=u", "")
		var p gateway.Problem
		if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
			t.Fatal(err)
		}
		title := http.StatusText(tc.status)
		if tc.status == 499 {
			title = "Client Closed Request"
		}
		if resp.StatusCode != tc.status || p.Status != tc.status || p.Code != tc.code || p.Title != title ||
			p.Type != "https://github.com/wunder/wunder/blob/main/docs/http.md#"+tc.code || p.Detail != tc.err.Error() ||
			resp.Header.Get("Content-Type") != "application/problem+json" || resp.Header.Get("Retry-After") != tc.retry {
			t.Errorf("%v: %d %+v, Retry-After %q; want %d %s, Retry-After %q", tc.err, resp.StatusCode, p, resp.Header.Get("Retry-After"), tc.status, tc.code, tc.retry)
		}
	}
}

// An error outside the table is internal: the client gets a 500 that
// names the request id and none of the error's text (no Retry-After even
// when the error carries a hint), and the log has the error under that
// id.
func TestInternalErrorsStayInTheLog(t *testing.T) {
	secret := orchestrator.WithRetryAfter(errors.New("dial tcp 10.0.0.7:5432: password authentication failed for user wunder"), time.Second)
	srv, _, log := stubServer(t, &stub{err: secret}, gateway.Options{})
	resp := send(t, srv, "GET", "/wunder/tools?user_id=u", "")
	p := wantProblem(t, resp, 500, "internal")
	if strings.Contains(p.Detail, "10.0.0.7") || strings.Contains(p.Detail, "password") || !strings.Contains(p.Detail, p.RequestID) {
		t.Errorf("detail %q; want the request id and nothing of the error", p.Detail)
	}
	if resp.Header.Get("Retry-After") != "" {
		t.Errorf("an internal error with Retry-After %q", resp.Header.Get("Retry-After"))
	}
	found := false
	for _, rec := range log.lines(t, "internal error") {
		found = found || (rec["request_id"] == p.RequestID && strings.Contains(fmt.Sprint(rec["err"]), "10.0.0.7"))
	}
	if !found {
		t.Errorf("the log has no internal error under request id %s", p.RequestID)
	}
}

// The request id: a client's sane X-Request-Id is kept (so its logs and
// wunder's join), anything else is replaced by a fresh one; the answer's
// header, its problem and the access log all carry it. The access log has
// one line per request, its level by status: 503 a warning (no model, a
// full queue), other 5xx an error.
func TestRequestIDAndAccessLog(t *testing.T) {
	b := &stub{}
	srv, _, log := stubServer(t, b, gateway.Options{Ready: func(context.Context) error { return errors.New("store down") }})
	for _, tc := range []struct {
		sent string
		kept bool
	}{
		{"trace-42.abc_DEF", true},
		{strings.Repeat("a", 128), true},
		{strings.Repeat("a", 129), false},
		{"has space", false},
		{"naïve", false},
		{"tab\there", false},
		{"", false},
	} {
		resp := send(t, srv, "GET", "/nope", "", "X-Request-Id", tc.sent)
		p := wantProblem(t, resp, 404, "route_not_found")
		got := resp.Header.Get("X-Request-Id")
		if (got == tc.sent) != tc.kept || p.RequestID != got || len(got) == 0 || len(got) > 128 {
			t.Errorf("X-Request-Id %q: answered %q (problem %q); kept %v", tc.sent, got, p.RequestID, tc.kept)
		}
	}
	a := send(t, srv, "GET", "/healthz", "").Header.Get("X-Request-Id")
	if a == send(t, srv, "GET", "/healthz", "").Header.Get("X-Request-Id") {
		t.Errorf("two requests got the one id %q", a)
	}
	send(t, srv, "GET", "/readyz", "", "X-Request-Id", "ready-1")
	b.setErr(errors.New("boom"))
	send(t, srv, "GET", "/wunder/tools?user_id=u", "", "X-Request-Id", "tools-1")
	levels := map[string]string{}
	for _, rec := range log.lines(t, "http") {
		id, _ := rec["request_id"].(string)
		levels[id] = fmt.Sprint(rec["level"], " ", rec["method"], " ", rec["path"], " ", rec["status"])
		if _, ok := rec["duration_ms"]; !ok || rec["bytes"] == nil {
			t.Errorf("access log line without duration or bytes: %v", rec)
		}
	}
	for id, want := range map[string]string{
		"trace-42.abc_DEF": "INFO GET /nope 404",
		"ready-1":          "WARN GET /readyz 503",
		"tools-1":          "ERROR GET /wunder/tools 500",
	} {
		if levels[id] != want {
			t.Errorf("access log of %s: %q; want %q", id, levels[id], want)
		}
	}
}

// The probes: /healthz says the version, /readyz what is not ready.
func TestProbes(t *testing.T) {
	var down atomic.Bool
	var deadline atomic.Int64
	down.Store(true)
	srv, _, _ := stubServer(t, &stub{}, gateway.Options{Version: "v1.2.3", APIKey: "key", Ready: func(ctx context.Context) error {
		d, _ := ctx.Deadline()
		deadline.Store(int64(time.Until(d)))
		if down.Load() {
			return errors.New("the store does not answer")
		}
		return nil
	}})
	var health map[string]string
	if err := json.NewDecoder(send(t, srv, "GET", "/healthz", "").Body).Decode(&health); err != nil || health["version"] != "v1.2.3" || health["status"] != "ok" {
		t.Errorf("/healthz: %v %v", health, err)
	}
	p := wantProblem(t, send(t, srv, "GET", "/readyz", ""), 503, "not_ready")
	if d := time.Duration(deadline.Load()); !strings.Contains(p.Detail, "the store does not answer") || d <= 0 || d > 3*time.Second {
		t.Errorf("/readyz: %q, asked with %v to answer; want the reason, within 3s", p.Detail, d)
	}
	down.Store(false)
	if resp := send(t, srv, "GET", "/readyz", ""); resp.StatusCode != 200 {
		t.Errorf("/readyz when ready: %d", resp.StatusCode)
	}
}

// The mux's own answers are problems: a method the route does not take
// lists those it does.
func TestMethodNotAllowedListsMethods(t *testing.T) {
	srv, _, _ := stubServer(t, &stub{}, gateway.Options{})
	p := wantProblem(t, send(t, srv, "DELETE", "/wunder/runs", ""), 405, "method_not_allowed")
	for _, m := range []string{"GET", "POST", "DELETE is not allowed on /wunder/runs"} {
		if !strings.Contains(p.Detail, m) {
			t.Errorf("detail %q does not say %q", p.Detail, m)
		}
	}
}
