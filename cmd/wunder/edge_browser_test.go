package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/orchestrator"
)

// The browser-safe defaults of issue 35, against a real server in its
// default no-key mode: what a web page the user visits could send is
// refused on every front-end, and nothing it asked for happens.

// edgeDo sends one request with the given Host (when not empty) and
// headers, and returns the status and body.
func edgeDo(t *testing.T, method, url, host, body string, hdr ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// runsOf counts the runs stored for user.
func runsOf(t *testing.T, s *server, user string) int {
	t.Helper()
	runs, err := s.app.orch.ListRuns(t.Context(), orchestrator.RunFilter{UserID: user})
	if err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

func TestEdgeBrowserCannotDriveTheDefault(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.Auth.AllowRegister = true })
	ask := `{"user_id":"victim","question":"hi","stream":false}`

	// A typeless body (a page posting a Blob) never runs an agent.
	if st, body := edgeDo(t, "POST", s.url+"/wunder", "", ask); st != http.StatusUnsupportedMediaType || !strings.Contains(body, "unsupported_media_type") {
		t.Errorf("POST /wunder without Content-Type: %d %s", st, body)
	}
	// A cross-site page's request is refused, with or without a JSON type.
	for _, ct := range []string{"application/json", "text/plain"} {
		if st, body := edgeDo(t, "POST", s.url+"/wunder", "", ask, "Content-Type", ct, "Origin", "http://evil.example"); st != http.StatusForbidden || !strings.Contains(body, "origin_not_allowed") {
			t.Errorf("POST /wunder from Origin evil.example (%s): %d %s", ct, st, body)
		}
	}
	if n := runsOf(t, s, "victim"); n != 0 {
		t.Fatalf("%d runs of victim after refused requests", n)
	}
	// Nor does it create an account.
	reg := `{"user_id":"mallory","password":"correct horse battery"}`
	if st, body := edgeDo(t, "POST", s.url+"/wunder/auth/register", "", reg, "Content-Type", "application/json", "Origin", "http://evil.example"); st != http.StatusForbidden {
		t.Errorf("register from Origin evil.example: %d %s", st, body)
	}
	if _, err := s.app.store.GetUser(t.Context(), "mallory"); err == nil {
		t.Fatal("a cross-site page created an account")
	}

	// DNS rebinding: a name the attacker owns, pointed at 127.0.0.1,
	// reaches no route of any front-end.
	rpc := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, c := range []struct {
		method, path, body string
		hdr                []string
		code               string
	}{
		{"POST", "/wunder", ask, []string{"Content-Type", "application/json"}, "host_not_allowed"},
		{"GET", "/wunder/workspace?user_id=victim", "", nil, "host_not_allowed"},
		{"GET", "/wunder/sessions?user_id=victim", "", nil, "host_not_allowed"},
		{"POST", "/a2a", rpc, []string{"Content-Type", "application/json", "A2A-Version", "1.0"}, "host_not_allowed"},
		{"GET", "/.well-known/agent-card.json", "", nil, "host_not_allowed"},
		{"POST", "/wunder/mcp", init, []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream"}, "host_not_allowed"},
		{"POST", "/wunder.v1.WunderService/ListTools", `{"userId":"victim"}`, []string{"Content-Type", "application/json", "Connect-Protocol-Version", "1"}, "permission_denied"},
		{"GET", "/wunder/web/", "", nil, "host_not_allowed"},
	} {
		st, body := edgeDo(t, c.method, s.url+c.path, "attacker.example:8000", c.body, c.hdr...)
		if (st != http.StatusMisdirectedRequest && st != http.StatusForbidden) || !strings.Contains(body, c.code) {
			t.Errorf("%s %s with Host attacker.example: %d %.200s", c.method, c.path, st, body)
		}
	}
	if n := runsOf(t, s, "victim"); n != 0 {
		t.Fatalf("%d runs of victim after rebound requests", n)
	}

	// Each protocol refuses a body that does not say its type.
	for _, c := range []struct{ name, path, body string }{
		{"A2A JSON-RPC", "/a2a", rpc},
		{"MCP", "/wunder/mcp", init},
		{"Connect", "/wunder.v1.WunderService/ListTools", `{"userId":"victim"}`},
	} {
		st, body := edgeDo(t, "POST", s.url+c.path, "", c.body, "Accept", "application/json, text/event-stream", "Connect-Protocol-Version", "1")
		if c.name == "A2A JSON-RPC" {
			if !strings.Contains(body, "-32005") {
				t.Errorf("%s without Content-Type: %d %s", c.name, st, body)
			}
			continue
		}
		if st < 400 || st >= 500 {
			t.Errorf("%s without Content-Type: %d %s", c.name, st, body)
		}
	}
	if n := runsOf(t, s, "victim"); n != 0 {
		t.Fatalf("%d runs of victim after typeless requests", n)
	}

	// The console, served by the server, keeps working: its own origin is
	// the request's host.
	st, body := edgeDo(t, "POST", s.url+"/wunder/system_prompt", "", `{"user_id":"victim"}`, "Content-Type", "application/json", "Origin", s.url)
	if st != http.StatusOK {
		t.Fatalf("the console's own origin: %d %s", st, body)
	}
}

// The server bounds how long a request's head and body may take and how
// large its head may be, without bounding a streamed answer.
func TestEdgeServerTimeouts(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.Server.ReadTimeoutSeconds = 1
		c.Server.MaxHeaderBytes = 8 << 10
	})
	addr := strings.TrimPrefix(s.url, "http://")

	// A slow body: the head and part of the body, then nothing. The
	// server answers 408 naming the key, without waiting for the rest.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	part := `{"user_id":"slow","question":"`
	fmt.Fprintf(conn, "POST /wunder HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(part)+100, part)
	if err := conn.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil { // a bound on the test, not a synchronisation
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a slow body: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "server.read_timeout_s") {
		t.Fatalf("slow body: %d %s", resp.StatusCode, b)
	}
	if n := runsOf(t, s, "slow"); n != 0 {
		t.Fatalf("a slow body started %d runs", n)
	}

	// A head over server.max_header_bytes: 431.
	st, _ := edgeDo(t, "GET", s.url+"/healthz", "", "", "X-Pad", strings.Repeat("a", 16<<10))
	if st != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("a 16 KiB header: %d, want 431", st)
	}

	// A streamed answer that lasts longer than read_timeout_s arrives whole.
	s.fake.ChunkDelay = 300 * time.Millisecond // 6 chunks: the stream outlasts the 1 s read timeout
	c := client.New(s.url, "", nil)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var last client.Event
	start := time.Now()
	for ev, err := range c.Ask(ctx, client.RunRequest{UserID: "streamer", Question: "say something long"}) {
		if err != nil {
			t.Fatal(err)
		}
		last = ev
	}
	var f client.Final
	if last.Type != "final" || json.Unmarshal(last.Data, &f) != nil || f.State != "finished" {
		t.Fatalf("the long stream ended with %s %s", last.Type, last.Data)
	}
	if time.Since(start) < time.Second {
		t.Fatalf("the stream took %v: it did not outlast read_timeout_s, so it shows nothing", time.Since(start))
	}
}
