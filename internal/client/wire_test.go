package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/client"
)

// The tests in this file run the client against handlers written here:
// what proxies, old servers and torn streams send, which the real gateway
// does not.

// recorded is one request a fake server received.
type recorded struct {
	method, escapedPath, userID string
	header                      http.Header
	body                        map[string]any
}

// recorder is a fake wunder: it records every request and answers the
// shape each route of the API has.
type recorder struct {
	// mu guards reqs.
	mu   sync.Mutex
	reqs []recorded
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(b, &body)
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, recorded{r.Method, r.URL.EscapedPath(), r.URL.Query().Get("user_id"), r.Header.Clone(), body})
	rec.mu.Unlock()
	final := `{"seq":1,"type":"final","data":{"answer":"a","state":"finished"}}`
	switch {
	case strings.HasSuffix(r.URL.Path, "/events"):
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: 1\nevent: final\ndata: %s\n\n", final)
	case r.URL.Path == "/wunder" && r.Header.Get("Accept") == "text/event-stream":
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: final\ndata: %s\n\n", final)
	case r.URL.Path == "/wunder/tools":
		fmt.Fprint(w, `{"mcp_tools":[{"name":"fs@read"}],"builtin_tools":[{"name":"write_file"},{"name":"read_file"}],"skills":[]}`)
	case strings.HasSuffix(r.URL.Path, "/approvals"):
		fmt.Fprint(w, `{"approvals":[{"approval_id":"ap_1","tool":"write_file","decisions":["approve","reject"],"state":"pending"}]}`)
	default:
		fmt.Fprint(w, `{"run_id":"run_1","state":"finished","approval_id":"ap_1"}`)
	}
}

func (rec *recorder) all() []recorded {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]recorded(nil), rec.reqs...)
}

// drain reads an event sequence to its end and returns its first error.
func drain(seq func(func(client.Event, error) bool)) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

