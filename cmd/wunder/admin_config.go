package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/wunder/wunder/adapters/builtin"
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
	// db holds the override when replicas share PostgreSQL; nil = the
	// override file.
	db configStore

	mu      sync.Mutex // serialises changes and syncs
	cur     atomic.Pointer[config.Config]
	applied int64 // db: the revision cur reflects; guarded by mu

	stop context.CancelFunc // ends the db poll
	done chan struct{}
}

// configStore keeps the override in the database (storage.Store).
type configStore interface {
	ConfigOverride(ctx context.Context) (json.RawMessage, int64, error)
	ConfigRevision(ctx context.Context) (int64, error)
	SaveConfigOverride(ctx context.Context, sections json.RawMessage, expect int64) (int64, error)
}

// configPollInterval is how often a replica on PostgreSQL checks the
// override's revision: the longest two replicas disagree after a change.
const configPollInterval = 2 * time.Second

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
	// GET|POST /wunder/admin/tools: {"builtin":{"enabled":[...]}} (empty = all)
	"tools": {key: "tools.builtin", field: "builtin"},
}

// newConfigAdmin serves changes of cfg. With db (PostgreSQL), cfg already
// has the stored sections at revision rev ([applyStoredConfig]) and the
// admin polls for other replicas' changes until close.
func newConfigAdmin(cfg *config.Config, db configStore, rev int64) *configAdmin {
	ca := &configAdmin{db: db, applied: rev}
	ca.cur.Store(cfg)
	return ca
}

// start begins the poll of the stored override (db only).
func (ca *configAdmin) start() {
	if ca.db == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	ca.stop, ca.done = cancel, make(chan struct{})
	go func() {
		defer close(ca.done)
		t := time.NewTicker(configPollInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := ca.sync(ctx); err != nil && ctx.Err() == nil {
					ca.a.log.Warn("configuration change of another replica not applied", "err", err)
				}
			}
		}
	}()
}

func (ca *configAdmin) close() {
	if ca.stop != nil {
		ca.stop()
		<-ca.done
	}
}

// sync applies the stored override when another replica moved its
// revision: each section whose stored value differs from the running one.
func (ca *configAdmin) sync(ctx context.Context) error {
	rev, err := ca.db.ConfigRevision(ctx)
	if err != nil {
		return err
	}
	ca.mu.Lock()
	defer ca.mu.Unlock()
	if rev == ca.applied {
		return nil
	}
	return ca.syncLocked(ctx)
}

// syncLocked is sync under ca.mu, without the cheap revision check.
func (ca *configAdmin) syncLocked(ctx context.Context) error {
	raw, rev, err := ca.db.ConfigOverride(ctx)
	if err != nil {
		return err
	}
	sections, err := decodeSections(raw)
	if err != nil {
		return err
	}
	if rev == ca.applied {
		return nil
	}
	cur := ca.cur.Load()
	for _, sec := range orderedSections() {
		stored, ok := sections[sec.key]
		if !ok {
			continue
		}
		running, err := sectionValue(cur, sec)
		if err != nil {
			return err
		}
		if jsonEqual(running, stored) {
			continue
		}
		next, err := cur.WithSection(sec.key, stored)
		if err != nil {
			return fmt.Errorf("stored section %s: %w", sec.key, err)
		}
		commit, err := ca.a.prepare(ctx, sec.key, next)
		if err != nil {
			return err
		}
		if err := commit(ctx); err != nil {
			return err
		}
		cur = next
		ca.a.log.Info("configuration changed by another replica", "section", sec.key, "revision", rev)
	}
	ca.cur.Store(cur)
	ca.applied = rev
	return nil
}

// applyStoredConfig lays the override stored in db over cfg at start: the
// sections another replica's admin API changed. A stored section that no
// longer validates is logged and left out.
func applyStoredConfig(ctx context.Context, cfg *config.Config, db configStore, log *slog.Logger) (*config.Config, int64, error) {
	raw, rev, err := db.ConfigOverride(ctx)
	if err != nil {
		return nil, 0, err
	}
	sections, err := decodeSections(raw)
	if err != nil {
		return nil, 0, err
	}
	for _, sec := range orderedSections() {
		v, ok := sections[sec.key]
		if !ok {
			continue
		}
		next, err := cfg.WithSection(sec.key, v)
		if err != nil {
			log.Error("stored configuration section not applied", "section", sec.key, "revision", rev, "err", err)
			continue
		}
		cfg = next
	}
	return cfg, rev, nil
}

func decodeSections(raw json.RawMessage) (map[string]any, error) {
	sections := map[string]any{}
	if len(raw) == 0 {
		return sections, nil
	}
	if err := json.Unmarshal(raw, &sections); err != nil {
		return nil, fmt.Errorf("the stored configuration override is not a JSON object: %w", err)
	}
	return sections, nil
}

