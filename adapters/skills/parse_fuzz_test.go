package skills

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParseDoc feeds SKILL.md documents (uploaded by users, so untrusted)
// to the parser: it never panics, and what it accepts holds every rule
// the rest of the package relies on.
func FuzzParseDoc(f *testing.F) {
	for _, seed := range []string{
		"---\nname: s\ndescription: d\n---\nbody\n",
		"\ufeff---\r\nname: s\r\ndescription: d\r\n---\r\nbody\r\n",
		"---\nname: s\ndescription: d\ninputs: {type: object, properties: {q: {type: string}}}\ntools: [a, b]\nentry: run.py\n---\nb\n",
		"---\nname: s\ndescription: d\nmcpServers:\n  - {name: a, url: 'http://a'}\n---\nb\n",
		"---\nname: s\ndescription: d\nmcpServers:\n  a: {command: x}\n  b:\n---\nb\n",
		"---\nname: s\ndescription: d\nmcpServers: [1, 2]\n---\nb\n",
		"---\nname: &a s\ndescription: *a\n---\nb\n",
		"---\n---\n",
		"---\nname: s\n---",
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		sk, _, err := parseDoc(doc)
		if err != nil {
			if sk != nil {
				t.Fatalf("an error with a skill: %v", err)
			}
			return
		}
		if !skillName.MatchString(sk.Name) || sk.Name == LoadSkillTool {
			t.Fatalf("accepted name %q", sk.Name)
		}
		if sk.Description == "" || len(sk.Description) > 1024 || strings.Join(strings.Fields(sk.Description), " ") != sk.Description {
			t.Fatalf("accepted description %q", sk.Description)
		}
		if sk.Body == "" || len(sk.Body) > MaxBodyBytes || strings.TrimSpace(sk.Body) != sk.Body {
			t.Fatalf("accepted body of %d bytes", len(sk.Body))
		}
		if len(sk.Tools) > maxBrought || len(sk.MCPServers) > maxBrought {
			t.Fatalf("accepted %d tools and %d servers", len(sk.Tools), len(sk.MCPServers))
		}
		seen := map[string]bool{}
		for _, s := range sk.MCPServers {
			if !mcpServerName.MatchString(s.Name) || seen[s.Name] {
				t.Fatalf("accepted server name %q (twice: %v)", s.Name, seen[s.Name])
			}
			seen[s.Name] = true
			if _, has := s.Config["name"]; has {
				t.Fatalf("server %q keeps its name in its config", s.Name)
			}
		}
		var schema map[string]any
		if err := json.Unmarshal(sk.Inputs, &schema); err != nil || schema["type"] != "object" {
			t.Fatalf("accepted inputs %s (%v)", sk.Inputs, err)
		}
	})
}