// Every call sends the API key and the language, goes to its route with
// the run and approval ids escaped as one path segment and the user id as
// a query value, whatever characters they hold; bodies are JSON.
func TestRequestsReachTheirRoutes(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c := client.New(srv.URL+"/", "secret-key", nil)
	c.SetLanguage("zh")
	const user, run = "a&b=c d", "run/../x?y"
	ctx := t.Context()
	calls := []struct {
		name, method, path string
		call               func() error
	}{
		{"Submit", "POST", "/wunder/runs", func() error { _, err := c.Submit(ctx, client.RunRequest{UserID: user, Question: "q"}); return err }},
		{"GetRun", "GET", "/wunder/runs/run%2F..%2Fx%3Fy", func() error { _, err := c.GetRun(ctx, user, run); return err }},
		{"Cancel", "POST", "/wunder/runs/run%2F..%2Fx%3Fy/cancel", func() error { return c.Cancel(ctx, user, run) }},
		{"Tools", "GET", "/wunder/tools", func() error { _, err := c.Tools(ctx, user); return err }},
		{"Approvals", "GET", "/wunder/runs/run%2F..%2Fx%3Fy/approvals", func() error { _, err := c.Approvals(ctx, user, run); return err }},
		{"Decide", "POST", "/wunder/runs/run%2F..%2Fx%3Fy/approvals/ap%2F1", func() error {
			_, err := c.Decide(ctx, user, run, "ap/1", client.Decision{Decision: "approve"})
			return err
		}},
		{"AskJSON", "POST", "/wunder", func() error { _, err := c.AskJSON(ctx, client.RunRequest{UserID: user, Question: "q"}); return err }},
		{"Ask", "POST", "/wunder", func() error { return drain(c.Ask(ctx, client.RunRequest{UserID: user, Question: "q"})) }},
		{"Health", "GET", "/healthz", func() error { return c.Health(ctx) }},
	}
	for _, tc := range calls {
		before := len(rec.all())
		if err := tc.call(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		reqs := rec.all()[before:]
		if len(reqs) != 1 {
			t.Errorf("%s made %d requests, want 1", tc.name, len(reqs))
			continue
		}
		r := reqs[0]
		if r.method != tc.method || r.escapedPath != tc.path {
			t.Errorf("%s: %s %s, want %s %s", tc.name, r.method, r.escapedPath, tc.method, tc.path)
		}
		if tc.name != "Health" && r.userID != user && (r.body == nil || r.body["user_id"] != user) {
			t.Errorf("%s: user id %q (body %v), want %q", tc.name, r.userID, r.body, user)
		}
		if r.header.Get("X-API-Key") != "secret-key" || r.header.Get("Accept-Language") != "zh" {
			t.Errorf("%s: key %q, language %q", tc.name, r.header.Get("X-API-Key"), r.header.Get("Accept-Language"))
		}
		if (r.method == "POST" && r.body != nil) != (r.header.Get("Content-Type") == "application/json") {
			t.Errorf("%s: Content-Type %q with body %v", tc.name, r.header.Get("Content-Type"), r.body)
		}
	}
	// Follow checks the run, then streams its events: both carry the key.
	before := len(rec.all())
	if err := drain(c.Follow(ctx, user, run, 0, nil)); err != nil {
		t.Fatal(err)
	}
	for _, r := range rec.all()[before:] {
		if r.header.Get("X-API-Key") != "secret-key" || r.header.Get("Accept-Language") != "zh" || r.userID != user {
			t.Errorf("Follow %s: key %q, language %q, user %q", r.escapedPath, r.header.Get("X-API-Key"), r.header.Get("Accept-Language"), r.userID)
		}
	}

	// Without a key and a language, neither header is sent.
	bare := client.New(srv.URL, "", nil)
	before = len(rec.all())
	if err := bare.Health(ctx); err != nil {
		t.Fatal(err)
	}
	if h := rec.all()[before].header; h.Get("X-API-Key") != "" || h.Get("Accept-Language") != "" {
		t.Errorf("headers without key and language: %v", h)
	}
}

// The bodies of the run routes: Ask asks for a stream, AskJSON for a
// JSON answer, and empty optional fields are left out; a decision leaves
// out the arguments and reason it has not.
func TestRequestBodies(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c := client.New(srv.URL, "", nil)
	ctx := t.Context()
	if _, err := c.AskJSON(ctx, client.RunRequest{UserID: "u", Question: "q"}); err != nil {
		t.Fatal(err)
	}
	if err := drain(c.Ask(ctx, client.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"t"}, MaxRounds: 3, ApprovalMode: "suggest"})); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Decide(ctx, "u", "run_1", "ap_1", client.Decision{Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	reqs := rec.all()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if got := reqs[0].body; got["stream"] != false || len(got) != 3 {
		t.Errorf("AskJSON body = %v, want user_id, question and stream false only", got)
	}
	if got := reqs[1].body; got["stream"] != true || got["max_rounds"] != 3.0 || got["approval_mode"] != "suggest" || reqs[1].header.Get("Accept") != "text/event-stream" {
		t.Errorf("Ask body = %v (Accept %q), want stream true with the options", got, reqs[1].header.Get("Accept"))
	}
	if got := reqs[2].body; len(got) != 1 || got["decision"] != "approve" {
		t.Errorf("Decide body = %v, want only the decision", got)
	}
}

// A problem answer, or any other error answer (a proxy's HTML page), is
// an *Error: the problem's fields when it is one, else the status as its
// code and the body as its detail; Retry-After is kept.
func TestErrorAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		header map[string]string
		body   string
		want   client.Error
	}{
		{"problem", 429, map[string]string{"Retry-After": "7", "Content-Type": "application/problem+json"},
			`{"type":"x","title":"Busy","status":429,"code":"busy","detail":"a run of u is running","request_id":"req_1"}`,
			client.Error{Status: 429, Code: "busy", Detail: "a run of u is running", RequestID: "req_1", RetryAfter: "7"}},
		{"proxy page", 502, nil, "  <html>bad gateway</html>\n",
			client.Error{Status: 502, Code: "http_502", Detail: "<html>bad gateway</html>"}},
		{"JSON without a code", 500, nil, `{"error":"boom"}`,
			client.Error{Status: 500, Code: "http_500", Detail: `{"error":"boom"}`}},
		{"empty", 503, map[string]string{"Retry-After": "1"}, "",
			client.Error{Status: 503, Code: "http_503", RetryAfter: "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tc.status)
				fmt.Fprint(w, tc.body)
			}))
			defer srv.Close()
			c := client.New(srv.URL, "", nil)
			// The same mapping for a JSON call and for a stream.
			for call, err := range map[string]error{
				"Submit": func() error { _, err := c.Submit(t.Context(), client.RunRequest{}); return err }(),
				"Ask":    drain(c.Ask(t.Context(), client.RunRequest{})),
			} {
				var ce *client.Error
				if !errors.As(err, &ce) || *ce != tc.want {
					t.Errorf("%s: %#v, want %#v", call, err, tc.want)
				}
			}
		})
	}
	// A huge error page is cut, not read whole.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		_, _ = io.WriteString(w, strings.Repeat("x", 1<<20))
	}))
	defer srv.Close()
	err := client.New(srv.URL, "", nil).Health(t.Context())
	var ce *client.Error
	if !errors.As(err, &ce) || len(ce.Detail) != 64<<10 {
		t.Errorf("1 MiB error page: detail of %d bytes, want 64 KiB", len(ce.Detail))
	}
}

