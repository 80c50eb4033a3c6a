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

	poll *periodic // of the stored override (db only)
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

// configSection is what one admin route serves: one or more parts of the
// configuration, each a key path and the document field that shows it.
type configSection struct {
	parts []sectionPart
	// partial: a POST may send some of the parts only (the others stay).
	partial bool
}

// sectionPart is one key path of the configuration ("mcp.servers",
// "server.max_body_bytes") and its field in the route's document.
type sectionPart struct {
	key, field string
}

func single(key, field string) configSection {
	return configSection{parts: []sectionPart{{key, field}}}
}

var configSectionsByName = map[string]configSection{
	"llm": single("llm", "llm"),
	"mcp": single("mcp.servers", "servers"),
	"a2a": single("a2a.services", "services"),
	// GET|POST /wunder/admin/tools: {"builtin":{"enabled":[...]}} (empty = all)
	"tools": single("tools.builtin", "builtin"),
	// GET|POST /wunder/admin/lsp: {"lsp":{...}} (the GET adds the status)
	"lsp": single("lsp", "lsp"),
	// GET|POST /wunder/admin/server: the limits, CORS and languages that
	// can change while the server runs (host and port cannot).
	"server": {partial: true, parts: []sectionPart{
		{"server.max_body_bytes", "max_body_bytes"},
		{"server.sse_heartbeat_s", "sse_heartbeat_s"},
		{"cors", "cors"},
		{"i18n", "i18n"},
	}},
}

// allParts are the parts of every section, in a fixed order.
func allParts() []sectionPart {
	var out []sectionPart
	for _, name := range slices.Sorted(maps.Keys(configSectionsByName)) {
		out = append(out, configSectionsByName[name].parts...)
	}
	return out
}

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
	ca.poll = startPeriodic(configPollInterval, false, func(ctx context.Context) {
		if err := ca.sync(ctx); err != nil && ctx.Err() == nil {
			ca.a.log.Warn("configuration change of another replica not applied", "err", err)
		}
	})
}

