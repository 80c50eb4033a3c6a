package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/wunder/wunder/adapters/builtin"
	"github.com/wunder/wunder/adapters/lsptools"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/lsp"
	"github.com/wunder/wunder/orchestrator"
)

// lspParts are the language-server workers (config lsp): the pool, the lsp
// toolset over it, which is also the diagnostics hook of the built-in write
// tools, and the admin adapter. A nil *lspParts (lsp off, or no server
// available) wires nothing, and its methods say so.
type lspParts struct {
	pool *lsp.Pool
	set  *lsptools.Set
	// ws resolves workspaces; set by toolsets, before any call can come.
	ws *builtin.Set
}

// newLSP builds the pool from cfg.lsp; nil when lsp is off or no server is
// configured or found on PATH.
func newLSP(cfg *config.Config, log *slog.Logger) *lspParts {
	if !cfg.LSP.Enabled {
		return nil
	}
	var configured []lsp.Configured
	for _, s := range cfg.LSP.Servers {
		c := lsp.Configured{Disabled: !s.Enabled, ServerConfig: lsp.ServerConfig{
			ID: s.ID, Command: s.Command, Env: s.Env, Extensions: s.Extensions, RootMarkers: s.RootMarkers,
		}}
		if s.InitializationOptions != "" {
			c.InitializationOptions = []byte(s.InitializationOptions)
		}
		configured = append(configured, c)
	}
	servers := lsp.Resolve(configured, nil)
	if len(servers) == 0 {
		log.Warn("lsp is enabled but no language server is configured or on PATH")
		return nil
	}
	ids := make([]string, len(servers))
	for i, s := range servers {
		ids[i] = s.ID
	}
	log.Info("language servers available", "servers", ids)
	p := &lspParts{pool: lsp.NewPool(&lsp.Options{
		Servers: servers, Timeout: cfg.LSP.Timeout(), IdleTTL: cfg.LSP.IdleTTL(),
		MaxWorkers: cfg.LSP.MaxWorkers, Logger: log.With("component", "lsp"),
	})}
	p.set = lsptools.New(p.pool, p.workspace, &lsptools.Options{
		DiagnosticsWait: cfg.LSP.DiagnosticsDebounce(), MaxFileBytes: int(cfg.Security.MaxFileBytes),
	})
	return p
}

func (p *lspParts) workspace(userID string) (lsptools.Workspace, error) {
	ws, err := p.ws.Workspace(userID)
	if err != nil {
		return nil, err
	}
	return ws, nil
}

// diagnostics is the hook for builtin.Options; nil without lsp.
func (p *lspParts) diagnostics() builtin.Diagnostics {
	if p == nil {
		return nil
	}
	return p.set
}

// toolsets binds the workspaces of tools and returns the lsp toolset.
func (p *lspParts) toolsets(tools *builtin.Set) []orchestrator.Toolset {
	if p == nil {
		return nil
	}
	p.ws = tools
	return []orchestrator.Toolset{p.set}
}

// admin is the gateway's admin adapter; nil without lsp.
func (p *lspParts) admin() gateway.LSPAdmin {
	if p == nil {
		return nil
	}
	return lspAdmin{p.pool}
}

// close stops every worker.
func (p *lspParts) close(ctx context.Context) error {
	if p == nil {
		return nil
	}
	return p.pool.Close(ctx)
}

// lspAdmin adapts the pool to gateway.LSPAdmin, mapping its errors to the
// core's sentinels.
type lspAdmin struct{ pool *lsp.Pool }

// LSPStatus implements gateway.LSPAdmin.
func (a lspAdmin) LSPStatus(context.Context) (any, error) {
	type server struct {
		ID          string   `json:"id"`
		Command     []string `json:"command"`
		Extensions  []string `json:"extensions"`
		RootMarkers []string `json:"root_markers"`
	}
	servers := []server{}
	for _, s := range a.pool.Servers() {
		servers = append(servers, server{s.ID, s.Command, s.Extensions, s.RootMarkers})
	}
	return map[string]any{"servers": servers, "workers": a.pool.Workers()}, nil
}

// LSPTest implements gateway.LSPAdmin.
func (a lspAdmin) LSPTest(ctx context.Context, server string) (any, error) {
	res, err := a.pool.Probe(ctx, server)
	switch {
	case errors.Is(err, lsp.ErrUnknownServer):
		return nil, fmt.Errorf("%w: %w", orchestrator.ErrNotFound, err)
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("%w: %w", orchestrator.ErrCanceled, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %w", orchestrator.ErrUnavailable, err)
	}
	return res, nil
}
