package gateway_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/gateway"
)

// paddedPrompt is a system prompt request of n bytes: a user id and a
// tool name that pads it.
func paddedPrompt(n int) string {
	const head, tail = `{"user_id":"u","tool_names":["`, `"]}`
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

// sendChunked sends body without a Content-Length.
func sendChunked(t *testing.T, srv *httptest.Server, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", srv.URL+path, io.MultiReader(strings.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if req.ContentLength > 0 {
		t.Fatal("the body has a length")
	}
	return resp
}

// Bodies are bounded: one that says it is over the limit is refused
// before any handler reads it, one that does not say (chunked) when it
// gets there, both 413 naming the limit. SetLive changes the limit for
// the requests that follow (zero meaning the 1 MiB default), and the
// routes that carry attachments keep their own.
func TestBodyLimits(t *testing.T) {
	b := &stub{}
	srv, gw, _ := stubServer(t, b, gateway.Options{MaxBodyBytes: 100})
	if resp := send(t, srv, "POST", "/wunder/system_prompt", paddedPrompt(100), "Content-Type", "application/json"); resp.StatusCode != 200 {
		t.Fatalf("a body at the limit: %d", resp.StatusCode)
	}
	b.calls.Store(0)
	p := wantProblem(t, send(t, srv, "POST", "/wunder/system_prompt", paddedPrompt(101), "Content-Type", "application/json"), 413, "body_too_large")
	if !strings.Contains(p.Detail, "100 bytes") || b.calls.Load() != 0 {
		t.Errorf("over the limit: %q, %d backend calls; want the limit named and no call", p.Detail, b.calls.Load())
	}
	if p := wantProblem(t, sendChunked(t, srv, "/wunder/system_prompt", paddedPrompt(101)), 413, "body_too_large"); !strings.Contains(p.Detail, "100 bytes") {
		t.Errorf("chunked over the limit: %q", p.Detail)
	}
	if resp := sendChunked(t, srv, "/wunder/system_prompt", paddedPrompt(100)); resp.StatusCode != 200 {
		t.Errorf("chunked at the limit: %d", resp.StatusCode)
	}
	gw.SetLive(gateway.Live{MaxBodyBytes: 60})
	wantProblem(t, send(t, srv, "POST", "/wunder/system_prompt", paddedPrompt(61), "Content-Type", "application/json"), 413, "body_too_large")
	// POST /wunder carries attachments: its limit is not MaxBodyBytes.
	wantProblem(t, send(t, srv, "POST", "/wunder", paddedPrompt(200), "Content-Type", "application/json"), 400, "missing_question")
	gw.SetLive(gateway.Live{})
	if resp := send(t, srv, "POST", "/wunder/system_prompt", paddedPrompt(100_000), "Content-Type", "application/json"); resp.StatusCode != 200 {
		t.Errorf("100 kB under the default limit: %d", resp.StatusCode)
	}
	if p := wantProblem(t, send(t, srv, "POST", "/wunder/system_prompt", paddedPrompt(1<<20+1), "Content-Type", "application/json"), 413, "body_too_large"); !strings.Contains(p.Detail, "1048576 bytes") {
		t.Errorf("over the default: %q", p.Detail)
	}
}

// A JSON body says it is JSON (parameters and +json types are JSON), and
// each way it can be wrong is said so that the client can fix it.
func TestDecodeJSONSaysWhatIsWrong(t *testing.T) {
	srv, _, _ := stubServer(t, &stub{}, gateway.Options{})
	for _, ct := range []string{"application/json; charset=utf-8", "Application/JSON", "application/merge-patch+json"} {
		if resp := send(t, srv, "POST", "/wunder/system_prompt", `{"user_id":"u"}`, "Content-Type", ct); resp.StatusCode != 200 {
			t.Errorf("Content-Type %q: %d", ct, resp.StatusCode)
		}
	}
	for _, ct := range []string{"text/json", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; =bad"} {
		wantProblem(t, send(t, srv, "POST", "/wunder/system_prompt", `{"user_id":"u"}`, "Content-Type", ct), 415, "unsupported_media_type")
	}
	for body, want := range map[string]string{
		`{"user_id":7}`:                  `field "user_id" must be string, got number`,
		`{"user_id":"u","tool_names":1}`: `field "tool_names" must be []string, got number`,
		`{"user_id":"u",,}`:              "malformed JSON at byte 16",
		`{"user_id":"u","toolnames":[]}`: `unknown field "toolnames"; see docs/http.md for the fields`,
		`{"user_id":"u"}{"user_id":"v"}`: "unexpected data after the JSON object",
		` `:                              "the body is empty",
	} {
		resp := send(t, srv, "POST", "/wunder/system_prompt", body, "Content-Type", "application/json")
		var p problem
		_ = jsonDecode(resp, &p)
		if resp.StatusCode != 400 || !strings.Contains(p.Detail, want) {
			t.Errorf("%s: %d %q; want 400 saying %q", body, resp.StatusCode, p.Detail, want)
		}
	}
}

