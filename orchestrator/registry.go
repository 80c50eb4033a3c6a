package orchestrator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// FinalResponseTool is the canonical name of the always-on tool that ends a
// run with an answer.
const FinalResponseTool = "final_response"

// ReplyTool is the name of the tool that ends a run with a direct answer
// (final_tool.go), offered to the runs that name it.
const ReplyTool = "reply"

// DefaultNameSeparator encodes '@' on wires that forbid it.
const DefaultNameSeparator = "__"

// maxWireName is the longest name OpenAI function calling accepts.
const maxWireName = 64

// Registry merges toolsets and resolves tool names. It owns the one wire
// encoding of canonical names: '@' becomes the separator (default "__"), any
// other character outside [A-Za-z0-9_-] becomes '_', and names longer than 64
// bytes, or with characters outside ASCII (Chinese knowledge bases, say),
// are cut where need be and suffixed with a hash, so they stay distinct.
// Decoding goes through the
// [Selection] that produced the names, so it is exact even where the
// encoding is lossy; [Registry.CanonicalName] is the best-effort inverse for
// names seen without a selection.
type Registry struct {
	sep      string
	toolsets []Toolset
	log      *slog.Logger
	// access, when set, filters each user's tools (toolaccess.go).
	access ToolAccessSource
	// policy holds the policy's other rules (policy.go).
	policy PolicyOptions
	// wire remembers WireName's answers (canonical -> wire), up to
	// maxWireMemo names: every run that names a tool builds the catalogue,
	// which was a wire name (and, for long names, a hash) for each tool.
	wire  sync.Map
	wireN atomic.Int32
}

// maxWireMemo bounds Registry.wire; past it, names are encoded each time.
const maxWireMemo = 8192

// NewRegistry returns a registry over toolsets. sep "" means
// [DefaultNameSeparator]. The core's tools are always present:
// final_response (always offered), plan and ask_user (offered when
// named).
func NewRegistry(sep string, log *slog.Logger, toolsets ...Toolset) *Registry {
	if sep == "" {
		sep = DefaultNameSeparator
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	all := append([]Toolset{StaticToolset{SetName: "core", List: []Tool{finalResponse{}, replyTool{}, planTool{}, askUserTool{}}}}, toolsets...)
	return &Registry{sep: sep, toolsets: all, log: log}
}

// Separator reports the wire separator.
func (r *Registry) Separator() string { return r.sep }

// WireName encodes a canonical name for wires that forbid '@'.
func (r *Registry) WireName(canonical string) string {
	if w, ok := r.wire.Load(canonical); ok {
		return w.(string)
	}
	w := r.wireName(canonical)
	if r.wireN.Load() < maxWireMemo {
		if _, loaded := r.wire.LoadOrStore(canonical, w); !loaded {
			r.wireN.Add(1)
		}
	}
	return w
}

func (r *Registry) wireName(canonical string) string {
	s := strings.ReplaceAll(canonical, "@", r.sep)
	var b strings.Builder
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	s = b.String()
	sum := sha256.Sum256([]byte(canonical))
	switch {
	case len(s) > maxWireName:
		s = s[:maxWireName-9] + "_" + hex.EncodeToString(sum[:4])
	case nonASCII(canonical):
		// Every non-ASCII character became '_': without the hash, two
		// Chinese names of one length would share a wire name.
		s = s[:min(len(s), maxWireName-9)] + "_" + hex.EncodeToString(sum[:4])
	}
	return s
}

func nonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// CanonicalName is the best-effort inverse of WireName without a selection.
func (r *Registry) CanonicalName(wire string) string {
	return strings.ReplaceAll(wire, r.sep, "@")
}

// Catalog returns every tool the user may select, sorted by name.
func (r *Registry) Catalog(ctx context.Context, userID string) ([]ToolSpec, error) {
	sel, err := r.all(ctx, userID)
	if err != nil {
		return nil, err
	}
	return sel.Specs(), nil
}

// Select resolves names (canonical, alias or wire form) to the tools offered
// to one run: the named ones plus the always-on ones, minus exclude. An
// unknown name is an error wrapping [ErrToolNotFound] that lists them all.
func (r *Registry) Select(ctx context.Context, userID string, names, exclude []string) (*Selection, error) {
	if len(names) == 0 {
		return r.alwaysOn(ctx, userID, exclude), nil
	}
	all, err := r.named(ctx, userID, names)
	if err != nil {
		return nil, err
	}
	missing := func() (out []string) {
		for _, n := range names {
			if _, ok := all.Lookup(n); !ok {
				out = append(out, n)
			}
		}
		return out
	}
	var reasons map[string]string
	if m := missing(); len(m) > 0 {
		var waited bool
		if waited, reasons = r.wait(ctx, m); waited {
			if all, err = r.named(ctx, userID, names); err != nil {
				return nil, err
			}
		}
	}
	sel := newSelection(r)
	var unknown []string
	for _, n := range names {
		t, ok := all.Lookup(n)
		if !ok || slices.Contains(exclude, t.Spec().Name) || t.Spec().AppOnly {
			if why := reasons[n]; why != "" && !ok {
				n += " (" + why + ")"
			} else if ok && t.Spec().AppOnly {
				n += " (visible to MCP Apps only: its _meta.ui.visibility leaves out the model)"
			}
			unknown = append(unknown, n)
			continue
		}
		sel.add(t)
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrToolNotFound, strings.Join(unknown, ", "))
	}
	for _, name := range all.order {
		if t := all.tools[name]; t.Spec().AlwaysOn && !slices.Contains(exclude, name) {
			sel.add(t)
		}
	}
	sel.who = all.who
	return sel, nil
}

