package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"

	"go.opentelemetry.io/otel/trace"

	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/doc2md"
	"github.com/wunder/wunder/mcpserver"
	"github.com/wunder/wunder/mcpsession"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/storage"
)

// The store caches the upstream servers' tool specs.
var _ mcptools.SpecCache = (*storage.Store)(nil)

// mcpParts are MCP both ways (config mcp): the client toolset of the
// upstream servers (server@tool) and the front-end /wunder/mcp with its
// pass-through routes. A nil *mcpParts wires nothing.
type mcpParts struct {
	set     *mcptools.Set
	handler *mcpserver.Handler
}

// newMCP builds the upstream toolset and starts its background refresh.
// wrap, when set, wraps the transport of HTTP servers (tracing).
func newMCP(ctx context.Context, cfg *config.Config, log *slog.Logger, cache mcptools.SpecCache, wrap func(http.RoundTripper) http.RoundTripper) (*mcpParts, error) {
	set, err := mcptools.New(mcpServers(cfg), &mcptools.Options{
		Timeout: cfg.MCP.Timeout(), Cache: cache, ClientVersion: version, Elicitation: cfg.MCP.Elicitation,
		ReadyTimeout: cfg.MCP.ReadyTimeout(), Logger: log.With("component", "mcp"),
		// A wunder started as the MCP stdio server of a wunder starts no
		// stdio servers of its own (stdio.go in mcptools).
		StdioDepth:    mcptools.ParseStdioDepth(os.Getenv(mcptools.StdioDepthEnv)),
		WrapTransport: wrap, // traceparent on requests to HTTP servers (wire_telemetry.go)
	})
	if err != nil {
		return nil, withCode(exitConfig, err)
	}
	set.Start(ctx)
	return &mcpParts{set: set}, nil
}

// mcpServers are the enabled mcp.servers as mcptools takes them.
func mcpServers(cfg *config.Config) []mcptools.ServerConfig {
	var servers []mcptools.ServerConfig
	for _, s := range cfg.MCP.Servers {
		if !s.Enabled {
			continue
		}
		servers = append(servers, mcpServerConfig(s, cfg.MCP))
	}
	return servers
}

// mcpServerConfig is an mcp.servers entry (or a user's server) as
// mcptools takes it.
func mcpServerConfig(s config.MCPServer, m config.MCP) mcptools.ServerConfig {
	return mcptools.ServerConfig{
		Name: s.Name, Transport: s.Transport, Command: s.Command, Args: s.Args, Env: s.Env, Dir: s.Cwd,
		URL: s.URL, Headers: s.Headers, BearerToken: s.BearerToken, AllowTools: s.AllowTools,
		AllowResources: s.AllowResources, AllowPrompts: s.AllowPrompts,
		Description: s.Description, Timeout: s.Timeout(m),
	}
}

func (p *mcpParts) toolsets() []orchestrator.Toolset {
	if p == nil {
		return nil
	}
	return []orchestrator.Toolset{p.set}
}

// ready reports whether the first discovery of every upstream server has
// settled (mcp.ready_timeout_s bounds it); for /readyz and gRPC health.
func (p *mcpParts) ready(context.Context) error {
	if p == nil {
		return nil
	}
	return p.set.Ready()
}

// mountMCP mounts /wunder/mcp (and /wunder/mcp/{server}) on the gateway.
func mountMCP(a *app, p *mcpParts) {
	if p == nil || !a.cfg.MCP.Server.Enabled {
		return
	}
	var sessions mcpsession.Store // nil: in memory
	if a.cfg.MCP.Server.SessionsInDatabase(a.cfg.Storage.EffectiveBackend()) {
		sessions = a.store
	}
	p.handler = newMCPHandler(a.cfg, a.orch, p.set, sessions, a.gw.HeaderLanguage, a.attach, a.tel.TracerProvider(), a.log)
	for _, path := range p.handler.Paths() {
		// Behind the gateway's one authenticator, like every front-end; a
		// 401 there points to the protected-resource metadata (RFC 9728).
		a.gw.MountChallenged(path, p.handler, p.handler.Challenge)
	}
	for _, path := range p.handler.PublicPaths() {
		a.gw.MountOpen(path, p.handler)
	}
}

// newMCPHandler is the MCP front-end; sessions keeps its sessions' records
// (nil: in memory; the storage backend with mcp.server.session_store, so
// that every replica serves every session); lang is the language of its error
// messages for a call's headers (the gateway's rule); attach converts
// wunder@run's attachments. Over HTTP it reads the principal the gateway
// established: a user's credential pins the user, and the API key or the
// anonymous local operator acts as mcp.server.user_id, as does the caller
// of `wunder mcp stdio`. tracer, when traces are on, gives each request
// a span of its own.
func newMCPHandler(cfg *config.Config, orch *orchestrator.Orchestrator, set *mcptools.Set, sessions mcpsession.Store,
	lang func(http.Header) string, attach *doc2md.Converter, tracer trace.TracerProvider, log *slog.Logger) *mcpserver.Handler {
	opts := &mcpserver.Options{
		Stateless: cfg.MCP.Server.Stateless, UserID: cfg.MCP.Server.UserID, PublicURL: cfg.Server.PublicURL, Attachments: attach,
		MaxBodyBytes: cfg.AttachmentBodyBytes(), // wunder@run's attachments
		Language:     lang, Version: version, Logger: log.With("component", "mcpserver"),
		HostsChecked: true, // the gateway's guard (server.allowed_hosts)
		Tracer:       tracer,
		Sessions:     sessions, SessionTimeout: cfg.MCP.Server.SessionTimeout(),
		ListChangedPoll: cfg.MCP.Server.ListChangedPoll(), MaxListens: cfg.MCP.Server.MaxListens,
		MaxSessionsPerUser: cfg.MCP.Server.MaxSessionsPerUser,
		InputTimeout:       cfg.MCP.Server.InputTimeout(),
	}
	if cfg.Auth.JWT.JWKSURL != "" {
		opts.AuthorizationServers = []string{cfg.Auth.JWT.Issuer}
	}
	if set != nil {
		opts.Upstreams = set
	}
	if cfg.MCP.Server.ExposeCatalog {
		opts.Catalog = orch
		if set != nil {
			opts.Apps = set // the upstreams' MCP Apps: their ui:// resources
		}
	}
	return mcpserver.New(orch, opts)
}

func (p *mcpParts) close() {
	if p == nil {
		return
	}
	if p.handler != nil {
		p.handler.Close()
	}
	_ = p.set.Close()
}

// admin adapts the toolset to the gateway's MCP admin endpoint; nil when
// there is none.
func (p *mcpParts) admin() gateway.MCPAdmin {
	if p == nil {
		return nil
	}
	return mcpAdmin{p.set}
}

// apps reads the configured servers' MCP Apps for the console's route;
// nil when there are none.
func (p *mcpParts) apps() gateway.MCPApps {
	if p == nil {
		return nil
	}
	return p.set
}

type mcpAdmin struct{ set *mcptools.Set }

func (m mcpAdmin) RefreshMCP(ctx context.Context, server string) (any, error) {
	specs, err := m.set.Refresh(ctx, server)
	if err != nil {
		return nil, err
	}
	return map[string]any{"server": server, "tools": specs}, nil
}
