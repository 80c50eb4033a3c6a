package gateway

import "net/http"

// Two small routes the web console needs and any other client may use:
//
//	GET /wunder/auth/config   open: whether a credential is required
//	GET /wunder/models        the configured models' names (any caller)

// ModelList is what GET /wunder/models shows of the model registry: names
// only, never base URLs or keys.
type ModelList interface {
	// Default is the model a run without model_name gets ("" = none).
	Default() string
	// Names are the configured models, sorted.
	Names() []string
}

func (s *Server) consoleRoutes() {
	s.mux.HandleFunc("GET /wunder/auth/config", s.handleAuthConfig)
	s.Open("/wunder/auth/config")
	if s.opts.Models != nil {
		s.mux.HandleFunc("GET /wunder/models", s.handleModels)
	}
}

// handleAuthConfig is GET /wunder/auth/config, open: it tells a client
// whether it must log in (an API key is configured) or may name a user
// id without a credential (the anonymous local mode), and whether login
// and registration exist. It reveals nothing else.
func (s *Server) handleAuthConfig(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, r, http.StatusOK, map[string]bool{
		"login_required": !s.auth.o.Anonymous,
		"login":          s.opts.Auth.Accounts != nil,
		"register":       s.opts.Auth.Accounts != nil && s.opts.Auth.AllowRegister,
	})
}

// handleModels is GET /wunder/models: {"default","models":[{"name"}]}.
func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	names := s.opts.Models.Names()
	models := make([]map[string]string, len(names))
	for i, n := range names {
		models[i] = map[string]string{"name": n}
	}
	writeJSON(w, r, http.StatusOK, map[string]any{"default": s.opts.Models.Default(), "models": models})
}
