package gateway

import (
	"context"
	"fmt"
	"net/http"
	"regexp"

	"github.com/wunder/wunder/orchestrator"
)

// LSPAdmin is what the language-server admin endpoints need; cmd/wunder
// adapts the lsp pool to it. Values returned are encoded as JSON as they
// are. Errors are the core's sentinels (ErrNotFound for an unknown server,
// ErrUnavailable for one that does not start).
type LSPAdmin interface {
	// LSPStatus describes the configured servers and the running workers
	// (state, memory).
	LSPStatus(ctx context.Context) (any, error)
	// LSPTest starts server on a scratch root and reports what it answered.
	LSPTest(ctx context.Context, server string) (any, error)
}

var lspServerRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// adminOnlyLSP answers 403 unless the caller is an admin.
func adminOnlyLSP(w http.ResponseWriter, r *http.Request) bool {
	if principal(r.Context()).IsAdmin() {
		return true
	}
	writeError(w, r, fmt.Errorf("%w: admin only", orchestrator.ErrPermissionDenied))
	return false
}

// handleLSPStatus is GET /wunder/admin/lsp.
func (s *Server) handleLSPStatus(w http.ResponseWriter, r *http.Request) {
	if !adminOnlyLSP(w, r) {
		return
	}
	st, err := s.opts.LSP.LSPStatus(r.Context())
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, st)
}

// handleLSPTest is POST /wunder/admin/lsp/test {"server": "gopls"}.
func (s *Server) handleLSPTest(w http.ResponseWriter, r *http.Request) {
	if !adminOnlyLSP(w, r) {
		return
	}
	var req struct {
		Server string `json:"server"`
	}
	if !decodeJSON(w, r, &req) {
		return
	}
	if !lspServerRE.MatchString(req.Server) {
		writeError(w, r, fmt.Errorf("%w: server must name a configured language server, got %q", orchestrator.ErrInvalidArgument, req.Server))
		return
	}
	res, err := s.opts.LSP.LSPTest(r.Context(), req.Server)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, res)
}
