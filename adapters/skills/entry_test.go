package skills_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/testutil/bwrap"

	"github.com/wunder/wunder/adapters/skills"
	"github.com/wunder/wunder/internal/sandbox"
	"github.com/wunder/wunder/orchestrator"
)

// needSandbox returns a working sandbox, or skips loudly (fails under CI).
func needSandbox(t *testing.T) *sandbox.Sandbox {
	bwrap.Need(t, "the skills' entry-script tests")
	sb := sandbox.New(nil)
	if err := sb.Check(); err != nil {
		t.Fatalf("bubblewrap is installed but the sandbox cannot run: %v", err)
	}
	return sb
}

// TestEntryScriptRunsInSandbox: data-report's run.py reads a CSV from the
// workspace (read-write at /workspace) while the skill's folder is at
// /skill, read-only.
func TestEntryScriptRunsInSandbox(t *testing.T) {
	sb := needSandbox(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("SKIPPED: no python3")
	}
	// Running as root, the sandbox user must reach the workspace and
	// the skill (t.TempDir's parent is 0700).
	ws, root := t.TempDir(), t.TempDir()
	for _, d := range []string{filepath.Dir(ws), ws, root} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	csv := "city,temp\nOslo,3\nLima,19\nOslo,5\n"
	if err := os.WriteFile(filepath.Join(ws, "w.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	writeSkill(t, root, "probe", "---\nname: probe\ndescription: probes\n---\nProbe.\n", map[string]string{
		"run.py": "import os\ndef run(p):\n    try:\n        open('/skill/x', 'w')\n        ro = False\n    except OSError:\n        ro = True\n    return {'skill_ro': ro, 'cwd': os.getcwd()}\n",
	})
	s := skills.New(&skills.Options{Paths: []string{repoSkills, root}, Sandbox: sb, Workspace: func(string) (string, error) { return ws, nil }})
	call := func(name, args string) *orchestrator.ToolResult {
		tools, _ := s.Tools(t.Context(), "alice")
		for _, tl := range tools {
			if tl.Spec().Name == name {
				res, err := tl.Call(t.Context(), &orchestrator.ToolInvocation{UserID: "alice", Arguments: json.RawMessage(args),
					Output: func(string, string) {}, Emit: func(string, any) {}})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
		}
		t.Fatalf("no tool %s", name)
		return nil
	}
	res := call("data-report", `{"path":"w.csv"}`)
	if res.IsError {
		t.Fatalf("data-report: %s", res.Content)
	}
	var rep struct {
		Rows    int `json:"rows"`
		Columns map[string]struct {
			Type string  `json:"type"`
			Mean float64 `json:"mean"`
		} `json:"columns"`
	}
	if err := json.Unmarshal([]byte(res.Content), &rep); err != nil || rep.Rows != 3 || rep.Columns["temp"].Mean != 9 || rep.Columns["city"].Type != "text" {
		t.Fatalf("report %s (%v)", res.Content, err)
	}
	probe := call("probe", `{}`)
	if probe.IsError || !strings.Contains(probe.Content, `"skill_ro": true`) || !strings.Contains(probe.Content, `"/workspace"`) {
		t.Fatalf("probe: %+v", probe)
	}
	if res := call("data-report", `{"path":"../etc/passwd"}`); !res.IsError {
		t.Errorf("escape allowed: %s", res.Content)
	}
}
