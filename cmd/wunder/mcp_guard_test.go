package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/internal/config"
)

// A configuration that names wunder as its own stdio server: the wunder
// it starts (depth 1) refuses to start its stdio upstreams, so there is
// one child and no grandchild, and a run of the child naming such a tool
// is told why. The child's environment holds the depth marker and nothing
// secret of its parent's.
func TestMCPStdioSelfRecursionIsGuarded(t *testing.T) {
	// Not parallel: it sets a variable of the test process, which plays the
	// parent wunder.
	t.Setenv("WUNDER_TEST_SECRET", "s3cret")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	childDir := t.TempDir()
	childCfg := filepath.Join(childDir, "wunder.yaml")
	self := config.MCPServer{
		Name: "self", Transport: config.MCPStdio, Enabled: true, Command: exe,
		Args: []string{"mcp", "stdio", "--config", childCfg}, Env: map[string]string{asWunderEnv: "1"},
	}
	yaml := "data_dir: " + childDir + "\nllm:\n  models:\n    demo: {provider: scripted}\n" +
		"mcp:\n  servers:\n    - {name: self, transport: stdio, command: " + strconv.Quote(exe) +
		", args: [mcp, stdio, --config, " + strconv.Quote(childCfg) + "], env: {" + asWunderEnv + ": \"1\"}}\n"
	if err := os.WriteFile(childCfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, func(c *config.Config) { c.MCP.Servers = []config.MCPServer{self} })
	waitReady(t, s.url, time.Minute)

	// Through the pass-through route, ask the child for a run that names
	// its own stdio server's tool.
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: s.url + "/wunder/mcp/self"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "wunder__run",
		Arguments: map[string]any{"task": "recurse", "tool_names": []string{"self@wunder__run"}}})
	if err == nil {
		t.Fatalf("a run of the child naming its stdio server's tool: %+v, want an error", res)
	}
	if !strings.Contains(err.Error(), "stdio server not started") {
		t.Errorf("error %v, want the depth guard's reason", err)
	}

	// Each child (the toolset's and the pass-through's) is at depth 1 and
	// has no children of its own.
	kids := childrenRunning(t, os.Getpid(), childCfg)
	if len(kids) == 0 {
		t.Fatal("no wunder child found")
	}
	for _, pid := range kids {
		env := environOf(t, pid)
		if !contains(env, mcptools.StdioDepthEnv+"=1") || contains(env, "WUNDER_TEST_SECRET=s3cret") {
			t.Errorf("child %d environment %q: want %s=1 and no WUNDER_TEST_SECRET", pid, env, mcptools.StdioDepthEnv)
		}
		if gk := childrenRunning(t, pid, ""); len(gk) != 0 {
			t.Errorf("child %d (depth 1) started processes %v", pid, gk)
		}
	}
}

// waitReady polls /readyz until it answers 200, bounded by limit.
func waitReady(t *testing.T, url string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		resp, err := http.Get(url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz not 200 within %s (last: %v)", limit, err)
		}
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// childrenRunning lists the live (not zombie) children of ppid whose
// command line contains arg ("" = any).
func childrenRunning(t *testing.T, ppid int, arg string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 || f[0] == "Z" || f[1] != strconv.Itoa(ppid) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if arg == "" || bytes.Contains(cmdline, []byte(arg)) {
			out = append(out, pid)
		}
	}
	return out
}

func environOf(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
