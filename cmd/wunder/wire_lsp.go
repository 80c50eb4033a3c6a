package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

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

// lspLive is what the app holds of the language servers: the current
// lspParts (nil when lsp is off), which POST /wunder/admin/lsp replaces
// while the server runs. It is the lsp toolset, the built-in write tools'
// diagnostics hook and the admin adapter, each following the current
// parts.
type lspLive struct {
	orchestrator.NoAlwaysOnTools // none of its tools is always on

	cur atomic.Pointer[lspParts]
	ws  *builtin.Set // the workspaces, set once the built-in tools exist
	log *slog.Logger
}

var (
	_ orchestrator.Toolset = (*lspLive)(nil)
	_ builtin.Diagnostics  = (*lspLive)(nil)
	_ gateway.LSPAdmin     = (*lspLive)(nil)
)

func newLSPLive(cfg *config.Config, log *slog.Logger) *lspLive {
	h := &lspLive{log: log}
	h.cur.Store(newLSP(cfg, log))
	return h
}

// bind gives the parts the built-in tools' workspaces.
func (h *lspLive) bind(tools *builtin.Set) {
	h.ws = tools
	if p := h.cur.Load(); p != nil {
		p.ws = tools
	}
}

// Name implements orchestrator.Toolset.
func (h *lspLive) Name() string { return "lsp" }

// Tools implements orchestrator.Toolset: the current servers' tools, none
// when lsp is off.
func (h *lspLive) Tools(ctx context.Context, userID string) ([]orchestrator.Tool, error) {
	if p := h.cur.Load(); p != nil {
		return p.set.Tools(ctx, userID)
	}
	return nil, nil
}

// After implements builtin.Diagnostics.
func (h *lspLive) After(ctx context.Context, userID, abs string) string {
	if p := h.cur.Load(); p != nil {
		return p.set.After(ctx, userID, abs)
	}
	return ""
}

// LSPStatus implements gateway.LSPAdmin.
func (h *lspLive) LSPStatus(ctx context.Context) (any, error) {
	p := h.cur.Load()
	if p == nil {
		return map[string]any{"enabled": false, "servers": []any{}, "workers": []any{}}, nil
	}
	return lspAdmin{p.pool}.LSPStatus(ctx)
}

// LSPTest implements gateway.LSPAdmin.
func (h *lspLive) LSPTest(ctx context.Context, server string) (any, error) {
	p := h.cur.Load()
	if p == nil {
		return nil, fmt.Errorf("%w: lsp is off (lsp.enabled, or no language server configured or on PATH)", orchestrator.ErrUnavailable)
	}
	return lspAdmin{p.pool}.LSPTest(ctx, server)
}

// swap puts next in service and stops the old workers in the background:
// a call a run makes on an old lsp tool after the swap fails with an error
// the model reads, and the next round offers the new servers' tools.
func (h *lspLive) swap(next *lspParts) {
	if next != nil {
		next.ws = h.ws
	}
	old := h.cur.Swap(next)
	if old == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := old.close(ctx); err != nil {
			h.log.Warn("old language servers not stopped cleanly", "err", err)
		}
	}()
}

// close stops the current workers.
func (h *lspLive) close(ctx context.Context) error {
	return h.cur.Load().close(ctx)
}
