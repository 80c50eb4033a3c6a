package gateway_test

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/wunder/wunder/gateway"
)

type modelNames struct{}

func (modelNames) Default() string { return "m1" }
func (modelNames) Names() []string { return []string{"m1", "m2"} }

// The console's files are public even with an API key; the entry is never
// cached and carries a strict CSP; hashed assets are cached for a year and
// gzipped when asked; "/" redirects to the console and opens nothing else.
func TestWebConsoleServed(t *testing.T) {
	e := newEnv(t, envOpts{gw: gateway.Options{APIKey: "s3cret", Models: modelNames{}}})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := noFollow.Get(e.srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusFound || r.Header.Get("Location") != "/wunder/web/" {
		t.Fatalf("GET / = %d %q; want 302 to /wunder/web/", r.StatusCode, r.Header.Get("Location"))
	}
	// "/" is open as the root only: other paths still need the key.
	wantProblem(t, e.do(t, "GET", "/wunder/sessions?user_id=u", ""), 401, "unauthenticated")
	wantProblem(t, e.do(t, "GET", "/nope", ""), 401, "unauthenticated")

	var asset string
	for _, p := range []string{"/wunder/web", "/wunder/web/"} {
		r := e.do(t, "GET", p, "")
		b, _ := io.ReadAll(r.Body)
		if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("GET %s = %d %s", p, r.StatusCode, r.Header.Get("Content-Type"))
		}
		if got := r.Header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("entry Cache-Control = %q", got)
		}
		csp := r.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("CSP %q lacks %q", csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "http") {
			t.Errorf("CSP allows inline code or another origin: %q", csp)
		}
		if regexp.MustCompile(`<script(?: [^>]*)?>[^<]`).Match(b) || regexp.MustCompile(`(?:src|href)="(?:https?:)?//`).Match(b) {
			t.Errorf("entry has an inline script or another origin:\n%s", b)
		}
		asset = regexp.MustCompile(`/wunder/web/assets/[^"]+\.js`).FindString(string(b))
	}
	if asset == "" {
		t.Fatal("the entry names no script asset")
	}
	r = e.do(t, "GET", asset, "", "Accept-Encoding", "gzip")
	if r.StatusCode != 200 || r.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" || r.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("asset: %d %q %q", r.StatusCode, r.Header.Get("Cache-Control"), r.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(zr); err != nil || len(b) == 0 {
		t.Fatalf("gzipped asset: %d bytes, %v", len(b), err)
	}
	if r := e.do(t, "GET", "/wunder/web/favicon.svg", ""); r.StatusCode != 200 || r.Header.Get("Content-Type") != "image/svg+xml" {
		t.Fatalf("favicon: %d %q", r.StatusCode, r.Header.Get("Content-Type"))
	}
	wantProblem(t, e.do(t, "GET", "/wunder/web/assets/missing.js", ""), 404, "route_not_found")
}

// GET /wunder/auth/config is open and tells only whether a login is
// needed; GET /wunder/models lists names to an authenticated caller.
func TestWebAuthConfigAndModels(t *testing.T) {
	for _, key := range []string{"", "s3cret"} {
		e := newEnv(t, envOpts{gw: gateway.Options{APIKey: key, Models: modelNames{}}})
		r := e.do(t, "GET", "/wunder/auth/config", "")
		var cfg map[string]bool
		if err := json.NewDecoder(r.Body).Decode(&cfg); err != nil || r.StatusCode != 200 {
			t.Fatalf("auth config: %d %v", r.StatusCode, err)
		}
		if cfg["login_required"] != (key != "") {
			t.Errorf("key %q: login_required = %v", key, cfg["login_required"])
		}
		hdr := []string{}
		if key != "" {
			wantProblem(t, e.do(t, "GET", "/wunder/models", ""), 401, "unauthenticated")
			hdr = []string{"X-API-Key", key}
		}
		r = e.do(t, "GET", "/wunder/models", "", hdr...)
		b, _ := io.ReadAll(r.Body)
		if r.StatusCode != 200 || string(b) != `{"default":"m1","models":[{"name":"m1"},{"name":"m2"}]}`+"\n" {
			t.Errorf("models: %d %s", r.StatusCode, b)
		}
	}
}
