package a2awire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// WellKnownCardPath is where an agent serves its card.
const WellKnownCardPath = "/.well-known/agent-card.json"

// PeerTenantPrefix begins the tenant of the gRPC interface of a peer
// published behind wunder (the A2A pass-through): "peers/research" is the
// peer research. A gRPC request names no peer in its path
// (/lf.a2a.v1.A2AService/{Method}), so the card's interface names it in the
// tenant every request carries. wunder's own tenants name users, and
// neither a user id nor a2a.server.tenants may hold a "/" (internal/config
// refuses this prefix by name), so the two never meet.
const PeerTenantPrefix = "peers/"

// Interface is one way to reach an agent.
type Interface struct {
	URL       string
	Transport string // JSONRPC, GRPC, HTTP+JSON
	Version   Version
	// Tenant is the interface's tenant (1.0), sent with every request
	// made through it; "" for none.
	Tenant string
}

// PeerCard is what wunder reads of a peer's AgentCard, from either shape.
type PeerCard struct {
	Name, Description string
	Streaming         bool
	Push              bool
	Interfaces        []Interface
	Skills            []string
}

// JSONRPC returns the first JSON-RPC interface, in the card's order of
// preference.
func (c *PeerCard) JSONRPC() (Interface, bool) {
	for _, i := range c.Interfaces {
		if strings.EqualFold(i.Transport, "JSONRPC") {
			return i, true
		}
	}
	return Interface{}, false
}

// ParseCard reads a 1.0 card (supportedInterfaces) or a 0.3 card (url,
// preferredTransport, protocolVersion, additionalInterfaces). 1.0
// interfaces come first: a union card is read as 1.0.
func ParseCard(b []byte) (*PeerCard, error) {
	var w struct {
		Name         string `json:"name"`
		Description  string `json:"description"`
		Capabilities struct {
			Streaming bool `json:"streaming"`
			Push      bool `json:"pushNotifications"`
		} `json:"capabilities"`
		Supported []struct {
			URL             string `json:"url"`
			ProtocolBinding string `json:"protocolBinding"`
			ProtocolVersion string `json:"protocolVersion"`
			Tenant          string `json:"tenant"`
		} `json:"supportedInterfaces"`
		URL                string `json:"url"`
		PreferredTransport string `json:"preferredTransport"`
		ProtocolVersion    string `json:"protocolVersion"`
		Additional         []struct {
			URL       string `json:"url"`
			Transport string `json:"transport"`
		} `json:"additionalInterfaces"`
		Skills []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"skills"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("agent card: %w", err)
	}
	c := &PeerCard{Name: w.Name, Description: w.Description, Streaming: w.Capabilities.Streaming, Push: w.Capabilities.Push}
	for _, s := range w.Supported {
		v, ok := ParseVersion(s.ProtocolVersion)
		if !ok || s.URL == "" {
			continue
		}
		c.Interfaces = append(c.Interfaces, Interface{URL: s.URL, Transport: s.ProtocolBinding, Version: v, Tenant: s.Tenant})
	}
	if w.URL != "" {
		t := w.PreferredTransport
		if t == "" {
			t = "JSONRPC"
		}
		c.Interfaces = append(c.Interfaces, Interface{URL: w.URL, Transport: t, Version: V03})
		for _, a := range w.Additional {
			c.Interfaces = append(c.Interfaces, Interface{URL: a.URL, Transport: a.Transport, Version: V03})
		}
	}
	for _, s := range w.Skills {
		c.Skills = append(c.Skills, s.Name)
	}
	if len(c.Interfaces) == 0 {
		return nil, errors.New("agent card: no interface (supportedInterfaces or url)")
	}
	return c, nil
}

// FetchCard GETs and parses a card. cardURL may be the card's own URL or an
// agent base URL, to which the well-known path is appended.
func FetchCard(ctx context.Context, hc *http.Client, cardURL string, hdr http.Header) (*PeerCard, error) {
	b, _, err := FetchCardRaw(ctx, hc, cardURL, hdr, false)
	if err != nil {
		return nil, err
	}
	return ParseCard(b)
}

// FetchCardRaw GETs a card's bytes (at most 4 MiB of JSON) and says where
// it found it. cardURL is the card's own URL (ending in .json) or an agent
// URL, to which the well-known path is appended; with tryOrigin, an agent
// URL with a path (an endpoint such as /a2a) that has no card there is
// also tried at its origin's well-known path.
func FetchCardRaw(ctx context.Context, hc *http.Client, cardURL string, hdr http.Header, tryOrigin bool) ([]byte, string, error) {
	candidates := []string{cardURL}
	if !strings.HasSuffix(cardURL, ".json") {
		base := strings.TrimSuffix(cardURL, "/")
		candidates = []string{base + WellKnownCardPath}
		if u, err := url.Parse(cardURL); tryOrigin && err == nil && u.Host != "" {
			if origin := u.Scheme + "://" + u.Host; origin != base {
				candidates = append(candidates, origin+WellKnownCardPath)
			}
		}
	}
	var last error
	for _, c := range candidates {
		b, err := getCard(ctx, hc, c, hdr)
		if err == nil {
			return b, c, nil
		}
		last = err
	}
	return nil, "", last
}

func getCard(ctx context.Context, hc *http.Client, cardURL string, hdr http.Header) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("agent card %s: HTTP %d", cardURL, resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, err
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("agent card %s: not JSON", cardURL)
	}
	return b, nil
}
