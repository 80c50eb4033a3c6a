package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/mcpserver"
)

// TestMain doubles as a stdio upstream: the test binary, started with
// WUNDER_MCPSERVER_HELPER=asking, serves the asking upstream's server
// (askingServer) over stdin and stdout.
func TestMain(m *testing.M) {
	if os.Getenv("WUNDER_MCPSERVER_HELPER") == "asking" {
		if err := askingServer(make(chan error, 1)).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "asking upstream:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A stdio upstream asks as an HTTP one does: its elicitation, sampling and
// roots reach a 2026-07-28 client through the pass-through as input
// requests, and a 2025-11-25 client as the upstream's requests; each call
// goes on with the answers. A stdio server is one
// process with one session, which the gateway's calls share; the parked
// call lives on the replica that runs the process.
func TestPassThroughStdioUpstreamQuestions(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	set, err := mcptools.New([]mcptools.ServerConfig{{Name: "up", Transport: mcptools.TransportStdio, Command: exe,
		Env: map[string]string{"WUNDER_MCPSERVER_HELPER": "asking"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	url := newEnvTokens(t, mcpserver.Options{Upstreams: set}, nil).url + "/wunder/mcp/up"

	var asked atomic.Int32
	cs := askedClient(t, url, &asked)
	askEveryKind(t, cs, &asked)
	// A 2025-11-25 client is asked with the upstream's own requests.
	old := clientAt(t, url, "2025-11-25", answering(&asked))
	if got := callText(t, old, "ask-twice"); got != "ada lovelace" {
		t.Errorf("ask-twice of a 2025-11-25 client: %q", got)
	}
	if n := asked.Load(); n != 6 {
		t.Errorf("the clients were asked %d times, want 6", n)
	}
}
