package a2atools

import (
	"context"
	"fmt"
	"net/http"
	"time"

	w "github.com/wunder/wunder/internal/a2awire"
)

// Published is a peer offered to the A2A pass-through (Service.Publish):
// what the a2a front-end needs to forward a caller's requests to it. cmd/wunder
// hands it to the front-end, which may not import adapters.
type Published struct {
	// Name is the service's name: the peer is published at /a2a/{Name}.
	Name string
	// Header is sent with every request to the peer (its credentials).
	Header http.Header
	// HTTP is the client for the peer.
	HTTP *http.Client
	// Timeout is the service's call timeout.
	Timeout time.Duration

	tool *peerTool
}

// Config identifies the service's settings: it changes when the service
// is reconfigured (Set.Reconfigure keeps an unchanged service's).
func (p *Published) Config() any { return p.tool }

// Card reads the peer's card as the peer serves it to a client that asks
// for version ("" = none, as a2a@service reads it), and checks its
// signatures as the service's card_verification says: a refused card is
// an error wrapping cardsig.ErrRefused. Not cached: the pass-through keeps
// what it reads.
func (p *Published) Card(ctx context.Context, version string) ([]byte, error) {
	hdr := p.Header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	if version != "" {
		hdr.Set(w.VersionHeader, version)
	}
	raw, _, err := w.FetchCardRaw(ctx, p.HTTP, p.tool.svc.URL, hdr, false)
	if err != nil {
		return nil, fmt.Errorf("a2a service %s: %w", p.Name, err)
	}
	if p.tool.verify != nil {
		if err := p.tool.verify.Verify(ctx, raw); err != nil {
			return nil, fmt.Errorf("a2a service %s: %w", p.Name, err)
		}
	}
	return raw, nil
}

// Published returns the peer of that name when its service is published
// (and enabled).
func (s *Set) Published(name string) (*Published, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, t := range s.tools {
		if pt, ok := t.(*peerTool); ok && pt.svc.Name == name && pt.svc.Publish && pt.svc.Version == "" {
			return &Published{Name: name, Header: pt.svc.Header, HTTP: pt.hc, Timeout: pt.svc.Timeout, tool: pt}, true
		}
	}
	return nil, false
}
