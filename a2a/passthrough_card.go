package a2a

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// A published peer's card: read from the peer (checked as its service
// says), kept for CardTTL per version asked, and served to a caller who
// may use a2a@{peer} rewritten for wunder (PassThroughOptions.Card). The
// card is behind wunder's authentication, like the bindings. The card read
// without a version (as a2a@service reads it) also gives the peer's
// interfaces, to which calls are forwarded.

type cardKey struct {
	peer, version string
	config        any
}

// peerCard is a card as the peer served it, and its interfaces.
type peerCard struct {
	raw    json.RawMessage
	parsed *w.PeerCard
	at     time.Time
}

// maxCards bounds the cards kept (peers × versions asked).
const maxCards = 256

// card returns the peer's card for version ("" = none), read again after
// CardTTL or after a call could not reach the peer (forget).
func (p *passThrough) card(ctx context.Context, peer *Peer, version string) (*peerCard, error) {
	key := cardKey{peer.Name, version, peer.Config}
	p.mu.Lock()
	c := p.cards[key]
	p.mu.Unlock()
	if c != nil && time.Since(c.at) < p.opts.CardTTL {
		return c, nil
	}
	ctx, cancel := context.WithTimeout(ctx, min(peer.Timeout, 30*time.Second))
	defer cancel()
	raw, err := peer.Card(ctx, version)
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		// Not reached (refused, no answer in time, TLS): try again later.
		return nil, errKind(orchestrator.ErrUnavailable, "agent %s cannot be reached for its card: %v", peer.Name, ue)
	}
	if err != nil {
		// An answer that is no card, or a card its service refuses
		// (card_verification).
		return nil, fmt.Errorf("%w: the agent card of %s cannot be used: %w", w.ErrInvalidAgentResponse, peer.Name, err)
	}
	parsed, err := w.ParseCard(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: the agent card of %s: %w", w.ErrInvalidAgentResponse, peer.Name, err)
	}
	c = &peerCard{raw: raw, parsed: parsed, at: time.Now()}
	p.mu.Lock()
	if len(p.cards) >= maxCards {
		clear(p.cards)
	}
	p.cards[key] = c
	p.mu.Unlock()
	return c, nil
}

// forget drops the peer's cards: it could not be reached, and its card
// may have changed.
func (p *passThrough) forget(peer string) {
	p.mu.Lock()
	for k := range p.cards {
		if k.peer == peer {
			delete(p.cards, k)
		}
	}
	p.mu.Unlock()
}

// iface is the peer's interface for a binding ("JSONRPC", "HTTP+JSON") of
// the call's version: the first its card lists; ok is false when it lists
// none.
func (p *passThrough) iface(ctx context.Context, pc *passCall, binding string) (i w.Interface, ok bool, err error) {
	c, err := p.card(ctx, pc.peer, "")
	if err != nil {
		return w.Interface{}, false, err
	}
	for _, i := range c.parsed.Interfaces {
		if strings.EqualFold(i.Transport, binding) && i.Version == pc.v {
			return i, true, nil
		}
	}
	return w.Interface{}, false, nil
}

// serveCard answers GET (and HEAD) of the peer's card.
func (p *passThrough) serveCard(rw http.ResponseWriter, r *http.Request, peer *Peer) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		rw.Header().Set("Allow", "GET, HEAD")
		writeRESTStatus(rw, http.StatusMethodNotAllowed, "UNIMPLEMENTED", r.Method+" is not allowed here; use GET", nil)
		return
	}
	pc := &passCall{peer: peer, start: time.Now(), call: call{v: w.V10, r: r, rest: true}}
	hv := requestVersion(r)
	if _, ok := w.ParseVersion(hv); hv != "" && !ok {
		p.refuse(rw, pc, errKind(w.ErrVersionNotSupported, "A2A-Version %s is not supported; ask for 1.0 or 0.3", hv))
		return
	}
	// Reading the card is no call: it is decided, not audited.
	if err := p.h.identify(r, &pc.call); err != nil {
		p.refuse(rw, pc, err)
		return
	}
	pc.owner = p.h.actor(&pc.call)
	if err := p.decide(r.Context(), pc, false); err != nil {
		p.refuse(rw, pc, err)
		return
	}
	c, err := p.card(r.Context(), peer, hv)
	if err != nil {
		p.refuse(rw, pc, err)
		return
	}
	body, err := p.opts.Card(r, peer.Name, c.raw)
	if err != nil {
		p.refuse(rw, pc, fmt.Errorf("%w: the agent card of %s: %w", w.ErrInvalidAgentResponse, peer.Name, err))
		return
	}
	sum := sha256.Sum256(body)
	etag := `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`
	hd := rw.Header()
	hd.Set("Cache-Control", "private, max-age="+strconv.Itoa(int(p.opts.CardTTL/time.Second)))
	hd.Set("ETag", etag)
	hd.Set("Vary", "A2A-Version, Authorization, X-API-Key")
	if inm := r.Header.Get("If-None-Match"); inm != "" && (strings.Contains(inm, etag) || strings.TrimSpace(inm) == "*") {
		rw.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	rw.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = rw.Write(body)
	}
}
