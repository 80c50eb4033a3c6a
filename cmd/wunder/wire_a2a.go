package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/wunder/wunder/a2a"
	"github.com/wunder/wunder/adapters/a2atools"
	"github.com/wunder/wunder/adapters/builtin"
	"github.com/wunder/wunder/agentcard"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/cardsig"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/storage"
)

// a2aParts are the A2A pieces an app owns: the peer toolset (background
// delegations), the /a2a handler (push watchers) and the card.
type a2aParts struct {
	tools   *a2atools.Set
	handler *a2a.Handler
	card    *agentcard.Handler
}

// newA2ATools builds the a2a@service tools from a2a.services. The config
// was validated, so New does not fail on names; if it does, no peers.
// hc carries the calls to peers (nil: the toolset's default client).
func newA2ATools(cfg *config.Config, log *slog.Logger, hc *http.Client) *a2atools.Set {
	set, err := a2atools.New(a2aServices(cfg), &a2atools.Options{HTTP: hc, Logger: log.With("toolset", "a2a")})
	if err != nil {
		log.Error("a2a services not offered", "err", err)
		set, _ = a2atools.New(nil, nil)
	}
	return set
}

// a2aServices are the enabled a2a.services as a2atools takes them.
func a2aServices(cfg *config.Config) []a2atools.Service {
	var svcs []a2atools.Service
	for _, s := range cfg.A2A.Services {
		if !s.Enabled {
			continue
		}
		h := http.Header{}
		for k, v := range s.Headers {
			h.Set(k, v)
		}
		if s.BearerToken != "" {
			h.Set("Authorization", "Bearer "+s.BearerToken)
		}
		cv := s.CardVerification
		svcs = append(svcs, a2atools.Service{Name: s.Name, Description: s.Description, URL: s.Endpoint,
			Version: s.Version, Header: h, Timeout: s.Timeout(cfg.A2A), MaxDepth: s.MaxDepth,
			Card:    a2atools.CardCheck{Require: cv.Require, Keys: cv.Keys, JWKSURL: cv.JWKSURL, AllowPrivate: cv.AllowPrivate},
			Publish: s.Publish})
	}
	return svcs
}

// mountA2A mounts POST /a2a and /a2a/ behind the gateway's middleware (its
// API-key auth applies) and keeps the card for handler(). With a card
// signing key, the card is signed and the key's JWKS served.
func mountA2A(a *app, tools *a2atools.Set, signer *cardsig.Signer) {
	cfg := a.cfg.A2A
	a.a2a = &a2aParts{tools: tools}
	if !cfg.Server.Enabled {
		return
	}
	cardOpts := &agentcard.Options{
		Name: cfg.Server.Name, Description: cfg.Server.Description, Version: version,
		PublicURL: a.cfg.Server.PublicURL, UserID: cfg.Server.UserID, ToolNames: cfg.Server.ToolNames,
		PushNotifications: cfg.Push.Enabled, APIKeyRequired: a.cfg.Security.APIKey != "", GRPC: true,
	}
	if signer != nil {
		cardOpts.Sign = signer.Sign
		a.gw.MountOpen(cardsig.JWKSPath, signer.JWKSHandler()) // public, like the card
	}
	a.a2a.card = agentcard.New(a.orch, cardOpts)
	opts := &a2a.Options{
		Identify: a2aUser, Tenants: cfg.Server.Tenants,
		DefaultUser: cfg.Server.UserID, ToolNames: cfg.Server.ToolNames, ModelName: cfg.Server.Model,
		ToolActivity: cfg.Server.ToolActivity,
		Heartbeat:    a.cfg.Server.SSEHeartbeat(), MaxBodyBytes: a.cfg.AttachmentBodyBytes(), // file parts
		Attachments: a.attach,               // wire_attachments.go
		PublicURL:   a.cfg.Server.PublicURL, // download links of large file artifacts
		Logger:      a.log.With("frontend", "a2a"),
	}
	if f := cfg.Server.Files; f.Save && a.builtin != nil {
		opts.Files = &a2a.FileOptions{Store: a2aFiles{a.builtin}, Dir: f.Dir, FetchURLs: f.FetchURLs,
			AllowPrivate: f.AllowPrivate, FetchTimeout: f.FetchTimeout(), CleanupFailed: a.tel.A2AFileCleanupFailed}
	}
	if a.cfg.Security.APIKey != "" {
		// The extended card is for authenticated callers; without
		// credentials configured it is not declared and -32007 answers.
		opts.ExtendedCard = a.a2a.card.Extended
	}
	if cfg.Push.Enabled {
		opts.Push = &a2a.PushOptions{Store: pushStore{a.store}, AllowPrivate: cfg.Push.AllowPrivate,
			MaxAttempts: cfg.Push.MaxAttempts, Timeout: cfg.Push.Timeout(), MaxConfigsPerTask: cfg.Push.MaxConfigsPerTask,
			// Notifications continue the trace of the request that set the
			// push config, with a traceparent (wire_telemetry.go).
			WrapTransport: wrapTransport(a.tel)}
		if a.tel.Tracing() {
			opts.Push.Carry = a.tel.Carry
		}
	}
	// The A2A pass-through (a2a.services[].publish): the peers are looked
	// up per request, so a reconfigured service is published or not at
	// once.
	opts.PassThrough = &a2a.PassThroughOptions{Peers: publishedPeers{tools}, Policy: a.orch, IDs: a.store, Card: a.a2a.card.PeerCard}
	a.a2a.handler = a2a.New(a.orch, opts)
	a.gw.Mount("/a2a", a.a2a.handler)
	a.gw.Mount("/a2a/", a.a2a.handler) // JSON-RPC at /a2a/, HTTP+JSON under /a2a/v1/
	a.gw.Mount(a2a.GRPCServicePath, a.a2a.handler.GRPC())
	if a.a2a.card != nil {
		a.gw.MountOpen(agentcard.Path, a.a2a.card) // readable without credentials
	}
}