// named is the part of the user's catalogue that names can resolve to:
// each tool whose canonical name, wire name or an alias is one of them,
// and the always-on ones, in catalogue order. Every tool that could claim
// one of the names is in it, so names resolve in it as in the whole
// catalogue, without the name maps of every tool for a run that names
// one (a fifth of Select's CPU). One difference: a tool whose wire name
// collides with another's is skipped only when both are in it.
func (r *Registry) named(ctx context.Context, userID string, names []string) (*Selection, error) {
	return r.permitted(ctx, userID, r.namedAll(ctx, userID, names))
}

// namedAll is named before the policy filters it.
func (r *Registry) namedAll(ctx context.Context, userID string, names []string) *Selection {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[strings.TrimSpace(n)] = true
	}
	sel := r.gather(ctx, userID, func(spec ToolSpec) bool {
		if spec.AlwaysOn || want[spec.Name] || want[r.WireName(spec.Name)] {
			return true
		}
		for _, a := range spec.Aliases {
			if want[a] {
				return true
			}
		}
		return false
	})
	return sel
}

// alwaysOn is Select for a run that names no tool: the always-on tools
// alone, in toolset order. They are offered whatever the user's tool
// access says (permitted keeps them too), so neither the whole catalogue
// nor the user's rule is needed: most runs of agents name no tool, and
// building the catalogue and reading the rule was 5 % of a no-tool run's
// CPU (docs/benchmarks.md).
func (r *Registry) alwaysOn(ctx context.Context, userID string, exclude []string) *Selection {
	always := func(ctx context.Context, ts Toolset) ([]Tool, error) {
		if l, ok := ts.(AlwaysOnLister); ok {
			return l.AlwaysOnTools(ctx, userID)
		}
		return ts.Tools(ctx, userID)
	}
	return r.gatherFrom(ctx, always, func(spec ToolSpec) bool { return spec.AlwaysOn && !slices.Contains(exclude, spec.Name) })
}

// gather selects the tools of every toolset that keep accepts (nil: all),
// in toolset order. One failing source never hides the others.
func (r *Registry) gather(ctx context.Context, userID string, keep func(ToolSpec) bool) *Selection {
	return r.gatherFrom(ctx, func(ctx context.Context, ts Toolset) ([]Tool, error) { return ts.Tools(ctx, userID) }, keep)
}

