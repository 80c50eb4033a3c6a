package gateway

import (
	"net/http"

	"github.com/wunder/wunder/orchestrator"
)

// handleTools is GET /wunder/tools?user_id=: the catalog the user may put
// in tool_names, grouped as the original wunder grouped it (builtin_tools,
// mcp_tools, a2a_tools, skills, knowledge_tools, user_tools, shared_tools;
// every group present), each entry with its name, wire name, description,
// input schema and, for user and shared tools, owner.
func (s *Server) handleTools(w http.ResponseWriter, r *http.Request) {
	userID, ok := userScope(w, r)
	if !ok {
		return
	}
	groups, err := s.b.ToolCatalog(r.Context(), userID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, groups)
}

type promptRequest struct {
	UserID        string   `json:"user_id"`
	ToolNames     []string `json:"tool_names"`
	PreloadSkills []string `json:"preload_skills"`
	ModelName     string   `json:"model_name"`
	ToolCallMode  string   `json:"tool_call_mode"`
	Language      string   `json:"language"`
}

// handleSystemPrompt is POST /wunder/system_prompt: the system prompt a run
// with these parameters would get.
func (s *Server) handleSystemPrompt(w http.ResponseWriter, r *http.Request) {
	var req promptRequest
	if !decodeJSON(w, r, &req) {
		return
	}
	r = s.withBodyLanguage(r, req.Language)
	userID, err := scope(r, req.UserID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if userID == "" {
		writeProblem(w, r, http.StatusBadRequest, "missing_user_id", "user_id is required")
		return
	}
	prompt, err := s.b.SystemPrompt(r.Context(), orchestrator.PromptRequest{
		UserID: userID, ToolNames: req.ToolNames, PreloadSkills: req.PreloadSkills, ModelName: req.ModelName, ToolCallMode: req.ToolCallMode, Language: s.language(r, req.Language),
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, map[string]string{"prompt": prompt})
}
