package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"go.yaml.in/yaml/v3"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/orchestrator"
)

// configAdmin serves /wunder/admin/{llm,mcp,a2a} (gateway/admin_config.go):
// a change is validated like a start-up, written to the override file
// (<data_dir>/config/wunder.override.yaml, atomically, with a revision) and
// applied to the running server before the request is answered:
//
//   - llm: a new model registry replaces the old one; a run that already
//     resolved its model finishes with it;
//   - mcp.servers: new servers connect (the answer waits for their first
//     discovery, bounded by mcp.ready_timeout_s), removed ones are retired
//     once no call is in flight, unchanged ones keep their sessions;
//   - a2a.services: the peer tools are replaced; unchanged peers keep their
//     cached cards.
//
// Changes are serialised. The override file is reread for every change, so
// an edit by hand (or another process on the same data directory) moves
// the revision and a change based on an older one is refused.
type configAdmin struct {
	a    *app
	load config.LoadOptions // where the base file is; Override unset

	mu  sync.Mutex // serialises changes
	cur atomic.Pointer[config.Config]
}

// configSection is one section the routes serve: its key in the YAML, and
// the document's field that holds it.
type configSection struct {
	key   string // "llm", "mcp.servers", "a2a.services"
	field string // "llm", "servers", "services"
}

var configSectionsByName = map[string]configSection{
	"llm": {key: "llm", field: "llm"},
	"mcp": {key: "mcp.servers", field: "servers"},
	"a2a": {key: "a2a.services", field: "services"},
}

func newConfigAdmin(a *app, cfg *config.Config) *configAdmin {
	ca := &configAdmin{a: a}
	ca.cur.Store(cfg)
	return ca
}

func (ca *configAdmin) overridePath() string { return config.OverridePath(ca.cur.Load().DataDir) }

// ConfigSection implements gateway.ConfigAdmin.
func (ca *configAdmin) ConfigSection(_ context.Context, name string) (map[string]any, int64, error) {
	sec, ok := configSectionsByName[name]
	if !ok {
		return nil, 0, fmt.Errorf("%w: no configuration section %q", orchestrator.ErrNotFound, name)
	}
	_, rev, err := config.ReadOverride(ca.overridePath())
	if err != nil {
		return nil, 0, err
	}
	doc, err := sectionDoc(ca.cur.Load(), sec)
	return doc, rev, err
}

