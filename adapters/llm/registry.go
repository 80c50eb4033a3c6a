package llm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

// Entry is one model of a [Registry] with the settings the loop uses for it.
type Entry struct {
	Model    orchestrator.Model
	Settings orchestrator.ModelSettings
}

// Registry is the [orchestrator.Models] of a set of configured models. It is
// immutable and safe for concurrent use.
type Registry struct {
	defaultName string
	entries     map[string]Entry
	names       []string
}

var _ orchestrator.Models = (*Registry)(nil)

// errNoModel is what every lookup returns when no model is configured.
const errNoModel = "no model configured: set WUNDER_LLM_BASE_URL and WUNDER_LLM_MODEL (and WUNDER_LLM_API_KEY), " +
	"or add llm.models to the config file (docs/configuration.md); to try wunder without a model, restart with " +
	"WUNDER_LLM_PROVIDER=scripted (the demo model; ask it for \"the tour\")"

// NewRegistry returns a registry of entries (entries with a nil Model are
// left out). defaultName is the model of Lookup(""); "" means the only
// entry when there is exactly one. Each entry's Settings.Name defaults to
// its key.
func NewRegistry(defaultName string, entries map[string]Entry) *Registry {
	r := &Registry{defaultName: defaultName, entries: make(map[string]Entry, len(entries))}
	for name, e := range entries {
		if e.Model == nil {
			continue
		}
		if e.Settings.Name == "" {
			e.Settings.Name = name
		}
		r.entries[name] = e
		r.names = append(r.names, name)
	}
	slices.Sort(r.names)
	if r.defaultName == "" && len(r.names) == 1 {
		r.defaultName = r.names[0]
	}
	return r
}

// Lookup implements [orchestrator.Models]. An unknown name is an error
// wrapping [orchestrator.ErrInvalidArgument] that lists the known models; an
// empty registry answers every lookup with an error wrapping
// [orchestrator.ErrUnavailable] that says how to configure a model.
func (r *Registry) Lookup(name string) (orchestrator.Model, orchestrator.ModelSettings, error) {
	if len(r.entries) == 0 {
		return nil, orchestrator.ModelSettings{}, fmt.Errorf("%w: %s", orchestrator.ErrUnavailable, errNoModel)
	}
	if name == "" {
		if r.defaultName == "" {
			return nil, orchestrator.ModelSettings{}, fmt.Errorf("%w: no default model: set llm.default to one of %s",
				orchestrator.ErrUnavailable, strings.Join(r.names, ", "))
		}
		name = r.defaultName
	}
	e, ok := r.entries[name]
	if !ok {
		if name == r.defaultName {
			return nil, orchestrator.ModelSettings{}, fmt.Errorf("%w: default model %q is not configured (known models: %s)",
				orchestrator.ErrUnavailable, name, strings.Join(r.names, ", "))
		}
		return nil, orchestrator.ModelSettings{}, fmt.Errorf("%w: unknown model %q (known models: %s)",
			orchestrator.ErrInvalidArgument, name, strings.Join(r.names, ", "))
	}
	return e.Model, e.Settings, nil
}

// Names lists the models, sorted.
func (r *Registry) Names() []string { return slices.Clone(r.names) }

// Default is the name Lookup("") resolves, "" when there is none.
func (r *Registry) Default() string {
	if _, ok := r.entries[r.defaultName]; !ok {
		return ""
	}
	return r.defaultName
}
