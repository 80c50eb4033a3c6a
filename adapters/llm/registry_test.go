package llm_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/orchestrator"
)

func TestRegistry(t *testing.T) {
	t.Parallel()
	a, b := llm.NewScripted(llm.EchoScript()), llm.NewScripted(llm.EchoScript())
	r := llm.NewRegistry("b", map[string]llm.Entry{
		"a":    {Model: a, Settings: orchestrator.ModelSettings{ToolCallMode: orchestrator.ModeToolCall}},
		"b":    {Model: b, Settings: orchestrator.ModelSettings{Name: "bee", MaxRounds: 4}},
		"none": {},
	})
	m, s, err := r.Lookup("")
	if err != nil || m != b || s.Name != "bee" || s.MaxRounds != 4 {
		t.Errorf(`Lookup("") = %p, %+v, %v; want b`, m, s, err)
	}
	m, s, err = r.Lookup("a")
	if err != nil || m != a || s.Name != "a" || s.ToolCallMode != orchestrator.ModeToolCall {
		t.Errorf(`Lookup("a") = %p, %+v, %v; want a named a`, m, s, err)
	}
	_, _, err = r.Lookup("gpt-9")
	if !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), `"gpt-9"`) || !strings.Contains(err.Error(), "a, b") {
		t.Errorf(`Lookup("gpt-9") error = %v, want invalid argument naming it and the known models`, err)
	}
	if got := strings.Join(r.Names(), ","); got != "a,b" || r.Default() != "b" {
		t.Errorf("Names() = %s, Default() = %q; want a,b and b", got, r.Default())
	}
}

func TestRegistryDefault(t *testing.T) {
	t.Parallel()
	one := llm.NewRegistry("", map[string]llm.Entry{"only": {Model: llm.NewScripted(llm.EchoScript())}})
	if _, s, err := one.Lookup(""); err != nil || s.Name != "only" {
		t.Errorf("single model: Lookup(\"\") = %+v, %v; want only", s, err)
	}
	two := llm.NewRegistry("", map[string]llm.Entry{
		"x": {Model: llm.NewScripted(llm.EchoScript())},
		"y": {Model: llm.NewScripted(llm.EchoScript())},
	})
	if _, _, err := two.Lookup(""); !errors.Is(err, orchestrator.ErrUnavailable) || !strings.Contains(err.Error(), "llm.default") {
		t.Errorf("two models, no default: error = %v, want unavailable pointing at llm.default", err)
	}
	if _, _, err := two.Lookup("y"); err != nil {
		t.Errorf(`Lookup("y") = %v`, err)
	}
	missing := llm.NewRegistry("z", map[string]llm.Entry{"x": {Model: llm.NewScripted(llm.EchoScript())}})
	if _, _, err := missing.Lookup(""); !errors.Is(err, orchestrator.ErrUnavailable) || missing.Default() != "" {
		t.Errorf("missing default: error = %v, Default() = %q", err, missing.Default())
	}
}

func TestRegistryEmpty(t *testing.T) {
	t.Parallel()
	const want = "no model configured: set WUNDER_LLM_BASE_URL and WUNDER_LLM_MODEL (and WUNDER_LLM_API_KEY), " +
		"or add llm.models to the config file (docs/configuration.md); to try wunder without a model, restart with " +
		"WUNDER_LLM_PROVIDER=scripted (the demo model; ask it for \"the tour\")"
	for _, r := range []*llm.Registry{llm.NewRegistry("", nil), llm.NewRegistry("default", map[string]llm.Entry{"nil": {}})} {
		for _, name := range []string{"", "default", "other"} {
			_, _, err := r.Lookup(name)
			if !errors.Is(err, orchestrator.ErrUnavailable) || !strings.HasSuffix(err.Error(), want) {
				t.Errorf("Lookup(%q) error = %v, want ErrUnavailable with %q", name, err, want)
			}
		}
	}
}
