package skills_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wunder/wunder/adapters/skills"
)

// parse writes doc (and files) as a skill folder and parses it.
func parse(t *testing.T, doc string, files map[string]string) (*skills.Skill, error) {
	t.Helper()
	root := t.TempDir()
	if files == nil {
		files = map[string]string{}
	}
	writeSkill(t, root, "s", doc, files)
	return skills.ParseSkill(filepath.Join(root, "s"))
}

// SKILL.md shapes that parse, and what they mean.
func TestSkillDocAccepted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, doc string
		files     map[string]string
		check     func(t *testing.T, sk *skills.Skill)
	}{
		{"a byte order mark and CRLF lines", "\ufeff---\r\nname: crlf\r\ndescription: d\r\n---\r\nline one\r\nline two\r\n", nil,
			func(t *testing.T, sk *skills.Skill) {
				if sk.Name != "crlf" || sk.Body != "line one\nline two" {
					t.Errorf("name %q body %q", sk.Name, sk.Body)
				}
			}},
		{"a folded description and a trimmed body", "---\nname: fold\ndescription: \"one\\n  two\\t  three \"\n---\n\n\n  body  \n\n", nil,
			func(t *testing.T, sk *skills.Skill) {
				if sk.Description != "one two three" || sk.Body != "body" {
					t.Errorf("description %q body %q", sk.Description, sk.Body)
				}
			}},
		{"no inputs is any object", "---\nname: noin\ndescription: d\n---\nb\n", nil,
			func(t *testing.T, sk *skills.Skill) {
				if string(sk.Inputs) != `{"type":"object"}` || sk.Entry != "" {
					t.Errorf("inputs %s entry %q", sk.Inputs, sk.Entry)
				}
			}},
		{"inputs kept as a schema", "---\nname: in\ndescription: d\ninputs:\n  type: object\n  properties: {q: {type: string}}\n  required: [q]\n---\nb\n", nil,
			func(t *testing.T, sk *skills.Skill) {
				var schema map[string]any
				if err := json.Unmarshal(sk.Inputs, &schema); err != nil || schema["type"] != "object" || schema["required"] == nil {
					t.Errorf("inputs %s: %v", sk.Inputs, err)
				}
			}},
		{"the entry scripts' order of preference", "---\nname: pick\ndescription: d\n---\nb\n",
			map[string]string{"main.py": "", "skill.py": ""},
			func(t *testing.T, sk *skills.Skill) {
				if sk.Entry != "skill.py" {
					t.Errorf("entry %q; want skill.py before main.py", sk.Entry)
				}
			}},
		{"a named entry beats the defaults", "---\nname: named\ndescription: d\nentry: tool.py\n---\nb\n",
			map[string]string{"run.py": "", "tool.py": ""},
			func(t *testing.T, sk *skills.Skill) {
				if sk.Entry != "tool.py" {
					t.Errorf("entry %q; want tool.py", sk.Entry)
				}
			}},
		{"mcpServers as a list", "---\nname: lst\ndescription: d\nmcpServers:\n  - {name: b, url: 'http://b'}\n  - {name: a, command: srv}\n---\nb\n", nil,
			func(t *testing.T, sk *skills.Skill) {
				if len(sk.MCPServers) != 2 || sk.MCPServers[0].Name != "b" || sk.MCPServers[1].Name != "a" {
					t.Fatalf("servers %+v; want b, a in the list's order", sk.MCPServers)
				}
				if _, has := sk.MCPServers[0].Config["name"]; has || sk.MCPServers[0].Config["url"] != "http://b" {
					t.Errorf("config %v; want url without name", sk.MCPServers[0].Config)
				}
			}},
		{"mcpServers as a mapping, sorted by name", "---\nname: mp\ndescription: d\nmcpServers:\n  zeta: {command: z}\n  alpha:\n---\nb\n", nil,
			func(t *testing.T, sk *skills.Skill) {
				var names []string
				for _, s := range sk.MCPServers {
					names = append(names, s.Name)
				}
				if !slices.Equal(names, []string{"alpha", "zeta"}) || sk.MCPServers[0].Config == nil {
					t.Errorf("servers %+v; want alpha (an empty config), zeta", sk.MCPServers)
				}
			}},
		{"tools brought", "---\nname: tl\ndescription: d\ntools: [read_file, 'fs@list']\n---\nb\n", nil,
			func(t *testing.T, sk *skills.Skill) {
				if !slices.Equal(sk.Tools, []string{"read_file", "fs@list"}) {
					t.Errorf("tools %q", sk.Tools)
				}
			}},
		{"the longest name and description", "---\nname: " + strings.Repeat("a", 64) + "\ndescription: " + strings.Repeat("d", 1024) + "\n---\n" + strings.Repeat("b", skills.MaxBodyBytes), nil,
			func(t *testing.T, sk *skills.Skill) {
				if len(sk.Name) != 64 || len(sk.Description) != 1024 || len(sk.Body) != skills.MaxBodyBytes {
					t.Errorf("lengths %d %d %d", len(sk.Name), len(sk.Description), len(sk.Body))
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sk, err := parse(t, tc.doc, tc.files)
			if err != nil {
				t.Fatalf("ParseSkill: %v", err)
			}
			if sk.Source != skills.SourcePath || !filepath.IsAbs(sk.Dir) || sk.Canonical() != sk.Name {
				t.Errorf("source %q dir %q canonical %q", sk.Source, sk.Dir, sk.Canonical())
			}
			tc.check(t, sk)
		})
	}
}

