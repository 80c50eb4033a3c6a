package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wunder/wunder/internal/config"
)

// FuzzLoad feeds arbitrary bytes to Load as the base file. Load must not
// panic, must return exactly one of a Config and an error, and a Config it
// returns must be valid and survive Marshal and Load again unchanged.
func FuzzLoad(f *testing.F) {
	seeds := []string{
		"",
		"server: {port: 9000}\n",
		"llm:\n  models:\n    gpt: {model: m, api_key: ${KEY:-x}, temperature: 0.5}\n",
		"a: &a\n  b: *a\n",
		"x-c: &c {provider: scripted}\nllm: {models: {s: {<<: *c}}}\n",
		"server:\n  max_active_sessions: 3\n",
		"security: {allow_commands: [ls, '$${X}', '${X:-${Y:-z}}']}\n",
		"- 1\n- 2\n",
		"server: [\n",
		"data_dir: \"\\t\"\n",
	}
	if data, err := os.ReadFile(filepath.Join("..", "..", "config", "wunder.example.yaml")); err == nil {
		seeds = append(seeds, string(data))
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	e := env{"KEY": "k", "X": "x:y", "EMPTY": ""}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := config.Load(config.LoadOptions{ReadFile: files{basePath: string(data)}.read, LookupEnv: e.lookup})
		if (c == nil) == (err == nil) {
			t.Fatalf("Load() = %v, %v: want exactly one", c, err)
		}
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Load() succeeded but Validate() = %v", err)
		}
		out, err := c.Marshal()
		if err != nil {
			t.Fatalf("Marshal() = %v", err)
		}
		again, err := config.Load(config.LoadOptions{ReadFile: files{basePath: string(out)}.read, LookupEnv: env{}.lookup})
		if err != nil {
			t.Fatalf("Load(Marshal()) = %v\n%s", err, out)
		}
		if diff := cmp.Diff(c, again, cmpOpts); diff != "" {
			t.Fatalf("Load(Marshal(c)) differs (-c +again):\n%s", diff)
		}
		_ = c.Redacted()
	})
}

// FuzzExpand checks that expansion never panics and leaves text without a
// dollar sign alone.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"", "plain", "${A}", "${A:-b}", "$$", "${A:-${B:-${C}}}", "${", "${A:-", "}$"} {
		f.Add(s)
	}
	lookup := env{"A": "a"}.lookup
	f.Fuzz(func(t *testing.T, s string) {
		out, err := config.Expand(s, lookup)
		if !strings.Contains(s, "$") && (err != nil || out != s) {
			t.Fatalf("Expand(%q) = %q, %v; want it unchanged", s, out, err)
		}
	})
}