// CORS as configured: "*" without credentials answers "*", with
// credentials the origin itself (a browser refuses "*" with them); every
// answer to an allowed origin varies by Origin and exposes the headers a
// client reads; a preflight says what may be sent and for how long. A
// policy set live applies to the next request.
func TestCORSAnswers(t *testing.T) {
	srv, gw, _ := stubServer(t, &stub{}, gateway.Options{CORS: gateway.CORSOptions{AllowOrigins: []string{"*"},
		AllowMethods: []string{"GET", "POST"}, AllowHeaders: []string{"Content-Type", "Authorization"}}})
	resp := send(t, srv, "GET", "/wunder/tools?user_id=u", "", "Origin", "https://app.example")
	h := resp.Header
	if resp.StatusCode != 200 || h.Get("Access-Control-Allow-Origin") != "*" || h.Get("Access-Control-Allow-Credentials") != "" ||
		!slices.Contains(h.Values("Vary"), "Origin") {
		t.Errorf("wildcard: %d %v", resp.StatusCode, h)
	}
	for _, name := range []string{"X-Request-Id", "X-Run-Id", "X-Session-Id", "Retry-After"} {
		if !strings.Contains(h.Get("Access-Control-Expose-Headers"), name) {
			t.Errorf("%s is not exposed: %q", name, h.Get("Access-Control-Expose-Headers"))
		}
	}
	pre := send(t, srv, "OPTIONS", "/wunder/runs", "", "Origin", "https://app.example", "Access-Control-Request-Method", "POST")
	if pre.StatusCode != 204 || pre.Header.Get("Access-Control-Allow-Methods") != "GET, POST" ||
		pre.Header.Get("Access-Control-Allow-Headers") != "Content-Type, Authorization" || pre.Header.Get("Access-Control-Max-Age") != "600" {
		t.Errorf("preflight: %d %v", pre.StatusCode, pre.Header)
	}
	for _, origins := range [][]string{{"*"}, {"https://app.example"}} {
		gw.SetLive(gateway.Live{CORS: gateway.CORSOptions{AllowOrigins: origins, AllowCredentials: true}})
		h = send(t, srv, "GET", "/wunder/tools?user_id=u", "", "Origin", "https://app.example").Header
		if h.Get("Access-Control-Allow-Origin") != "https://app.example" || h.Get("Access-Control-Allow-Credentials") != "true" {
			t.Errorf("%v with credentials: %v", origins, h)
		}
	}
	// The old wildcard is gone: another site's page is refused.
	wantProblem(t, send(t, srv, "GET", "/wunder/tools?user_id=u", "", "Origin", "https://other.example"), 403, "origin_not_allowed")
	gw.SetLive(gateway.Live{})
	resp = send(t, srv, "OPTIONS", "/wunder/runs", "", "Origin", "http://localhost:5173", "Access-Control-Request-Method", "POST")
	if resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.Header.Get("Access-Control-Allow-Methods") != "" {
		t.Errorf("CORS off: a preflight answered with %v", resp.Header)
	}
}

