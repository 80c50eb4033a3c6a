package mcpserver

//lint:file-ignore SA1019 the pass-through forwards MCP logging, sampling and roots (docs/mcp.md). SEP-2577 deprecates them from protocol 2026-07-28 with no replacement; peers on earlier versions still use them.

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The pass-through route forwards the upstream's list_changed notifications
// and its roots/list requests to the downstream client.
//
// The SDK has no call that sends a bare list_changed notification; it sends
// one (debounced, honouring the session's protocol version) whenever a
// feature is added to or removed from a server. A proxy server has exactly
// one session and answers tools/list, resources/list and prompts/list from
// the upstream, never from its own (empty) lists, so adding and removing a
// placeholder on it notifies exactly the downstream client and nothing else.

// placeholder is the name and URI of the transient features.
const placeholder = "wunder-pass-through-list-changed"

// listChangedOptions sets the upstream client's list_changed handlers.
func (p *proxy) listChangedOptions(opts *mcp.ClientOptions) {
	opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {
		p.server.AddTool(&mcp.Tool{Name: placeholder, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		p.server.RemoveTools(placeholder)
	}
	opts.PromptListChangedHandler = func(context.Context, *mcp.PromptListChangedRequest) {
		p.server.AddPrompt(&mcp.Prompt{Name: placeholder},
			func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{}, nil
			})
		p.server.RemovePrompts(placeholder)
	}
	opts.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) {
		p.server.AddResource(&mcp.Resource{Name: placeholder, URI: "wunder:" + placeholder},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{}, nil
			})
		p.server.RemoveResources("wunder:" + placeholder)
	}
}

// rootsCapability offers the upstream the downstream client's roots
// capability (nil: none, so the upstream never asks).
func rootsCapability(c *mcp.ClientCapabilities) *mcp.RootCapabilities {
	if c == nil || c.RootsV2 == nil {
		return nil
	}
	rc := *c.RootsV2
	return &rc
}

// rawRoots answers the upstream's roots/list with the downstream client's
// roots, asked on the newest downstream request in flight (else the
// session's standalone stream).
func (p *proxy) rawRoots(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "roots/list" {
			return next(ctx, method, req)
		}
		ss, dctx := p.target(nil)
		if ss == nil {
			return nil, errNoSession
		}
		dctx, cancel := linked(dctx, ctx)
		defer cancel()
		params, _ := req.GetParams().(*mcp.ListRootsParams)
		return ss.ListRoots(dctx, params)
	}
}
