package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/wunder/wunder/adapters/builtin"
	"github.com/wunder/wunder/adapters/mcptools"
	"github.com/wunder/wunder/adapters/skills"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/netguard"
	"github.com/wunder/wunder/internal/sandbox"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/storage"
	"github.com/wunder/wunder/toolconfig"
)

// newSkills builds the skills toolset from the skills section: skills from
// skills.paths and uploads kept in the store (unpacked under
// <data_dir>/cache/skills), users' settings read through configs, entry
// scripts run in the same sandbox (and with the same timeout) as ptc, in
// the caller's workspace, skills' MCP servers connected through mcptools.
func newSkills(cfg *config.Config, log *slog.Logger, tools *builtin.Set, sb *sandbox.Sandbox, store *storage.Store,
	configs *toolconfig.Configs) *skills.Set {
	s := skills.New(&skills.Options{
		Paths: cfg.SkillPaths(), RetentionTurns: cfg.Skills.RetentionTurns, Enabled: cfg.Skills.Enabled,
		Sandbox: sb, Timeout: commandTimeout(cfg), Logger: log.With("component", "skills"),
		Workspace: func(userID string) (string, error) {
			ws, err := tools.Workspace(userID)
			if err != nil {
				return "", err
			}
			return ws.Resolve("")
		},
		Store: store, Configs: configs, CacheDir: cfg.SkillCacheDir(),
		Limits:        skills.Limits{ZipBytes: cfg.Skills.MaxZipBytes, Files: cfg.Skills.MaxFiles, UnpackedBytes: cfg.Skills.MaxUnpackedBytes},
		AllowUserCode: cfg.Skills.AllowUserCode,
		MCP:           skillMCP{cfg: cfg, log: log.With("component", "skills-mcp")},
		MCPIdle:       cfg.Skills.MCPIdle(),
	})
	log.Info("skills loaded", "count", len(s.Skills()), "paths", cfg.SkillPaths())
	return s
}

// skillMCP connects the MCP servers skills declare (skills.Connector):
// each server is a one-server mcptools.Set, its entry read as mcp.servers[]
// reads one.
type skillMCP struct {
	cfg *config.Config
	log *slog.Logger
}

var _ skills.Connector = skillMCP{}

// parse reads a skill's server entry strictly (unknown keys are errors).
func (c skillMCP) parse(srv skills.MCPServer) (mcptools.ServerConfig, error) {
	raw, err := yaml.Marshal(srv.Config)
	if err != nil {
		return mcptools.ServerConfig{}, err
	}
	e := config.MCPServer{Transport: config.MCPStreamableHTTP, Enabled: true}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&e); err != nil {
		return mcptools.ServerConfig{}, fmt.Errorf("not an mcp.servers[] entry: %w", err)
	}
	switch e.Transport {
	case config.MCPStdio:
		if e.Command == "" {
			return mcptools.ServerConfig{}, fmt.Errorf("command is required with transport stdio")
		}
	case config.MCPSSE, config.MCPStreamableHTTP:
		u, err := url.Parse(e.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return mcptools.ServerConfig{}, fmt.Errorf("url must be an http(s) URL, got %q", e.URL)
		}
		if srv.Owner != "" {
			// A user's skill: the SSRF guard of users' own MCP servers.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := netguard.CheckURL(ctx, e.URL, c.cfg.UserTools.AllowPrivateURLs); err != nil {
				return mcptools.ServerConfig{}, err
			}
		}
	default:
		return mcptools.ServerConfig{}, fmt.Errorf("transport must be stdio, sse or streamable-http, got %q", e.Transport)
	}
	if e.TimeoutSeconds < 0 {
		return mcptools.ServerConfig{}, fmt.Errorf("timeout_s must be at least 0")
	}
	return mcptools.ServerConfig{
		Name: srv.Name, Transport: e.Transport, Command: e.Command, Args: e.Args, Env: e.Env, Dir: e.Cwd,
		URL: e.URL, Headers: e.Headers, BearerToken: e.BearerToken, AllowTools: e.AllowTools,
		Description: e.Description, Timeout: e.Timeout(c.cfg.MCP),
	}, nil
}

// Check implements skills.Connector.
func (c skillMCP) Check(srv skills.MCPServer) error {
	_, err := c.parse(srv)
	return err
}

// Connect implements skills.Connector.
func (c skillMCP) Connect(ctx context.Context, srv skills.MCPServer) ([]orchestrator.Tool, func(), error) {
	sc, err := c.parse(srv)
	if err != nil {
		return nil, nil, err
	}
	opts := &mcptools.Options{
		Timeout: c.cfg.MCP.Timeout(), ClientVersion: version, Elicitation: c.cfg.MCP.Elicitation, Logger: c.log,
		StdioDepth: mcptools.ParseStdioDepth(os.Getenv(mcptools.StdioDepthEnv)),
	}
	if srv.Owner != "" {
		// Checked again at every dial (DNS rebinding).
		opts.HTTPTransport = netguard.Transport(c.cfg.MCP.Timeout(), c.cfg.UserTools.AllowPrivateURLs)
	}
	set, err := mcptools.New([]mcptools.ServerConfig{sc}, opts)
	if err != nil {
		return nil, nil, err
	}
	if _, err := set.Refresh(ctx, sc.Name); err != nil {
		_ = set.Close()
		return nil, nil, err
	}
	tools, _ := set.Tools(ctx, "")
	return tools, func() { _ = set.Close() }, nil
}

// skillRoutes adapts the skills toolset to the gateway's skill routes.
type skillRoutes struct{ s *skills.Set }

var _ gateway.Skills = skillRoutes{}

func (r skillRoutes) AdminSkills(ctx context.Context) (any, error) { return r.s.AdminSkills(ctx) }

func (r skillRoutes) SetAdminEnabled(ctx context.Context, names []string) (any, error) {
	return r.s.SetAdminEnabled(ctx, names)
}

func (r skillRoutes) UserSkills(ctx context.Context, userID string) (any, error) {
	return r.s.UserSkills(ctx, userID)
}

func (r skillRoutes) SetUserSkills(ctx context.Context, userID string, in gateway.SkillSettings) (any, error) {
	return r.s.SetUserSkills(ctx, userID, skills.UserSettings{Enabled: in.Enabled, Shared: in.Shared, Preload: in.Preload})
}

func (r skillRoutes) UploadSkill(ctx context.Context, owner string, zip []byte) (any, error) {
	return r.s.Upload(ctx, owner, zip)
}

func (r skillRoutes) SkillContent(ctx context.Context, owner, name string) (any, error) {
	return r.s.SkillContent(ctx, owner, name)
}

func (r skillRoutes) DeleteSkill(ctx context.Context, owner, name string) error {
	return r.s.Delete(ctx, owner, name)
}

func (r skillRoutes) MaxUploadBytes() int64 { return r.s.Limits().ZipBytes }