// Tools returns the groups in the order of their names, each group's
// tools as the server listed them, each tool with its group.
func TestToolsOrder(t *testing.T) {
	srv := httptest.NewServer(&recorder{})
	defer srv.Close()
	tools, err := client.New(srv.URL, "", nil).Tools(t.Context(), "u")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tl := range tools {
		got = append(got, tl.Group+"/"+tl.Name)
	}
	if want := "builtin_tools/write_file builtin_tools/read_file mcp_tools/fs@read"; strings.Join(got, " ") != want {
		t.Errorf("tools = %q, want %q", got, want)
	}
}

// sseServer answers GET .../events with body (and GET .../runs/{id} with
// a run), counting the stream's connections.
func sseServer(t *testing.T, events func(w http.ResponseWriter, r *http.Request, conn int)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/events") {
			fmt.Fprint(w, `{"run_id":"run_1","state":"running"}`)
			return
		}
		n := int(conns.Add(1))
		events(w, r, n)
	}))
	t.Cleanup(srv.Close)
	return srv, &conns
}

func event(w http.ResponseWriter, seq int64, typ string) {
	fmt.Fprintf(w, "id: %d\nevent: %s\ndata: {\"seq\":%d,\"type\":%q,\"data\":{}}\n\n", seq, typ, seq, typ)
	w.(http.Flusher).Flush()
}

// Ask's stream that is cut before the final event, or that carries an
// event that is not JSON, ends with an error saying so; a caller that
// stops early gets nothing more.
func TestAskStreamFailures(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"no final event", "event: progress\ndata: {\"seq\":1,\"type\":\"progress\"}\n\n", "stream ended before the final event"},
		{"not JSON", "event: progress\ndata: {\"seq\":1,\n\n", "bad event"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, tc.body)
			}))
			defer srv.Close()
			err := drain(client.New(srv.URL, "", nil).Ask(t.Context(), client.RunRequest{}))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := range int64(3) {
			event(w, i+1, "progress")
		}
	}))
	defer srv.Close()
	n := 0
	for _, err := range client.New(srv.URL, "", nil).Ask(t.Context(), client.RunRequest{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		break
	}
	if n != 1 {
		t.Errorf("yielded %d events after the caller stopped", n)
	}
}

// Ask returns at the final event even when the connection stays open
// after it (a proxy that keeps it, heartbeats).
func TestAskReturnsAtTheFinalEvent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		event(w, 1, "final")
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var types []string
	for ev, err := range client.New(srv.URL, "", nil).Ask(ctx, client.RunRequest{}) {
		if err != nil {
			t.Fatalf("after %q: %v", types, err)
		}
		types = append(types, ev.Type)
	}
	if len(types) != 1 || types[0] != "final" {
		t.Errorf("events %q, want the final one", types)
	}
}

