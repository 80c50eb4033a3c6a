package gateway_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/orchestrator"
)

// doHost is e.do with the request's Host (the authority the client names,
// as a rebound DNS name makes a browser send it) and more headers.
func (e *env) doHost(t *testing.T, method, path, host, body string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
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

func TestGuardHost(t *testing.T) {
	e := newEnv(t, envOpts{gw: gateway.Options{Hosts: gateway.HostOptions{
		Allowed: []string{"wunder.example.com", "*.corp.example"}, PublicURL: "https://pub.example.org/base"}}})
	for _, c := range []struct {
		host string
		ok   bool
	}{
		{"attacker.example", false},
		{"attacker.example:8000", false},
		{"localhost.attacker.example", false},
		{"corp.example", false}, // *.corp.example is its subdomains only
		{"wunder.example.com.attacker.example", false},
		{"localhost", true},
		{"localhost:8000", true},
		{"LOCALHOST.:8000", true},
		{"app.localhost:5173", true},
		{"127.0.0.1:1", true},
		{"[::1]:8000", true},
		{"10.1.2.3", true}, // an IP literal: a browser sends one only for a page from that address
		{"wunder.example.com", true},
		{"WUNDER.example.com:443", true},
		{"a.corp.example", true},
		{"pub.example.org", true},
	} {
		resp := e.doHost(t, "GET", "/wunder/tools?user_id=u", c.host, "")
		if c.ok {
			if resp.StatusCode != http.StatusOK {
				t.Errorf("Host %q: %d, want 200", c.host, resp.StatusCode)
			}
			continue
		}
		p := wantProblem(t, resp, http.StatusMisdirectedRequest, "host_not_allowed")
		if !strings.Contains(p.Detail, "server.allowed_hosts") {
			t.Errorf("Host %q: the refusal does not name server.allowed_hosts: %q", c.host, p.Detail)
		}
	}
	// Probes answer whatever the Host: balancers probe by a name of their own.
	for _, path := range []string{"/healthz", "/readyz"} {
		if resp := e.doHost(t, "GET", path, "attacker.example", ""); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s with a foreign Host: %d, want 200", path, resp.StatusCode)
		}
	}
	// A run submitted with a foreign Host never starts.
	wantProblem(t, e.doHost(t, "POST", "/wunder/runs", "attacker.example", `{"user_id":"u","question":"q"}`), http.StatusMisdirectedRequest, "host_not_allowed")
	if runs, err := e.o.ListRuns(t.Context(), orchestrator.RunFilter{UserID: "u"}); err != nil || len(runs) != 0 {
		t.Fatalf("runs after the refused submit: %d %v", len(runs), err)
	}
}

func TestGuardOrigin(t *testing.T) {
	e := newEnv(t, envOpts{gw: gateway.Options{
		Hosts: gateway.HostOptions{Allowed: []string{"wunder.example.com"}},
		CORS:  gateway.CORSOptions{AllowOrigins: []string{"https://app.example"}}}})
	for _, c := range []struct {
		origin, host string
		ok           bool
	}{
		{"http://evil.example", "localhost:8000", false},
		{"null", "localhost:8000", false},
		{"file://", "localhost:8000", false},
		{"http://10.0.0.9", "10.0.0.5:8000", false}, // another address's page
		{"https://evil.example", "wunder.example.com", false},
		{"http://localhost:5173", "localhost:8000", true}, // a loopback page: it can reach the port anyway
		{"http://127.0.0.1:9", "localhost:8000", true},
		{"http://10.0.0.5:8000", "10.0.0.5:8000", true}, // the console served by this server
		{"https://wunder.example.com", "wunder.example.com", true},
		{"https://wunder.example.com", "localhost", true}, // an allowed host's page
		{"https://app.example", "localhost", true},        // cors.allow_origins
	} {
		resp := e.doHost(t, "POST", "/wunder/system_prompt", c.host, `{"user_id":"u"}`, "Origin", c.origin)
		if c.ok {
			if resp.StatusCode != http.StatusOK {
				t.Errorf("Origin %q to %q: %d, want 200", c.origin, c.host, resp.StatusCode)
			}
			continue
		}
		p := wantProblem(t, resp, http.StatusForbidden, "origin_not_allowed")
		if !strings.Contains(p.Detail, "cors.allow_origins") {
			t.Errorf("Origin %q: the refusal does not say how to allow it: %q", c.origin, p.Detail)
		}
	}
	// A page's run never starts.
	wantProblem(t, e.doHost(t, "POST", "/wunder", "localhost", `{"user_id":"u","question":"q","stream":false}`, "Origin", "http://evil.example"), http.StatusForbidden, "origin_not_allowed")
	if runs, err := e.o.ListRuns(t.Context(), orchestrator.RunFilter{UserID: "u"}); err != nil || len(runs) != 0 {
		t.Fatalf("runs after the refused submit: %d %v", len(runs), err)
	}
}

// A Connect, gRPC or gRPC-Web client is refused in its own protocol's
// shape.
func TestGuardAnswersRPCInItsShape(t *testing.T) {
	e := newEnv(t, envOpts{})
	resp := e.doHost(t, "POST", "/wunder.v1.WunderService/ListTools", "attacker.example", `{}`, "Connect-Protocol-Version", "1")
	var body struct{ Code, Message string }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusForbidden || body.Code != "permission_denied" || !strings.Contains(body.Message, "server.allowed_hosts") {
		t.Fatalf("Connect with a foreign Host: %d %+v", resp.StatusCode, body)
	}
}

// Every answer is nosniff, not only errors: a browser must never guess
// that JSON echoing a user's input is a page.
func TestEveryAnswerIsNosniff(t *testing.T) {
	e := newEnv(t, envOpts{})
	for _, path := range []string{"/healthz", "/wunder/tools?user_id=u", "/wunder/sessions?user_id=u", "/nope"} {
		resp := e.do(t, "GET", path, "")
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s (%d): X-Content-Type-Options %q", path, resp.StatusCode, got)
		}
	}
}

// The Host rule's edges: "*" serves every host (the check off), and a
// request without a Host (an HTTP/1.0 probe; no browser sends one)
// passes; a gRPC client refused is answered in gRPC's shape,
// PERMISSION_DENIED in its status header.
func TestGuardEdges(t *testing.T) {
	open := newEnv(t, envOpts{gw: gateway.Options{Hosts: gateway.HostOptions{Allowed: []string{"*"}}}})
	for _, host := range []string{"attacker.example", "any.thing:9"} {
		if resp := open.doHost(t, "GET", "/wunder/tools?user_id=u", host, ""); resp.StatusCode != http.StatusOK {
			t.Errorf("allowed hosts *: Host %q got %d", host, resp.StatusCode)
		}
	}
	e := newEnv(t, envOpts{})
	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /wunder/tools?user_id=u HTTP/1.0\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("HTTP/1.0 without a Host: %d", resp.StatusCode)
	}
	g := e.doHost(t, "POST", "/wunder.v1.ToolService/ListTools", "attacker.example", "", "Content-Type", "application/grpc")
	if _, err := io.ReadAll(g.Body); err != nil { // the status comes in trailers
		t.Fatal(err)
	}
	status := func(k string) string { return g.Header.Get(k) + g.Trailer.Get(k) }
	if g.StatusCode != http.StatusOK || status("Grpc-Status") != "7" || !strings.Contains(status("Grpc-Message"), "allowed_hosts") {
		t.Errorf("gRPC with a foreign Host: %d %v %v; want status 200 with grpc-status 7 naming the setting", g.StatusCode, g.Header, g.Trailer)
	}
}
