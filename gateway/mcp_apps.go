package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/orchestrator"
)

// MCPApps reads the ui:// resources (MCP Apps' pages) of the configured
// MCP servers; adapters/mcptools.Set satisfies it. A refusal of the
// server is a *jsonrpc.Error; an unknown server wraps
// orchestrator.ErrNotFound, an unreachable one orchestrator.ErrUnavailable.
type MCPApps interface {
	ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error)
}

func (s *Server) mcpAppRoutes() {
	s.mux.HandleFunc("GET /wunder/mcp-apps/resource", s.handleAppResource)
	s.mux.HandleFunc("POST /wunder/mcp-apps/call", s.handleAppCall)
}

// appCallRequest is the body of POST /wunder/mcp-apps/call.
type appCallRequest struct {
	UserID    string          `json:"user_id"`
	URI       string          `json:"uri"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// handleAppCall is POST /wunder/mcp-apps/call {"uri","name","arguments","user_id"}:
// the tools/call an MCP App makes from the console, which hosts it. uri is
// the app's (namespaced, ui://{server}/…), name a tool of that server as
// the server names it. orchestrator.CallAppTool decides it: the page must
// be one the user may read, the tool of the app's own server and open to
// apps (_meta.ui.visibility), and the one policy point lets the call
// through and audits it (a tool that needs a person's approval is refused:
// a direct call cannot wait). The answer is an MCP CallToolResult, which
// the console hands the app as it is: {"content":[{"type":"text","text"}],
// "structuredContent"?, "isError"?}. A missing uri or name is 400; the
// rest as writeError maps the core's errors (403 naming the rule, 400
// tool_not_found).
func (s *Server) handleAppCall(w http.ResponseWriter, r *http.Request) {
	var req appCallRequest
	if !decodeJSON(w, r, &req) {
		return
	}
	userID, ok := namedScope(w, r, req.UserID)
	if !ok {
		return
	}
	if req.URI == "" || req.Name == "" {
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument", "uri (the app's ui://{server}/… URI) and name (a tool of its server) are required")
		return
	}
	res, err := s.b.CallAppTool(r.Context(), userID, req.URI, req.Name, req.Arguments)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Content}}, IsError: res.IsError}
	if res.Data != nil {
		if b, err := json.Marshal(res.Data); err == nil && len(b) > 0 && b[0] == '{' {
			out.StructuredContent = json.RawMessage(b)
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, r, http.StatusOK, out)
}

// handleAppResource is GET /wunder/mcp-apps/resource?uri=ui://{server}/…&user_id=:
// an MCP App's page, read from its server for the calling user, so the
// console can show it next to the tool card of a tool that names it
// (the catalog's "app"). The one rule of app reads decides it
// (orchestrator.AppResource: mcp.servers[].allow_resources), the rule
// resources/read on /wunder/mcp asks. The answer is the contents of the
// server's resources/read result, their URIs namespaced like the request's:
// {"contents":[{"uri","mimeType":"text/html;profile=mcp-app","text"|"blob","_meta":{"ui":{"csp",…}}}]}.
// A uri that is not ui://{server}/{path} is 400, a resource the rule
// denies 403 naming the rule, an unknown server or resource 404, a server
// that cannot be reached 503, any other refusal of the server 502.
func (s *Server) handleAppResource(w http.ResponseWriter, r *http.Request) {
	userID, ok := userScope(w, r)
	if !ok {
		return
	}
	uri := r.URL.Query().Get("uri")
	if uri == "" {
		writeProblem(w, r, http.StatusBadRequest, "missing_uri", "the uri query parameter is required: ui://{server}/{path}")
		return
	}
	server, upstream, err := s.b.AppResource(r.Context(), userID, uri)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if s.opts.MCPApps == nil {
		writeError(w, r, fmt.Errorf("%w: mcp server %q (no MCP servers are configured)", orchestrator.ErrNotFound, server))
		return
	}
	res, err := s.opts.MCPApps.ReadResource(r.Context(), server, upstream)
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
	case errors.As(err, &rpcErr) && (rpcErr.Code == jsonrpc.CodeInvalidParams || rpcErr.Code == -32002):
		// go-sdk v1.8.0 answers -32602, older servers the custom -32002
		writeError(w, r, fmt.Errorf("%w: resource %s of mcp server %s: %s", orchestrator.ErrNotFound, upstream, server, rpcErr.Message))
		return
	case errors.As(err, &rpcErr):
		writeProblem(w, r, http.StatusBadGateway, "upstream_error", fmt.Sprintf("mcp server %s refused resources/read of %s: %s (%d)", server, upstream, rpcErr.Message, rpcErr.Code))
		return
	default:
		writeError(w, r, err)
		return
	}
	for _, c := range res.Contents {
		if c != nil && strings.HasPrefix(c.URI, orchestrator.AppScheme) {
			c.URI = orchestrator.AppURI(server, c.URI)
		}
	}
	w.Header().Set("Cache-Control", "no-store") // per user: the policy may change
	// The contents alone: the result's MCP list fields (cacheScope, ttlMs)
	// speak of MCP caches, not of this answer.
	writeJSON(w, r, http.StatusOK, struct {
		Contents []*mcp.ResourceContents `json:"contents"`
	}{res.Contents})
}
