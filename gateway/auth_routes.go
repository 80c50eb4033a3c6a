package gateway

import (
	"fmt"
	"net/http"
	"time"

	"github.com/wunder/wunder/accounts"
	"github.com/wunder/wunder/orchestrator"
)

// The account routes (names of the original wunder): /wunder/auth/* for
// everyone, /wunder/admin/user_accounts/* for admins. They exist when the
// gateway has an account store (Options.Auth.Accounts).

func (s *Server) authRoutes() {
	if s.opts.Auth.Accounts == nil {
		return
	}
	s.mux.HandleFunc("POST /wunder/auth/register", s.handleRegister)
	s.mux.HandleFunc("POST /wunder/auth/login", s.handleLogin)
	s.mux.HandleFunc("POST /wunder/auth/logout", s.handleLogout)
	s.mux.HandleFunc("GET /wunder/auth/me", s.handleMe)
	s.mux.HandleFunc("GET /wunder/auth/tokens", s.handleListTokens)
	s.mux.HandleFunc("POST /wunder/auth/tokens", s.handleCreateToken)
	s.mux.HandleFunc("DELETE /wunder/auth/tokens/{id}", s.handleDeleteToken)
	s.mux.HandleFunc("GET /wunder/admin/user_accounts", s.handleListUsers)
	s.mux.HandleFunc("POST /wunder/admin/user_accounts", s.handleCreateUser)
	s.mux.HandleFunc("PATCH /wunder/admin/user_accounts/{user_id}", s.handlePatchUser)
	s.mux.HandleFunc("DELETE /wunder/admin/user_accounts/{user_id}", s.handleDeleteUser)
	s.mux.HandleFunc("POST /wunder/admin/user_accounts/{user_id}/password", s.handleSetPassword)
	s.mux.HandleFunc("GET /wunder/admin/user_accounts/{user_id}/tool_access", s.handleGetToolAccess)
	s.mux.HandleFunc("PUT /wunder/admin/user_accounts/{user_id}/tool_access", s.handlePutToolAccess)
}

