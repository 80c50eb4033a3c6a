package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// defaultToolsPageSize is how many tools a page of tools/list holds, the
// go-sdk's own default: a catalog that fits is one page.
const defaultToolsPageSize = 1000

// toolsMiddleware serves tools/list on /wunder/mcp, with a catalog
// (Options.Catalog) tools/call of a catalog name (catalog.go), and with
// apps too (Options.Apps) resources/list and resources/read (apps.go).
func (h *Handler) toolsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize":
			res, err := next(ctx, method, req)
			return withoutListChanged(res), err
		case "tools/list":
			return h.listTools(ctx, next, req)
		case "tools/call":
			if h.opts.Catalog != nil {
				return h.catalogCall(ctx, next, req)
			}
		case "resources/list":
			if h.appsOffered() {
				return h.listAppResources(ctx, req)
			}
		case "resources/read":
			if h.appsOffered() {
				return h.readAppResource(ctx, next, req)
			}
		}
		if undeclared[method] && (h.capabilities().Resources == nil || !strings.HasPrefix(method, "resources/")) {
			// go-sdk answers these with empty lists whatever the server
			// declared; a client (and the conformance suite) then takes
			// the server to offer what it says it does not.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q not found: this server offers no %s", method, strings.Split(method, "/")[0])}
		}
		return next(ctx, method, req)
	}
}

// undeclared are the methods of the capabilities /wunder/mcp declares
// only when it offers them: prompts never, resources with MCP Apps
// (capabilities).
var undeclared = map[string]bool{
	"prompts/list": true, "prompts/get": true,
	"resources/list": true, "resources/read": true, "resources/templates/list": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
}

// listTools answers tools/list: wunder@run and wunder@approve (as the SDK
// lists its tools, by name), then the caller's catalog when it is offered
// (by canonical name), paged by the core's one cursor
// ([orchestrator.NewPager]) as nextCursor and cursor. A cursor this
// server did not issue for this list and caller is invalid params naming
// cursor. An item's key is its part ("0" ours, "1" the catalog) and its
// name, so a tool added or removed between pages shifts no other.
func (h *Handler) listTools(ctx context.Context, next mcp.MethodHandler, req mcp.Request) (mcp.Result, error) {
	user, lang := h.userOf(req.GetExtra()), h.langOf(req.GetExtra())
	lr, _ := req.(*mcp.ListToolsRequest)
	cursor := ""
	if lr != nil && lr.Params != nil {
		cursor = lr.Params.Cursor
		// The SDK lists all of ours at once (its page is larger than two).
		p := *lr.Params
		p.Cursor = ""
		lr = &mcp.ListToolsRequest{Session: lr.Session, Params: &p, Extra: lr.Extra}
		req = lr
	}
	pg, err := orchestrator.NewPager("cursor", cursor, h.toolsPageSize, "mcp_tools", user)
	if err != nil {
		_, rpcErr := toolError(lang, err)
		return nil, rpcErr
	}
	res, err := next(ctx, "tools/list", req)
	out, ok := res.(*mcp.ListToolsResult)
	if err != nil || !ok {
		return res, err
	}
	type keyed struct {
		key  string
		tool *mcp.Tool
	}
	var all []keyed
	for _, t := range out.Tools {
		all = append(all, keyed{"0" + t.Name, t})
	}
	if h.opts.Catalog != nil {
		tools, err := h.catalogTools(ctx, user, lang)
		if err != nil {
			return nil, err
		}
		for _, t := range tools {
			all = append(all, keyed{"1" + t.Title, t})
		}
	}
	var page []keyed
	for _, k := range all {
		if pg.Page.After == nil || k.key > pg.Page.After.ID {
			page = append(page, k)
		}
	}
	page, out.NextCursor = orchestrator.CutPage(pg, page, func(k keyed) *orchestrator.PageKey { return &orchestrator.PageKey{ID: k.key} })
	out.Tools = make([]*mcp.Tool, len(page))
	for i, k := range page {
		out.Tools[i] = k.tool
	}
	return out, nil
}
