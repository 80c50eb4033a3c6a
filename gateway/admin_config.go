package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

// The configuration admin API: GET returns a section of the effective
// configuration (secrets masked) with the override's revision; POST
// replaces the section, validated like a start-up, written to the override
// and applied before it answers. Admin only.
//
//	GET|POST /wunder/admin/llm     {"llm":{"default","models":{...}}}
//	GET|POST /wunder/admin/mcp     {"servers":[...]}
//	GET|POST /wunder/admin/a2a     {"services":[...]}
//	GET|POST /wunder/admin/tools   {"builtin":{"enabled":[...]}}
//	GET|POST /wunder/admin/server  {"max_body_bytes","sse_heartbeat_s","cors":{...},"i18n":{...}} (POST: any of them)
//	GET|POST /wunder/admin/lsp     {"lsp":{...}} (GET adds "status": servers and workers)
//
// POST takes an optional If-Match: <revision> (or "revision" in the body);
// a stale one is 409. Invalid input is 400 with "errors":[{"key","message"}].

// ConfigAdmin reads and changes the configuration; cmd/wunder implements it.
type ConfigAdmin interface {
	// ConfigSection returns the section's document (as the routes above
	// show it) and the override's revision.
	ConfigSection(ctx context.Context, section string) (doc map[string]any, revision int64, err error)
	// UpdateConfigSection validates doc, writes it to the override and
	// applies it. ifMatch, when not nil, is the revision the caller read.
	// A stale revision wraps [orchestrator.ErrConflict]; invalid input is a
	// [*ConfigError].
	UpdateConfigSection(ctx context.Context, section string, doc map[string]any, ifMatch *int64) (map[string]any, int64, error)
}

// ConfigError is a refused configuration change: each problem with the key
// path it concerns.
type ConfigError struct {
	Fields []ConfigFieldError
}

// ConfigFieldError is one problem of a [ConfigError].
type ConfigFieldError struct {
	Key     string `json:"key"`
	Message string `json:"message"`
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("invalid configuration:")
	for _, f := range e.Fields {
		fmt.Fprintf(&b, " %s: %s;", f.Key, f.Message)
	}
	return strings.TrimSuffix(b.String(), ";")
}

// ContextWindows probes or records a model's context window
// (POST /wunder/admin/llm/context_window); a [ConfigAdmin] that implements
// it gets the route.
type ContextWindows interface {
	// ContextWindow probes the configured model's provider for its window
	// when maxContext is nil, and records *maxContext as its max_context
	// (through UpdateConfigSection) otherwise. An unknown model is
	// [orchestrator.ErrNotFound]; invalid input a [*ConfigError].
	ContextWindow(ctx context.Context, model string, maxContext *int) (ContextWindowResult, error)
}

// ContextWindowResult answers POST /wunder/admin/llm/context_window.
type ContextWindowResult struct {
	ModelName string `json:"model_name"`
	// MaxContext is the window the provider reported or that was recorded;
	// 0 = unknown.
	MaxContext int `json:"max_context"`
	// Source: "provider" (reported by its model listing), "recorded"
	// (written to the configuration) or "unknown".
	Source string `json:"source"`
	// Configured is llm.models.<name>.max_context after the call.
	Configured int `json:"configured_max_context"`
	// Detail says why the window is unknown, when it is.
	Detail string `json:"detail,omitempty"`
	// Revision is the configuration override's revision after the call.
	Revision int64 `json:"revision"`
}

// ModelTester makes one real chat call with a model's settings
// (POST /wunder/admin/llm/test); a [ConfigAdmin] that implements it gets
// the route.
type ModelTester interface {
	// TestModel tests the configured model name, or the settings given
	// (an llm.models entry as JSON; its api_key, when left out, is the
	// configured model's), and reports the outcome: a failed call is a
	// result, not an error. An unknown model is [orchestrator.ErrNotFound];
	// settings that do not validate a [*ConfigError].
	TestModel(ctx context.Context, name string, settings map[string]any) (any, error)
}

// configSections are the sections the routes serve.
var configSections = []string{"llm", "mcp", "a2a", "tools", "server", "lsp"}