// userView is an account as the API shows it (never the password hash).
type userView struct {
	UserID      string    `json:"user_id"`
	DisplayName string    `json:"display_name"`
	Roles       []string  `json:"roles"`
	Disabled    bool      `json:"disabled"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func viewUser(u *accounts.User) *userView {
	return &userView{UserID: u.ID, DisplayName: u.DisplayName, Roles: u.Roles, Disabled: u.Disabled, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
}

// tokenView is a token as listed (never the secret or its hash).
type tokenView struct {
	ID        string             `json:"id"`
	Name      string             `json:"name"`
	Kind      accounts.TokenKind `json:"kind"`
	CreatedAt time.Time          `json:"created_at"`
	ExpiresAt *time.Time         `json:"expires_at"`
}

func viewToken(t *accounts.Token) tokenView {
	return tokenView{ID: t.ID, Name: t.Name, Kind: t.Kind, CreatedAt: t.CreatedAt, ExpiresAt: t.ExpiresAt}
}

type credentialsRequest struct {
	UserID      string `json:"user_id"`
	Password    string `json:"password"`
	DisplayName string `json:"display_name"`
}

// handleRegister is POST /wunder/auth/register (auth.allow_register).
func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request) {
	if !s.opts.Auth.AllowRegister {
		writeError(w, r, fmt.Errorf("%w: registration is off (auth.allow_register)", orchestrator.ErrPermissionDenied))
		return
	}
	var req credentialsRequest
	if !decodeJSON(w, r, &req) {
		return
	}
	if ok, after := s.auth.o.AddressLimiter.Allow("login:" + clientAddress(r)); !ok {
		writeError(w, r, orchestrator.WithRetryAfter(fmt.Errorf("%w: too many logins and registrations from this address (auth.login.per_address); retry later", orchestrator.ErrBusy), after))
		return
	}
	u, err := s.auth.createUser(r.Context(), req.UserID, req.DisplayName, req.Password, nil)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusCreated, map[string]any{"user": viewUser(u)})
}

// handleLogin is POST /wunder/auth/login.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	var req credentialsRequest
	if !decodeJSON(w, r, &req) {
		return
	}
	secret, t, u, err := s.auth.login(r.Context(), clientAddress(r), req.UserID, req.Password)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"token": secret, "expires_at": t.ExpiresAt, "user": viewUser(u)})
}

// handleLogout is POST /wunder/auth/logout: revokes the token it is called
// with.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	p := principal(r.Context())
	if p.TokenID == "" {
		writeError(w, r, fmt.Errorf("%w: logout needs the user token to revoke", orchestrator.ErrInvalidArgument))
		return
	}
	if err := s.opts.Auth.Accounts.DeleteToken(r.Context(), p.UserID, p.TokenID); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleMe is GET /wunder/auth/me: the caller's principal and account.
func (s *Server) handleMe(w http.ResponseWriter, r *http.Request) {
	p := principal(r.Context())
	out := map[string]any{"user_id": p.UserID, "roles": p.Roles, "credential": p.Kind, "admin": p.IsAdmin(), "user": nil}
	if p.UserID != "" {
		u, err := s.opts.Auth.Accounts.GetUser(r.Context(), p.UserID)
		if err == nil {
			out["user"] = viewUser(u)
		}
	}
	writeJSON(w, r, http.StatusOK, out)
}

// tokenOwner is the user whose tokens a request manages: the caller's, or
// for an admin the user_id named.
func tokenOwner(r *http.Request, requested string) (string, error) {
	u, err := scope(r, requested)
	if err == nil && u == "" {
		err = fmt.Errorf("%w: user_id is required with a credential that is no user's", orchestrator.ErrInvalidArgument)
	}
	return u, err
}

// handleListTokens is GET /wunder/auth/tokens.
func (s *Server) handleListTokens(w http.ResponseWriter, r *http.Request) {
	userID, err := tokenOwner(r, r.URL.Query().Get("user_id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	ts, err := s.opts.Auth.Accounts.ListTokens(r.Context(), userID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]tokenView, len(ts))
	for i, t := range ts {
		out[i] = viewToken(t)
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"tokens": out})
}

type createTokenRequest struct {
	UserID string `json:"user_id"`
	Name   string `json:"name"`
	// TTLSeconds is the lifetime, at most auth.max_token_ttl_s; 0 (or
	// none) = that maximum.
	TTLSeconds int64 `json:"ttl_s"`
}

// handleCreateToken is POST /wunder/auth/tokens: a named API token.
func (s *Server) handleCreateToken(w http.ResponseWriter, r *http.Request) {
	var req createTokenRequest
	if !decodeJSON(w, r, &req) {
		return
	}
	userID, err := tokenOwner(r, req.UserID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	ttl, err := s.auth.tokenTTL(req.TTLSeconds)
	if err == nil && (req.Name == "" || len(req.Name) > 128) {
		err = fmt.Errorf("%w: a token needs a name (up to 128 bytes)", orchestrator.ErrInvalidArgument)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	exp := s.auth.o.Now().Add(ttl)
	if _, err := s.opts.Auth.Accounts.GetUser(r.Context(), userID); err != nil {
		writeError(w, r, err)
		return
	}
	secret, t, err := s.auth.issue(r.Context(), userID, req.Name, accounts.TokenAPI, &exp)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusCreated, map[string]any{"token": secret, "id": t.ID, "name": t.Name, "kind": t.Kind, "expires_at": t.ExpiresAt})
}

// handleDeleteToken is DELETE /wunder/auth/tokens/{id}: a user revokes
// their own tokens (another's is 404), an admin any.
func (s *Server) handleDeleteToken(w http.ResponseWriter, r *http.Request) {
	userID, err := scope(r, "")
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := s.opts.Auth.Accounts.DeleteToken(r.Context(), userID, r.PathValue("id")); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