func orderedSections() []configSection {
	out := make([]configSection, 0, len(configSectionsByName))
	for _, name := range slices.Sorted(maps.Keys(configSectionsByName)) {
		out = append(out, configSectionsByName[name])
	}
	return out
}

func jsonEqual(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

func (ca *configAdmin) overridePath() string { return config.OverridePath(ca.cur.Load().DataDir) }

// ConfigSection implements gateway.ConfigAdmin.
func (ca *configAdmin) ConfigSection(_ context.Context, name string) (map[string]any, int64, error) {
	sec, ok := configSectionsByName[name]
	if !ok {
		return nil, 0, fmt.Errorf("%w: no configuration section %q", orchestrator.ErrNotFound, name)
	}
	rev, err := ca.revision(context.Background())
	if err != nil {
		return nil, 0, err
	}
	doc, err := sectionDoc(ca.cur.Load(), sec)
	return doc, rev, err
}

// revision is the override's current revision.
func (ca *configAdmin) revision(ctx context.Context) (int64, error) {
	if ca.db != nil {
		return ca.db.ConfigRevision(ctx)
	}
	_, rev, err := config.ReadOverride(ca.overridePath())
	return rev, err
}

// sectionDoc is the section of cfg as the routes show it: JSON-ready
// values keyed by the YAML names, secrets masked.
func sectionDoc(cfg *config.Config, sec configSection) (map[string]any, error) {
	v, err := sectionValue(cfg.Redacted(), sec)
	if err != nil {
		return nil, err
	}
	return map[string]any{sec.field: v}, nil
}

// sectionValue is the section of cfg as JSON-ready values (unmasked).
func sectionValue(cfg *config.Config, sec configSection) (any, error) {
	var v any
	switch sec.key {
	case "llm":
		v = cfg.LLM
	case "mcp.servers":
		v = nonNilSlice(cfg.MCP.Servers)
	case "a2a.services":
		v = nonNilSlice(cfg.A2A.Services)
	case "tools.builtin":
		v = map[string]any{"enabled": nonNilSlice(cfg.Tools.Builtin.Enabled)}
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
	// Through JSON, so the value compares equal to one read back from the
	// store (numbers as float64, maps as map[string]any).
	j, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	var norm any
	err = json.Unmarshal(j, &norm)
	return norm, err
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
	if ca.db != nil {
		return ca.updateStored(ctx, sec, value, ifMatch)
	}
	path := ca.overridePath()
	body, rev, err := config.ReadOverride(path)
	if err != nil {
		return nil, 0, err
	}
	if err := checkRevision(ifMatch, rev); err != nil {
		return nil, 0, err
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

// updateStored is UpdateConfigSection with the override in the database:
// the section's effective value (secrets included, as the file would hold
// them) is stored as revision+1 unless another replica got there first.
func (ca *configAdmin) updateStored(ctx context.Context, sec configSection, value any, ifMatch *int64) (map[string]any, int64, error) {
	if err := ca.syncLocked(ctx); err != nil {
		return nil, 0, err
	}
	raw, rev, err := ca.db.ConfigOverride(ctx)
	if err != nil {
		return nil, 0, err
	}
	if err := checkRevision(ifMatch, rev); err != nil {
		return nil, 0, err
	}
	next, err := ca.cur.Load().WithSection(sec.key, value)
	if err != nil {
		return nil, 0, configError(err)
	}
	commit, err := ca.a.prepare(ctx, sec.key, next)
	if err != nil {
		return nil, 0, err
	}
	sections, err := decodeSections(raw)
	if err != nil {
		return nil, 0, err
	}
	if sections[sec.key], err = sectionValue(next, sec); err != nil {
		return nil, 0, err
	}
	body, err := json.Marshal(sections)
	if err != nil {
		return nil, 0, err
	}
	newRev, err := ca.db.SaveConfigOverride(ctx, body, rev)
	if err != nil {
		return nil, 0, err // ErrConflict: another replica changed it meanwhile
	}
	if err := commit(ctx); err != nil {
		return nil, 0, err
	}
	ca.cur.Store(next)
	ca.applied = newRev
	ca.a.log.Info("configuration changed", "section", sec.key, "revision", newRev, "store", "database")
	out, err := sectionDoc(next, sec)
	return out, newRev, err
}

func checkRevision(ifMatch *int64, rev int64) error {
	if ifMatch != nil && *ifMatch != rev {
		return fmt.Errorf("%w: the configuration is at revision %d, not %d: read it again and reapply your change",
			orchestrator.ErrConflict, rev, *ifMatch)
	}
	return nil
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
	case "tools.builtin":
		enabled := next.Tools.Builtin.Enabled
		for i, name := range enabled {
			if !builtin.Known(name) {
				return nil, &gateway.ConfigError{Fields: []gateway.ConfigFieldError{{Key: fmt.Sprintf("tools.builtin.enabled[%d]", i),
					Message: fmt.Sprintf("no built-in tool is called %q", name)}}}
			}
		}
		return func(context.Context) error { return a.builtin.SetEnabled(enabled) }, nil
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
