package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/orchestrator"
)

// helperServer configures the test binary as a stdio server.
func helperServer(t *testing.T, name, mode string) mcptools.ServerConfig {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return mcptools.ServerConfig{Name: name, Transport: mcptools.TransportStdio, Command: exe,
		Env: map[string]string{"WUNDER_MCPTOOLS_HELPER": mode}}
}

func newSet(t *testing.T, timeout time.Duration, servers ...mcptools.ServerConfig) *mcptools.Set {
	t.Helper()
	s, err := mcptools.New(servers, &mcptools.Options{Timeout: timeout, MinBackoff: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// refreshAll lists every server's tools now.
func refreshAll(t *testing.T, s *mcptools.Set) {
	t.Helper()
	for _, n := range s.Servers() {
		if _, err := s.Refresh(context.Background(), n); err != nil {
			t.Fatalf("Refresh(%s): %v", n, err)
		}
	}
}

func toolByName(t *testing.T, s *mcptools.Set, name string) orchestrator.Tool {
	t.Helper()
	tools, err := s.Tools(context.Background(), "u")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		if tl.Spec().Name == name {
			return tl
		}
		names = append(names, tl.Spec().Name)
	}
	t.Fatalf("no tool %s among %v", name, names)
	return nil
}

type outputs struct {
	mu    sync.Mutex
	lines []string
}

func (o *outputs) add(stream, delta string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lines = append(o.lines, stream+":"+delta)
}

func call(t *testing.T, tl orchestrator.Tool, args string, out *outputs) *orchestrator.ToolResult {
	t.Helper()
	inv := &orchestrator.ToolInvocation{UserID: "u", RunID: "r", CallID: "c", Arguments: json.RawMessage(args)}
	if out != nil {
		inv.Output = out.add
	}
	res, err := tl.Call(context.Background(), inv)
	if err != nil {
		t.Fatalf("Call(%s): %v", tl.Spec().Name, err)
	}
	return res
}

func TestToolsNeverDialAndAreNamedServerAtTool(t *testing.T) {
	t.Parallel()
	s := newSet(t, 5*time.Second, helperServer(t, "faults", "go"))
	tools, _ := s.Tools(context.Background(), "u")
	if len(tools) != 0 {
		t.Fatalf("tools before any refresh: %d, want 0 (Tools must not dial)", len(tools))
	}
	refreshAll(t, s)
	spec := toolByName(t, s, "faults@echo").Spec()
	if spec.Description != "Echoes text." || spec.Source != "mcp" || !strings.Contains(string(spec.InputSchema), `"text"`) {
		t.Errorf("spec = %+v", spec)
	}
	reg := orchestrator.NewRegistry("", nil, s)
	sel, err := reg.Select(context.Background(), "u", []string{"faults__echo"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := sel.Names(); len(got) != 2 || got[0] != "faults@echo" {
		t.Errorf("selected %v", got)
	}
}

func TestAllowTools(t *testing.T) {
	t.Parallel()
	cfg := helperServer(t, "f", "go")
	cfg.AllowTools = []string{"echo"}
	s := newSet(t, 5*time.Second, cfg)
	refreshAll(t, s)
	tools, _ := s.Tools(context.Background(), "u")
	if len(tools) != 1 || tools[0].Spec().Name != "f@echo" {
		t.Fatalf("tools = %v", tools)
	}
}

func TestHangTimesOutWithoutKillingServer(t *testing.T) {
	t.Parallel()
	// The timeout also bounds connecting and listing: 2s leaves room for a
	// race-built child on a loaded machine (300ms flaked under load).
	s := newSet(t, 2*time.Second, helperServer(t, "f", "go"))
	refreshAll(t, s)
	start := time.Now()
	res := call(t, toolByName(t, s, "f@hang"), `{}`, nil)
	t.Logf("hang answered after %s", time.Since(start))
	if !res.IsError || !strings.Contains(res.Content, "timed out") {
		t.Fatalf("hang: %+v, want a timeout error result", res)
	}
	if res := call(t, toolByName(t, s, "f@echo"), `{"text":"still here"}`, nil); res.IsError || res.Content != "echo: still here" {
		t.Fatalf("echo after a timeout: %+v", res)
	}
}

func TestCrashMidCallThenRestart(t *testing.T) {
	t.Parallel()
	s, err := mcptools.New([]mcptools.ServerConfig{helperServer(t, "f", "go")}, &mcptools.Options{Timeout: 10 * time.Second, MinBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	refreshAll(t, s)
	pid1 := call(t, toolByName(t, s, "f@pid"), `{}`, nil).Content
	res := call(t, toolByName(t, s, "f@crash"), `{}`, nil)
	if !res.IsError {
		t.Fatalf("crash: %+v, want an error result", res)
	}
	// The crash dropped the session: the next call restarts the child.
	pid2 := call(t, toolByName(t, s, "f@pid"), `{}`, nil).Content
	if pid2 == "" || pid2 == pid1 {
		t.Fatalf("after a crash: pid %q, before %q; want a restarted child", pid2, pid1)
	}
}

func TestMalformedResultIsAnErrorResult(t *testing.T) {
	t.Parallel()
	s := newSet(t, 5*time.Second, helperServer(t, "raw", "raw"))
	refreshAll(t, s)
	res := call(t, toolByName(t, s, "raw@bad"), `{}`, nil)
	if !res.IsError {
		t.Fatalf("malformed result: %+v, want an error result", res)
	}
	t.Logf("malformed result reads: %s", res.Content)
}

func TestFailingServerNeverBlocksOthers(t *testing.T) {
	t.Parallel()
	down := mcptools.ServerConfig{Name: "down", Transport: mcptools.TransportStreamableHTTP, URL: "http://127.0.0.1:1/mcp"}
	s := newSet(t, 5*time.Second, down, helperServer(t, "f", "go"))
	if _, err := s.Refresh(context.Background(), "down"); !errors.Is(err, orchestrator.ErrUnavailable) {
		t.Fatalf("Refresh(down) = %v, want ErrUnavailable", err)
	}
	if _, err := s.Refresh(context.Background(), "nope"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Fatalf("Refresh(nope) = %v, want ErrNotFound", err)
	}
	if _, err := s.Refresh(context.Background(), "f"); err != nil {
		t.Fatal(err)
	}
	if res := call(t, toolByName(t, s, "f@echo"), `{"text":"x"}`, nil); res.IsError {
		t.Fatalf("echo: %+v", res)
	}
}

func TestProgressAndLogsBecomeOutput(t *testing.T) {
	t.Parallel()
	// The tool waits until the caller's Output has seen its progress, so the
	// notification cannot be lost in a race with the result.
	seen := make(chan struct{})
	var once sync.Once
	srv := mcp.NewServer(&mcp.Implementation{Name: "p", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "progress", Description: "Reports progress."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1, Total: 3, Message: "step"}); err != nil {
				return nil, nil, err
			}
			select {
			case <-seen:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close) // after the Set's Close: cleanups run last-in first-out
	s := newSet(t, 5*time.Second, mcptools.ServerConfig{Name: "h", Transport: mcptools.TransportStreamableHTTP, URL: ts.URL})
	refreshAll(t, s)
	var out outputs
	inv := &orchestrator.ToolInvocation{UserID: "u", RunID: "r", CallID: "c", Arguments: json.RawMessage(`{}`),
		Output: func(stream, delta string) {
			out.add(stream, delta)
			once.Do(func() { close(seen) })
		}}
	res, err := toolByName(t, s, "h@progress").Call(context.Background(), inv)
	if err != nil || res.IsError || res.Content != "done" {
		t.Fatalf("progress: %v %+v", err, res)
	}
	out.mu.Lock()
	defer out.mu.Unlock()
	if len(out.lines) == 0 || out.lines[0] != "progress:1/3 step\n" {
		t.Errorf("outputs = %q, want the progress notification first", out.lines)
	}
}

func TestCloseStopsProcessGroup(t *testing.T) {
	t.Parallel()
	s, err := mcptools.New([]mcptools.ServerConfig{helperServer(t, "f", "go")}, &mcptools.Options{Timeout: 5 * time.Second, TerminateDuration: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	refreshAll(t, s)
	var got struct{ Pid, Child int }
	if err := json.Unmarshal([]byte(call(t, toolByName(t, s, "f@pid"), `{"spawn":true}`, nil).Content), &got); err != nil || got.Child == 0 {
		t.Fatalf("pid: %v %+v", err, got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The group leader was reaped by the SDK; the grandchild was killed
	// with the group (it may linger as a zombie of the reaped leader's
	// init, so look at its state rather than its existence).
	// SIGKILL is delivered at once but the kernel tears the process down
	// asynchronously: wait (bounded) for the state to change.
	deadline := time.Now().Add(5 * time.Second)
	for alive(got.Child) && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if err := syscall.Kill(-got.Pid, 0); err == nil && alive(got.Child) {
		t.Fatalf("process group %d still has a live member %d after Close", got.Pid, got.Child)
	}
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

type memCache struct {
	mu sync.Mutex
	m  map[string]json.RawMessage
}

func (c *memCache) LoadMCPToolSpecs(_ context.Context, server string) (json.RawMessage, time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := c.m[server]; ok {
		return b, time.Now(), nil
	}
	return nil, time.Time{}, orchestrator.ErrNotFound
}

func (c *memCache) SaveMCPToolSpecs(_ context.Context, server string, tools json.RawMessage) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[server] = tools
	return nil
}

// A restart builds the catalog from the cache, with the server down.
func TestSpecCacheServesToolsWhileServerIsDown(t *testing.T) {
	t.Parallel()
	cache := &memCache{m: map[string]json.RawMessage{}}
	s1, err := mcptools.New([]mcptools.ServerConfig{helperServer(t, "f", "go")}, &mcptools.Options{Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	refreshAll(t, s1)
	_ = s1.Close()
	broken := helperServer(t, "f", "go")
	broken.Command = "/nonexistent/mcp-server"
	s2b, err := mcptools.New([]mcptools.ServerConfig{broken}, &mcptools.Options{Cache: cache, MinBackoff: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s2b.Close()
	s2b.Start(context.Background())
	tl := toolByName(t, s2b, "f@echo")
	if res := call(t, tl, `{"text":"x"}`, nil); !res.IsError || !strings.Contains(res.Content, "unavailable") {
		t.Errorf("call to a down server: %+v, want an unavailable error result", res)
	}
}
