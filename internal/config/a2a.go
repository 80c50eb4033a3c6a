package config

import (
	"strings"
	"time"
)

// A2A configures both directions of A2A: wunder's own agent (server, push)
// and the peer agents runs may delegate to (services).
type A2A struct {
	// TimeoutSeconds (timeout_s) bounds one a2a@service call unless the
	// service sets its own. Default 120.
	TimeoutSeconds int `yaml:"timeout_s"`
	// Services are the peer agents; each is the tool a2a@<name>. Default [].
	Services []A2AService `yaml:"services"`
	// Server configures /a2a and the agent card.
	Server A2AServer `yaml:"server"`
	// Push configures push notifications of /a2a tasks.
	Push A2APush `yaml:"push"`
}

// A2AReservedName reports whether a peer name would take a path segment
// of A2A's bindings under /a2a/: "v" and digits ("v1" holds the HTTP+JSON
// binding, later versions will take the others). A peer published at
// /a2a/{peer} so named would shadow a binding; a test in cmd/wunder keeps
// this rule and the a2a package's routes in step.
func A2AReservedName(name string) bool {
	digits, ok := strings.CutPrefix(strings.ToLower(name), "v")
	return ok && digits != "" && strings.Trim(digits, "0123456789") == ""
}

// Timeout is timeout_s as a duration.
func (a A2A) Timeout() time.Duration { return seconds(a.TimeoutSeconds) }

// A2AService is one entry of a2a.services.
type A2AService struct {
	// Name makes the tool a2a@<name>: letters, digits, - and _, unique.
	// Required.
	Name string `yaml:"name"`
	// Endpoint is the peer's base URL or agent card URL (the card is read
	// and the interface chosen from it), or its JSON-RPC URL when version
	// is set. Required.
	Endpoint string `yaml:"endpoint"`
	// Version "1.0" or "0.3" skips the card and speaks that version to
	// endpoint; "" reads the card. Default "".
	Version string `yaml:"version"`
	// Headers are sent with every request to the peer.
	Headers map[string]string `yaml:"headers"`
	// BearerToken, when set, is sent as Authorization: Bearer. Masked by
	// [Config.Redacted].
	BearerToken string `yaml:"bearer_token" secret:"true"`
	// Enabled services are offered. Default true.
	Enabled bool `yaml:"enabled"`
	// Description of the peer, shown to the model.
	Description string `yaml:"description"`
	// TimeoutSeconds (timeout_s) bounds one call; 0 = a2a.timeout_s.
	TimeoutSeconds int `yaml:"timeout_s"`
	// MaxDepth bounds a wunder-to-wunder delegation chain. Default 3.
	MaxDepth int `yaml:"max_depth"`
}

// Timeout is the service's call timeout: its own or a2a.timeout_s.
func (s A2AService) Timeout(a A2A) time.Duration {
	if s.TimeoutSeconds > 0 {
		return seconds(s.TimeoutSeconds)
	}
	return a.Timeout()
}

// applyDefaults sets the defaults of a new a2a.services entry.
func (s *A2AService) applyDefaults() { *s = A2AService{Enabled: true, MaxDepth: 3} }

var _ entryDefaulter = (*A2AService)(nil)

// A2AServer configures wunder as an A2A agent.
type A2AServer struct {
	// Enabled serves /a2a, /a2a/ and /.well-known/agent-card.json.
	// Default true.
	Enabled bool `yaml:"enabled"`
	// UserID is the user an A2A caller acts as when it names none (the
	// X-Wunder-User header) and its credentials pin none. Default "a2a".
	UserID string `yaml:"user_id"`
	// ToolNames are offered to runs started over A2A (and listed as the
	// card's skills). Default [].
	ToolNames []string `yaml:"tool_names"`
	// Model runs A2A tasks; "" = llm.default.
	Model string `yaml:"model"`
	// ToolActivity sends each tool call as a working status message.
	// Default false.
	ToolActivity bool `yaml:"tool_activity"`
	// Name and Description of the agent card. Defaults "wunder" and "".
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// A2APush configures push notifications.
type A2APush struct {
	// Enabled stores push configs and delivers notifications. Default true.
	Enabled bool `yaml:"enabled"`
	// AllowPrivate lets webhooks target private, loopback and link-local
	// addresses (the SSRF guard's opt-out). Default false.
	AllowPrivate bool `yaml:"allow_private"`
	// MaxAttempts per notification, with exponential backoff. Default 3.
	MaxAttempts int `yaml:"max_attempts"`
	// TimeoutSeconds (timeout_s) bounds one delivery. Default 10.
	TimeoutSeconds int `yaml:"timeout_s"`
}

// Timeout is timeout_s as a duration.
func (p A2APush) Timeout() time.Duration { return seconds(p.TimeoutSeconds) }

func a2aDefaults() A2A {
	return A2A{
		TimeoutSeconds: 120,
		Services:       []A2AService{},
		Server:         A2AServer{Enabled: true, UserID: "a2a", ToolNames: []string{}, Name: "wunder"},
		Push:           A2APush{Enabled: true, MaxAttempts: 3, TimeoutSeconds: 10},
	}
}

func (c *Config) validateA2A(v checker) {
	a := c.A2A
	atLeast(v, "a2a.timeout_s", a.TimeoutSeconds, 1)
	atLeast(v, "a2a.push.max_attempts", a.Push.MaxAttempts, 1)
	atLeast(v, "a2a.push.timeout_s", a.Push.TimeoutSeconds, 1)
	if err := validUserIDString(a.Server.UserID); err != "" {
		v.fail("a2a.server.user_id", "%s", err)
	}
	v.eachWord("a2a.server.tool_names", a.Server.ToolNames)
	seen := map[string]bool{}
	for i, s := range a.Services {
		p := indexPath("a2a.services", i)
		switch {
		case !mcpNameRE.MatchString(s.Name):
			v.fail(joinPath(p, "name"), "must be 1-64 letters, digits, - or _, got %s", quoteShort(s.Name))
		case seen[s.Name]:
			v.fail(joinPath(p, "name"), "%q is used by another service", s.Name)
		case A2AReservedName(s.Name):
			v.fail(joinPath(p, "name"), "%q is reserved: /a2a/%s is a binding's path (names v<digits> are reserved)", s.Name, s.Name)
		}
		seen[s.Name] = true
		if s.Endpoint == "" {
			v.fail(joinPath(p, "endpoint"), "is required")
		} else {
			v.httpURL(joinPath(p, "endpoint"), s.Endpoint, true)
		}
		v.oneOf(joinPath(p, "version"), s.Version, []string{"", "1.0", "0.3"})
		atLeast(v, joinPath(p, "timeout_s"), s.TimeoutSeconds, 0)
		atLeast(v, joinPath(p, "max_depth"), s.MaxDepth, 1)
	}
}
