// Package skills is the skills tool source: folders with a SKILL.md
// (YAML frontmatter and Markdown instructions) found under skills.paths.
//
// Skills load lazily. The system prompt lists each offered skill's name and
// one-line description; the load_skill tool puts a skill's body into the
// system prompt from the next model call on, for skills.retention_turns
// turns of the session. Which skills are loaded is derived from the
// session's history (the load_skill calls in it, via
// orchestrator.PromptContributor), so it survives a restart without a
// table of its own. A skill with an entry script (run.py, skill.py or
// main.py defining run(payload)) is also a tool named after the skill,
// offered while the skill is loaded, run in the sandbox with the skill's
// directory read-only at /skill and the user's workspace read-write.
package skills

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxBodyBytes caps a SKILL.md body: it goes into the system prompt.
const MaxBodyBytes = 64 << 10

// entryScripts are the entry script names, in order of preference.
var entryScripts = []string{"run.py", "skill.py", "main.py"}

// skillName is the rule for skill names: they are tool names too.
var skillName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Skill is one parsed skill folder.
type Skill struct {
	Name        string
	Description string
	// Inputs is the entry script's input schema ({"type":"object"} when
	// the frontmatter gives none).
	Inputs json.RawMessage
	// Tools and MCPServers are declared by the frontmatter; this increment
	// records them only.
	Tools      []string
	MCPServers map[string]any
	// Entry is the entry script's file name, "" for instructions only.
	Entry string
	Body  string
	// Dir is the skill's folder, absolute, symlinks resolved.
	Dir string
}

// frontmatter is SKILL.md's YAML header.
type frontmatter struct {
	Name        string         `yaml:"name"`
	Description string         `yaml:"description"`
	Inputs      map[string]any `yaml:"inputs"`
	Tools       []string       `yaml:"tools"`
	MCPServers  map[string]any `yaml:"mcpServers"`
	Entry       string         `yaml:"entry"`
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
	header, body, err := splitFrontmatter(doc)
	if err != nil {
		return nil, err
	}
	var fm frontmatter
	if err := yaml.Unmarshal(header, &fm); err != nil {
		return nil, fmt.Errorf("SKILL.md frontmatter: %w", err)
	}
	sk := &Skill{Name: fm.Name, Description: strings.Join(strings.Fields(fm.Description), " "),
		Tools: fm.Tools, MCPServers: fm.MCPServers, Body: strings.TrimSpace(string(body)), Dir: abs}
	if err := sk.validate(); err != nil {
		return nil, err
	}
	sk.Inputs = json.RawMessage(`{"type":"object"}`)
	if fm.Inputs != nil {
		if t, _ := fm.Inputs["type"].(string); t != "object" {
			return nil, errors.New(`inputs must be a JSON Schema object ("type": "object")`)
		}
		if sk.Inputs, err = json.Marshal(fm.Inputs); err != nil {
			return nil, fmt.Errorf("inputs: %w", err)
		}
	}
	sk.Entry, err = findEntry(abs, fm.Entry)
	return sk, err
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
	}
	return nil
}

// findEntry picks the entry script: the frontmatter's, else the first of
// entryScripts present; "" when none is.
func findEntry(dir, named string) (string, error) {
	if named != "" {
		if filepath.Base(named) != named || !strings.HasSuffix(named, ".py") {
			return "", fmt.Errorf("entry %q must be a .py file in the skill's folder", named)
		}
		if st, err := os.Lstat(filepath.Join(dir, named)); err != nil || !st.Mode().IsRegular() {
			return "", fmt.Errorf("entry %q is not a regular file in the skill's folder", named)
		}
		return named, nil
	}
	for _, n := range entryScripts {
		if st, err := os.Lstat(filepath.Join(dir, n)); err == nil && st.Mode().IsRegular() {
			return n, nil
		}
	}
	return "", nil
}
