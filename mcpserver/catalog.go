package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// Catalog is what the aggregated endpoint (Options.Catalog) needs of the
// core; *orchestrator.Orchestrator satisfies it.
type Catalog interface {
	Tools(ctx context.Context, userID string) ([]orchestrator.ToolSpec, error)
	CallTool(ctx context.Context, userID, name string, args json.RawMessage,
		output func(stream, delta string)) (*orchestrator.ToolResult, error)
}

var _ Catalog = (*orchestrator.Orchestrator)(nil)

// The calling principal's tool catalog is offered on /wunder/mcp next to
// wunder@run: tools/list lists it after ours (names in the registry's wire
// encoding; list.go), with each tool's _meta (an MCP App's ui:// URI
// namespaced, apps.go), and tools/call of a catalog name runs the tool
// directly as the caller. wunder@run and wunder@approve are never part of
// the catalog.

// catalogCall is tools/call: of a catalog name, the catalog's tool; of
// ours, the SDK's.
func (h *Handler) catalogCall(ctx context.Context, next mcp.MethodHandler, req mcp.Request) (mcp.Result, error) {
	p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
	if !ok || p == nil || h.ownTool(p.Name) {
		return next(ctx, "tools/call", req)
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	return h.callCatalogTool(ctx, ss, h.userOf(req.GetExtra()), h.langOf(req.GetExtra()), p)
}

// ownTool reports whether name (wire or canonical) is wunder@run or
// wunder@approve.
func (h *Handler) ownTool(name string) bool {
	return name == RunTool || name == ApproveTool || name == h.runName() || name == h.approveName()
}

// catalogTools lists the user's catalog as MCP tools, wunder@run excluded.
func (h *Handler) catalogTools(ctx context.Context, user, lang string) ([]*mcp.Tool, error) {
	specs, err := h.opts.Catalog.Tools(ctx, user)
	if err != nil {
		return nil, catalogError(lang, err)
	}
	reg := h.b.Registry()
	out := make([]*mcp.Tool, 0, len(specs))
	for _, s := range specs {
		wire := reg.WireName(s.Name)
		if s.AlwaysOn || s.RunOnly || h.ownTool(wire) {
			continue // final_response and plan only make sense in a run; wunder@run and wunder@approve are ours
		}
		desc := s.Description
		if desc == "" {
			desc = fmt.Sprintf("%s (a %s tool of wunder's catalog)", s.Name, orDefault(s.Source, "wunder"))
		}
		schema := s.InputSchema
		if len(schema) == 0 || string(schema) == "null" {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		t := &mcp.Tool{Name: wire, Title: s.Name, Description: desc, InputSchema: schema, Meta: catalogMeta(h.appServer(s), s.Meta)}
		if s.ReadOnly {
			t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
		}
		out = append(out, t)
	}
	return out, nil
}

// callCatalogTool runs one catalog tool as user. Its output deltas become
// progress notifications when the caller asked for progress, else log
// notifications (sent once the client has set a level); failures are error
// results, an unknown name a JSON-RPC error.
func (h *Handler) callCatalogTool(ctx context.Context, ss *mcp.ServerSession, user, lang string, p *mcp.CallToolParamsRaw) (mcp.Result, error) {
	token := p.GetProgressToken()
	n := 0
	output := func(stream, delta string) {
		if ss == nil {
			return
		}
		if token != nil {
			n++
			_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: delta})
			return
		}
		//lint:ignore SA1019 MCP logging (deprecated by SEP-2577 from protocol 2026-07-28, no replacement) carries catalog tool output to clients without a progress token
		_ = ss.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: p.Name, Data: map[string]string{"stream": stream, "delta": delta}})
	}
	if token != nil {
		// Progress notifications of one request must not race each other.
		output = serialized(output)
	}
	res, err := h.opts.Catalog.CallTool(orchestrator.WithFrontEnd(ctx, orchestrator.FrontendMCP), user, p.Name, p.Arguments, output)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, err
		}
		text, rpcErr := toolError(lang, err)
		if rpcErr != nil {
			return nil, rpcErr
		}
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	}
	out := &mcp.CallToolResult{IsError: res.IsError, Content: []mcp.Content{&mcp.TextContent{Text: res.Content}}}
	if res.Data != nil {
		if b, err := json.Marshal(res.Data); err == nil && len(b) > 0 && b[0] == '{' {
			out.StructuredContent = json.RawMessage(b)
		}
	}
	return out, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// serialized makes f safe for concurrent use, one call at a time.
func serialized(f func(stream, delta string)) func(stream, delta string) {
	var mu sync.Mutex
	return func(stream, delta string) {
		mu.Lock()
		defer mu.Unlock()
		f(stream, delta)
	}
}
