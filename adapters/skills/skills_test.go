package skills_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/adapters/skills"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// repoSkills is the repository's skills/ folder.
var repoSkills = filepath.Join("..", "..", "skills")

func writeSkill(t testing.TB, root, dir, doc string, files map[string]string) {
	t.Helper()
	d := filepath.Join(root, dir)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	files["SKILL.md"] = doc
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(d, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestToolsetContract(t *testing.T) {
	orchestratortest.RunToolsetTests(t, func(t *testing.T) orchestrator.Toolset {
		return skills.New(&skills.Options{Paths: []string{repoSkills}, Workspace: func(string) (string, error) { return t.TempDir(), nil }})
	}, orchestratortest.WithMinTools(4))
}

func TestExampleSkillsParse(t *testing.T) {
	s := skills.New(&skills.Options{Paths: []string{repoSkills}})
	var got []string
	for _, sk := range s.Skills() {
		got = append(got, sk.Name+"/"+sk.Entry)
	}
	want := "chinese-writing/ code-review/ data-report/run.py"
	if strings.Join(got, " ") != want {
		t.Fatalf("skills = %v, want %s", got, want)
	}
}

// TestBadSkillsAreSkippedWithAReason: each broken skill is logged with why,
// and the good one next to them still loads.
func TestBadSkillsAreSkippedWithAReason(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "good", "---\nname: good\ndescription: fine\n---\nDo it well.\n", map[string]string{})
	cases := map[string]string{
		"nofront":  "# just markdown\n",
		"unclosed": "---\nname: x\ndescription: y\n",
		"badyaml":  "---\nname: [\n---\nbody\n",
		"badname":  "---\nname: Bad Name\ndescription: y\n---\nbody\n",
		"nodesc":   "---\nname: nodesc\n---\nbody\n",
		"nobody":   "---\nname: nobody\ndescription: y\n---\n",
		"big":      "---\nname: big\ndescription: y\n---\n" + strings.Repeat("x", skills.MaxBodyBytes+1),
		"inputs":   "---\nname: inputs\ndescription: y\ninputs:\n  type: string\n---\nbody\n",
		"reserved": "---\nname: load_skill\ndescription: y\n---\nbody\n",
		"dup":      "---\nname: good\ndescription: again\n---\nbody\n",
	}
	for dir, doc := range cases {
		writeSkill(t, root, dir, doc, map[string]string{})
	}
	var logs bytes.Buffer
	s := skills.New(&skills.Options{Paths: []string{root, filepath.Join(root, "missing")}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if got := s.Skills(); len(got) != 1 || got[0].Name != "good" {
		t.Fatalf("skills = %+v, want only good", got)
	}
	for _, want := range []string{"must start with a ---", "no closing ---", "frontmatter", "must be 1-64", "description is required",
		"body", "over the 65536 limit", "inputs must be a JSON Schema object", "is reserved", "name is taken"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

func TestEnabledFilters(t *testing.T) {
	s := skills.New(&skills.Options{Paths: []string{repoSkills}, Enabled: []string{"code-review"}})
	if got := s.Skills(); len(got) != 1 || got[0].Name != "code-review" {
		t.Fatalf("skills = %+v", got)
	}
}
