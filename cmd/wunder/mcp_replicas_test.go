package main

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/internal/config"
)

// Two wunder servers, built and wired as the binary wires them, on one
// PostgreSQL schema: with mcp.server.session_store at its default (auto:
// the database on PostgreSQL), a go-sdk v1.8.0 client at 2025-11-25 whose
// every request goes to the other server keeps one session on
// /wunder/mcp and one on the pass-through /wunder/mcp/up, and its DELETE
// on one server ends the session on both.
func TestMCPSessionsAcrossReplicas(t *testing.T) {
	t.Parallel()
	dsn := pgSchema(t)
	up := passThroughUpstream(t) // tools read and write
	configure := func(c *config.Config) {
		c.Storage.Postgres.DSN = dsn
		c.MCP.Servers = append(c.MCP.Servers, up)
	}
	a, b := startServer(t, configure), startServer(t, configure)
	for _, path := range []string{"/wunder/mcp", "/wunder/mcp/up"} {
		t.Run(path, func(t *testing.T) {
			rr := &alternate{urls: []string{a.url, b.url}, served: map[string]int{}}
			cl := mcp.NewClient(&mcp.Implementation{Name: "replicas", Version: "1"}, nil)
			cs, err := cl.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: a.url + path, HTTPClient: &http.Client{Transport: rr}},
				&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			sid := cs.ID()
			tool, args := "read", map[string]any{}
			if path == "/wunder/mcp" {
				tool, args = "wunder__run", map[string]any{"task": "say hello"}
			}
			for range 3 {
				if _, err := cs.ListTools(t.Context(), nil); err != nil {
					t.Fatal(err)
				}
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError {
					t.Fatalf("%s: %+v", tool, res.Content)
				}
			}
			if err := cs.Close(); err != nil {
				t.Fatal(err)
			}
			rr.mu.Lock()
			served, failed, deleted := rr.served, rr.failed, rr.deleted
			rr.mu.Unlock()
			if served[a.url] < 3 || served[b.url] < 3 {
				t.Errorf("requests of the session per server: %v, want both to serve several", served)
			}
			if len(failed) > 0 {
				t.Errorf("refused: %q", failed)
			}
			if deleted != http.StatusNoContent {
				t.Errorf("DELETE: HTTP %d, want 204", deleted)
			}
			for _, s := range []*server{a, b} {
				r := s.rest(t, "POST", path, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`,
					map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25", "Accept": "application/json, text/event-stream"})
				if r.StatusCode != http.StatusNotFound {
					t.Errorf("after DELETE, a request on %s: HTTP %d, want 404", s.url, r.StatusCode)
				}
			}
		})
	}
}

// alternate sends each request to the next of urls and counts where the
// requests of a session went.
type alternate struct {
	urls []string

	mu      sync.Mutex
	n       int
	served  map[string]int
	failed  []string
	deleted int
}

func (rr *alternate) RoundTrip(r *http.Request) (*http.Response, error) {
	rr.mu.Lock()
	base := rr.urls[rr.n%len(rr.urls)]
	rr.n++
	rr.mu.Unlock()
	u, _ := url.Parse(base)
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = u.Scheme, u.Host, u.Host
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if r.Header.Get("Mcp-Session-Id") != "" {
		rr.served[base]++
		if r.Method == http.MethodDelete {
			rr.deleted = resp.StatusCode
		} else if resp.StatusCode/100 != 2 {
			rr.failed = append(rr.failed, strings.Join([]string{r.Method, base, resp.Status}, " "))
		}
	}
	return resp, nil
}
