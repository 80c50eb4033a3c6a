package orchestrator

import (
	"context"
	"fmt"
	"maps"
	"strings"
)

// MCP Apps (the io.modelcontextprotocol/ui extension): an MCP tool names
// an HTML page, a ui:// resource, in _meta.ui.resourceUri (or the older
// flat key ui/resourceUri), and a host shows the page next to the tool's
// result. wunder serves the pages of its configured MCP servers to its
// own front-ends (the aggregated /wunder/mcp, the console's REST route)
// under one namespace, ui://{server}/…, so two servers' apps never
// collide, and decides every read with one rule: [Orchestrator.AppResource].

// AppScheme starts the URI of an MCP App's resource.
const AppScheme = "ui://"

// AppURI namespaces a server's ui:// URI by the server:
// ui://weather/view.html of the server "fs" is ui://fs/weather/view.html.
func AppURI(server, uri string) string {
	return AppScheme + server + "/" + strings.TrimPrefix(uri, AppScheme)
}

// SplitAppURI is the inverse of [AppURI]: the server and the server's
// own URI of a namespaced one; ok is false when uri is not of the form
// ui://{server}/{path}.
func SplitAppURI(uri string) (server, upstream string, ok bool) {
	rest, ok := strings.CutPrefix(uri, AppScheme)
	if !ok {
		return "", "", false
	}
	server, path, ok := strings.Cut(rest, "/")
	if !ok || server == "" || path == "" {
		return "", "", false
	}
	return server, AppScheme + path, true
}

// AppServer is the configured MCP server whose app a tool may name, the
// server of a catalog tool that came from mcp.servers; "" for any other
// tool (a built-in, a user's own MCP server's tool), whose app wunder
// cannot serve.
func AppServer(s ToolSpec) string {
	if s.Source != SourceMCP || s.Owner != "" {
		return ""
	}
	server, _, _ := strings.Cut(s.Name, "@")
	return server
}

// AppMeta is a tool's _meta for a front-end that serves apps under the
// namespace: the tool's own, with its app's ui:// URI namespaced by
// server (ui.resourceUri and ui/resourceUri). With server "" the URI
// cannot be served, so it is left out. meta itself is not changed.
func AppMeta(server string, meta map[string]any) map[string]any {
	if len(meta) == 0 {
		return nil
	}
	out := maps.Clone(meta)
	if ui, ok := meta["ui"].(map[string]any); ok {
		if uri, ok := ui["resourceUri"].(string); ok {
			ui = maps.Clone(ui)
			if server != "" && strings.HasPrefix(uri, AppScheme) {
				ui["resourceUri"] = AppURI(server, uri)
			} else {
				delete(ui, "resourceUri")
			}
			out["ui"] = ui
		}
	}
	if uri, ok := meta["ui/resourceUri"].(string); ok {
		if server != "" && strings.HasPrefix(uri, AppScheme) {
			out["ui/resourceUri"] = AppURI(server, uri)
		} else {
			delete(out, "ui/resourceUri")
		}
	}
	return out
}

// NamesApp reports whether a tool's _meta names a ui:// resource.
func NamesApp(meta map[string]any) bool {
	return AppResourceURI(meta) != ""
}

// AppResourceURI is the ui:// URI a tool's _meta names (ui.resourceUri,
// else the older ui/resourceUri); "" when it names none.
func AppResourceURI(meta map[string]any) string {
	ui, _ := meta["ui"].(map[string]any)
	if uri, _ := ui["resourceUri"].(string); strings.HasPrefix(uri, AppScheme) {
		return uri
	}
	if uri, _ := meta["ui/resourceUri"].(string); strings.HasPrefix(uri, AppScheme) {
		return uri
	}
	return ""
}

// AppResource is THE rule for reading an app's page: may userID read the
// namespaced ui:// URI uri, and from which server, under which URI of
// its own? A URI not of the form ui://{server}/{path} wraps
// [ErrInvalidArgument]; a resource the server's allow_resources leaves
// out wraps [ErrPermissionDenied], naming the rule (the policy's
// [CheckResource] decision, [ViaCatalog]). A server that is not
// configured passes here: the read then finds no such server. The
// aggregated /wunder/mcp (resources/read) and the console's REST route
// both ask it.
func (o *Orchestrator) AppResource(ctx context.Context, userID, uri string) (server, upstream string, err error) {
	server, upstream, ok := SplitAppURI(uri)
	if !ok {
		return "", "", fmt.Errorf("%w: uri %q is not an MCP App's resource of a server, ui://{server}/{path}", ErrInvalidArgument, uri)
	}
	d := o.DecideTool(ctx, ToolCheck{UserID: userID, Tool: upstream, Server: server, What: CheckResource, Via: ViaCatalog})
	if !d.Allowed() {
		return "", "", fmt.Errorf("%w: %s", ErrPermissionDenied, d.Reason)
	}
	return server, upstream, nil
}
