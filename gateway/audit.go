package gateway

import (
	"context"
	"net/http"

	"github.com/wunder/wunder/orchestrator"
)

// The audit and the usage meter (docs/security.md#audit). Admin only.
//
//	GET /wunder/admin/audit  ?user_id=&tool=&outcome=allowed|denied|error&via=run|catalog|passthrough&since=&limit=(50, at most 500)&cursor=
//	GET /wunder/admin/usage  ?user_id=&since=

// Audit is what the audit routes need of the core.
type Audit interface {
	Audit(ctx context.Context, f orchestrator.AuditFilter) ([]*orchestrator.ToolLog, error)
	Usage(ctx context.Context, f orchestrator.UsageFilter) ([]orchestrator.UserUsage, error)
}

var _ Audit = (*orchestrator.Orchestrator)(nil)

func (s *Server) auditRoutes() {
	a, ok := s.b.(Audit)
	if !ok {
		return
	}
	s.mux.HandleFunc("GET /wunder/admin/audit", func(w http.ResponseWriter, r *http.Request) { handleAudit(w, r, a) })
	s.mux.HandleFunc("GET /wunder/admin/usage", func(w http.ResponseWriter, r *http.Request) { handleUsage(w, r, a) })
}

// handleAudit is GET /wunder/admin/audit: the policy's decisions on tool
// calls, newest first, in the page envelope of the other admin lists.
func handleAudit(w http.ResponseWriter, r *http.Request, a Audit) {
	if !adminOnly(w, r) {
		return
	}
	q := r.URL.Query()
	f := orchestrator.AuditFilter{UserID: q.Get("user_id"), Tool: q.Get("tool"), Outcome: q.Get("outcome"), Via: q.Get("via")}
	var err error
	if f.Since, err = since(r); err != nil {
		writeError(w, r, err)
		return
	}
	page, err := pageOf(r, "audit", f.UserID, f.Tool, f.Outcome, f.Via, q.Get("since"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	f.Page = page.Page
	logs, err := a.Audit(r.Context(), f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	logs, next := orchestrator.CutPage(page, logs, orchestrator.AuditKey)
	writeJSON(w, r, http.StatusOK, map[string]any{"records": logs, "next_cursor": next})
}

// handleUsage is GET /wunder/admin/usage: each user's runs, tokens, run
// time and tool calls since a time, the biggest token users first.
func handleUsage(w http.ResponseWriter, r *http.Request, a Audit) {
	if !adminOnly(w, r) {
		return
	}
	f := orchestrator.UsageFilter{UserID: r.URL.Query().Get("user_id")}
	var err error
	if f.Since, err = since(r); err != nil {
		writeError(w, r, err)
		return
	}
	users, err := a.Usage(r.Context(), f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"users": nonNil(users), "since": f.Since})
}