func (s *Server) configRoutes() {
	ca := s.opts.Config
	if ca == nil {
		return
	}
	if cw, ok := ca.(ContextWindows); ok {
		s.contextWindowRoute(cw)
	}
	if mt, ok := ca.(ModelTester); ok {
		s.modelTestRoute(mt)
	}
	for _, sec := range configSections {
		s.mux.HandleFunc("GET /wunder/admin/"+sec, func(w http.ResponseWriter, r *http.Request) {
			if !adminOnly(w, r) {
				return
			}
			doc, rev, err := ca.ConfigSection(r.Context(), sec)
			if err != nil {
				writeError(w, r, err)
				return
			}
			if sec == "lsp" && s.opts.LSP != nil {
				if doc["status"], err = s.opts.LSP.LSPStatus(r.Context()); err != nil {
					writeError(w, r, err)
					return
				}
			}
			writeConfigDoc(w, r, doc, rev)
		})
		s.mux.HandleFunc("POST /wunder/admin/"+sec, func(w http.ResponseWriter, r *http.Request) {
			if !adminOnly(w, r) {
				return
			}
			doc, ok := decodeConfigDoc(w, r)
			if !ok {
				return
			}
			ifMatch, err := revisionOf(r, doc)
			if err != nil {
				writeProblem(w, r, http.StatusBadRequest, "invalid_argument", err.Error())
				return
			}
			out, rev, err := ca.UpdateConfigSection(r.Context(), sec, doc, ifMatch)
			if err != nil {
				writeConfigError(w, r, err)
				return
			}
			writeConfigDoc(w, r, out, rev)
		})
	}
}

// contextWindowRoute serves POST /wunder/admin/llm/context_window:
// {"model_name"} probes, {"model_name","max_context":N} records.
func (s *Server) contextWindowRoute(cw ContextWindows) {
	s.mux.HandleFunc("POST /wunder/admin/llm/context_window", func(w http.ResponseWriter, r *http.Request) {
		if !adminOnly(w, r) {
			return
		}
		var body struct {
			ModelName  string `json:"model_name"`
			MaxContext *int   `json:"max_context"`
		}
		if !decodeJSON(w, r, &body) {
			return
		}
		if body.ModelName == "" {
			writeConfigProblem(w, r, &ConfigError{Fields: []ConfigFieldError{{Key: "model_name", Message: "required: a model of llm.models"}}})
			return
		}
		out, err := cw.ContextWindow(r.Context(), body.ModelName, body.MaxContext)
		if err != nil {
			writeConfigError(w, r, err)
			return
		}
		writeJSON(w, r, http.StatusOK, out)
	})
}

// modelTestRoute serves POST /wunder/admin/llm/test: {"model_name"} tests
// a configured model, {"model":{...}} (with model_name for its stored
// key) settings not saved yet.
func (s *Server) modelTestRoute(mt ModelTester) {
	s.mux.HandleFunc("POST /wunder/admin/llm/test", func(w http.ResponseWriter, r *http.Request) {
		if !adminOnly(w, r) {
			return
		}
		var body struct {
			ModelName string         `json:"model_name"`
			Model     map[string]any `json:"model"`
		}
		if !decodeJSON(w, r, &body) {
			return
		}
		if body.ModelName == "" && body.Model == nil {
			writeConfigProblem(w, r, &ConfigError{Fields: []ConfigFieldError{{Key: "model_name", Message: "required: a model of llm.models, or model: the settings to test"}}})
			return
		}
		out, err := mt.TestModel(r.Context(), body.ModelName, body.Model)
		if err != nil {
			writeConfigError(w, r, err)
			return
		}
		writeJSON(w, r, http.StatusOK, out)
	})
}

func writeConfigDoc(w http.ResponseWriter, r *http.Request, doc map[string]any, rev int64) {
	out := make(map[string]any, len(doc)+1)
	for k, v := range doc {
		out[k] = v
	}
	out["revision"] = rev
	w.Header().Set("ETag", strconv.Quote(strconv.FormatInt(rev, 10)))
	writeJSON(w, r, http.StatusOK, out)
}

// decodeConfigDoc reads the body: one JSON object.
func decodeConfigDoc(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	var doc map[string]any
	if !decodeJSON(w, r, &doc) {
		return nil, false
	}
	if doc == nil {
		writeProblem(w, r, http.StatusBadRequest, "invalid_json", "the body must be a JSON object")
		return nil, false
	}
	return doc, true
}

// revisionOf is the revision the caller read: If-Match, else "revision" in
// doc (removed from it); nil when neither is given.
func revisionOf(r *http.Request, doc map[string]any) (*int64, error) {
	raw, hasBody := doc["revision"]
	delete(doc, "revision")
	if h := strings.Trim(strings.TrimPrefix(strings.TrimSpace(r.Header.Get("If-Match")), "W/"), `"`); h != "" {
		n, err := strconv.ParseInt(h, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("If-Match must be a revision number, got %q", r.Header.Get("If-Match"))
		}
		return &n, nil
	}
	if hasBody && raw != nil {
		f, ok := raw.(float64)
		n := int64(f)
		if !ok || f != float64(n) || n < 0 {
			return nil, fmt.Errorf("revision must be a non-negative integer, got %v", raw)
		}
		return &n, nil
	}
	return nil, nil
}

