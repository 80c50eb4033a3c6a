package config_test

import (
	"os"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

// TestExampleA2AServiceIsValid uncomments the example a2a.services entry
// of config/wunder.example.yaml and loads it: the example must be a valid
// service with the defaults its comments claim.
func TestExampleA2AServiceIsValid(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var out []string
	inA2A, inExample := false, false
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "a2a:"):
			inA2A = true
		case inA2A && l != "" && l[0] != ' ':
			inA2A = false
		}
		if inA2A && strings.HasPrefix(l, "  services: []") {
			continue // replaced by the example below
		}
		if inA2A && strings.HasPrefix(l, "  # services:") {
			inExample = true
			out = append(out, "  services:")
			continue
		}
		if inExample {
			if rest, ok := strings.CutPrefix(l, "  #"); ok {
				out = append(out, "  "+rest[1:])
				continue
			}
			inExample = false
		}
		out = append(out, l)
	}
	text := strings.Join(out, "\n")
	if !strings.Contains(text, "  services:\n    - name: research") {
		t.Fatalf("no commented services example found in %s", examplePath)
	}
	c, err := config.Load(config.LoadOptions{Path: examplePath, LookupEnv: env{"RESEARCH_TOKEN": "tok"}.lookup,
		ReadFile: files{examplePath: text}.read})
	if err != nil {
		t.Fatalf("the uncommented example does not load:\n%v", err)
	}
	if len(c.A2A.Services) != 1 {
		t.Fatalf("services = %+v", c.A2A.Services)
	}
	s := c.A2A.Services[0]
	if s.Name != "research" || s.Endpoint != "https://research.example.com" || s.BearerToken != "tok" ||
		!s.Enabled || s.MaxDepth != 3 || s.Timeout(c.A2A) != c.A2A.Timeout() {
		t.Fatalf("service = %+v", s)
	}
}
