package gateway

import (
	"context"
	"fmt"
	"net/http"
	"regexp"

	"github.com/wunder/wunder/orchestrator"
)

// MCPAdmin is what the MCP admin endpoint needs; cmd/wunder adapts the MCP
// toolset to it. Errors are the core's sentinels (ErrNotFound for an
// unknown server, ErrUnavailable for one that cannot be reached).
type MCPAdmin interface {
	// RefreshMCP lists the server's tools now and caches them; the value
	// returned is encoded as JSON as it is.
	RefreshMCP(ctx context.Context, server string) (any, error)
}

var mcpServerRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// handleMCPRefresh is POST /wunder/admin/mcp/{name}/refresh.
func (s *Server) handleMCPRefresh(w http.ResponseWriter, r *http.Request) {
	if !principal(r.Context()).IsAdmin() {
		writeError(w, r, fmt.Errorf("%w: admin only", orchestrator.ErrPermissionDenied))
		return
	}
	name := r.PathValue("name")
	if !mcpServerRE.MatchString(name) {
		writeError(w, r, fmt.Errorf("%w: name must be a configured MCP server, got %q", orchestrator.ErrInvalidArgument, name))
		return
	}
	res, err := s.opts.MCP.RefreshMCP(r.Context(), name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, res)
}
