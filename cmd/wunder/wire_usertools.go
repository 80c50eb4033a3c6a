package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/adapters/usertools"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/netguard"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/storage"
	"github.com/wunder/wunder/toolconfig"
)

// userToolsParts are users' own tool configurations (config user_tools):
// the toolset of their MCP servers and shared tools, and its routes.
type userToolsParts struct {
	set *usertools.Set
}

// newUserTools builds the toolset over the store's configurations; users'
// servers connect through mcpConnector.
func newUserTools(cfg *config.Config, log *slog.Logger, store *storage.Store, configs *toolconfig.Configs) *userToolsParts {
	u := cfg.UserTools
	conn := &mcpConnector{policy: u, mcp: cfg.MCP, log: log.With("component", "user_tools"),
		transport: netguard.Transport(cfg.MCP.Timeout(), u.AllowPrivateURLs)}
	set := usertools.New(configs, conn, &usertools.Options{
		MaxServers: noneIfZero(u.MaxServers), MaxExtraPromptChars: noneIfZero(u.MaxExtraPromptChars),
		DiscoveryTimeout: u.DiscoveryTimeout(), IdleTTL: u.IdleTTL(), Access: toolAccess{store},
		Logger: log.With("component", "user_tools"),
	})
	return &userToolsParts{set: set}
}

// noneIfZero maps the config's "0 = none allowed" to the Options' "0 =
// default, negative = none".
func noneIfZero(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

func (p *userToolsParts) toolsets() []orchestrator.Toolset { return []orchestrator.Toolset{p.set} }

func (p *userToolsParts) close() {
	if p != nil {
		_ = p.set.Close()
	}
}

// api adapts the toolset to the gateway's routes.
func (p *userToolsParts) api() gateway.UserTools { return userToolsAPI{set: p.set} }

type userToolsAPI struct{ set *usertools.Set }

func (a userToolsAPI) MCPServers(ctx context.Context, user string) ([]json.RawMessage, error) {
	return a.set.Servers(ctx, user)
}

func (a userToolsAPI) SetMCPServers(ctx context.Context, user string, servers []json.RawMessage) ([]json.RawMessage, error) {
	return a.set.SetServers(ctx, user, servers)
}

func (a userToolsAPI) MCPServerTools(ctx context.Context, user string, server json.RawMessage) (any, error) {
	return a.set.ServerTools(ctx, user, server)
}

func (a userToolsAPI) ExtraPrompt(ctx context.Context, user string) (string, error) {
	return a.set.ExtraPrompt(ctx, user)
}

func (a userToolsAPI) SetExtraPrompt(ctx context.Context, user, prompt string) (string, error) {
	return a.set.SetExtraPrompt(ctx, user, prompt)
}

// mcpConnector opens users' servers with adapters/mcptools: each server a
// Set of its own, whose HTTP requests go through the SSRF guard's
// transport and whose log notifications are not forwarded (its calls
// belong to different users).
type mcpConnector struct {
	policy    config.UserTools
	mcp       config.MCP
	log       *slog.Logger
	transport http.RoundTripper
}

var _ usertools.Connector = (*mcpConnector)(nil)

// parse reads a user's server as an mcp.servers entry; its problems
// become one invalid-argument error.
func (c *mcpConnector) parse(raw json.RawMessage) (config.MCPServer, error) {
	s, err := config.ParseMCPServer(raw)
	if err == nil {
		return s, nil
	}
	var msgs []string
	for _, p := range config.Problems(err) {
		msgs = append(msgs, p.Error())
	}
	if len(msgs) == 0 {
		msgs = append(msgs, err.Error())
	}
	return s, fmt.Errorf("%w: %s", orchestrator.ErrInvalidArgument, strings.Join(msgs, "; "))
}

// Check implements [usertools.Connector]: the entry's schema, then stdio
// only when user_tools.allow_stdio, and a URL the SSRF guard passes unless
// user_tools.allow_private_urls.
func (c *mcpConnector) Check(ctx context.Context, raw json.RawMessage) (usertools.ServerInfo, error) {
	s, err := c.parse(raw)
	if err != nil {
		return usertools.ServerInfo{}, err
	}
	if s.Transport == config.MCPStdio {
		if !c.policy.AllowStdio {
			return usertools.ServerInfo{}, fmt.Errorf("%w: transport stdio is not allowed for users' servers (an admin may set user_tools.allow_stdio); use sse or streamable-http", orchestrator.ErrInvalidArgument)
		}
	} else if err := netguard.CheckURL(ctx, s.URL, c.policy.AllowPrivateURLs); err != nil {
		if errors.Is(err, netguard.ErrBlocked) {
			return usertools.ServerInfo{}, fmt.Errorf("%w: url %s: %v (an admin may set user_tools.allow_private_urls)", orchestrator.ErrInvalidArgument, s.URL, err)
		}
		return usertools.ServerInfo{}, fmt.Errorf("%w: url %s: %v", orchestrator.ErrInvalidArgument, s.URL, err)
	}
	return usertools.ServerInfo{Enabled: s.Enabled, AllowTools: s.AllowTools}, nil
}

// Open implements [usertools.Connector]: the first discovery starts in
// the background.
func (c *mcpConnector) Open(ctx context.Context, raw json.RawMessage) (usertools.Conn, error) {
	s, err := c.parse(raw)
	if err != nil {
		return nil, err
	}
	set, err := mcptools.New([]mcptools.ServerConfig{mcpServerConfig(s, c.mcp)}, &mcptools.Options{
		Timeout: c.mcp.Timeout(), ClientVersion: version, Elicitation: mcptools.ElicitDecline,
		Logger: c.log, StdioDepth: mcptools.ParseStdioDepth(os.Getenv(mcptools.StdioDepthEnv)),
		HTTPTransport: c.transport, DropServerLogs: true,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", orchestrator.ErrInvalidArgument, err)
	}
	set.Start(ctx)
	return &mcpConn{set: set, name: s.Name}, nil
}

// mcpConn is one user's server: a mcptools.Set of one.
type mcpConn struct {
	set  *mcptools.Set
	name string
}

// Tools implements [usertools.Conn].
func (c *mcpConn) Tools(ctx context.Context) ([]orchestrator.Tool, error) {
	_, err := c.set.WaitTool(ctx, c.name+"@")
	tools, _ := c.set.Tools(ctx, "")
	if len(tools) == 0 && err != nil {
		return nil, err
	}
	return tools, nil
}

// Close implements [usertools.Conn].
func (c *mcpConn) Close() error { return c.set.Close() }