// sectionDoc is the section of cfg as JSON-ready values, secrets masked,
// keyed by the YAML names.
func sectionDoc(cfg *config.Config, sec configSection) (map[string]any, error) {
	red := cfg.Redacted()
	var v any
	switch sec.key {
	case "llm":
		v = red.LLM
	case "mcp.servers":
		v = nonNilSlice(red.MCP.Servers)
	case "a2a.services":
		v = nonNilSlice(red.A2A.Services)
	}
	b, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := yaml.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	if out == nil {
		out = []any{}
	}
	return map[string]any{sec.field: out}, nil
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// UpdateConfigSection implements gateway.ConfigAdmin.
func (ca *configAdmin) UpdateConfigSection(ctx context.Context, name string, doc map[string]any, ifMatch *int64) (map[string]any, int64, error) {
	sec, ok := configSectionsByName[name]
	if !ok {
		return nil, 0, fmt.Errorf("%w: no configuration section %q", orchestrator.ErrNotFound, name)
	}
	for k := range doc {
		if k != sec.field {
			return nil, 0, &gateway.ConfigError{Fields: []gateway.ConfigFieldError{{Key: k,
				Message: fmt.Sprintf("unknown field; POST /wunder/admin/%s takes {%q: ...}", name, sec.field)}}}
		}
	}
	value, ok := doc[sec.field]
	if !ok {
		return nil, 0, &gateway.ConfigError{Fields: []gateway.ConfigFieldError{{Key: sec.key,
			Message: fmt.Sprintf("missing: POST /wunder/admin/%s takes {%q: ...}", name, sec.field)}}}
	}

	ca.mu.Lock()
	defer ca.mu.Unlock()
	path := ca.overridePath()
	body, rev, err := config.ReadOverride(path)
	if err != nil {
		return nil, 0, err
	}
	if ifMatch != nil && *ifMatch != rev {
		return nil, 0, fmt.Errorf("%w: the configuration is at revision %d, not %d: read it again and reapply your change",
			orchestrator.ErrConflict, rev, *ifMatch)
	}
	old := ca.cur.Load()
	next, err := old.WithSection(sec.key, value)
	if err != nil {
		return nil, 0, configError(err)
	}
	// Everything that can fail is built before anything is written.
	commit, err := ca.a.prepare(ctx, sec.key, next)
	if err != nil {
		return nil, 0, err
	}
	merged, err := config.MergedYAML(ca.load)
	if err != nil {
		return nil, 0, err
	}
	newBody, err := config.SetOverride(body, sec.key, value, merged, rev+1)
	if err != nil {
		return nil, 0, err
	}
	if err := config.WriteOverride(path, newBody); err != nil {
		return nil, 0, fmt.Errorf("%w: %v", orchestrator.ErrUnavailable, err)
	}
	if err := commit(ctx); err != nil {
		return nil, 0, err
	}
	ca.cur.Store(next)
	ca.a.log.Info("configuration changed", "section", sec.key, "revision", rev+1)
	out, err := sectionDoc(next, sec)
	return out, rev + 1, err
}

// configError turns the config package's problems into the API's.
func configError(err error) error {
	probs := config.Problems(err)
	if len(probs) == 0 {
		return &gateway.ConfigError{Fields: []gateway.ConfigFieldError{{Message: err.Error()}}}
	}
	ce := &gateway.ConfigError{}
	for _, p := range probs {
		ce.Fields = append(ce.Fields, gateway.ConfigFieldError{Key: p.Path, Message: p.Msg})
	}
	return ce
}

// prepare builds what the section of next needs and returns the step that
// puts it in service; nothing changes until that step runs.
func (a *app) prepare(ctx context.Context, key string, next *config.Config) (func(context.Context) error, error) {
	switch key {
	case "llm":
		reg, err := newModels(next)
		if err != nil {
			var ee *exitError
			if errors.As(err, &ee) {
				err = ee.err
			}
			return nil, &gateway.ConfigError{Fields: []gateway.ConfigFieldError{{Key: "llm.models", Message: err.Error()}}}
		}
		return func(context.Context) error { a.models.swap(reg); return nil }, nil
	case "a2a.services":
		svcs := a2aServices(next)
		return func(context.Context) error { return a.a2a.tools.Reconfigure(svcs) }, nil
	case "mcp.servers":
		if a.mcp == nil {
			return nil, fmt.Errorf("%w: MCP is not enabled on this server", orchestrator.ErrUnavailable)
		}
		servers := mcpServers(next)
		return func(ctx context.Context) error { return a.mcp.set.Reconfigure(ctx, servers) }, nil
	}
	return nil, fmt.Errorf("%w: section %s cannot be changed here", orchestrator.ErrInvalidArgument, key)
}

// liveModels is the model registry the orchestrator and the other parts
// use; the admin API replaces it whole. Lookup returns the model a run
// keeps for its lifetime, so a run finishes on the models it started with.
type liveModels struct{ p atomic.Pointer[llm.Registry] }

func newLiveModels(r *llm.Registry) *liveModels {
	m := &liveModels{}
	m.p.Store(r)
	return m
}

func (m *liveModels) swap(r *llm.Registry) { m.p.Store(r) }

// Lookup implements orchestrator.Models.
func (m *liveModels) Lookup(name string) (orchestrator.Model, orchestrator.ModelSettings, error) {
	return m.p.Load().Lookup(name)
}

// Default is the default model's name ("" when there is none).
func (m *liveModels) Default() string { return m.p.Load().Default() }

// Names are the enabled models' names.
func (m *liveModels) Names() []string { return slices.Clone(m.p.Load().Names()) }
