package config

import (
	"bytes"
	"reflect"
	"time"
)

// UserTools configures users' own tool configurations (the
// /wunder/user_tools/* routes, adapters/usertools): their MCP servers, what
// they share with other users and their extra prompt. See
// docs/tools.md#user-tools-and-shared-tools.
type UserTools struct {
	// AllowStdio lets users configure stdio MCP servers, which start a
	// command of their choosing on the server. Default false: HTTP(S)
	// transports only (sse, streamable-http).
	AllowStdio bool `yaml:"allow_stdio"`
	// AllowPrivateURLs lets users' MCP servers be on private, loopback and
	// link-local addresses (the SSRF guard's opt-out, as
	// a2a.push.allow_private). Default false.
	AllowPrivateURLs bool `yaml:"allow_private_urls"`
	// MaxServers caps the MCP servers of one user. Default 10.
	MaxServers int `yaml:"max_servers"`
	// MaxExtraPromptChars caps a user's extra prompt, in characters.
	// Default 4000.
	MaxExtraPromptChars int `yaml:"max_extra_prompt_chars"`
	// DiscoveryTimeoutSeconds (discovery_timeout_s) bounds how long a
	// catalog listing waits for the first tools/list of a user's server; a
	// server slower than that is left out of that listing. Default 5.
	DiscoveryTimeoutSeconds int `yaml:"discovery_timeout_s"`
	// IdleTTLSeconds (idle_ttl_s): a connection to a user's server that no
	// listing or call used for this long is closed. Default 600.
	IdleTTLSeconds int `yaml:"idle_ttl_s"`
}

func userToolsDefaults() UserTools {
	return UserTools{MaxServers: 10, MaxExtraPromptChars: 4000, DiscoveryTimeoutSeconds: 5, IdleTTLSeconds: 600}
}

// DiscoveryTimeout is discovery_timeout_s as a duration.
func (u UserTools) DiscoveryTimeout() time.Duration { return seconds(u.DiscoveryTimeoutSeconds) }

// IdleTTL is idle_ttl_s as a duration.
func (u UserTools) IdleTTL() time.Duration { return seconds(u.IdleTTLSeconds) }

func (c *Config) validateUserTools(v checker) {
	u := c.UserTools
	atLeast(v, "user_tools.max_servers", u.MaxServers, 0)
	atLeast(v, "user_tools.max_extra_prompt_chars", u.MaxExtraPromptChars, 0)
	atLeast(v, "user_tools.discovery_timeout_s", u.DiscoveryTimeoutSeconds, 1)
	atLeast(v, "user_tools.idle_ttl_s", u.IdleTTLSeconds, 1)
}

// ParseMCPServer reads one MCP server as an mcp.servers entry takes it,
// from a JSON object (a user's server, sent to /wunder/user_tools/mcp):
// the entry's defaults, unknown keys and values of the wrong type refused,
// then the entry's checks (name, transport, url or command, timeout_s,
// allow_tools). Unlike a configuration file, ${VAR} is not expanded: the
// text is someone else's, and the server's environment is not theirs to
// read. The error lists every problem as [FieldError]s whose paths are the
// entry's keys ("url", "headers"); see [Problems].
func ParseMCPServer(data []byte) (MCPServer, error) {
	var s MCPServer
	s.applyDefaults()
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return s, &FieldError{Msg: "an MCP server must be a JSON object"}
	}
	l := newLoader(func(string) (string, bool) { return "", false })
	tree, err := l.parse("", data)
	if err != nil {
		return s, err
	}
	l.decode(tree, reflect.ValueOf(&s).Elem(), "")
	if err := l.probs.err(); err != nil {
		return s, err
	}
	var p problems
	s.validate(checker{c: &Config{}, p: &p}, "")
	return s, p.err()
}
