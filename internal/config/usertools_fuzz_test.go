package config_test

import (
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

// FuzzParseMCPServer feeds a user's MCP server, as /wunder/user_tools/mcp
// receives it, to the parser: it never panics; a refusal is field errors
// with messages; an accepted server passes the entry's checks, and no
// ${VAR} in it was expanded from wunder's environment.
func FuzzParseMCPServer(f *testing.F) {
	for _, s := range []string{
		`{"name":"web","url":"https://mcp.example.com/mcp","headers":{"X-Key":"k"},"allow_tools":["a","b"],"timeout_s":"7"}`,
		`{"name":"x","transport":"stdio","command":"srv","args":["-v"],"env":{"A":"b"}}`,
		`{"name":"x","url":"https://h/${HOME}"}`,
		`{"name":"x","transport":"sse","url":"http://127.0.0.1:9/sse","enabled":false}`,
		`{"name":"x","url":"https://h","bogus":1}`,
		`{"name":"a b","url":"https://h"}`,
		`{"name": &a "x", "url": *a}`,
		`{"name":"x","url":"https://h","allow_tools":["a","a"]}`,
		`{}`, `[]`, `"x"`, ``, `{`,
	} {
		f.Add([]byte(s))
	}
	nameRE := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	transports := []string{config.MCPStdio, config.MCPSSE, config.MCPStreamableHTTP}
	// A variable a ${WUNDER_FUZZ_SECRET} in the input would name, were it
	// expanded.
	if err := os.Setenv("WUNDER_FUZZ_SECRET", "leaked-value"); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { os.Unsetenv("WUNDER_FUZZ_SECRET") })
	f.Add([]byte(`{"name":"x","url":"https://h/${WUNDER_FUZZ_SECRET}","headers":{"k":"${WUNDER_FUZZ_SECRET}"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := config.ParseMCPServer(data)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("an empty error message")
			}
			if len(config.Problems(err)) == 0 {
				t.Fatalf("an error that is not field errors: %v", err)
			}
			return
		}
		if !nameRE.MatchString(s.Name) || !slices.Contains(transports, s.Transport) {
			t.Fatalf("accepted name %q, transport %q", s.Name, s.Transport)
		}
		if s.Transport == config.MCPStdio {
			if s.Command == "" {
				t.Fatal("accepted stdio without a command")
			}
		} else if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Fatalf("accepted url %q", s.URL)
		}
		if s.TimeoutSeconds < 0 {
			t.Fatalf("accepted timeout_s %d", s.TimeoutSeconds)
		}
		for _, v := range append(append([]string{s.URL, s.Command, s.Cwd}, s.Args...), valuesOf(s.Headers, s.Env)...) {
			if strings.Contains(v, "leaked-value") && !strings.Contains(string(data), "leaked-value") {
				t.Fatalf("a value was expanded from the environment: %q", v)
			}
		}
	})
}

func valuesOf(ms ...map[string]string) []string {
	var out []string
	for _, m := range ms {
		for _, v := range m {
			out = append(out, v)
		}
	}
	return out
}