// Follow resumes from the seq it is given: the first connection sends it
// as Last-Event-ID.
func TestFollowSendsLastEventID(t *testing.T) {
	var got atomic.Value
	srv, _ := sseServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		got.Store(r.Header.Get("Last-Event-ID"))
		event(w, 42, "final")
	})
	if err := drain(client.New(srv.URL, "", nil).Follow(t.Context(), "u", "run_1", 41, nil)); err != nil {
		t.Fatal(err)
	}
	if got.Load() != "41" {
		t.Errorf("Last-Event-ID = %q, want 41", got.Load())
	}
}

// A 4xx answer to the events request is final: Follow returns it as an
// *Error without reconnecting.
func TestFollowStopsAtAClientError(t *testing.T) {
	srv, conns := sseServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"status":403,"code":"permission_denied","detail":"not your run"}`)
	})
	reconnects := 0
	err := drain(client.New(srv.URL, "", nil).Follow(t.Context(), "u", "run_1", 0,
		&client.FollowOptions{MaxReconnect: 5 * time.Second, OnReconnect: func(error, time.Duration) { reconnects++ }}))
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != 403 || ce.Code != "permission_denied" {
		t.Fatalf("err = %v, want the 403 problem", err)
	}
	if conns.Load() != 1 || reconnects != 0 {
		t.Errorf("%d connections, %d reconnects; want 1 and none", conns.Load(), reconnects)
	}
}

// A 5xx (or 429) answer is passing: Follow reconnects and goes on.
func TestFollowRetriesAServerError(t *testing.T) {
	srv, conns := sseServer(t, func(w http.ResponseWriter, r *http.Request, conn int) {
		if conn == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		event(w, 1, "progress")
		event(w, 2, "final")
	})
	var reconnectErr error
	var seqs []int64
	for ev, err := range client.New(srv.URL, "", nil).Follow(t.Context(), "u", "run_1", 0,
		&client.FollowOptions{OnReconnect: func(err error, _ time.Duration) { reconnectErr = err }}) {
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, ev.Seq)
	}
	var ce *client.Error
	if len(seqs) != 2 || conns.Load() != 2 || !errors.As(reconnectErr, &ce) || ce.Status != 503 {
		t.Errorf("seqs %v over %d connections, reconnect after %v; want 2 events after one 503", seqs, conns.Load(), reconnectErr)
	}
}

// An error the server writes into the stream is yielded as an error, and
// the stream goes on to its final event.
func TestFollowYieldsStreamErrors(t *testing.T) {
	srv, _ := sseServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		event(w, 1, "progress")
		fmt.Fprint(w, "event: error\ndata: subscriber too slow\n\n")
		event(w, 2, "final")
	})
	var got []string
	for ev, err := range client.New(srv.URL, "", nil).Follow(t.Context(), "u", "run_1", 0, nil) {
		if err != nil {
			got = append(got, "err:"+err.Error())
			continue
		}
		got = append(got, ev.Type)
	}
	if want := "progress|err:stream error: subscriber too slow|final"; strings.Join(got, "|") != want {
		t.Errorf("yielded %q, want %q", strings.Join(got, "|"), want)
	}
}

// A stream the server closes before the final event ends Follow with an
// error naming the last seq seen; a stream the caller's context ends
// ends with that context's error.
func TestFollowEndsWithoutAFinalEvent(t *testing.T) {
	srv, _ := sseServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		event(w, 1, "progress")
		event(w, 2, "progress")
	})
	err := drain(client.New(srv.URL, "", nil).Follow(t.Context(), "u", "run_1", 0, nil))
	if err == nil || !strings.Contains(err.Error(), "closed before the final event (last seq 2)") {
		t.Errorf("closed stream: %v", err)
	}

	hung, _ := sseServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		event(w, 1, "progress")
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var last error
	for _, err := range client.New(hung.URL, "", nil).Follow(ctx, "u", "run_1", 0, nil) {
		if err != nil {
			last = err
			break
		}
		cancel() // after the first event
	}
	if !errors.Is(last, context.Canceled) {
		t.Errorf("cancelled follow ended with %v, want context.Canceled", last)
	}
}
