package a2atools

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"time"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/cardsig"
	"github.com/wunder/wunder/internal/netguard"
	"github.com/wunder/wunder/orchestrator"
)

// Service is one peer agent.
type Service struct {
	// Name makes the tool a2a@<Name>: letters, digits, - and _.
	Name        string
	Description string
	// URL is the peer's agent card URL or base URL (the well-known path is
	// appended), or its JSON-RPC endpoint when Version is set.
	URL string
	// Version, when "1.0" or "0.3", skips the card: URL is the endpoint.
	Version string
	// Header is sent with every request (the peer's auth).
	Header http.Header
	// Timeout bounds one call. Default 120s.
	Timeout time.Duration
	// MaxDepth bounds a wunder-to-wunder delegation chain. Default 3.
	MaxDepth int
	// Card checks the signatures of the peer's card before it is used.
	// Default: not checked.
	Card CardCheck
	// Publish offers the peer to the A2A pass-through ([Set.Published]).
	// It needs the card: Version must be "".
	Publish bool
}

// CardCheck says which keys a peer's card must be signed with (A2A 1.0
// section 8.4, internal/cardsig). It needs the card: Version must be "".
type CardCheck struct {
	// Require refuses an unsigned card; without it an unsigned card is
	// used and a signed one must still verify.
	Require bool
	// Keys are trusted PEM public keys (text or file paths), known by
	// their RFC 7638 thumbprints.
	Keys []string
	// JWKSURL is a JWKS of trusted keys, read through the SSRF guard each
	// time the card is read.
	JWKSURL string
	// AllowPrivate lets JWKSURL be on a private, loopback or link-local
	// address.
	AllowPrivate bool
}

func (c CardCheck) enabled() bool { return c.Require || len(c.Keys) > 0 || c.JWKSURL != "" }

// jwksDialTimeout bounds connecting to a JWKS host.
const jwksDialTimeout = 10 * time.Second

// verifier builds the card verifier of svc, nil when its card is not
// checked.
func verifier(svc Service) (*cardsig.Verifier, error) {
	c := svc.Card
	if !c.enabled() {
		return nil, nil
	}
	if svc.Version != "" {
		return nil, fmt.Errorf("a2a service %s: card verification needs the card, but version %q skips it", svc.Name, svc.Version)
	}
	v, err := cardsig.NewVerifier(cardsig.VerifyOptions{Require: c.Require, Keys: c.Keys, JWKSURL: c.JWKSURL,
		// The JWKS host is checked at every dial, after DNS (netguard).
		HTTP: &http.Client{Transport: netguard.Transport(jwksDialTimeout, c.AllowPrivate)}})
	if err != nil {
		return nil, fmt.Errorf("a2a service %s: card verification: %w", svc.Name, err)
	}
	return v, nil
}

// Options of the Set. Zero values mean the defaults.
type Options struct {
	// HTTP client for peers. Default: a client without timeout (each call
	// has its own).
	HTTP   *http.Client
	Logger *slog.Logger
}

// Set is the a2a toolset. Its services can be replaced while it serves
// ([Set.Reconfigure]).
type Set struct {
	orchestrator.NoAlwaysOnTools // none of its tools is always on

	opts Options
	bg   *background
	log  *slog.Logger

	mu    sync.RWMutex
	tools []orchestrator.Tool // guarded by mu; replaced whole, never changed in place
}

var _ orchestrator.Toolset = (*Set)(nil)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// New returns the toolset for services.
func New(services []Service, opts *Options) (*Set, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Set{opts: o, bg: newBackground(), log: o.Logger}
	tools, err := s.build(services, nil)
	if err != nil {
		return nil, err
	}
	s.tools = tools
	return s, nil
}

// Reconfigure replaces the services. A service whose settings did not
// change keeps its tool (and the peer's card it read); a run that already
// holds a removed or changed service's tool finishes its calls with it.
// Background tasks (a2a_observe, a2a_wait) are kept. On error nothing
// changes.
func (s *Set) Reconfigure(services []Service) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := map[string]*peerTool{}
	for _, t := range s.tools {
		if pt, ok := t.(*peerTool); ok {
			old[pt.svc.Name] = pt
		}
	}
	tools, err := s.build(services, old)
	if err != nil {
		return err
	}
	s.tools = tools
	return nil
}

// build makes the tools of services, reusing the tool of an unchanged
// service from old.
func (s *Set) build(services []Service, old map[string]*peerTool) ([]orchestrator.Tool, error) {
	var tools []orchestrator.Tool
	seen := map[string]bool{}
	for _, svc := range services {
		if !nameRE.MatchString(svc.Name) || seen[svc.Name] {
			return nil, fmt.Errorf("a2a service name %q: must be unique, 1-64 letters, digits, - or _", svc.Name)
		}
		seen[svc.Name] = true
		if svc.Timeout <= 0 {
			svc.Timeout = 120 * time.Second
		}
		if svc.MaxDepth <= 0 {
			svc.MaxDepth = 3
		}
		if pt, ok := old[svc.Name]; ok && reflect.DeepEqual(pt.svc, svc) {
			tools = append(tools, pt)
			continue
		}
		v, err := verifier(svc)
		if err != nil {
			return nil, err
		}
		tools = append(tools, &peerTool{svc: svc, hc: s.opts.HTTP, verify: v, bg: s.bg, log: s.log})
	}
	if len(tools) > 0 {
		tools = append(tools, &observeTool{bg: s.bg}, &waitTool{bg: s.bg})
	}
	return tools, nil
}