// SKILL.md shapes that are refused, each with an error that says what to
// fix.
func TestSkillDocRefused(t *testing.T) {
	t.Parallel()
	const head = "---\nname: s\ndescription: d\n"
	many := func(n int, f string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, f, i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, doc string
		files     map[string]string
		want      string
	}{
		{"closing line with text", "---\nname: s\ndescription: d\n--- trailing\nbody\n", nil, "closing --- must be alone on its line"},
		{"a name with capitals", "---\nname: Skill\ndescription: d\n---\nb\n", nil, `name "Skill" must be 1-64 of a-z`},
		{"a name too long", "---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\nb\n", nil, "must be 1-64"},
		{"a name starting with a dash", "---\nname: -x\ndescription: d\n---\nb\n", nil, "must be 1-64"},
		{"no name", "---\ndescription: d\n---\nb\n", nil, "name is required"},
		{"a description too long", "---\nname: s\ndescription: " + strings.Repeat("d", 1025) + "\n---\nb\n", nil, "description is 1025 bytes, over 1024"},
		{"a blank body", head + "---\n   \n\t\n", nil, "the body (instructions after the frontmatter) is empty"},
		{"too many tools", head + "tools: [" + strings.TrimSuffix(many(33, "t%d,"), ",") + "]\n---\nb\n", nil, "tools lists 33 tools, over 32"},
		{"a tool name with spaces", head + "tools: [' read_file']\n---\nb\n", nil, `tools: " read_file" is not a tool name`},
		{"an empty tool name", head + "tools: ['']\n---\nb\n", nil, `tools: "" is not a tool name`},
		{"inputs not an object", head + "inputs: {type: array}\n---\nb\n", nil, "inputs must be a JSON Schema object"},
		{"mcpServers a scalar", head + "mcpServers: fs\n---\nb\n", nil, "mcpServers must be a list"},
		{"a listed server without a name", head + "mcpServers:\n  - {url: 'http://x'}\n---\nb\n", nil, "mcpServers[0]: name is required"},
		{"a listed server not a mapping", head + "mcpServers:\n  - fs\n---\nb\n", nil, "each entry must be a mapping"},
		{"a server declared twice", head + "mcpServers:\n  - {name: fs}\n  - {name: fs}\n---\nb\n", nil, `server "fs" is declared twice`},
		{"a server name with a dot", head + "mcpServers:\n  fs.v2: {command: x}\n---\nb\n", nil, `server name "fs.v2" must be 1-64`},
		{"a mapped server not a mapping", head + "mcpServers:\n  fs: [x]\n---\nb\n", nil, "each server must be a mapping"},
		{"too many servers", head + "mcpServers:\n" + many(33, "  s%d: {command: x}\n") + "---\nb\n", nil, "mcpServers declares 33 servers, over 32"},
		{"an entry that is not Python", head + "entry: run.sh\n---\nb\n", map[string]string{"run.sh": ""}, `entry "run.sh" must be a .py file`},
		{"an entry in a subfolder", head + "entry: lib/run.py\n---\nb\n", nil, `entry "lib/run.py" must be a .py file in the skill's folder`},
		{"an entry that is missing", head + "entry: gone.py\n---\nb\n", nil, `entry "gone.py" is not a regular file`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sk, err := parse(t, tc.doc, tc.files)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseSkill = %+v, %v; want an error containing %q", sk, err, tc.want)
			}
		})
	}
}

// An entry that is a symlink, even to a file in the folder, is not taken:
// the skill's code is the folder's own regular files.
func TestSkillEntryNotASymlink(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeSkill(t, root, "s", "---\nname: s\ndescription: d\nentry: tool.py\n---\nb\n", map[string]string{"real.py": ""})
	if err := os.Symlink("real.py", filepath.Join(root, "s", "tool.py")); err != nil {
		t.Fatal(err)
	}
	if _, err := skills.ParseSkill(filepath.Join(root, "s")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a symlinked entry: %v; want it refused", err)
	}
	// Without a named entry, a symlinked run.py is passed over too.
	writeSkill(t, root, "d", "---\nname: d\ndescription: d\n---\nb\n", map[string]string{"real.py": ""})
	if err := os.Symlink("real.py", filepath.Join(root, "d", "run.py")); err != nil {
		t.Fatal(err)
	}
	sk, err := skills.ParseSkill(filepath.Join(root, "d"))
	if err != nil || sk.Entry != "" {
		t.Errorf("a symlinked run.py: entry %q, %v; want none", sk.Entry, err)
	}
}
