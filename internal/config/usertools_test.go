package config_test

import (
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

func TestParseMCPServer(t *testing.T) {
	t.Parallel()
	s, err := config.ParseMCPServer([]byte(`{"name":"web","url":"https://mcp.example.com/mcp","headers":{"X-Key":"k"},"allow_tools":["a","b"],"timeout_s":"7"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "web" || s.Transport != config.MCPStreamableHTTP || !s.Enabled || s.Headers["X-Key"] != "k" || len(s.AllowTools) != 2 || s.TimeoutSeconds != 7 {
		t.Errorf("parsed %+v", s)
	}
	// ${VAR} is not expanded in a user's server.
	s, err = config.ParseMCPServer([]byte(`{"name":"x","url":"https://h/${HOME}"}`))
	if err != nil || s.URL != "https://h/${HOME}" {
		t.Errorf("expansion: %q, %v", s.URL, err)
	}
	for in, want := range map[string]string{
		`[]`:  "must be a JSON object",
		`"x"`: "must be a JSON object",
		`{"name":"x","url":"https://h","bogus":1}`:                    "bogus: unknown key",
		`{"name":"x","url":"https://h","timeout_s":"soon"}`:           "timeout_s: expected an integer",
		`{"name":"a b","url":"https://h"}`:                            "name: must be 1-64",
		`{"name":"x","transport":"carrier-pigeon","url":"https://h"}`: "transport: must be one of",
		`{"name":"x"}`:                                           "url: is required",
		`{"name":"x","url":"ftp://h"}`:                           "url: must be an absolute",
		`{"name":"x","transport":"stdio"}`:                       "command: is required",
		`{"name":"x","url":"https://h","allow_tools":["a","a"]}`: "listed twice",
	} {
		_, err := config.ParseMCPServer([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseMCPServer(%s) = %v, want %q", in, err, want)
		}
	}
}

func TestUserToolsValidated(t *testing.T) {
	t.Parallel()
	c := config.Default()
	c.UserTools.MaxServers = -1
	c.UserTools.DiscoveryTimeoutSeconds = 0
	err := c.Validate()
	for _, want := range []string{"user_tools.max_servers: must be at least 0", "user_tools.discovery_timeout_s: must be at least 1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want %q", err, want)
		}
	}
}
