package skills

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxBodyBytes caps a SKILL.md body: it goes into the system prompt.
const MaxBodyBytes = 64 << 10

// maxBrought caps the tools and MCP servers one skill may declare.
const maxBrought = 32

// entryScripts are the entry script names, in order of preference.
var entryScripts = []string{"run.py", "skill.py", "main.py"}

// skillName is the rule for skill names: they are tool names too.
var skillName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// mcpServerName is the rule for the names of a skill's MCP servers (as for
// mcp.servers[].name).
var mcpServerName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Sources of skills ([Skill.Source]).
const (
	// SourcePath is a folder under skills.paths.
	SourcePath = "path"
	// SourceUpload is an uploaded package: an admin's (Owner "") or a
	// user's.
	SourceUpload = "upload"
)

// Skill is one parsed skill folder.
type Skill struct {
	Name        string
	Description string
	// Inputs is the entry script's input schema ({"type":"object"} when
	// the frontmatter gives none).
	Inputs json.RawMessage
	// Tools names tools of the caller's catalog the skill brings: they are
	// offered while the skill is loaded.
	Tools []string
	// MCPServers are the skill's own MCP servers, connected while it is
	// loaded (mcp.go).
	MCPServers []MCPServer
	// Entry is the entry script's file name, "" for instructions only.
	Entry string
	Body  string
	// Dir is the skill's folder, absolute, symlinks resolved; for an
	// uploaded skill, its unpacked copy in the cache.
	Dir string
	// Source is SourcePath or SourceUpload; Owner is the user who uploaded
	// it ("" for skills every user has).
	Source string
	Owner  string
	// Hash identifies an uploaded package's content ("" for SourcePath).
	Hash string
}

// Canonical is the skill's tool name: "owner@name" for a user's skill,
// the bare name for the others.
func (sk *Skill) Canonical() string {
	if sk.Owner != "" {
		return sk.Owner + "@" + sk.Name
	}
	return sk.Name
}

// MCPServer is one MCP server a skill declares, as an mcp.servers[] entry:
// Config holds the entry's keys (transport, url, command, ...) but name.
type MCPServer struct {
	Name   string
	Config map[string]any
	// Owner is the owner of the skill that declares the server ("" for
	// skills on disk and admins' uploads): a user's server is held to the
	// SSRF rules of user_tools by the Connector.
	Owner string
}

// frontmatter is SKILL.md's YAML header.
type frontmatter struct {
	Name        string         `yaml:"name"`
	Description string         `yaml:"description"`
	Inputs      map[string]any `yaml:"inputs"`
	Tools       []string       `yaml:"tools"`
	// MCPServers is a list of mcp.servers[] entries, or a mapping of
	// server names to entries (the form other skill systems use).
	MCPServers yaml.Node `yaml:"mcpServers"`
	Entry      string    `yaml:"entry"`
}

// splitFrontmatter cuts a document into its `---` delimited YAML header
// and the body after it.
func splitFrontmatter(doc []byte) (header, body []byte, err error) {
	doc = bytes.TrimPrefix(doc, []byte("\ufeff"))
	doc = bytes.ReplaceAll(doc, []byte("\r\n"), []byte("\n"))
	if !bytes.HasPrefix(doc, []byte("---\n")) {
		return nil, nil, errors.New("SKILL.md must start with a --- line opening the YAML frontmatter")
	}
	rest := doc[len("---\n"):]
	end := bytes.Index(rest, []byte("\n---"))
	if end < 0 {
		return nil, nil, errors.New("SKILL.md frontmatter has no closing --- line")
	}
	header = rest[:end+1]
	body = rest[end+len("\n---"):]
	if i := bytes.IndexByte(body, '\n'); i >= 0 {
		if strings.TrimSpace(string(body[:i])) != "" {
			return nil, nil, errors.New("SKILL.md frontmatter's closing --- must be alone on its line")
		}
		body = body[i+1:]
	} else {
		body = nil
	}
	return header, body, nil
}

// ParseSkill reads the skill in dir.
func ParseSkill(dir string) (*Skill, error) {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, err
	}
	doc, err := os.ReadFile(filepath.Join(abs, "SKILL.md"))
	if err != nil {
		return nil, err
	}
	sk, named, err := parseDoc(doc)
	if err != nil {
		return nil, err
	}
	sk.Dir, sk.Source = abs, SourcePath
	sk.Entry, err = findEntry(named, func(n string) bool {
		st, err := os.Lstat(filepath.Join(abs, n))
		return err == nil && st.Mode().IsRegular()
	})
	return sk, err
}

