package agentcard_test

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/wunder/wunder/agentcard"
	"github.com/wunder/wunder/internal/a2awire"
)

// A published peer's card, as PeerCard rewrites it for each shape a peer
// may serve: the interfaces wunder forwards at its URLs (each once,
// without the peer's tenant), wunder's gRPC with the peer's tenant when
// wunder serves gRPC, 0.3 HTTP+JSON left out, no push or extended card, wunder's security schemes in the card's shape, no peer
// signature; the rest as the peer said.
func TestPeerCard(t *testing.T) {
	const endpoint = "https://w.example/a2a/research"
	peer10 := `{"name":"research","description":"finds papers","version":"7","skills":[{"id":"s","name":"s"}],
		"supportedInterfaces":[
			{"url":"https://p/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0","tenant":"t1"},
			{"url":"https://p/rpc2","protocolBinding":"JSONRPC","protocolVersion":"1.0"},
			{"url":"https://p/rpc03","protocolBinding":"JSONRPC","protocolVersion":"0.3"},
			{"url":"https://p/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"},
			{"url":"p:443","protocolBinding":"GRPC","protocolVersion":"1.0"},
			{"url":"https://p/x","protocolBinding":"KAFKA","protocolVersion":"1.0"}],
		"capabilities":{"streaming":true,"pushNotifications":true,"extendedAgentCard":true},
		"securitySchemes":{"oauth":{"oauth2SecurityScheme":{}}},"securityRequirements":[{"schemes":{"oauth":[]}}],
		"signatures":[{"protected":"x","signature":"y"}]}`
	peer03 := `{"name":"old","url":"https://p/rpc","preferredTransport":"JSONRPC","protocolVersion":"0.3.0",
		"additionalInterfaces":[{"url":"https://p/rpc","transport":"JSONRPC"},{"url":"p:443","transport":"GRPC"}],
		"supportsAuthenticatedExtendedCard":true,"capabilities":{"pushNotifications":true},
		"securitySchemes":{"k":{"type":"apiKey","in":"header","name":"K"}},"security":[{"k":[]}]}`
	grpcOnly03 := `{"name":"g","url":"p:443","preferredTransport":"GRPC","protocolVersion":"0.3.0"}`

	h := agentcard.New(tools, &agentcard.Options{APIKeyRequired: true, PublicURL: "https://w.example"})
	rewrite := func(raw string, h *agentcard.Handler) map[string]any {
		t.Helper()
		b, err := h.PeerCard(httptest.NewRequest("GET", "/", nil), "research", json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "https://p/") {
			t.Errorf("the rewritten card names the peer's URLs: %s", b)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}

	c := rewrite(peer10, h)
	var got []string
	for _, i := range c["supportedInterfaces"].([]any) {
		m := i.(map[string]any)
		if _, ok := m["tenant"]; ok {
			t.Errorf("interface keeps the peer's tenant: %v", m)
		}
		got = append(got, m["protocolBinding"].(string)+" "+m["protocolVersion"].(string)+" "+m["url"].(string))
	}
	want := []string{"JSONRPC 1.0 " + endpoint, "JSONRPC 0.3 " + endpoint, "HTTP+JSON 1.0 " + endpoint + "/v1"}
	if !slices.Equal(got, want) {
		t.Errorf("interfaces = %q; want %q", got, want)
	}
	caps := c["capabilities"].(map[string]any)
	if caps["pushNotifications"] != false || caps["extendedAgentCard"] != false || caps["streaming"] != true {
		t.Errorf("capabilities = %v", caps)
	}
	schemes := c["securitySchemes"].(map[string]any)
	if _, ok := schemes["apiKey"].(map[string]any)["apiKeySecurityScheme"]; !ok || schemes["oauth"] != nil || c["securityRequirements"] != nil || c["signatures"] != nil {
		t.Errorf("security and signatures: %v %v %v", schemes, c["securityRequirements"], c["signatures"])
	}
	if c["name"] != "research" || c["description"] != "finds papers" || c["version"] != "7" || len(c["skills"].([]any)) != 1 {
		t.Errorf("the peer's own fields: %v", c)
	}

	c = rewrite(peer03, h)
	if c["url"] != endpoint || c["preferredTransport"] != "JSONRPC" || c["protocolVersion"] != "0.3.0" || c["supportsAuthenticatedExtendedCard"] != false {
		t.Errorf("0.3 card: %v", c)
	}
	if extra := c["additionalInterfaces"].([]any); len(extra) != 1 || extra[0].(map[string]any)["url"] != endpoint {
		t.Errorf("0.3 additionalInterfaces: %v", extra)
	}
	if k := c["securitySchemes"].(map[string]any)["apiKey"].(map[string]any); k["type"] != "apiKey" || c["security"] == nil || c["securitySchemes"].(map[string]any)["k"] != nil {
		t.Errorf("0.3 security: %v %v", c["securitySchemes"], c["security"])
	}
	if _, err := a2awire.ParseCard(mustJSON(t, c)); err != nil {
		t.Errorf("wunder's own parser reads the 0.3 rewrite: %v", err)
	}

	c = rewrite(grpcOnly03, h)
	if _, ok := c["url"]; ok {
		t.Errorf("a gRPC-only 0.3 card keeps a url: %v", c)
	}

	// With gRPC served: wunder's gRPC target with the peer's tenant, in
	// the place of the peer's gRPC interface, else last; none for a peer
	// without a JSON-RPC 1.0 interface (gRPC is forwarded through it).
	hg := agentcard.New(tools, &agentcard.Options{APIKeyRequired: true, PublicURL: "https://w.example", GRPC: true})
	grpcWant := "GRPC 1.0 w.example:443 peers/research"
	for _, tc := range []struct {
		name, card string
		want       []string
	}{
		{"the peer's gRPC", peer10, []string{want[0], want[1], want[2], grpcWant}},
		{"no gRPC of the peer's", `{"name":"r","supportedInterfaces":[{"url":"p:1","protocolBinding":"GRPC","protocolVersion":"0.3"},` +
			`{"url":"https://p/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`, []string{want[0], grpcWant}},
		{"gRPC first", `{"name":"r","supportedInterfaces":[{"url":"p:1","protocolBinding":"GRPC","protocolVersion":"1.0","tenant":"theirs"},` +
			`{"url":"https://p/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`, []string{grpcWant, want[0]}},
		{"no JSON-RPC 1.0", `{"name":"r","supportedInterfaces":[{"url":"p:1","protocolBinding":"GRPC","protocolVersion":"1.0"},` +
			`{"url":"https://p/rpc","protocolBinding":"JSONRPC","protocolVersion":"0.3"},{"url":"https://p/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}]}`,
			[]string{want[1], want[2]}},
	} {
		var got []string
		for _, i := range rewrite(tc.card, hg)["supportedInterfaces"].([]any) {
			m := i.(map[string]any)
			tenant, _ := m["tenant"].(string)
			got = append(got, strings.TrimSpace(m["protocolBinding"].(string)+" "+m["protocolVersion"].(string)+" "+m["url"].(string)+" "+tenant))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: interfaces = %q; want %q", tc.name, got, tc.want)
		}
	}

	// Without credentials configured, no security schemes.
	c = rewrite(peer10, agentcard.New(tools, &agentcard.Options{PublicURL: "https://w.example"}))
	if _, ok := c["securitySchemes"]; ok {
		t.Errorf("schemes without credentials: %v", c["securitySchemes"])
	}
	// A union card (wunder's own, unversioned) keeps both shapes, each
	// scheme in both.
	union := httptest.NewRecorder()
	agentcard.New(tools, &agentcard.Options{APIKeyRequired: true}).ServeHTTP(union, httptest.NewRequest("GET", agentcard.Path, nil))
	c = rewrite(union.Body.String(), h)
	k := c["securitySchemes"].(map[string]any)["apiKey"].(map[string]any)
	if c["url"] != endpoint || c["supportedInterfaces"] == nil || k["type"] != "apiKey" || k["apiKeySecurityScheme"] == nil {
		t.Errorf("union card: %v", c)
	}
	if _, err := h.PeerCard(httptest.NewRequest("GET", "/", nil), "research", json.RawMessage(`[1]`)); err == nil {
		t.Error("a card that is no object was rewritten")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