// gatherFrom is gather with the tools of each toolset as toolsOf gives
// them.
func (r *Registry) gatherFrom(ctx context.Context, toolsOf func(context.Context, Toolset) ([]Tool, error), keep func(ToolSpec) bool) *Selection {
	sel := newSelection(r)
	for _, ts := range r.toolsets {
		tools, err := toolsOf(ctx, ts)
		if err != nil {
			r.log.WarnContext(ctx, "toolset unavailable", "toolset", ts.Name(), "err", err)
			continue
		}
		for _, t := range tools {
			if keep == nil || keep(t.Spec()) {
				sel.add(t)
			}
		}
	}
	return sel
}

// wait asks every [ToolWaiter] about names no toolset offers yet. It
// reports whether one of them waited (so the caller resolves again) and,
// by name, why a toolset cannot offer one.
func (r *Registry) wait(ctx context.Context, names []string) (waited bool, reasons map[string]string) {
	for _, ts := range r.toolsets {
		w, ok := ts.(ToolWaiter)
		if !ok {
			continue
		}
		for _, n := range names {
			mine, err := w.WaitTool(ctx, r.CanonicalName(strings.TrimSpace(n)))
			waited = waited || mine
			if err != nil {
				if reasons == nil {
					reasons = map[string]string{}
				}
				reasons[n] = err.Error()
			}
		}
	}
	return waited, reasons
}

func (r *Registry) all(ctx context.Context, userID string) (*Selection, error) {
	sel := r.gather(ctx, userID, nil)
	return r.permitted(ctx, userID, sel)
}

// Selection is the set of tools offered to one run, with the name maps that
// decode whatever form the model answers with.
type Selection struct {
	reg   *Registry
	tools map[string]Tool   // canonical -> tool
	names map[string]string // canonical, alias and wire name -> canonical
	order []string
	// who is the user as the policy saw them when it filtered this
	// selection (nil: not filtered, as for a run naming no tool), so the
	// run that uses it does not read their rule again for each call.
	who *subject
}

func newSelection(r *Registry) *Selection {
	return &Selection{reg: r, tools: map[string]Tool{}, names: map[string]string{}}
}

func (s *Selection) add(t Tool) {
	spec := t.Spec()
	if _, dup := s.tools[spec.Name]; dup {
		return
	}
	wire := s.reg.WireName(spec.Name)
	if other, taken := s.names[wire]; taken && other != spec.Name {
		s.reg.log.Warn("tool skipped: its wire name collides", "tool", spec.Name, "with", other, "wire", wire)
		return
	}
	s.tools[spec.Name] = t
	s.order = append(s.order, spec.Name)
	s.names[spec.Name] = spec.Name
	s.names[wire] = spec.Name
	for _, a := range spec.Aliases {
		if _, taken := s.names[a]; !taken {
			s.names[a] = spec.Name
		}
	}
}

// Lookup finds a tool by canonical name, alias or wire name.
func (s *Selection) Lookup(name string) (Tool, bool) {
	canon, ok := s.names[strings.TrimSpace(name)]
	if !ok {
		return nil, false
	}
	return s.tools[canon], true
}

// Specs returns the selected tools' specs in name order.
func (s *Selection) Specs() []ToolSpec {
	out := make([]ToolSpec, 0, len(s.order))
	for _, n := range s.Names() {
		out = append(out, s.tools[n].Spec())
	}
	return out
}

// WireSpecs returns the specs with names in wire form, for function calling.
func (s *Selection) WireSpecs() []ToolSpec {
	out := s.Specs()
	for i := range out {
		out[i].Name = s.reg.WireName(out[i].Name)
		out[i].Aliases = nil
	}
	return out
}

// Names returns the canonical names in order.
func (s *Selection) Names() []string {
	names := slices.Clone(s.order)
	sort.Strings(names)
	return names
}
