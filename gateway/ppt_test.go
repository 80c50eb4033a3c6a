package gateway_test

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/wunder/wunder/gateway"
)

// GET /wunder/ppt serves the introduction deck, public even with an API
// key: the page with a strict CSP and no inline code or other origin, in
// both languages; its style and script; /wunder/ppt-en redirects to the
// English deck; nothing else under /wunder/ppt, and the subtree opens no
// other path.
func TestPPTServed(t *testing.T) {
	e := newEnv(t, envOpts{gw: gateway.Options{APIKey: "s3cret"}})
	for _, p := range []string{"/wunder/ppt", "/wunder/ppt/"} {
		r := e.do(t, "GET", p, "")
		b, _ := io.ReadAll(r.Body)
		if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("GET %s = %d %s", p, r.StatusCode, r.Header.Get("Content-Type"))
		}
		csp := r.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("CSP %q lacks %q", csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "http") {
			t.Errorf("CSP allows inline code or another origin: %q", csp)
		}
		page := string(b)
		if regexp.MustCompile(`<script(?: [^>]*)?>[^<]`).MatchString(page) || regexp.MustCompile(`(?:src|href)="(?:https?:)?//`).MatchString(page) ||
			regexp.MustCompile(`<style|\son[a-z]+=|style="`).MatchString(page) {
			t.Errorf("the deck has inline code or another origin")
		}
		slides := strings.Count(page, `<section class="slide`)
		if slides < 6 || strings.Count(page, `<div lang="en">`) < slides || strings.Count(page, `<div lang="zh">`) < slides ||
			!strings.Contains(page, `src="/wunder/ppt/ppt.js"`) || !strings.Contains(page, `href="/wunder/ppt/ppt.css"`) {
			t.Errorf("the deck: %d slides, each in English and Chinese, with its script and style? %.300s", slides, page)
		}
	}
	for file, ctype := range map[string]string{"ppt.js": "text/javascript", "ppt.css": "text/css"} {
		r := e.do(t, "GET", "/wunder/ppt/"+file, "")
		b, _ := io.ReadAll(r.Body)
		if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), ctype) || len(b) < 500 || r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET /wunder/ppt/%s = %d %s, %d bytes", file, r.StatusCode, r.Header.Get("Content-Type"), len(b))
		}
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := noFollow.Get(e.srv.URL + "/wunder/ppt-en")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusFound || r.Header.Get("Location") != "/wunder/ppt?lang=en" {
		t.Errorf("GET /wunder/ppt-en = %d %q", r.StatusCode, r.Header.Get("Location"))
	}
	wantProblem(t, e.do(t, "GET", "/wunder/ppt/ppt.go", ""), 404, "route_not_found")
	if r := e.do(t, "GET", "/wunder/ppt/../ppt.go", ""); r.StatusCode == 200 { // cleaned to /wunder/ppt.go, which is not open
		t.Errorf("GET /wunder/ppt/../ppt.go = 200")
	}
	wantProblem(t, e.do(t, "GET", "/wunder/pptx", ""), 401, "unauthenticated")
	wantProblem(t, e.do(t, "GET", "/wunder/ppt-zh", ""), 401, "unauthenticated")
}
