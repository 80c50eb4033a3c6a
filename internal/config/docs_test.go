package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/wunder/wunder/internal/config"
)

var (
	examplePath = filepath.Join("..", "..", "config", "wunder.example.yaml")
	docsPath    = filepath.Join("..", "..", "docs", "configuration.md")
)

// TestExampleFileLoads loads config/wunder.example.yaml as it is shipped, and
// checks its claim that everything but the example models is the default.
func TestExampleFileLoads(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(config.LoadOptions{Path: examplePath, LookupEnv: env{}.lookup,
		ReadFile: files{examplePath: string(data)}.read})
	if err != nil {
		t.Fatalf("Load(%s):\n%v", examplePath, err)
	}
	if w := c.Warnings(); len(w) != 0 {
		t.Errorf("the example uses deprecated keys: %q", w)
	}
	if got := c.DefaultModelName(); got != "gpt" {
		t.Errorf("DefaultModelName() = %q, want gpt", got)
	}
	c.LLM = config.Default().LLM
	if diff := cmp.Diff(derived(), c, cmpOpts); diff != "" {
		t.Errorf("example differs from the defaults outside llm (-default +example):\n%s", diff)
	}

	// With the variables it mentions set.
	c, err = config.Load(config.LoadOptions{Path: examplePath, ReadFile: files{examplePath: string(data)}.read,
		LookupEnv: env{"OPENAI_API_KEY": "sk", "WUNDER_POSTGRES_DSN": "postgres://u:p@db/w", "WUNDER_DATA_DIR": "/srv"}.lookup})
	if err != nil {
		t.Fatal(err)
	}
	if c.LLM.Models["gpt"].APIKey != "sk" || c.Storage.EffectiveBackend() != "postgres" || c.Storage.DBPath != "/srv/wunder.db" {
		t.Errorf("variables not applied: %+v %+v", c.LLM.Models["gpt"], c.Storage)
	}
}

// docRow matches a key row of docs/configuration.md: | `key` | type | default | ...
var docRow = regexp.MustCompile("^\\| `([a-z0-9_.<>]+)` \\| ([^|]+) \\| `([^`]*)` \\|")

// TestDocsListEveryKey checks that docs/configuration.md has a row for every
// key of the schema, no row for a key that does not exist, and the default
// that Default() (or a new model entry) has.
func TestDocsListEveryKey(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]string{} // key -> default as written
	for _, line := range strings.Split(string(data), "\n") {
		if m := docRow.FindStringSubmatch(line); m != nil {
			documented[m[1]] = m[3]
		}
	}

	defaults := asYAMLTree(t, config.Default())
	defaults["llm"].(map[string]any)["models"] = map[string]any{"<name>": asYAMLTree(t, config.NewModel())}

	leaves := map[string]any{}
	collectLeaves(reflect.TypeFor[config.Config](), "", defaults, leaves)
	for key, want := range leaves {
		doc, ok := documented[key]
		if !ok {
			t.Errorf("docs/configuration.md has no row for %s", key)
			continue
		}
		var got any
		if doc == "unset" { // a tuning knob: no value, the component's default applies
			doc = "null"
		}
		if err := yaml.Unmarshal([]byte(doc), &got); err != nil {
			t.Errorf("%s: default %q in the docs is not YAML: %v", key, doc, err)
			continue
		}
		if doc == `""` || doc == "[]" || doc == "{}" || got == nil {
			got = normalizeEmpty(got)
			want = normalizeEmpty(want)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: docs say default %s, Default() has %#v", key, doc, want)
		}
	}
	for key := range documented {
		if _, ok := leaves[key]; !ok && key != "llm.models" {
			t.Errorf("docs/configuration.md documents %s, which is not a key", key)
		}
	}
}

// asYAMLTree marshals v and reads it back as plain maps.
func asYAMLTree(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// collectLeaves maps each leaf key path of type t (structs are walked, map
// entries are <name>) to its value in tree.
func collectLeaves(t reflect.Type, prefix string, tree map[string]any, out map[string]any) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		ft := f.Type
		switch {
		case ft.Kind() == reflect.Struct:
			sub, _ := tree[name].(map[string]any)
			collectLeaves(ft, path, sub, out)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
			entries, _ := tree[name].(map[string]any)
			sub, _ := entries["<name>"].(map[string]any)
			collectLeaves(ft.Elem(), path+".<name>", sub, out)
		default:
			out[path] = tree[name]
		}
	}
}

func normalizeEmpty(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if x == "" {
			return nil
		}
	case []any:
		if len(x) == 0 {
			return nil
		}
	case map[string]any:
		if len(x) == 0 {
			return nil
		}
	}
	return v
}
