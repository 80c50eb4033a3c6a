package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

// SetOverride writes a section so that Load reads back what was posted: a
// masked secret keeps the raw value the files had (a ${VAR} stays one), a
// literal $ stays literal, and the revision header moves.
func TestSetOverrideRoundTrip(t *testing.T) {
	t.Parallel()
	base := `
mcp:
  servers:
    - {name: fs, transport: stdio, command: fs-server, bearer_token: "${FS_TOKEN}"}
`
	opts := config.LoadOptions{ReadFile: files{basePath: base}.read, LookupEnv: env{"FS_TOKEN": "from-env"}.lookup}
	merged, err := config.MergedYAML(opts)
	if err != nil {
		t.Fatal(err)
	}
	var posted any
	_ = json.Unmarshal([]byte(`[
		{"name":"fs","transport":"stdio","command":"fs-server","bearer_token":"`+config.Mask+`"},
		{"name":"web","transport":"streamable-http","url":"http://127.0.0.1:9/mcp","bearer_token":"pa$$word"}
	]`), &posted)
	out, err := config.SetOverride(nil, "mcp.servers", posted, merged, 7)
	if err != nil {
		t.Fatal(err)
	}
	if config.OverrideRevision(out) != 7 {
		t.Errorf("revision of\n%s\n= %d, want 7", out, config.OverrideRevision(out))
	}
	if strings.Contains(string(out), config.Mask) || !strings.Contains(string(out), "${FS_TOKEN}") {
		t.Errorf("the mask was not replaced by the raw ${FS_TOKEN}:\n%s", out)
	}
	opts.Override = out
	c, err := config.Load(opts)
	if err != nil {
		t.Fatalf("Load with the written override: %v\n%s", err, out)
	}
	if len(c.MCP.Servers) != 2 || c.MCP.Servers[0].BearerToken != "from-env" || c.MCP.Servers[1].BearerToken != "pa$$word" {
		t.Errorf("servers = %+v", c.MCP.Servers)
	}
}

// WithSection validates like Load: each problem with its key path; a mask
// keeps the running value; the original does not change.
func TestWithSection(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, files{basePath: `
llm:
  models:
    gpt: {model: m, api_key: sk-secret}
`}, nil)
	var bad any
	_ = json.Unmarshal([]byte(`{"models":{"gpt":{"model":"m","provider":"nope","tool_call_mode":"shout"}}}`), &bad)
	_, err := c.WithSection("llm", bad)
	probs := config.Problems(err)
	var paths []string
	for _, p := range probs {
		paths = append(paths, p.Path)
	}
	joined := strings.Join(paths, " ")
	if !strings.Contains(joined, "llm.models.gpt.provider") || !strings.Contains(joined, "llm.models.gpt.tool_call_mode") {
		t.Errorf("problems at %v, want llm.models.gpt.provider and .tool_call_mode: %v", paths, err)
	}
	var good any
	_ = json.Unmarshal([]byte(`{"default":"gpt","models":{"gpt":{"model":"m2","api_key":"`+config.Mask+`"},"other":{"model":"x"}}}`), &good)
	next, err := c.WithSection("llm", good)
	if err != nil {
		t.Fatal(err)
	}
	if next.LLM.Models["gpt"].APIKey != "sk-secret" || next.LLM.Models["gpt"].Model != "m2" || next.LLM.Models["other"].Model != "x" {
		t.Errorf("next llm = %+v", next.LLM.Models)
	}
	if c.LLM.Models["gpt"].Model != "m" || len(c.LLM.Models) != 1 {
		t.Errorf("WithSection changed the original: %+v", c.LLM.Models)
	}
	var unknown any
	_ = json.Unmarshal([]byte(`{"modles":{}}`), &unknown)
	if _, err := c.WithSection("llm", unknown); err == nil || !strings.Contains(err.Error(), "modles") {
		t.Errorf("an unknown key: %v", err)
	}
}

func TestWriteOverrideReplacesAtomically(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "config", "wunder.override.yaml")
	if _, rev, err := config.ReadOverride(path); err != nil || rev != 0 {
		t.Fatalf("a missing override: rev %d, %v", rev, err)
	}
	for rev := int64(1); rev <= 3; rev++ {
		body, err := config.SetOverride(nil, "a2a.services", []any{}, nil, rev)
		if err != nil {
			t.Fatal(err)
		}
		if err := config.WriteOverride(path, body); err != nil {
			t.Fatal(err)
		}
		if _, got, err := config.ReadOverride(path); err != nil || got != rev {
			t.Fatalf("after writing revision %d: %d, %v", rev, got, err)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("the config directory holds %d entries, want only the override (no temporary files left)", len(entries))
	}
}
