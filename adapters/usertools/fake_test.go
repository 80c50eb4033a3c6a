package usertools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wunder/wunder/adapters/usertools"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// fakeConnector stands for cmd/wunder's MCP connector. A server's tools
// are named in its URL: "https://host/<tool>,<tool>"; "https://slow/..."
// answers tools/list after a delay, "https://down/" never connects, and a
// host "private" is refused like the SSRF guard refuses it.
type fakeConnector struct {
	slow   time.Duration
	opened atomic.Int64
	closed atomic.Int64

	mu      sync.Mutex
	downErr error // when set, "https://down/" fails with it

	// waiting receives a value when a "wait" tool call has begun (it
	// then holds its connection until its context ends).
	waiting chan struct{}
}

type fakeConfig struct {
	Name        string            `json:"name"`
	URL         string            `json:"url"`
	Transport   string            `json:"transport"`
	Enabled     *bool             `json:"enabled"`
	AllowTools  []string          `json:"allow_tools"`
	BearerToken string            `json:"bearer_token"`
	Headers     map[string]string `json:"headers"`
}

func (f *fakeConnector) Check(_ context.Context, raw json.RawMessage) (usertools.ServerInfo, error) {
	var c fakeConfig
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return usertools.ServerInfo{}, fmt.Errorf("%w: %v", orchestrator.ErrInvalidArgument, err)
	}
	switch {
	case c.Transport == "stdio":
		return usertools.ServerInfo{}, fmt.Errorf("%w: transport stdio is not allowed", orchestrator.ErrInvalidArgument)
	case strings.Contains(c.URL, "private"):
		return usertools.ServerInfo{}, fmt.Errorf("%w: url targets a private address", orchestrator.ErrInvalidArgument)
	}
	return usertools.ServerInfo{Enabled: c.Enabled == nil || *c.Enabled, AllowTools: c.AllowTools}, nil
}

func (f *fakeConnector) Open(_ context.Context, raw json.RawMessage) (usertools.Conn, error) {
	var c fakeConfig
	_ = json.Unmarshal(raw, &c)
	if strings.HasPrefix(c.URL, "https://down/") {
		f.mu.Lock()
		err := f.downErr
		f.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	f.opened.Add(1)
	conn := &fakeConn{f: f, cfg: c}
	if strings.HasPrefix(c.URL, "https://slow/") {
		conn.delay = f.slow
	}
	return conn, nil
}

func (f *fakeConnector) setDown(err error) {
	f.mu.Lock()
	f.downErr = err
	f.mu.Unlock()
}

type fakeConn struct {
	f     *fakeConnector
	cfg   fakeConfig
	delay time.Duration
}

func (c *fakeConn) Tools(ctx context.Context) ([]orchestrator.Tool, error) {
	if c.delay > 0 {
		select {
		case <-time.After(c.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	_, list, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(c.cfg.URL, "https://"), "http://"), "/")
	list, _, _ = strings.Cut(list, "?")
	var out []orchestrator.Tool
	for _, name := range strings.Split(list, ",") {
		if name == "" || len(c.cfg.AllowTools) > 0 && !contains(c.cfg.AllowTools, name) {
			continue
		}
		tool := orchestratortest.NewTool(c.cfg.Name+"@"+name, true, c.call(name))
		tool.S.Source = "mcp"
		out = append(out, tool)
	}
	return out, nil
}

// call answers with who called and, for "leak", the server's secrets.
func (c *fakeConn) call(name string) func(context.Context, *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
	return func(ctx context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		var args map[string]any
		if err := json.Unmarshal(inv.Arguments, &args); err != nil {
			return orchestrator.ErrorResult("arguments must be a JSON object"), nil
		}
		if name == "leak" {
			return &orchestrator.ToolResult{Content: fmt.Sprintf("dial %s failed (token %s, key %s)", c.cfg.URL, c.cfg.BearerToken, c.cfg.Headers["X-Key"]),
				IsError: true, Data: map[string]string{"token": c.cfg.BearerToken}}, nil
		}
		if name == "wait" {
			if c.f.waiting != nil {
				c.f.waiting <- struct{}{}
			}
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return &orchestrator.ToolResult{Content: name + " called by " + inv.UserID}, nil
	}
}

func (c *fakeConn) Close() error {
	c.f.closed.Add(1)
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
