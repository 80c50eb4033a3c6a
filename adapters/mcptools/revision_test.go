package mcptools_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/adapters/mcptools"
)

// versionLog records, per JSON-RPC method, the MCP-Protocol-Version headers
// a server's requests came with.
type versionLog struct {
	mu sync.Mutex
	m  map[string][]string
}

func (l *versionLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			method := "?"
			if _, rest, ok := strings.Cut(string(b), `"method":"`); ok {
				method, _, _ = strings.Cut(rest, `"`)
			}
			l.mu.Lock()
			l.m[method] = append(l.m[method], r.Header.Get("Mcp-Protocol-Version"))
			l.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

func (l *versionLog) of(method string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.m[method])
}

// wunder's MCP client speaks the newest revision an upstream offers: a
// go-sdk v1.8.0 server run stateless (2026-07-28 and every older one), run
// with sessions (2025-11-25 at most over HTTP: the client falls back to
// initialize), and run stateless restricted to 2026-07-28 alone. Each lists
// and calls its tool.
func TestClientRevisions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		stateless  bool
		versions   []string // the server's SupportedProtocolVersions; nil = all
		want       string   // the revision of the tool call
		initialize bool     // whether the client initialized a session
	}{
		{"stateless-offers-2026", true, nil, "2026-07-28", false},
		{"sessions-fall-back-to-2025", false, nil, "2025-11-25", true},
		{"only-2026", true, []string{"2026-07-28"}, "2026-07-28", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := mcp.NewServer(&mcp.Implementation{Name: "rev", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: c.versions})
			mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes text."},
				func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
				})
			log := &versionLog{m: map[string][]string{}}
			ts := httptest.NewServer(log.wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
				&mcp.StreamableHTTPOptions{Stateless: c.stateless})))
			t.Cleanup(ts.Close)
			s := newSet(t, 10*time.Second, mcptools.ServerConfig{Name: "rev", Transport: mcptools.TransportStreamableHTTP, URL: ts.URL})
			refreshAll(t, s)
			res := call(t, toolByName(t, s, "rev@echo"), `{"text":"hi"}`, nil)
			if res.IsError || res.Content != "echo: hi" {
				t.Fatalf("rev@echo = %+v", res)
			}
			if got := log.of("tools/call"); len(got) != 1 || got[0] != c.want {
				t.Errorf("tools/call went with MCP-Protocol-Version %q, want [%s]", got, c.want)
			}
			if got := log.of("tools/list"); len(got) == 0 || got[0] != c.want {
				t.Errorf("tools/list went with MCP-Protocol-Version %q, want %s", got, c.want)
			}
			if inits := log.of("initialize"); (len(inits) > 0) != c.initialize {
				t.Errorf("%d initialize requests; want a session: %v", len(inits), c.initialize)
			}
		})
	}
}
