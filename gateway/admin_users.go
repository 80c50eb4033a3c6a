package gateway

import (
	"fmt"
	"net/http"
	"path"

	"github.com/wunder/wunder/accounts"
	"github.com/wunder/wunder/orchestrator"
)

// /wunder/admin/user_accounts: account management for admins.

func adminOnly(w http.ResponseWriter, r *http.Request) bool {
	if principal(r.Context()).IsAdmin() {
		return true
	}
	writeError(w, r, fmt.Errorf("%w: admin only", orchestrator.ErrPermissionDenied))
	return false
}

// handleListUsers is GET /wunder/admin/user_accounts.
func (s *Server) handleListUsers(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	page, err := pageOf(r, "users")
	if err != nil {
		writeError(w, r, err)
		return
	}
	us, err := s.opts.Auth.Accounts.ListUsers(r.Context(), page.Page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	us, next := orchestrator.CutPage(page, us, accounts.UserKey)
	out := make([]*userView, len(us))
	for i, u := range us {
		out[i] = viewUser(u)
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"users": out, "next_cursor": next})
}

type createUserRequest struct {
	UserID      string   `json:"user_id"`
	Password    string   `json:"password"`
	DisplayName string   `json:"display_name"`
	Roles       []string `json:"roles"`
}

// handleCreateUser is POST /wunder/admin/user_accounts → 201.
func (s *Server) handleCreateUser(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	var req createUserRequest
	if !decodeJSON(w, r, &req) {
		return
	}
	u, err := s.auth.createUser(r.Context(), req.UserID, req.DisplayName, req.Password, req.Roles)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusCreated, map[string]any{"user": viewUser(u)})
}

type patchUserRequest struct {
	Disabled    *bool    `json:"disabled"`
	Roles       []string `json:"roles"`
	DisplayName *string  `json:"display_name"`
}

// handlePatchUser is PATCH /wunder/admin/user_accounts/{user_id}.
func (s *Server) handlePatchUser(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	var req patchUserRequest
	if !decodeJSON(w, r, &req) {
		return
	}
	u, err := s.opts.Auth.Accounts.GetUser(r.Context(), r.PathValue("user_id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	if req.Roles != nil {
		if u.Roles, err = checkRoles(req.Roles); err != nil {
			writeError(w, r, err)
			return
		}
	}
	if req.Disabled != nil {
		u.Disabled = *req.Disabled
	}
	if req.DisplayName != nil {
		u.DisplayName = *req.DisplayName
	}
	u.UpdatedAt = s.auth.o.Now()
	if err := s.opts.Auth.Accounts.UpdateUser(r.Context(), u); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"user": viewUser(u)})
}

// handleDeleteUser is DELETE /wunder/admin/user_accounts/{user_id}; the
// user's tokens go with the account, and its id stays taken (the store's
// tombstone), so no one who registers it later inherits the sessions,
// runs and files stored under it. DELETE /wunder/admin/users/{user_id}
// deletes those.
func (s *Server) handleDeleteUser(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	if err := s.opts.Auth.Accounts.DeleteUser(r.Context(), r.PathValue("user_id")); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleSetPassword is POST /wunder/admin/user_accounts/{user_id}/password
// {"password"}: a reset, which revokes every token of the user (their
// sessions and API tokens) with the old password.
func (s *Server) handleSetPassword(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	var req struct {
		Password string `json:"password"`
	}
	if !decodeJSON(w, r, &req) {
		return
	}
	if err := checkPassword(req.Password); err != nil {
		writeError(w, r, err)
		return
	}
	hash, err := s.auth.hash(r.Context(), req.Password)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := s.opts.Auth.Accounts.SetPassword(r.Context(), r.PathValue("user_id"), hash); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleGetToolAccess is GET /wunder/admin/user_accounts/{user_id}/tool_access.
func (s *Server) handleGetToolAccess(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	a, err := s.opts.Auth.Accounts.GetToolAccess(r.Context(), r.PathValue("user_id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, toolAccessView(a))
}

// handlePutToolAccess is PUT /wunder/admin/user_accounts/{user_id}/tool_access
// {"allowed_tools": [...] | null, "denied_tools": [...], "approval_tools": [...]}.
func (s *Server) handlePutToolAccess(w http.ResponseWriter, r *http.Request) {
	if !adminOnly(w, r) {
		return
	}
	var a orchestrator.ToolAccess
	if !decodeJSON(w, r, &a) {
		return
	}
	for _, list := range [][]string{a.Allowed, a.Denied, a.Approval} {
		for _, p := range list {
			if _, err := path.Match(p, ""); err != nil || p == "" {
				writeError(w, r, fmt.Errorf("%w: %q is not a tool name or glob", orchestrator.ErrInvalidArgument, p))
				return
			}
		}
	}
	if err := s.opts.Auth.Accounts.SetToolAccess(r.Context(), r.PathValue("user_id"), &a); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, toolAccessView(&a))
}

// toolAccessView answers with empty lists rather than nulls, except for
// allowed_tools, where null means "everything not denied".
func toolAccessView(a *orchestrator.ToolAccess) map[string]any {
	if a == nil {
		a = &orchestrator.ToolAccess{}
	}
	return map[string]any{"allowed_tools": a.Allowed, "denied_tools": nonNil(a.Denied), "approval_tools": nonNil(a.Approval)}
}
