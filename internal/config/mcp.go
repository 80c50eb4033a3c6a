package config

import (
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MCP configures both directions of MCP: the upstream servers whose tools
// runs may call (servers), and wunder's own MCP endpoint (server).
type MCP struct {
	// TimeoutSeconds (timeout_s) bounds one tools/call of an upstream server
	// unless the server sets its own. Default 60.
	TimeoutSeconds int `yaml:"timeout_s"`
	// Servers are the upstream MCP servers. Each allowed tool appears in the
	// catalog as server@tool; each server also gets the pass-through route
	// /wunder/mcp/{name}. Default [].
	Servers []MCPServer `yaml:"servers"`
	// Server configures wunder's MCP endpoint /wunder/mcp.
	Server MCPEndpoint `yaml:"server"`
	// Elicitation is how runs answer an upstream server's
	// elicitation/create (there is no human in a run): decline (advertise
	// no elicitation) or defaults (accept with the schema's defaults when
	// every required field has one, else decline). Default decline.
	Elicitation string `yaml:"elicitation"`
	// ReadyTimeoutSeconds (ready_timeout_s) bounds how long /readyz waits,
	// after start, for the first discovery (tools/list) of every enabled
	// server; a server still being discovered then counts as failed.
	// Default 30.
	ReadyTimeoutSeconds int `yaml:"ready_timeout_s"`
}

// Elicitation policies (mcp.elicitation).
const (
	MCPElicitDecline  = "decline"
	MCPElicitDefaults = "defaults"
)

// Timeout is timeout_s as a duration.
func (m MCP) Timeout() time.Duration { return seconds(m.TimeoutSeconds) }

// ReadyTimeout is ready_timeout_s as a duration.
func (m MCP) ReadyTimeout() time.Duration { return seconds(m.ReadyTimeoutSeconds) }

// MCP transports.
const (
	MCPStdio          = "stdio"
	MCPSSE            = "sse"
	MCPStreamableHTTP = "streamable-http"
)

// MCPServer is one entry of mcp.servers.
type MCPServer struct {
	// Name is the tool prefix (name@tool) and the pass-through path segment:
	// letters, digits, - and _, unique. Required.
	Name string `yaml:"name"`
	// Transport is stdio, sse or streamable-http. Default streamable-http.
	Transport string `yaml:"transport"`
	// Command, Args, Env and Cwd start a stdio server.
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
	Cwd     string            `yaml:"cwd"`
	// URL of an sse or streamable-http server.
	URL string `yaml:"url"`
	// Headers are sent with every HTTP request to the server.
	Headers map[string]string `yaml:"headers"`
	// BearerToken, when set, is sent as Authorization: Bearer. Masked by
	// [Config.Redacted].
	BearerToken string `yaml:"bearer_token" secret:"true"`
	// Enabled servers are connected. Default true.
	Enabled bool `yaml:"enabled"`
	// AllowTools lists the tools offered; empty = all of them.
	AllowTools []string `yaml:"allow_tools"`
	// AllowResources lists the resources the pass-through route offers, as
	// URIs (resource templates as their URI templates) where '*' matches
	// any run of characters: "file:///srv/docs/*". Empty = all of them.
	AllowResources []string `yaml:"allow_resources"`
	// AllowPrompts lists the prompts the pass-through route offers; empty
	// = all of them.
	AllowPrompts []string `yaml:"allow_prompts"`
	// Description of the server, for people and the prompt.
	Description string `yaml:"description"`
	// TimeoutSeconds (timeout_s) bounds one call; 0 = mcp.timeout_s.
	TimeoutSeconds int `yaml:"timeout_s"`
}

// Timeout is the server's call timeout: its own or mcp.timeout_s.
func (s MCPServer) Timeout(m MCP) time.Duration {
	if s.TimeoutSeconds > 0 {
		return seconds(s.TimeoutSeconds)
	}
	return m.Timeout()
}

// applyDefaults sets the defaults of a new mcp.servers entry.
func (s *MCPServer) applyDefaults() {
	*s = MCPServer{Transport: MCPStreamableHTTP, Enabled: true}
}

var _ entryDefaulter = (*MCPServer)(nil)

// MCPEndpoint configures /wunder/mcp (and `wunder mcp stdio`).
type MCPEndpoint struct {
	// Enabled serves /wunder/mcp and the pass-through routes. Default true.
	Enabled bool `yaml:"enabled"`
	// Stateless serves streamable HTTP without sessions, for replicas
	// behind a load balancer (no server-to-client requests). Default false.
	Stateless bool `yaml:"stateless"`
	// UserID is the user an MCP caller acts as when its credentials do not
	// pin one (the admin key, or no key on loopback). Default "wunder".
	UserID string `yaml:"user_id"`
	// ExposeCatalog offers the caller's whole tool catalog (MCP, skills,
	// knowledge bases, built-ins) on /wunder/mcp next to wunder@run, so an
	// IDE sees wunder as one aggregated MCP endpoint. Default false.
	ExposeCatalog bool `yaml:"expose_catalog"`
	// SessionStore is where the MCP sessions (of /wunder/mcp and the
	// pass-through routes) are kept: "database" (the storage backend, so
	// that every replica on one PostgreSQL serves every session),
	// "memory" (this process only), or "auto" (the default: database on
	// PostgreSQL, memory on SQLite).
	SessionStore string `yaml:"session_store"`
	// SessionTimeoutSeconds ends an MCP session no request used for this
	// long; 0 = never. Default 86400 (a day).
	SessionTimeoutSeconds int `yaml:"session_timeout_s"`
	// ListChangedPollSeconds, with expose_catalog, is how often the
	// catalog of a user with a subscriptions/listen stream open (protocol
	// 2026-07-28) is read to announce that it changed; 0 = list changes
	// are not announced. Default 10.
	ListChangedPollSeconds int `yaml:"list_changed_poll_s"`
	// MaxListens bounds the subscriptions/listen streams one user keeps
	// open on one replica. Default 8.
	MaxListens int `yaml:"max_listens"`
	// MaxSessionsPerUser bounds the sessions one user keeps on
	// /wunder/mcp and on each pass-through route: a new one ends the
	// user's least recently used beyond it, whose client then gets 404
	// and initializes anew. Sessions of the API key and the anonymous
	// operator are not counted. Default 64.
	MaxSessionsPerUser int `yaml:"max_sessions_per_user"`
	// InputTimeoutSeconds bounds how long a pass-through call of a
	// 2026-07-28 client waits for the client's answers to a 2025-11-25
	// upstream's questions (elicitation, sampling, roots) before it is
	// cancelled upstream. Default 600.
	InputTimeoutSeconds int `yaml:"input_timeout_s"`
}

// InputTimeout is mcp.server.input_timeout_s.
func (e MCPEndpoint) InputTimeout() time.Duration { return seconds(e.InputTimeoutSeconds) }

// MCP session stores (mcp.server.session_store).
const (
	MCPSessionsAuto     = "auto"
	MCPSessionsDatabase = "database"
	MCPSessionsMemory   = "memory"
)

// SessionsInDatabase reports whether the MCP sessions are kept in the
// storage backend (backend is storage's effective backend).
func (e MCPEndpoint) SessionsInDatabase(backend string) bool {
	switch e.SessionStore {
	case MCPSessionsDatabase:
		return true
	case MCPSessionsMemory:
		return false
	}
	return backend == "postgres"
}

// ListChangedPoll is mcp.server.list_changed_poll_s; < 0 for never.
func (e MCPEndpoint) ListChangedPoll() time.Duration {
	if e.ListChangedPollSeconds <= 0 {
		return -1
	}
	return seconds(e.ListChangedPollSeconds)
}

// SessionTimeout is mcp.server.session_timeout_s; < 0 for never.
func (e MCPEndpoint) SessionTimeout() time.Duration {
	if e.SessionTimeoutSeconds <= 0 {
		return -1
	}
	return seconds(e.SessionTimeoutSeconds)
}

func mcpDefaults() MCP {
	return MCP{
		TimeoutSeconds: 60,
		Servers:        []MCPServer{},
		Server: MCPEndpoint{Enabled: true, UserID: "wunder", SessionStore: MCPSessionsAuto, SessionTimeoutSeconds: 86400,
			ListChangedPollSeconds: 10, MaxListens: 8, MaxSessionsPerUser: 64, InputTimeoutSeconds: 600},
		Elicitation:         MCPElicitDecline,
		ReadyTimeoutSeconds: 30,
	}
}

var mcpNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

var mcpTransports = []string{MCPStdio, MCPSSE, MCPStreamableHTTP}

func (c *Config) validateMCP(v checker) {
	m := c.MCP
	atLeast(v, "mcp.timeout_s", m.TimeoutSeconds, 1)
	atLeast(v, "mcp.ready_timeout_s", m.ReadyTimeoutSeconds, 1)
	v.oneOf("mcp.elicitation", m.Elicitation, []string{MCPElicitDecline, MCPElicitDefaults})
	v.oneOf("mcp.server.session_store", m.Server.SessionStore, []string{MCPSessionsAuto, MCPSessionsDatabase, MCPSessionsMemory})
	atLeast(v, "mcp.server.session_timeout_s", m.Server.SessionTimeoutSeconds, 0)
	atLeast(v, "mcp.server.list_changed_poll_s", m.Server.ListChangedPollSeconds, 0)
	atLeast(v, "mcp.server.max_listens", m.Server.MaxListens, 1)
	atLeast(v, "mcp.server.max_sessions_per_user", m.Server.MaxSessionsPerUser, 1)
	atLeast(v, "mcp.server.input_timeout_s", m.Server.InputTimeoutSeconds, 1)
	if err := validUserIDString(m.Server.UserID); err != "" {
		v.fail("mcp.server.user_id", "%s", err)
	}
	seen := map[string]bool{}
	for i, s := range m.Servers {
		p := indexPath("mcp.servers", i)
		if s.validate(v, p) && seen[s.Name] {
			v.fail(joinPath(p, "name"), "%q is used by another server", s.Name)
		}
		seen[s.Name] = true
	}
}

// validate checks one server entry at path p; it reports whether the name
// is valid.
func (s MCPServer) validate(v checker, p string) bool {
	nameOK := mcpNameRE.MatchString(s.Name)
	if !nameOK {
		v.fail(joinPath(p, "name"), "must be 1-64 letters, digits, - or _, got %s", quoteShort(s.Name))
	}
	if !v.oneOf(joinPath(p, "transport"), s.Transport, mcpTransports) {
		return nameOK
	}
	if s.Transport == MCPStdio {
		if s.Command == "" {
			v.fail(joinPath(p, "command"), "is required with transport stdio")
		}
	} else if s.URL == "" {
		v.fail(joinPath(p, "url"), "is required with transport %s", s.Transport)
	} else {
		v.httpURL(joinPath(p, "url"), s.URL, true)
	}
	atLeast(v, joinPath(p, "timeout_s"), s.TimeoutSeconds, 0)
	v.eachWord(joinPath(p, "allow_tools"), s.AllowTools)
	v.eachWord(joinPath(p, "allow_resources"), s.AllowResources)
	v.eachWord(joinPath(p, "allow_prompts"), s.AllowPrompts)
	return nameOK
}

// validUserIDString mirrors orchestrator.ValidateUserID (config may not
// import the core); "" = valid.
func validUserIDString(id string) string {
	switch {
	case id == "":
		return "must not be empty"
	case len(id) > 128:
		return "must be at most 128 bytes"
	case !utf8.ValidString(id):
		return "is not valid UTF-8"
	case strings.ContainsFunc(id, unicode.IsControl) || strings.ContainsAny(id, `/\`) || id == "." || id == "..":
		return "contains a forbidden character"
	}
	return ""
}