// cardSigner is the signer of a2a.server.card_signing_key, or nil (none,
// or the A2A server is off). The signatures name the JWKS (jku) when
// server.public_url says where it is.
func cardSigner(cfg *config.Config) (*cardsig.Signer, error) {
	key := cfg.A2A.Server.CardSigningKey
	if key == "" || !cfg.A2A.Server.Enabled {
		return nil, nil
	}
	o := &cardsig.Options{KID: cfg.A2A.Server.CardSigningKID}
	if u := strings.TrimSuffix(cfg.Server.PublicURL, "/"); u != "" {
		o.JKU = u + cardsig.JWKSPath
	}
	s, err := cardsig.NewSigner(key, o)
	if err != nil {
		return nil, fmt.Errorf("a2a.server.card_signing_key: %w", err)
	}
	return s, nil
}

// a2aUser is the user an A2A request acts for: the one it names (its
// tenant's or its X-Wunder-User header; an admin may act for anyone), the
// user its credentials pin, or "" for an admin that names none — every
// user, as on the REST routes (the handler starts such a caller's new
// tasks as a2a.Options.DefaultUser).
func a2aUser(r *http.Request, requested string) (string, error) {
	return gateway.ScopeOf(r.Context(), requested)
}

// publishedPeers are the published a2a.services, as the pass-through
// takes them.
type publishedPeers struct{ set *a2atools.Set }

func (p publishedPeers) Peer(name string) (*a2a.Peer, bool) {
	pub, ok := p.set.Published(name)
	if !ok {
		return nil, false
	}
	return &a2a.Peer{Name: pub.Name, Header: pub.Header, HTTP: pub.HTTP, Timeout: pub.Timeout, Config: pub.Config(),
		Card: func(ctx context.Context, version string) (json.RawMessage, error) { return pub.Card(ctx, version) }}, true
}

// closeA2A stops push delivery and background delegations.
func (a *app) closeA2A() {
	if a.a2a == nil {
		return
	}
	if a.a2a.handler != nil {
		a.a2a.handler.Close()
	}
	a.a2a.tools.Close()
}

// a2aFiles keeps the files of A2A messages in the built-in tools'
// workspaces: the resolver, deny globs and quota of the workspace API.
type a2aFiles struct{ set *builtin.Set }

var _ a2a.FileStore = a2aFiles{}

func (f a2aFiles) WriteFile(ctx context.Context, userID, path string, data []byte) error {
	_, err := f.set.WriteFile(ctx, userID, path, bytes.NewReader(data), true)
	return err
}

// RemoveAll removes the folder at path; entries the deny globs keep
// (builtin.Set.Remove leaves them) are a failure: the folder stays.
func (f a2aFiles) RemoveAll(ctx context.Context, userID, path string) error {
	kept, err := f.set.Remove(ctx, userID, path)
	if err == nil && kept > 0 {
		err = fmt.Errorf("%d entries under %s are kept by security.deny_globs", kept, path)
	}
	return err
}

// pushStore adapts storage's push configs to a2a.PushStore.
type pushStore struct{ st *storage.Store }

var _ a2a.PushStore = pushStore{}

func (p pushStore) SavePushConfig(ctx context.Context, c *a2a.PushConfig) error {
	return p.st.SavePushConfig(ctx, &storage.PushConfig{TaskID: c.TaskID, ID: c.ID, UserID: c.UserID, URL: c.URL, Token: c.Token,
		AuthScheme: c.AuthScheme, AuthCredentials: c.AuthCredentials, Version: c.Version, CreatedAt: c.CreatedAt})
}

func (p pushStore) GetPushConfig(ctx context.Context, taskID, id string) (*a2a.PushConfig, error) {
	c, err := p.st.GetPushConfig(ctx, taskID, id)
	if err != nil {
		return nil, err
	}
	return fromStoredPush(c), nil
}

func (p pushStore) ListPushConfigs(ctx context.Context, taskID string) ([]*a2a.PushConfig, error) {
	cs, err := p.st.ListPushConfigs(ctx, taskID)
	if err != nil {
		return nil, err
	}
	out := make([]*a2a.PushConfig, len(cs))
	for i, c := range cs {
		out[i] = fromStoredPush(c)
	}
	return out, nil
}

func (p pushStore) DeletePushConfig(ctx context.Context, taskID, id string) error {
	return p.st.DeletePushConfig(ctx, taskID, id)
}

func fromStoredPush(c *storage.PushConfig) *a2a.PushConfig {
	return &a2a.PushConfig{TaskID: c.TaskID, ID: c.ID, UserID: c.UserID, URL: c.URL, Token: c.Token,
		AuthScheme: c.AuthScheme, AuthCredentials: c.AuthCredentials, Version: c.Version, CreatedAt: c.CreatedAt}
}