// writeConfigError writes the error of a configuration route: a refused
// change (400 with its fields), a stale revision (409), or the core's
// sentinels.
func writeConfigError(w http.ResponseWriter, r *http.Request, err error) {
	var ce *ConfigError
	switch {
	case errors.As(err, &ce):
		writeConfigProblem(w, r, ce)
	case errors.Is(err, orchestrator.ErrConflict):
		writeProblem(w, r, http.StatusConflict, "stale_revision", err.Error())
	default:
		writeError(w, r, err)
	}
}

// writeConfigProblem is the 400 of a refused change, with its fields.
func writeConfigProblem(w http.ResponseWriter, r *http.Request, ce *ConfigError) {
	const code = "invalid_config"
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(struct {
		Problem
		Errors []ConfigFieldError `json:"errors"`
	}{
		Problem: newProblem(r, http.StatusBadRequest, code, ce.Error()),
		Errors:  ce.Fields,
	})
}

// Trying what the configuration names, for the console's admin pages.
// Admin only.
//
//	POST /wunder/admin/mcp/tools       {"name":"<configured server>"} or {"server":{...an mcp.servers entry...}}
//	                                   → {"server","tools":[{name,description,input_schema,...}]}
//	POST /wunder/admin/mcp/tools/call  {"server","tool","arguments"|"args":{...}} → {"server","tool","result","content","is_error","duration_ms"}
//	POST /wunder/admin/a2a/card        {"name":"<configured service>"} or {"endpoint","headers"}
//	                                   → {"card":{...as the peer sent it...},"summary":{name,description,interfaces,skills,streaming,push}}

// ConfigProbe tries servers and peers; cmd/wunder implements it. Errors
// are the core's sentinels (ErrNotFound for an unknown name,
// ErrUnavailable for one that cannot be reached) or a [*ConfigError].
type ConfigProbe interface {
	ListMCPTools(ctx context.Context, name string, server map[string]any) (any, error)
	CallMCPTool(ctx context.Context, server, tool string, arguments json.RawMessage) (any, error)
	FetchA2ACard(ctx context.Context, name, endpoint string, headers map[string]string) (any, error)
}

type mcpToolsRequest struct {
	Name   string         `json:"name"`
	Server map[string]any `json:"server"`
}

type mcpCallRequest struct {
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Args      json.RawMessage `json:"args"` // the original wunder's name
}

type a2aCardRequest struct {
	Name     string            `json:"name"`
	Endpoint string            `json:"endpoint"`
	Headers  map[string]string `json:"headers"`
}

func (s *Server) probeRoutes() {
	p, ok := s.opts.Config.(ConfigProbe)
	if !ok {
		return
	}
	answer := func(w http.ResponseWriter, r *http.Request, v any, err error) {
		if err != nil {
			writeConfigError(w, r, err)
			return
		}
		writeJSON(w, r, http.StatusOK, v)
	}
	s.mux.HandleFunc("POST /wunder/admin/mcp/tools", func(w http.ResponseWriter, r *http.Request) {
		var req mcpToolsRequest
		if !adminOnly(w, r) || !decodeJSON(w, r, &req) {
			return
		}
		if (req.Name == "") == (req.Server == nil) {
			writeProblem(w, r, http.StatusBadRequest, "invalid_argument", `send either "name" (a configured MCP server) or "server" (an mcp.servers entry to try)`)
			return
		}
		v, err := p.ListMCPTools(r.Context(), req.Name, req.Server)
		answer(w, r, v, err)
	})
	s.mux.HandleFunc("POST /wunder/admin/mcp/tools/call", func(w http.ResponseWriter, r *http.Request) {
		var req mcpCallRequest
		if !adminOnly(w, r) || !decodeJSON(w, r, &req) {
			return
		}
		if !mcpServerRE.MatchString(req.Server) || req.Tool == "" {
			writeProblem(w, r, http.StatusBadRequest, "invalid_argument", `"server" (a configured MCP server) and "tool" are required`)
			return
		}
		args := req.Arguments
		if len(args) == 0 {
			args = req.Args
		}
		v, err := p.CallMCPTool(r.Context(), req.Server, req.Tool, args)
		answer(w, r, v, err)
	})
	s.mux.HandleFunc("POST /wunder/admin/a2a/card", func(w http.ResponseWriter, r *http.Request) {
		var req a2aCardRequest
		if !adminOnly(w, r) || !decodeJSON(w, r, &req) {
			return
		}
		if (req.Name == "") == (req.Endpoint == "") {
			writeProblem(w, r, http.StatusBadRequest, "invalid_argument", `send either "name" (a configured A2A service) or "endpoint" (an agent's URL)`)
			return
		}
		v, err := p.FetchA2ACard(r.Context(), req.Name, req.Endpoint, req.Headers)
		answer(w, r, v, err)
	})
}
