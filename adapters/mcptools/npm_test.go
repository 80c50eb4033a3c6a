package mcptools_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/internal/testutil/mcpnpm"
)

// Real servers from npm (pinned in testdata/mcp): server-everything over
// stdio, SSE and streamable HTTP, and server-filesystem over stdio.
func TestEverythingServer(t *testing.T) {
	node := mcpnpm.Node(t)
	script := mcpnpm.Bin(t, "@modelcontextprotocol/server-everything/dist/index.js")
	ssePort, httpPort := mcpnpm.FreePort(t), mcpnpm.FreePort(t)
	mcpnpm.Start(t, []string{mcpnpm.Env("PORT", ssePort)}, "port", node, script, "sse")
	mcpnpm.Start(t, []string{mcpnpm.Env("PORT", httpPort)}, "port", node, script, "streamableHttp")
	servers := []mcptools.ServerConfig{
		{Name: "stdio", Transport: mcptools.TransportStdio, Command: node, Args: []string{script, "stdio"}},
		{Name: "sse", Transport: mcptools.TransportSSE, URL: "http://127.0.0.1:" + strconv.Itoa(ssePort) + "/sse"},
		{Name: "http", Transport: mcptools.TransportStreamableHTTP, URL: "http://127.0.0.1:" + strconv.Itoa(httpPort) + "/mcp"},
	}
	s := newSet(t, 30*time.Second, servers...)
	for _, sc := range servers {
		t.Run(sc.Name, func(t *testing.T) {
			if _, err := s.Refresh(context.Background(), sc.Name); err != nil {
				t.Fatal(err)
			}
			echo := toolByName(t, s, sc.Name+"@echo")
			if res := call(t, echo, `{"message":"hi"}`, nil); res.IsError || !strings.Contains(res.Content, "hi") {
				t.Errorf("echo: %+v", res)
			}
			sum := toolByName(t, s, sc.Name+"@get-sum")
			if res := call(t, sum, `{"a":2,"b":3}`, nil); res.IsError || !strings.Contains(res.Content, "5") {
				t.Errorf("get-sum: %+v", res)
			}
			var out outputs
			long := toolByName(t, s, sc.Name+"@trigger-long-running-operation")
			if res := call(t, long, `{"duration":1,"steps":2}`, &out); res.IsError {
				t.Errorf("long-running: %+v", res)
			}
			out.mu.Lock()
			t.Logf("%s: output deltas %q", sc.Name, out.lines)
			out.mu.Unlock()
		})
	}
}

func TestFilesystemServer(t *testing.T) {
	node := mcpnpm.Node(t)
	script := mcpnpm.Bin(t, "@modelcontextprotocol/server-filesystem/dist/index.js")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from wunder"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newSet(t, 30*time.Second, mcptools.ServerConfig{Name: "fs", Transport: mcptools.TransportStdio, Command: node, Args: []string{script, dir}})
	refreshAll(t, s)
	res := call(t, toolByName(t, s, "fs@read_text_file"), `{"path":"`+filepath.Join(dir, "hello.txt")+`"}`, nil)
	if res.IsError || !strings.Contains(res.Content, "hello from wunder") {
		t.Fatalf("read_text_file: %+v", res)
	}
	res = call(t, toolByName(t, s, "fs@read_text_file"), `{"path":"/etc/passwd"}`, nil)
	if !res.IsError {
		t.Fatalf("read outside the allowed dir: %+v, want an error result", res)
	}
}