// Other front-ends are mounted behind the same middleware: a request id,
// the API key (but on the paths opened, exactly or as a subtree), the
// body limit, and a panic turned into a problem; a handler that aborts
// its answer (http.ErrAbortHandler) closes the connection instead.
func TestMountedHandlersPassTheMiddleware(t *testing.T) {
	gw := gateway.New(&stub{}, &gateway.Options{APIKey: "key", MaxBodyBytes: 10})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/x/panic":
			panic("bug in a front-end")
		case "/x/abort":
			panic(http.ErrAbortHandler)
		}
		if _, err := io.ReadAll(r.Body); err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		_, _ = io.WriteString(w, "mounted "+r.URL.Path)
	})
	gw.Mount("/x/", h)
	gw.Open("/x/open")
	gw.MountOpen("/y/", h)
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)
	key := []string{"X-API-Key", "key"}
	for _, tc := range []struct {
		path   string
		hdr    []string
		status int
	}{
		{"/x/closed", nil, 401},
		{"/x/closed", key, 200},
		{"/x/open", nil, 200},
		{"/x/open/more", nil, 401},
		{"/y/", nil, 200},
		{"/y/any/thing", nil, 200},
	} {
		resp := send(t, srv, "GET", tc.path, "", tc.hdr...)
		if resp.StatusCode != tc.status || resp.Header.Get("X-Request-Id") == "" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s (%v): %d, request id %q; want %d", tc.path, tc.hdr, resp.StatusCode, resp.Header.Get("X-Request-Id"), tc.status)
		}
	}
	wantProblem(t, send(t, srv, "POST", "/x/closed", strings.Repeat("b", 11), key...), 413, "body_too_large")
	wantProblem(t, send(t, srv, "GET", "/x/panic", "", key...), 500, "internal")
	req, err := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/x/abort", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", "key")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("an aborted answer reached the client: %d", resp.StatusCode)
	}
	if resp := send(t, srv, "GET", "/x/closed", "", key...); resp.StatusCode != 200 {
		t.Errorf("after a panic and an abort: %d", resp.StatusCode)
	}
}

// limiter records the keys it is asked about and refuses those in refuse
// with their delay.
type limiter struct {
	mu     sync.Mutex
	asked  []string
	refuse map[string]time.Duration
}

func (l *limiter) Allow(key string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.asked = append(l.asked, key)
	d, refused := l.refuse[key]
	return !refused, d
}

func (l *limiter) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.asked
	l.asked = nil
	return out
}

// The rate limit draws a request from its principal's bucket: the API
// key's, or an anonymous caller's address; probes, the language list and
// CORS preflights draw nothing. A refusal is 429 rate_limited with
// Retry-After rounded up to whole seconds.
func TestRateLimitBuckets(t *testing.T) {
	l := &limiter{refuse: map[string]time.Duration{}}
	anon, _, _ := stubServer(t, &stub{}, gateway.Options{RateLimit: l})
	keyed, _, _ := stubServer(t, &stub{}, gateway.Options{RateLimit: l, APIKey: "key"})
	send(t, anon, "GET", "/wunder/tools?user_id=u", "")
	send(t, keyed, "GET", "/wunder/tools?user_id=u", "", "X-API-Key", "key")
	send(t, keyed, "GET", "/wunder/tools?user_id=u", "", "Authorization", "Bearer key")
	if got := l.take(); !slices.Equal(got, []string{"addr:127.0.0.1", "api_key", "api_key"}) {
		t.Errorf("buckets %v; want the address, then the API key's twice", got)
	}
	for _, path := range []string{"/healthz", "/readyz", "/wunder/i18n"} {
		send(t, anon, "GET", path, "")
	}
	// A preflight CORS does not answer (it is off) reaches the limiter.
	send(t, anon, "OPTIONS", "/wunder/runs", "", "Origin", "http://localhost:5173", "Access-Control-Request-Method", "POST")
	wantProblem(t, send(t, keyed, "GET", "/wunder/tools", ""), 401, "unauthenticated") // not signed in: refused before any bucket
	if got := l.take(); len(got) != 0 {
		t.Errorf("probes, preflights or refused credentials drew from %v", got)
	}
	for d, want := range map[time.Duration]string{1200 * time.Millisecond: "2", time.Second: "1", 0: "1", 90 * time.Second: "90"} {
		l.mu.Lock()
		l.refuse["addr:127.0.0.1"] = d
		l.mu.Unlock()
		resp := send(t, anon, "GET", "/wunder/tools?user_id=u", "")
		p := wantProblem(t, resp, 429, "rate_limited")
		if resp.Header.Get("Retry-After") != want || !strings.Contains(p.Detail, want) {
			t.Errorf("refused for %v: Retry-After %q, %q; want %s", d, resp.Header.Get("Retry-After"), p.Detail, want)
		}
	}
}

// jsonDecode decodes a response's body into v.
func jsonDecode(resp *http.Response, v any) error {
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if len(b) == 0 {
		return errors.New("empty body")
	}
	return json.Unmarshal(b, v)
}
