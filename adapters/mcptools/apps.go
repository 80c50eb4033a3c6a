package mcptools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// MCP Apps (the io.modelcontextprotocol/ui extension): a server's tool
// names a ui:// resource in _meta.ui.resourceUri, and the host shows the
// resource, an HTML page, next to the tool's result. The tool spec keeps
// the tool's _meta whole ([orchestrator.ToolSpec.Meta]); a tool whose
// _meta.ui.visibility leaves out "model" is app-only
// ([orchestrator.ToolSpec.AppOnly]). [Set.UIResources] and
// [Set.ReadResource] reach a server's ui:// resources for the aggregated
// /wunder/mcp, on the server's one session like its tools.

// AppOnly reports whether an MCP tool's _meta marks it visible to MCP
// Apps alone: a ui.visibility list without "model". No list means both
// the model and the app, the extension's default.
func AppOnly(meta map[string]any) bool {
	ui, _ := meta["ui"].(map[string]any)
	vis, ok := ui["visibility"].([]any)
	if !ok {
		return false
	}
	return !slices.ContainsFunc(vis, func(v any) bool { return v == "model" })
}

// uiScheme starts the URI of an MCP App's resource.
const uiScheme = "ui://"

// UIResources lists the ui:// resources of the named server, every page of
// its resources/list, as the server gave them (_meta.ui with the CSP and
// permissions included); none when the server offers no resources. The
// resource allow-list is the policy's (orchestrator.DecideTool), not
// applied here. An unknown name wraps [orchestrator.ErrNotFound], an
// unreachable server [orchestrator.ErrUnavailable].
func (s *Set) UIResources(ctx context.Context, name string) ([]*mcp.Resource, error) {
	ctx, sv, cs, done, err := s.sessionOf(ctx, name)
	if err != nil {
		return nil, err
	}
	defer done()
	if r := cs.InitializeResult(); r == nil || r.Capabilities == nil || r.Capabilities.Resources == nil {
		return nil, nil
	}
	var out []*mcp.Resource
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			if errors.Is(err, mcp.ErrConnectionClosed) {
				sv.drop(cs) // the next request connects again
			}
			return nil, fmt.Errorf("%w: mcp server %s: resources/list: %w", orchestrator.ErrUnavailable, name, err)
		}
		if r != nil && strings.HasPrefix(r.URI, uiScheme) {
			out = append(out, r)
		}
	}
	return out, nil
}

// ReadResource reads one resource of the named server (resources/read),
// carrying ctx's trace context. The server's own refusal (a JSON-RPC
// error, such as -32002 resource not found) is returned as it came, a
// *jsonrpc.Error; an unknown server name wraps [orchestrator.ErrNotFound],
// an unreachable server [orchestrator.ErrUnavailable].
func (s *Set) ReadResource(ctx context.Context, name, uri string) (*mcp.ReadResourceResult, error) {
	ctx, sv, cs, done, err := s.sessionOf(ctx, name)
	if err != nil {
		return nil, err
	}
	defer done()
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri, Meta: traceMeta(ctx, nil)})
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &rpcErr):
		return nil, rpcErr
	case errors.Is(err, mcp.ErrConnectionClosed):
		sv.drop(cs) // the next request connects again
	}
	return nil, fmt.Errorf("%w: mcp server %s: resources/read: %w", orchestrator.ErrUnavailable, name, err)
}

// sessionOf is the named server and its session for one request, whose
// context is bounded by the server's timeout; done ends the request.
func (s *Set) sessionOf(ctx context.Context, name string) (context.Context, *server, *mcp.ClientSession, func(), error) {
	sv, ok := s.lookup(name)
	if !ok {
		return nil, nil, nil, nil, fmt.Errorf("%w: mcp server %q", orchestrator.ErrNotFound, name)
	}
	sv.begin()
	ctx, cancel := context.WithTimeout(ctx, sv.cfg.Timeout)
	cs, err := sv.session(ctx)
	if err != nil {
		cancel()
		sv.end()
		return nil, nil, nil, nil, fmt.Errorf("%w: mcp server %s: %w", orchestrator.ErrUnavailable, name, err)
	}
	return ctx, sv, cs, func() { cancel(); sv.end() }, nil
}
