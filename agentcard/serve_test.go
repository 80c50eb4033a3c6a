package agentcard_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	sdkcard "github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"github.com/wunder/wunder/agentcard"
	"github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// perUser is a catalog of each user's tools that counts its calls and
// fails while failing is set.
type perUser struct {
	mu      sync.Mutex
	tools   map[string][]orchestrator.ToolSpec
	calls   []string
	failing bool
}

func (p *perUser) Tools(_ context.Context, userID string) ([]orchestrator.ToolSpec, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, userID)
	if p.failing {
		return nil, errors.New("catalog down")
	}
	return p.tools[userID], nil
}

func get(t *testing.T, h http.Handler, method, target string, hdr ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func skillIDs(t *testing.T, b []byte) []string {
	t.Helper()
	var c struct {
		Skills []struct{ ID, Description string }
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range c.Skills {
		out = append(out, s.ID)
	}
	return out
}

// Without a public URL the card names the host and scheme each request
// reached (TLS or X-Forwarded-Proto https), one card per host, each cached
// under its own base.
func TestCardFollowsTheRequestBase(t *testing.T) {
	cat := &perUser{tools: map[string][]orchestrator.ToolSpec{"a2a": {{Name: "t1"}}}}
	h := agentcard.New(cat, nil)
	for _, tc := range []struct {
		host, proto string
		tls         bool
		want        string
	}{
		{"one.example:8080", "", false, "http://one.example:8080/a2a"},
		{"two.example", "https", false, "https://two.example/a2a"},
		{"two.example", "HTTPS", false, "https://two.example/a2a"},
		{"three.example", "", true, "https://three.example/a2a"},
	} {
		r := httptest.NewRequest("GET", agentcard.Path, nil)
		r.Host = tc.host
		if tc.proto != "" {
			r.Header.Set("X-Forwarded-Proto", tc.proto)
		}
		if tc.tls {
			r.TLS = &tls.ConnectionState{}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		c, err := a2awire.ParseCard(w.Body.Bytes())
		if err != nil || c.Interfaces[0].URL != tc.want {
			t.Errorf("%s (proto %q, tls %v): %+v %v; want %s", tc.host, tc.proto, tc.tls, c, err, tc.want)
		}
		if w.Header().Get("Vary") != "Host, A2A-Version" {
			t.Errorf("Vary %q; want Host, A2A-Version", w.Header().Get("Vary"))
		}
	}
	// Four requests, three bases: the second https://two.example was cached.
	cat.mu.Lock()
	defer cat.mu.Unlock()
	if len(cat.calls) != 3 {
		t.Errorf("the catalog was asked %d times; want once per base (3)", len(cat.calls))
	}
}

// The gRPC binding is declared as host:port, with the port of the scheme
// when the base names none.
func TestCardGRPCInterface(t *testing.T) {
	cat := &perUser{}
	for base, want := range map[string]string{
		"https://agents.example":      "agents.example:443",
		"http://agents.example":       "agents.example:80",
		"https://agents.example:9443": "agents.example:9443",
		"http://[::1]:8080/prefix":    "[::1]:8080",
	} {
		b, err := agentcard.Build(t.Context(), cat, agentcard.Options{GRPC: true}, base, "a2a", a2awire.V10)
		if err != nil {
			t.Fatal(err)
		}
		card, err := sdkcard.DefaultCardParser(b)
		if err != nil {
			t.Fatalf("a2a-go cannot read the card of %s: %v", base, err)
		}
		i := card.SupportedInterfaces[len(card.SupportedInterfaces)-1]
		if i.ProtocolBinding != sdk.TransportProtocolGRPC || i.URL != want || i.ProtocolVersion != "1.0" {
			t.Errorf("%s: gRPC interface %+v; want %s", base, *i, want)
		}
	}
	b, _ := agentcard.Build(t.Context(), cat, agentcard.Options{}, "https://agents.example", "a2a", a2awire.V10)
	if strings.Contains(string(b), "GRPC") {
		t.Error("the card declares gRPC without Options.GRPC")
	}
}

// A 0.3 client reads the 0.3 card (a2a-go's 0.3 parser): the JSON-RPC
// endpoint at 0.3 and the security schemes in 0.3's shape, with nothing
// of 1.0's.
func TestCardAs03ClientReadsIt(t *testing.T) {
	only03, err := agentcard.Build(t.Context(), &perUser{}, agentcard.Options{APIKeyRequired: true, Path: "/rpc"}, "https://a.example/", "a2a", a2awire.V03)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(only03, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"supportedInterfaces", "securityRequirements"} {
		if _, ok := raw[k]; ok {
			t.Errorf("the 0.3 card has 1.0's %s", k)
		}
	}
	card, err := a2av0.NewAgentCardParser()(only03)
	if err != nil {
		t.Fatalf("a2a-go's 0.3 parser: %v", err)
	}
	if len(card.SupportedInterfaces) != 1 {
		t.Fatalf("0.3 interfaces %+v; want the one endpoint", card.SupportedInterfaces)
	}
	if i := card.SupportedInterfaces[0]; i.URL != "https://a.example/rpc" || i.ProtocolBinding != sdk.TransportProtocolJSONRPC {
		t.Errorf("0.3 interface %+v", *i)
	}
	if _, ok := card.SecuritySchemes["bearer"].(sdk.HTTPAuthSecurityScheme); !ok {
		t.Errorf("0.3 bearer scheme read as %#v", card.SecuritySchemes["bearer"])
	}
	if _, ok := card.SecuritySchemes["apiKey"].(sdk.APIKeySecurityScheme); !ok {
		t.Errorf("0.3 apiKey scheme read as %#v", card.SecuritySchemes["apiKey"])
	}
	if !card.Capabilities.ExtendedAgentCard || len(card.SecurityRequirements) != 2 {
		t.Errorf("0.3 extended card %v, requirements %v", card.Capabilities.ExtendedAgentCard, card.SecurityRequirements)
	}
}

// The extended card of a user lists that user's whole catalog, not the
// public card's subset of tools, nor another user's tools.
func TestExtendedCardIsTheUsers(t *testing.T) {
	cat := &perUser{tools: map[string][]orchestrator.ToolSpec{
		"a2a":   {{Name: "public_tool"}, {Name: "other_tool"}},
		"alice": {{Name: "public_tool"}, {Name: "alice_tool", Description: "\n  Alice's own.\nDetails.", Source: "mcp"}, {Name: "nameless"}},
	}}
	h := agentcard.New(cat, &agentcard.Options{ToolNames: []string{"public_tool"}, PublicURL: "https://x.example"})
	pub := get(t, h, "GET", agentcard.Path)
	if got := skillIDs(t, pub.Body.Bytes()); !slices.Equal(got, []string{"answer", "public_tool"}) {
		t.Errorf("public skills %v", got)
	}
	ext, err := h.Extended(httptest.NewRequest("GET", "/a2a", nil), "alice", a2awire.V03)
	if err != nil {
		t.Fatal(err)
	}
	if got := skillIDs(t, ext); !slices.Equal(got, []string{"answer", "public_tool", "alice_tool", "nameless"}) {
		t.Errorf("alice's extended skills %v", got)
	}
	var c struct {
		URL    string
		Skills []struct {
			ID, Description string
			Tags            []string
		}
	}
	_ = json.Unmarshal(ext, &c)
	if c.URL != "https://x.example/a2a" {
		t.Errorf("extended card URL %q", c.URL)
	}
	for _, s := range c.Skills {
		switch s.ID {
		case "alice_tool":
			if s.Description != "Alice's own." || !slices.Equal(s.Tags, []string{"mcp"}) {
				t.Errorf("alice_tool skill %+v: want the first line, tagged by its source", s)
			}
		case "nameless":
			if s.Description != "a tool" || !slices.Equal(s.Tags, []string{"tool"}) {
				t.Errorf("a tool without description or source: %+v", s)
			}
		}
	}
}

// HEAD answers the headers of GET without the body; a catalog that fails
// before any card was built is 503, not an empty card; other methods are
// refused with Allow.
func TestCardMethodsAndFailures(t *testing.T) {
	cat := &perUser{tools: map[string][]orchestrator.ToolSpec{"a2a": {{Name: "t"}}}}
	h := agentcard.New(cat, nil)
	g := get(t, h, "GET", agentcard.Path)
	hd := get(t, h, "HEAD", agentcard.Path)
	if hd.Code != 200 || hd.Body.Len() != 0 || hd.Header().Get("Content-Length") != g.Header().Get("Content-Length") || hd.Header().Get("ETag") != g.Header().Get("ETag") {
		t.Errorf("HEAD = %d body %d headers %v; GET headers %v", hd.Code, hd.Body.Len(), hd.Header(), g.Header())
	}
	if r := get(t, h, "GET", agentcard.Path, "If-None-Match", "*"); r.Code != http.StatusNotModified || r.Body.Len() != 0 {
		t.Errorf("If-None-Match * = %d", r.Code)
	}
	if r := get(t, h, "GET", agentcard.Path, "If-None-Match", `"other", `+g.Header().Get("ETag")); r.Code != http.StatusNotModified {
		t.Errorf("If-None-Match with a list holding the ETag = %d", r.Code)
	}
	if r := get(t, h, "GET", agentcard.Path, "If-None-Match", `"other"`, "If-Modified-Since", "Mon, 01 Jan 2124 00:00:00 GMT"); r.Code != 200 {
		t.Errorf("If-None-Match that does not match wins over If-Modified-Since: %d", r.Code)
	}
	if r := get(t, h, "GET", agentcard.Path, "If-Modified-Since", "yesterday"); r.Code != 200 {
		t.Errorf("an unreadable If-Modified-Since = %d", r.Code)
	}
	for _, m := range []string{"PUT", "DELETE", "PATCH"} {
		r := get(t, h, m, agentcard.Path)
		if r.Code != http.StatusMethodNotAllowed || r.Header().Get("Allow") != "GET, HEAD, OPTIONS" {
			t.Errorf("%s = %d Allow %q", m, r.Code, r.Header().Get("Allow"))
		}
	}

	failing := &perUser{failing: true}
	r := get(t, agentcard.New(failing, nil), "GET", agentcard.Path)
	body, _ := io.ReadAll(r.Body)
	if r.Code != http.StatusServiceUnavailable || strings.Contains(string(body), "catalog down") {
		t.Errorf("failing catalog = %d %q; want 503 without the cause", r.Code, body)
	}
	if _, err := agentcard.New(failing, nil).Extended(httptest.NewRequest("GET", "/", nil), "alice", a2awire.V10); err == nil {
		t.Error("Extended hid the catalog's failure")
	}
}
