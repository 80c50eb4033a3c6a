package agentcard_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	sdkcard "github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/wunder/wunder/agentcard"
	"github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

type catalog []orchestrator.ToolSpec

func (c catalog) Tools(context.Context, string) ([]orchestrator.ToolSpec, error) { return c, nil }

var tools = catalog{
	{Name: "read_file", Description: "Read a file.\nMore text.", Source: "builtin"},
	{Name: "weather@forecast", Description: "Forecast", Source: "mcp"},
	{Name: "final_response", Description: "Final answer", Source: "builtin", AlwaysOn: true},
}

func serve(t *testing.T, o *agentcard.Options) *httptest.Server {
	return serveCatalog(t, tools, o)
}

func serveCatalog(t *testing.T, c catalog, o *agentcard.Options) *httptest.Server {
	srv := httptest.NewServer(agentcard.New(c, o))
	t.Cleanup(srv.Close)
	return srv
}

func TestCardBothVersions(t *testing.T) {
	srv := serve(t, &agentcard.Options{APIKeyRequired: true, PushNotifications: true, ToolNames: []string{"read_file"}})
	// 1.0: the a2a-go v2.4.0 resolver.
	card, err := sdkcard.DefaultResolver.Resolve(t.Context(), srv.URL)
	if err != nil {
		t.Fatalf("a2a-go resolve: %v", err)
	}
	ifs := card.SupportedInterfaces
	if len(ifs) != 3 || ifs[0].ProtocolVersion != "1.0" || ifs[0].URL != srv.URL+"/a2a" || ifs[0].ProtocolBinding != sdk.TransportProtocolJSONRPC ||
		ifs[2].URL != srv.URL+"/a2a/v1" || ifs[2].ProtocolBinding != sdk.TransportProtocolHTTPJSON || ifs[2].ProtocolVersion != "1.0" {
		t.Fatalf("supportedInterfaces: %+v %+v %+v; want JSON-RPC 1.0, 0.3 and HTTP+JSON 1.0", *ifs[0], *ifs[1], *ifs[len(ifs)-1])
	}
	if !card.Capabilities.Streaming || !card.Capabilities.PushNotifications || !card.Capabilities.ExtendedAgentCard {
		t.Fatalf("capabilities: %+v", card.Capabilities)
	}
	if _, ok := card.SecuritySchemes["bearer"].(sdk.HTTPAuthSecurityScheme); !ok {
		t.Fatalf("security schemes: %#v", card.SecuritySchemes)
	}
	var skills []string
	for _, s := range card.Skills {
		skills = append(skills, s.ID)
	}
	if len(skills) != 3 || skills[1] != "read_file" || skills[2] != "final_response" {
		t.Fatalf("skills %v: want answer, the configured tools and always-on ones", skills)
	}
	// 0.3 fields, as a 0.3 client reads them from the 0.3 card.
	req, _ := http.NewRequest(http.MethodGet, srv.URL+agentcard.Path, nil)
	req.Header.Set("A2A-Version", "0.3")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var c03 struct {
		URL, PreferredTransport, ProtocolVersion string
		Security                                 []map[string][]string
		SecuritySchemes                          map[string]struct{ Type string }
	}
	if err := json.Unmarshal(b, &c03); err != nil || c03.URL != srv.URL+"/a2a" || c03.PreferredTransport != "JSONRPC" ||
		c03.ProtocolVersion != "0.3.0" || c03.SecuritySchemes["bearer"].Type != "http" || len(c03.Security) != 2 {
		t.Fatalf("0.3 fields: %+v %v", c03, err)
	}
	pc, err := a2awire.ParseCard(b)
	if err != nil || pc.Interfaces[0].Version != a2awire.V03 {
		t.Fatalf("ParseCard: %+v %v", pc, err)
	}
}

// Without credentials configured there is nothing to authenticate: the
// card declares no extended card in either version's field.
func TestCardDeclaresExtendedCardOnlyWithAuth(t *testing.T) {
	for _, withAuth := range []bool{false, true} {
		srv := serve(t, &agentcard.Options{APIKeyRequired: withAuth})
		var card10, card03 struct {
			Supports     bool `json:"supportsAuthenticatedExtendedCard"`
			Capabilities struct {
				ExtendedAgentCard bool `json:"extendedAgentCard"`
			} `json:"capabilities"`
		}
		for path, into := range map[string]any{agentcard.Path: &card10, agentcard.Path + "?A2A-Version=0.3": &card03} {
			resp, err := http.Get(srv.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			err = json.NewDecoder(resp.Body).Decode(into)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
		if card03.Supports != withAuth || card10.Capabilities.ExtendedAgentCard != withAuth {
			t.Errorf("auth configured %v: card declares extended card 0.3 %v, 1.0 %v; want %v", withAuth, card03.Supports, card10.Capabilities.ExtendedAgentCard, withAuth)
		}
	}
}

func TestCardCachingAndCORS(t *testing.T) {
	srv := serve(t, &agentcard.Options{PublicURL: "https://agents.example.com/"})
	resp, err := http.Get(srv.URL + agentcard.Path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	etag := resp.Header.Get("ETag")
	if etag == "" || resp.Header.Get("Cache-Control") != "public, max-age=300" || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("headers: %v", resp.Header)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+agentcard.Path, nil)
	req.Header.Set("If-None-Match", etag)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified {
		t.Fatalf("If-None-Match: %d, want 304", resp.StatusCode)
	}
	modified, err := http.ParseTime(resp.Header.Get("Last-Modified"))
	if err != nil || time.Since(modified) > time.Hour || time.Until(modified) > time.Second {
		t.Fatalf("Last-Modified = %q (%v); want the time the card was built", resp.Header.Get("Last-Modified"), err)
	}
	for since, want := range map[time.Time]int{modified: http.StatusNotModified, modified.Add(-time.Second): http.StatusOK} {
		req, _ = http.NewRequest(http.MethodGet, srv.URL+agentcard.Path, nil)
		req.Header.Set("If-Modified-Since", since.Format(http.TimeFormat))
		if resp, err = http.DefaultClient.Do(req); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("If-Modified-Since %v (card modified %v): %d; want %d", since, modified, resp.StatusCode, want)
		}
	}
	req, _ = http.NewRequest(http.MethodOptions, srv.URL+agentcard.Path, nil)
	req.Header.Set("Origin", "https://ui.example")
	req.Header.Set("Access-Control-Request-Method", "GET")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Methods") == "" {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	card, err := sdkcard.DefaultResolver.Resolve(t.Context(), srv.URL)
	if err != nil || card.SupportedInterfaces[0].URL != "https://agents.example.com/a2a" {
		t.Fatalf("public url: %+v %v", card, err)
	}
	resp, _ = http.Post(srv.URL+agentcard.Path, "application/json", nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST card: %d", resp.StatusCode)
	}
}