func (ca *configAdmin) close() { ca.poll.close() }

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
	for _, part := range allParts() {
		stored, ok := sections[part.key]
		if !ok {
			continue
		}
		running, err := cur.SectionValue(part.key)
		if err != nil {
			return err
		}
		if jsonEqual(running, stored) {
			continue
		}
		next, err := cur.WithSection(part.key, stored)
		if err != nil {
			return fmt.Errorf("stored section %s: %w", part.key, err)
		}
		commit, err := ca.a.prepare(ctx, part.key, next)
		if err != nil {
			return err
		}
		if err := commit(ctx); err != nil {
			return err
		}
		cur = next
		ca.a.log.Info("configuration changed by another replica", "section", part.key, "revision", rev)
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
	for _, part := range allParts() {
		v, ok := sections[part.key]
		if !ok {
			continue
		}
		next, err := cfg.WithSection(part.key, v)
		if err != nil {
			log.Error("stored configuration section not applied", "section", part.key, "revision", rev, "err", err)
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

func jsonEqual(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

func (ca *configAdmin) overridePath() string { return config.OverridePath(ca.cur.Load().DataDir) }

// ConfigSection implements gateway.ConfigAdmin.
func (ca *configAdmin) ConfigSection(ctx context.Context, name string) (map[string]any, int64, error) {
	sec, ok := configSectionsByName[name]
	if !ok {
		return nil, 0, fmt.Errorf("%w: no configuration section %q", orchestrator.ErrNotFound, name)
	}
	rev, err := ca.revision(ctx)
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

// sectionDoc is the section of cfg as the route shows it: JSON-ready
// values keyed by the YAML names, secrets masked.
func sectionDoc(cfg *config.Config, sec configSection) (map[string]any, error) {
	red := cfg.Redacted()
	doc := map[string]any{}
	for _, part := range sec.parts {
		v, err := red.SectionValue(part.key)
		if err != nil {
			return nil, err
		}
		doc[part.field] = v
	}
	return doc, nil
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// partChange is one part of a section a POST changes, and its new value.
type partChange struct {
	sectionPart
	value any
}

// UpdateConfigSection implements gateway.ConfigAdmin.
func (ca *configAdmin) UpdateConfigSection(ctx context.Context, name string, doc map[string]any, ifMatch *int64) (map[string]any, int64, error) {
	sec, ok := configSectionsByName[name]
	if !ok {
		return nil, 0, fmt.Errorf("%w: no configuration section %q", orchestrator.ErrNotFound, name)
	}
	fields := make([]string, len(sec.parts))
	for i, p := range sec.parts {
		fields[i] = p.field
	}
	for k := range doc {
		if !slices.Contains(fields, k) {
			return nil, 0, &gateway.ConfigError{Fields: []gateway.ConfigFieldError{{Key: k,
				Message: fmt.Sprintf("unknown field; POST /wunder/admin/%s takes %q", name, fields)}}}
		}
	}
	var changes []partChange
	for _, p := range sec.parts {
		v, ok := doc[p.field]
		if !ok {
			if sec.partial {
				continue
			}
			return nil, 0, &gateway.ConfigError{Fields: []gateway.ConfigFieldError{{Key: p.key,
				Message: fmt.Sprintf("missing: POST /wunder/admin/%s takes {%q: ...}", name, p.field)}}}
		}
		changes = append(changes, partChange{p, v})
	}
	if len(changes) == 0 {
		return nil, 0, &gateway.ConfigError{Fields: []gateway.ConfigFieldError{{
			Message: fmt.Sprintf("nothing to change: POST /wunder/admin/%s takes some of %q", name, fields)}}}
	}

	ca.mu.Lock()
	defer ca.mu.Unlock()
	if ca.db != nil {
		if err := ca.syncLocked(ctx); err != nil {
			return nil, 0, err
		}
	}
	raw, body, rev, err := ca.readOverride(ctx)
	if err != nil {
		return nil, 0, err
	}
	if err := checkRevision(ifMatch, rev); err != nil {
		return nil, 0, err
	}
	// Everything that can fail is built before anything is written.
	next := ca.cur.Load()
	var commits []func(context.Context) error
	for _, c := range changes {
		if next, err = next.WithSection(c.key, c.value); err != nil {
			return nil, 0, configError(err)
		}
	}
	for _, c := range changes {
		commit, err := ca.a.prepare(ctx, c.key, next)
		if err != nil {
			return nil, 0, err
		}
		commits = append(commits, commit)
	}
	var newRev int64
	if ca.db != nil {
		newRev, err = ca.writeStored(ctx, raw, rev, changes, next)
	} else {
		newRev, err = ca.writeFile(body, rev, changes)
	}
	if err != nil {
		return nil, 0, err
	}
	for _, commit := range commits {
		if err := commit(ctx); err != nil {
			return nil, 0, err
		}
	}
	ca.cur.Store(next)
	ca.applied = newRev
	ca.a.log.Info("configuration changed", "section", name, "revision", newRev)
	out, err := sectionDoc(next, sec)
	return out, newRev, err
}

// readOverride reads the override where it is kept: the database's
// sections (raw) or the file's content (body), and its revision.
func (ca *configAdmin) readOverride(ctx context.Context) (raw json.RawMessage, body []byte, rev int64, err error) {
	if ca.db != nil {
		raw, rev, err = ca.db.ConfigOverride(ctx)
		return raw, nil, rev, err
	}
	body, rev, err = config.ReadOverride(ca.overridePath())
	return nil, body, rev, err
}

// writeFile writes the changes into the override file as revision rev+1.
// A posted value is written as posted (masked secrets resolved against the
// files, so a ${VAR} stays a reference).
func (ca *configAdmin) writeFile(body []byte, rev int64, changes []partChange) (int64, error) {
	merged, err := config.MergedYAML(ca.load)
	if err != nil {
		return 0, err
	}
	for _, c := range changes {
		if body, err = config.SetOverride(body, c.key, c.value, merged, rev+1); err != nil {
			return 0, err
		}
	}
	if err := config.WriteOverride(ca.overridePath(), body); err != nil {
		return 0, fmt.Errorf("%w: %v", orchestrator.ErrUnavailable, err)
	}
	return rev + 1, nil
}

// writeStored stores the changed parts' effective values (secrets included,
// as the file would hold them) as revision rev+1, unless another replica
// got there first (ErrConflict).
func (ca *configAdmin) writeStored(ctx context.Context, raw json.RawMessage, rev int64, changes []partChange, next *config.Config) (int64, error) {
	sections, err := decodeSections(raw)
	if err != nil {
		return 0, err
	}
	for _, c := range changes {
		if sections[c.key], err = next.SectionValue(c.key); err != nil {
			return 0, err
		}
	}
	body, err := json.Marshal(sections)
	if err != nil {
		return 0, err
	}
	return ca.db.SaveConfigOverride(ctx, body, rev)
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
	case "server.max_body_bytes", "server.sse_heartbeat_s", "cors":
		live := gatewayLive(next)
		return func(context.Context) error { a.gw.SetLive(live); return nil }, nil
	case "i18n":
		live, lang := gatewayLive(next), next.I18n.DefaultLanguage
		return func(context.Context) error { a.gw.SetLive(live); a.orch.SetDefaultLanguage(lang); return nil }, nil
	case "lsp":
		parts := newLSP(next, a.log) // starts nothing: workers start on first use
		return func(context.Context) error { a.lsp.swap(parts); return nil }, nil
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

// gatewayLive are the gateway's options that the admin API changes live.
func gatewayLive(cfg *config.Config) gateway.Live {
	return gateway.Live{MaxBodyBytes: cfg.Server.MaxBodyBytes, Heartbeat: cfg.Server.SSEHeartbeat(), CORS: corsOptions(cfg), I18n: gatewayI18n(cfg)}
}

func gatewayI18n(cfg *config.Config) gateway.I18n {
	return gateway.I18n{Default: cfg.I18n.DefaultLanguage, Supported: cfg.I18n.SupportedLanguages, Aliases: cfg.I18n.Aliases}
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
