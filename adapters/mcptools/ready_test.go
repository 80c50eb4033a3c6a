package mcptools_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/orchestrator"
)

// gatedServer is a streamable-HTTP server "web" with an echo tool whose
// tools/list waits until gate is closed (nil: answers at once).
func gatedServer(t *testing.T, gate <-chan struct{}) mcptools.ServerConfig {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "gated", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes text."},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" && gate != nil {
				select {
				case <-gate:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return next(ctx, method, req)
		}
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	return mcptools.ServerConfig{Name: "web", Transport: mcptools.TransportStreamableHTTP, URL: ts.URL}
}

// Until the first tools/list of a server has answered, the Set is not
// ready, and a run naming one of its tools waits for it instead of failing.
func TestReadyWaitsForFirstDiscovery(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	cfg := gatedServer(t, gate)
	s, err := mcptools.New([]mcptools.ServerConfig{cfg}, &mcptools.Options{Timeout: time.Minute, ReadyTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Ready(); err == nil {
		t.Fatal("ready before Start")
	}
	s.Start(context.Background())
	err = s.Ready()
	if !errors.Is(err, orchestrator.ErrUnavailable) || !strings.Contains(err.Error(), "web") {
		t.Fatalf("Ready() while tools/list is held = %v, want unavailable naming web", err)
	}
	reg := orchestrator.NewRegistry("", nil, s)
	selected := make(chan error, 1)
	go func() {
		sel, err := reg.Select(context.Background(), "u", []string{"web__echo"}, nil)
		if err == nil {
			if _, ok := sel.Lookup("web@echo"); !ok {
				err = errors.New("web@echo not in the selection")
			}
		}
		selected <- err
	}()
	// The listing cannot finish before the gate opens, so a Select that
	// did not wait could only fail.
	close(gate)
	if err := <-selected; err != nil {
		t.Fatalf("Select(web__echo) during discovery: %v", err)
	}
	if err := s.Ready(); err != nil {
		t.Errorf("Ready() after the discovery: %v", err)
	}
	res := call(t, toolByName(t, s, "web@echo"), `{"text":"hi"}`, nil)
	if res.IsError || res.Content != "echo: hi" {
		t.Errorf("web@echo: %+v", res)
	}
}

// After the ready timeout a server still being discovered counts as
// failed: the Set is ready, and a run naming its tools is told why.
func TestReadyTimeoutMarksServerFailed(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	cfg := gatedServer(t, gate)
	t.Cleanup(func() { close(gate) }) // runs before the server's Cleanup
	s, err := mcptools.New([]mcptools.ServerConfig{cfg}, &mcptools.Options{Timeout: time.Hour, ReadyTimeout: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.Start(context.Background())
	// The server's own timeout is an hour: only the ready timeout can end
	// this wait.
	mine, err := s.WaitTool(context.Background(), "web@echo")
	if !mine || err == nil || !strings.Contains(err.Error(), "ready timeout") {
		t.Fatalf("WaitTool = %v, %v; want the ready timeout's failure", mine, err)
	}
	if err := s.Ready(); err != nil {
		t.Errorf("Ready() after the ready timeout: %v", err)
	}
	if mine, err := s.WaitTool(context.Background(), "other@echo"); mine || err != nil {
		t.Errorf("WaitTool(other@echo) = %v, %v; want not mine", mine, err)
	}
}

// A server whose discovery failed settles at once: ready, and the
// failure is the reason a run cannot have its tools.
func TestFailedDiscoveryIsReadyWithReason(t *testing.T) {
	t.Parallel()
	down := mcptools.ServerConfig{Name: "down", Transport: mcptools.TransportStreamableHTTP, URL: "http://127.0.0.1:1/mcp"}
	s := newSet(t, 10*time.Second, down)
	s.Start(context.Background())
	reg := orchestrator.NewRegistry("", nil, s)
	_, err := reg.Select(context.Background(), "u", []string{"down@echo"}, nil)
	if !errors.Is(err, orchestrator.ErrToolNotFound) || !strings.Contains(err.Error(), "mcp server down:") {
		t.Errorf("Select(down@echo) = %v, want tool not found with the server's error", err)
	}
	if err := s.Ready(); err != nil {
		t.Errorf("Ready() after a failed discovery: %v", err)
	}
}