// parseDoc parses and checks a SKILL.md; named is the frontmatter's entry.
func parseDoc(doc []byte) (sk *Skill, named string, err error) {
	header, body, err := splitFrontmatter(doc)
	if err != nil {
		return nil, "", err
	}
	var fm frontmatter
	if err := yaml.Unmarshal(header, &fm); err != nil {
		return nil, "", fmt.Errorf("SKILL.md frontmatter: %w", err)
	}
	sk = &Skill{Name: fm.Name, Description: strings.Join(strings.Fields(fm.Description), " "),
		Tools: fm.Tools, Body: strings.TrimSpace(string(body))}
	if err := sk.validate(); err != nil {
		return nil, "", err
	}
	if sk.MCPServers, err = mcpServers(&fm.MCPServers); err != nil {
		return nil, "", err
	}
	sk.Inputs = json.RawMessage(`{"type":"object"}`)
	if fm.Inputs != nil {
		if t, _ := fm.Inputs["type"].(string); t != "object" {
			return nil, "", errors.New(`inputs must be a JSON Schema object ("type": "object")`)
		}
		if sk.Inputs, err = json.Marshal(fm.Inputs); err != nil {
			return nil, "", fmt.Errorf("inputs: %w", err)
		}
	}
	return sk, fm.Entry, nil
}

func (sk *Skill) validate() error {
	switch {
	case sk.Name == "":
		return errors.New("name is required")
	case !skillName.MatchString(sk.Name):
		return fmt.Errorf("name %q must be 1-64 of a-z, 0-9, '_' and '-', starting with a letter or digit", sk.Name)
	case sk.Name == LoadSkillTool:
		return fmt.Errorf("name %q is reserved", sk.Name)
	case sk.Description == "":
		return errors.New("description is required")
	case len(sk.Description) > 1024:
		return fmt.Errorf("description is %d bytes, over 1024", len(sk.Description))
	case sk.Body == "":
		return errors.New("the body (instructions after the frontmatter) is empty")
	case len(sk.Body) > MaxBodyBytes:
		return fmt.Errorf("the body is %d bytes, over the %d limit", len(sk.Body), MaxBodyBytes)
	case len(sk.Tools) > maxBrought:
		return fmt.Errorf("tools lists %d tools, over %d", len(sk.Tools), maxBrought)
	}
	for _, t := range sk.Tools {
		if strings.TrimSpace(t) != t || t == "" || len(t) > 256 {
			return fmt.Errorf("tools: %q is not a tool name", t)
		}
	}
	return nil
}

// mcpServers reads the frontmatter's mcpServers: a list of mcp.servers[]
// entries (each with a name) or a mapping of names to entries.
func mcpServers(n *yaml.Node) ([]MCPServer, error) {
	var out []MCPServer
	add := func(name string, cfg map[string]any) error {
		if !mcpServerName.MatchString(name) {
			return fmt.Errorf("mcpServers: server name %q must be 1-64 letters, digits, '-' or '_'", name)
		}
		if slices.ContainsFunc(out, func(s MCPServer) bool { return s.Name == name }) {
			return fmt.Errorf("mcpServers: server %q is declared twice", name)
		}
		delete(cfg, "name")
		out = append(out, MCPServer{Name: name, Config: cfg})
		return nil
	}
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.SequenceNode:
		var list []map[string]any
		if err := n.Decode(&list); err != nil {
			return nil, fmt.Errorf("mcpServers: each entry must be a mapping like mcp.servers[]: %w", err)
		}
		for i, e := range list {
			name, _ := e["name"].(string)
			if name == "" {
				return nil, fmt.Errorf("mcpServers[%d]: name is required", i)
			}
			if err := add(name, e); err != nil {
				return nil, err
			}
		}
	case yaml.MappingNode:
		var m map[string]map[string]any
		if err := n.Decode(&m); err != nil {
			return nil, fmt.Errorf("mcpServers: each server must be a mapping like mcp.servers[]: %w", err)
		}
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			cfg := m[k]
			if cfg == nil {
				cfg = map[string]any{}
			}
			if err := add(k, cfg); err != nil {
				return nil, err
			}
		}
	default:
		return nil, errors.New("mcpServers must be a list of mcp.servers[] entries or a mapping of names to entries")
	}
	if len(out) > maxBrought {
		return nil, fmt.Errorf("mcpServers declares %d servers, over %d", len(out), maxBrought)
	}
	return out, nil
}

// findEntry picks the entry script: the frontmatter's, else the first of
// entryScripts present (exists reports a regular file of the skill's
// folder); "" when none is.
func findEntry(named string, exists func(name string) bool) (string, error) {
	if named != "" {
		if filepath.Base(named) != named || !strings.HasSuffix(named, ".py") {
			return "", fmt.Errorf("entry %q must be a .py file in the skill's folder", named)
		}
		if !exists(named) {
			return "", fmt.Errorf("entry %q is not a regular file in the skill's folder", named)
		}
		return named, nil
	}
	for _, n := range entryScripts {
		if exists(n) {
			return n, nil
		}
	}
	return "", nil
}
