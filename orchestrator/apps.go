package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
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

// CallAppTool is a tool call an MCP App makes from its host (the web
// console): the app, by its namespaced URI appURI, calls tool, a tool of
// its own server, as userID. The app's page must be one the user may
// read ([Orchestrator.AppResource]); the tool must be of that server and
// open to apps (its _meta.ui.visibility, when it has one, names "app"); and
// the call is then a direct call, [Orchestrator.CallTool]: the one policy
// point decides it and the audit records it. A tool of another server, or
// one kept for the model alone, wraps [ErrPermissionDenied]; one the
// server does not have, [ErrToolNotFound].
func (o *Orchestrator) CallAppTool(ctx context.Context, userID, appURI, tool string, args json.RawMessage) (*ToolResult, error) {
	server, _, err := o.AppResource(ctx, userID, appURI)
	if err != nil {
		return nil, err
	}
	if tool == "" || strings.ContainsAny(tool, "@/") {
		return nil, invalidf("tool %q: an app names a tool of its own server by the server's name for it", tool)
	}
	name := server + "@" + tool
	specs, err := o.Tools(ctx, userID)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(specs, func(s ToolSpec) bool { return s.Name == name })
	if i < 0 || AppServer(specs[i]) != server {
		return nil, fmt.Errorf("%w: %s (the app of %s calls the tools of mcp server %s only)", ErrToolNotFound, name, appURI, server)
	}
	if !openToApps(specs[i].Meta) {
		return nil, fmt.Errorf("%w: %s is for the model alone (its _meta.ui.visibility leaves out \"app\")", ErrPermissionDenied, name)
	}
	return o.CallTool(ctx, userID, name, args, nil)
}

// openToApps reports whether a tool's _meta lets apps call it: no
// ui.visibility (the extension's default is model and app), or one that
// names "app".
func openToApps(meta map[string]any) bool {
	ui, _ := meta["ui"].(map[string]any)
	vis, ok := ui["visibility"].([]any)
	if !ok {
		return true
	}
	return slices.Contains(vis, any("app"))
}
