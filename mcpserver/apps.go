package mcpserver

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// MCP Apps through the aggregated catalog. An upstream's tool that names
// an app (_meta.ui.resourceUri, a ui:// resource) keeps its _meta in the
// catalog, with the ui:// URI namespaced by the upstream: ui://weather/view
// of the server "fs" becomes ui://fs/weather/view, so two upstreams' apps
// never collide. resources/list lists the namespaced ui:// resources of
// the upstreams whose tools in the caller's catalog name one, and
// resources/read of a namespaced URI reads the resource from its upstream,
// for the calling user: the one rule of app reads decides it first
// (orchestrator.AppResource: mcp.servers[].allow_resources), as it does
// for the console's GET /wunder/mcp-apps/resource. Everything else in _meta — visibility,
// the resource's CSP, permissions, domain — passes unchanged. An app-only
// tool (_meta.ui.visibility without "model") is listed here, where the
// host keeps it from its model, and callable; runs never offer it
// (orchestrator.ToolSpec.AppOnly).

// Apps reaches the ui:// resources of the configured MCP servers;
// *mcptools.Set satisfies it.
type Apps interface {
	// UIResources lists a server's ui:// resources.
	UIResources(ctx context.Context, server string) ([]*mcp.Resource, error)
	// ReadResource reads one resource of a server; a refusal of the
	// server is a *jsonrpc.Error.
	ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error)
}

// appServer is the configured MCP server of a catalog tool whose apps the
// catalog serves ("" for any other tool: a built-in, a user's own MCP
// server's tool), orchestrator.AppServer when apps are offered.
func (h *Handler) appServer(s orchestrator.ToolSpec) string {
	if h.opts.Apps == nil {
		return ""
	}
	return orchestrator.AppServer(s)
}

// catalogMeta is a catalog tool's _meta: the tool's own, with its app's
// ui:// URI namespaced by server (orchestrator.AppMeta).
func catalogMeta(server string, meta map[string]any) mcp.Meta {
	return orchestrator.AppMeta(server, meta)
}

// appsOffered says whether /wunder/mcp serves apps' resources.
func (h *Handler) appsOffered() bool { return h.opts.Catalog != nil && h.opts.Apps != nil }

// listAppResources answers resources/list: the namespaced ui:// resources
// of the upstreams whose tools in the caller's catalog name an app, those
// the policy lets the caller read, in one page. An upstream that cannot be
// reached is left out (and logged).
func (h *Handler) listAppResources(ctx context.Context, req mcp.Request) (mcp.Result, error) {
	user, lang := h.userOf(req.GetExtra()), h.langOf(req.GetExtra())
	if lr, ok := req.(*mcp.ListResourcesRequest); ok && lr.Params != nil && lr.Params.Cursor != "" {
		return nil, invalidParams(lang, "cursor: this list has one page; no cursor was issued")
	}
	specs, err := h.opts.Catalog.Tools(ctx, user)
	if err != nil {
		return nil, catalogError(lang, err)
	}
	var servers []string
	for _, s := range specs {
		if sv := h.appServer(s); sv != "" && orchestrator.NamesApp(s.Meta) && !slices.Contains(servers, sv) {
			servers = append(servers, sv)
		}
	}
	slices.Sort(servers)
	out := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	for _, server := range servers {
		list, err := h.opts.Apps.UIResources(ctx, server)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			h.opts.Logger.Warn("mcp app resources not listed", "server", server, "err", err)
			continue
		}
		checks := make([]orchestrator.ToolCheck, len(list))
		for i, r := range list {
			checks[i] = orchestrator.ToolCheck{UserID: user, Tool: r.URI, Server: server, What: orchestrator.CheckResource, Via: orchestrator.ViaCatalog}
		}
		for i, d := range h.b.DecideTools(ctx, checks) {
			if !d.Allowed() {
				continue
			}
			r := *list[i]
			r.URI = orchestrator.AppURI(server, r.URI)
			out.Resources = append(out.Resources, &r)
		}
	}
	return out, nil
}

// readAppResource answers resources/read of a namespaced ui:// URI: the
// policy decides it for the caller, then the upstream reads it. The
// contents come back as the upstream sent them (_meta.ui with the CSP and
// permissions included), their URIs namespaced.
func (h *Handler) readAppResource(ctx context.Context, next mcp.MethodHandler, req mcp.Request) (mcp.Result, error) {
	rr, _ := req.(*mcp.ReadResourceRequest)
	if rr == nil || rr.Params == nil {
		return next(ctx, "resources/read", req)
	}
	uri := rr.Params.URI
	user, lang := h.userOf(req.GetExtra()), h.langOf(req.GetExtra())
	server, up, err := h.b.AppResource(ctx, user, uri) // the one rule, shared with the console's route
	switch {
	case errors.Is(err, orchestrator.ErrInvalidArgument):
		return nil, mcp.ResourceNotFoundError(uri)
	case err != nil:
		return nil, &jsonrpc.Error{Code: codeUnauthorized, Message: localize(lang, "permission_denied", err.Error())}
	}
	res, err := h.opts.Apps.ReadResource(ctx, server, up)
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
	case errors.As(err, &rpcErr):
		return nil, rpcErr // the upstream's own answer (not found, invalid params)
	case errors.Is(err, orchestrator.ErrNotFound):
		return nil, mcp.ResourceNotFoundError(uri) // no such upstream
	case ctx.Err() != nil:
		return nil, ctx.Err()
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: localize(lang, "unavailable", err.Error())}
	}
	for _, c := range res.Contents {
		if c != nil && strings.HasPrefix(c.URI, orchestrator.AppScheme) {
			c.URI = orchestrator.AppURI(server, c.URI)
		}
	}
	return res, nil
}

// catalogError is the JSON-RPC error of a catalog that could not be read.
func catalogError(lang string, err error) error {
	_, rpcErr := toolError(lang, err)
	if rpcErr == nil {
		rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return rpcErr
}
