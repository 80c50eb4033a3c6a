package gateway

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/wunder/wunder/orchestrator"
)

// UserTools is what the /wunder/user_tools MCP, tools and extra-prompt
// routes need: users' own tool configurations (cmd/wunder adapts
// adapters/usertools and the registry to it). userID is always the user
// the request acts for; bad input is an error wrapping
// orchestrator.ErrInvalidArgument.
type UserTools interface {
	// MCPServers returns the user's MCP servers (mcp.servers entries with
	// shared_tools), secrets masked.
	MCPServers(ctx context.Context, userID string) ([]json.RawMessage, error)
	// SetMCPServers checks and replaces the user's MCP servers, and
	// returns them as MCPServers does.
	SetMCPServers(ctx context.Context, userID string, servers []json.RawMessage) ([]json.RawMessage, error)
	// MCPServerTools lists the tools of a server configuration before it
	// is saved; the value is encoded as JSON as it is.
	MCPServerTools(ctx context.Context, userID string, server json.RawMessage) (any, error)
	ExtraPrompt(ctx context.Context, userID string) (string, error)
	SetExtraPrompt(ctx context.Context, userID, prompt string) (string, error)
}

// userToolRoutes serves the original wunder's /wunder/user_tools routes of
// MCP servers, tools and the extra prompt (docs/http.md). A user's token
// acts for that user; an admin names the user with user_id.
func (s *Server) userToolRoutes() {
	if s.opts.UserTools == nil {
		return
	}
	s.mux.HandleFunc("GET /wunder/user_tools/mcp", s.handleUserMCP)
	s.mux.HandleFunc("POST /wunder/user_tools/mcp", s.handleSetUserMCP)
	s.mux.HandleFunc("POST /wunder/user_tools/mcp/tools", s.handleUserMCPTools)
	s.mux.HandleFunc("GET /wunder/user_tools/tools", s.handleUserTools)
	s.mux.HandleFunc("GET /wunder/user_tools/extra_prompt", s.handleExtraPrompt)
	s.mux.HandleFunc("POST /wunder/user_tools/extra_prompt", s.handleSetExtraPrompt)
}

// bodyScope is the user a POST acts for, from the body's user_id; it
// writes the problem and returns false when there is none.
func bodyScope(w http.ResponseWriter, r *http.Request, requested string) (string, bool) {
	userID, err := scope(r, requested)
	if err != nil {
		writeError(w, r, err)
		return "", false
	}
	if userID == "" {
		writeProblem(w, r, http.StatusBadRequest, "missing_user_id", "user_id is required")
		return "", false
	}
	return userID, true
}

func (s *Server) handleUserMCP(w http.ResponseWriter, r *http.Request) {
	userID, ok := userScope(w, r)
	if !ok {
		return
	}
	servers, err := s.opts.UserTools.MCPServers(r.Context(), userID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"user_id": userID, "servers": servers})
}

type userMCPRequest struct {
	UserID  string             `json:"user_id"`
	Servers *[]json.RawMessage `json:"servers"`
}

func (s *Server) handleSetUserMCP(w http.ResponseWriter, r *http.Request) {
	var req userMCPRequest
	if !decodeJSON(w, r, &req) {
		return
	}
	userID, ok := bodyScope(w, r, req.UserID)
	if !ok {
		return
	}
	if req.Servers == nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument", `servers is required (the whole list; [] removes every server)`)
		return
	}
	servers, err := s.opts.UserTools.SetMCPServers(r.Context(), userID, *req.Servers)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"user_id": userID, "servers": servers})
}

// handleUserMCPTools is POST /wunder/user_tools/mcp/tools: the body is one
// server as /wunder/user_tools/mcp takes it, plus an optional user_id.
func (s *Server) handleUserMCPTools(w http.ResponseWriter, r *http.Request) {
	var body map[string]json.RawMessage
	if !decodeJSON(w, r, &body) {
		return
	}
	var requested string
	if raw, ok := body["user_id"]; ok {
		if err := json.Unmarshal(raw, &requested); err != nil {
			writeProblem(w, r, http.StatusBadRequest, "invalid_json", `field "user_id" must be a string`)
			return
		}
		delete(body, "user_id")
	}
	userID, ok := bodyScope(w, r, requested)
	if !ok {
		return
	}
	server, _ := json.Marshal(body)
	tools, err := s.opts.UserTools.MCPServerTools(r.Context(), userID, server)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"user_id": userID, "tools": tools})
}

// handleUserTools is GET /wunder/user_tools/tools: the user's own tools,
// the tools shared with them (each with its owner) and their extra prompt.
func (s *Server) handleUserTools(w http.ResponseWriter, r *http.Request) {
	userID, ok := userScope(w, r)
	if !ok {
		return
	}
	groups, err := s.b.ToolCatalog(r.Context(), userID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	prompt, err := s.opts.UserTools.ExtraPrompt(r.Context(), userID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"user_id": userID, orchestrator.GroupUser: nonNil(groups[orchestrator.GroupUser]),
		orchestrator.GroupShared: nonNil(groups[orchestrator.GroupShared]), "extra_prompt": prompt})
}

func (s *Server) handleExtraPrompt(w http.ResponseWriter, r *http.Request) {
	userID, ok := userScope(w, r)
	if !ok {
		return
	}
	prompt, err := s.opts.UserTools.ExtraPrompt(r.Context(), userID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]string{"user_id": userID, "extra_prompt": prompt})
}

type extraPromptRequest struct {
	UserID      string  `json:"user_id"`
	ExtraPrompt *string `json:"extra_prompt"`
}

func (s *Server) handleSetExtraPrompt(w http.ResponseWriter, r *http.Request) {
	var req extraPromptRequest
	if !decodeJSON(w, r, &req) {
		return
	}
	userID, ok := bodyScope(w, r, req.UserID)
	if !ok {
		return
	}
	if req.ExtraPrompt == nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_argument", `extra_prompt is required ("" removes it)`)
		return
	}
	prompt, err := s.opts.UserTools.SetExtraPrompt(r.Context(), userID, *req.ExtraPrompt)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]string{"user_id": userID, "extra_prompt": prompt})
}
