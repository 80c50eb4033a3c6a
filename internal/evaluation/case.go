package evaluation

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// CaseSet is one case file: a named list of cases.
type CaseSet struct {
	// Name is the set's name; default the file's base name.
	Name        string `yaml:"case_set" json:"case_set"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	Cases       []Case `yaml:"cases" json:"cases"`
}

// Case is one task and how to grade it.
type Case struct {
	ID       string `yaml:"id" json:"id"`
	Question string `yaml:"question" json:"question"`
	// Tools are offered to the model (tool_names of the run).
	Tools []string `yaml:"tools,omitempty" json:"tools,omitempty"`
	// Requires lists what must be configured; a case missing any is
	// skipped with the reason.
	Requires Requires `yaml:"requires,omitempty" json:"requires,omitempty"`
	// Files are placed in the case's workspace before the run.
	Files []File `yaml:"files,omitempty" json:"files,omitempty"`
	// Checks grade the outcome; the case passes when all pass.
	Checks []Check `yaml:"checks" json:"checks"`
	// Set is the case set the case comes from.
	Set string `yaml:"-" json:"case_set"`
}

// Requires names prerequisites besides Case.Tools (which are required
// too).
type Requires struct {
	Tools      []string `yaml:"tools,omitempty" json:"tools,omitempty"`
	MCPServers []string `yaml:"mcp_servers,omitempty" json:"mcp_servers,omitempty"`
	Skills     []string `yaml:"skills,omitempty" json:"skills,omitempty"`
	Knowledge  []string `yaml:"knowledge,omitempty" json:"knowledge,omitempty"`
}

// File is a setup file of a case.
type File struct {
	Path    string `yaml:"path" json:"path"`
	Content string `yaml:"content" json:"content"`
}

// Check is one grading rule. Type says which fields apply:
//
//   - contains: the answer (or the file at Path) contains Value
//     (IgnoreCase to compare folded);
//   - regex: the answer (or the file at Path) matches the pattern Value;
//   - file_exists: the file at Path exists (and, with Contains, holds it);
//   - json_path: the answer (or the file at Path) is JSON and the value at
//     Query ("$.a.b[0]") exists, or equals Equals when set;
//   - judge: a model grades the answer against Rubric (PASS or FAIL).
type Check struct {
	Type       string `yaml:"type" json:"type"`
	Value      string `yaml:"value,omitempty" json:"value,omitempty"`
	Path       string `yaml:"path,omitempty" json:"path,omitempty"`
	Contains   string `yaml:"contains,omitempty" json:"contains,omitempty"`
	Query      string `yaml:"query,omitempty" json:"query,omitempty"`
	Equals     any    `yaml:"equals,omitempty" json:"equals,omitempty"`
	Rubric     string `yaml:"rubric,omitempty" json:"rubric,omitempty"`
	IgnoreCase bool   `yaml:"ignore_case,omitempty" json:"ignore_case,omitempty"`
}

var caseIDRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Load reads every *.yaml and *.yml file of fsys's top directory as a case
// set, sorted by name. Case ids are unique across sets.
func Load(fsys fs.FS) ([]CaseSet, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("evaluation cases: %w", err)
	}
	var sets []CaseSet
	seen := map[string]string{}
	for _, e := range entries {
		ext := path.Ext(e.Name())
		if e.IsDir() || (ext != ".yaml" && ext != ".yml") {
			continue
		}
		b, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, fmt.Errorf("evaluation cases: %w", err)
		}
		set, err := Parse(b, strings.TrimSuffix(e.Name(), ext))
		if err != nil {
			return nil, fmt.Errorf("evaluation cases: %s: %w", e.Name(), err)
		}
		for _, c := range set.Cases {
			if other, dup := seen[c.ID]; dup {
				return nil, fmt.Errorf("evaluation cases: %s: case %q is also in %s", e.Name(), c.ID, other)
			}
			seen[c.ID] = e.Name()
		}
		sets = append(sets, set)
	}
	slices.SortFunc(sets, func(a, b CaseSet) int { return strings.Compare(a.Name, b.Name) })
	return sets, nil
}

// Parse decodes and checks one case file (unknown keys are errors).
func Parse(b []byte, defaultName string) (CaseSet, error) {
	var set CaseSet
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&set); err != nil {
		return CaseSet{}, err
	}
	if set.Name == "" {
		set.Name = defaultName
	}
	if len(set.Cases) == 0 {
		return CaseSet{}, fmt.Errorf("cases: none")
	}
	for i := range set.Cases {
		c := &set.Cases[i]
		c.Set = set.Name
		if err := c.validate(); err != nil {
			return CaseSet{}, fmt.Errorf("cases[%d] (%s): %w", i, c.ID, err)
		}
	}
	return set, nil
}

func (c *Case) validate() error {
	switch {
	case !caseIDRE.MatchString(c.ID):
		return fmt.Errorf("id: must match %s", caseIDRE)
	case strings.TrimSpace(c.Question) == "":
		return fmt.Errorf("question: required")
	case len(c.Checks) == 0:
		return fmt.Errorf("checks: at least one")
	}
	for i, f := range c.Files {
		if !validRelPath(f.Path) {
			return fmt.Errorf("files[%d].path: must be a relative path inside the workspace, got %q", i, f.Path)
		}
	}
	for i, ch := range c.Checks {
		if err := ch.validate(); err != nil {
			return fmt.Errorf("checks[%d]: %w", i, err)
		}
	}
	return nil
}

func (ch Check) validate() error {
	if ch.Path != "" && !validRelPath(ch.Path) {
		return fmt.Errorf("path: must be a relative path inside the workspace, got %q", ch.Path)
	}
	switch ch.Type {
	case "contains":
		if ch.Value == "" {
			return fmt.Errorf("value: required")
		}
	case "regex":
		if _, err := regexp.Compile(ch.Value); err != nil || ch.Value == "" {
			return fmt.Errorf("value: a regular expression is required (%v)", err)
		}
	case "file_exists":
		if ch.Path == "" {
			return fmt.Errorf("path: required")
		}
	case "json_path":
		if _, err := parsePath(ch.Query); err != nil {
			return fmt.Errorf("query: %w", err)
		}
	case "judge":
		if strings.TrimSpace(ch.Rubric) == "" {
			return fmt.Errorf("rubric: required")
		}
	default:
		return fmt.Errorf("type: must be one of contains, regex, file_exists, json_path, judge; got %q", ch.Type)
	}
	return nil
}

func validRelPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, `\`) {
		return false
	}
	return path.Clean(p) == p && p != "." && !strings.HasPrefix(p, "../") && p != ".."
}