// Name implements orchestrator.Toolset.
func (s *Set) Name() string { return "a2a" }

// Tools implements orchestrator.Toolset: the same tools for every user.
func (s *Set) Tools(context.Context, string) ([]orchestrator.Tool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tools, nil
}

// Close cancels background tasks and waits for them.
func (s *Set) Close() { s.bg.close() }

// peerTool is a2a@<name>.
type peerTool struct {
	svc    Service
	hc     *http.Client
	verify *cardsig.Verifier // nil: the card is not checked
	bg     *background
	log    *slog.Logger

	// mu guards client and card.
	mu     sync.Mutex
	client *w.Client
	card   *w.PeerCard
}

var peerSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"message":{"type":"string","description":"The task or question for the agent"},` +
	`"context_id":{"type":"string","description":"Continue an earlier conversation with this agent (context_id of a previous result)"},` +
	`"background":{"type":"boolean","description":"Start the task and return its task_id at once; collect it with a2a_wait"}},` +
	`"required":["message"]}`)

func (t *peerTool) Spec() orchestrator.ToolSpec {
	desc := t.svc.Description
	if desc == "" {
		desc = "a peer agent"
	}
	return orchestrator.ToolSpec{Name: "a2a@" + t.svc.Name, Description: "Delegate a task to the A2A agent " + t.svc.Name + ": " + desc,
		InputSchema: peerSchema, Source: "a2a", ReadOnly: true}
}

// resolve returns the cached client, reading the card the first time.
func (t *peerTool) resolve(ctx context.Context) (*w.Client, *w.PeerCard, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.client != nil {
		return t.client, t.card, nil
	}
	if v, ok := w.ParseVersion(t.svc.Version); ok && t.svc.Version != "" {
		t.client = &w.Client{HTTP: t.hc, URL: t.svc.URL, Version: v, Header: t.svc.Header}
		t.card = &w.PeerCard{Name: t.svc.Name, Streaming: true}
		return t.client, t.card, nil
	}
	raw, _, err := w.FetchCardRaw(ctx, t.hc, t.svc.URL, t.svc.Header, false)
	if err != nil {
		return nil, nil, err
	}
	if t.verify != nil {
		if err := t.verify.Verify(ctx, raw); err != nil {
			return nil, nil, err // wraps cardsig.ErrRefused; the card is read again next time
		}
	}
	card, err := w.ParseCard(raw)
	if err != nil {
		return nil, nil, err
	}
	iface, ok := card.JSONRPC()
	if !ok {
		return nil, nil, fmt.Errorf("agent %s offers no JSON-RPC interface", t.svc.Name)
	}
	t.client = &w.Client{HTTP: t.hc, URL: iface.URL, Version: iface.Version, Header: t.svc.Header}
	t.card = card
	return t.client, t.card, nil
}

func (t *peerTool) forget() {
	t.mu.Lock()
	t.client, t.card = nil, nil
	t.mu.Unlock()
}

type peerArgs struct {
	Message    string `json:"message"`
	ContextID  string `json:"context_id"`
	Background bool   `json:"background"`
}

func (t *peerTool) Call(ctx context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
	var a peerArgs
	if err := json.Unmarshal(inv.Arguments, &a); err != nil || strings.TrimSpace(a.Message) == "" {
		return orchestrator.ErrorResult("a2a@" + t.svc.Name + ": arguments must be {\"message\": \"...\"}"), nil
	}
	depth := depthOf(inv.Metadata)
	if depth+1 > t.svc.MaxDepth {
		return orchestrator.ErrorResult(fmt.Sprintf("a2a@%s refused: the delegation chain is already %d deep and max_depth is %d; answer without delegating", t.svc.Name, depth, t.svc.MaxDepth)), nil
	}
	msg := w.Message{MessageID: "msg_" + inv.CallID + "_" + randSuffix(), Role: w.RoleUser, ContextID: a.ContextID,
		Parts: []w.Part{w.TextPart(a.Message)}, Metadata: map[string]any{w.DepthKey: depth + 1}}
	emit := inv.Emit
	if emit == nil {
		emit = func(string, any) {}
	}
	if a.Background {
		id := t.bg.start(inv.RunID, t.svc.Name, func(ctx context.Context) *outcome { return t.run(ctx, msg, emit) })
		return &orchestrator.ToolResult{Content: fmt.Sprintf("started in the background as %s; collect it with a2a_wait", id),
			Data: map[string]any{"handle": id, "service": t.svc.Name}}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, t.svc.Timeout)
	defer cancel()
	out := t.run(ctx, msg, emit)
	return out.result(), nil
}

func depthOf(md map[string]string) int {
	var d int
	if _, err := fmt.Sscanf(md[w.DepthKey], "%d", &d); err != nil || d < 0 {
		return 0
	}
	return d
}
