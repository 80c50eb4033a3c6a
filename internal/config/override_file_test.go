package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/config"
)

// The override file lives where Load looks for it, and the admin API's
// write of it fails with a config: error, leaving the old file, when the
// place cannot be written.
func TestOverrideFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if got, want := config.OverridePath(dir), filepath.Join(dir, "config", "wunder.override.yaml"); got != want {
		t.Errorf("OverridePath = %q; want %q", got, want)
	}
	if got := config.OverridePath("data"); got != overridePath {
		t.Errorf("OverridePath(data) = %q; want the path Load reads, %q", got, overridePath)
	}
	// A file where the config directory should be.
	blocked := filepath.Join(dir, "blocked")
	if err := os.WriteFile(blocked, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := config.WriteOverride(filepath.Join(blocked, "wunder.override.yaml"), []byte("server: {}\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "config: ") {
		t.Errorf("WriteOverride under a file = %v; want a config: error", err)
	}
	// A directory where the file should be: the rename fails, and no
	// temporary file is left beside it.
	path := filepath.Join(dir, "config", "wunder.override.yaml")
	if err := os.MkdirAll(filepath.Join(path, "inner"), 0o700); err != nil {
		t.Fatal(err)
	}
	err = config.WriteOverride(path, []byte("server: {}\n"))
	if err == nil || !strings.Contains(err.Error(), "config: replacing the override") {
		t.Errorf("WriteOverride onto a directory = %v; want the rename's error", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("%d entries beside the override after a failed write; want the directory alone", len(entries))
	}
	if _, _, err := config.ReadOverride(path); err == nil || !strings.HasPrefix(err.Error(), "config: ") {
		t.Errorf("ReadOverride of a directory = %v; want a config: error", err)
	}
}

func TestSectionValueErrors(t *testing.T) {
	t.Parallel()
	c := config.Default()
	for key, want := range map[string]string{
		"nope":                   "config: no section nope",
		"server.nope":            "config: no section server.nope",
		"server.port.x":          "config: server.port.x is not a section",
		"llm.models.gpt.api_key": "is not a section",
	} {
		if _, err := c.SectionValue(key); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SectionValue(%q) = %v; want %q", key, err, want)
		}
	}
}
