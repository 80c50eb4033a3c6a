package a2awire_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/google/go-cmp/cmp"

	w "github.com/wunder/wunder/internal/a2awire"
)

// The cards a2a-go serves, in 1.0's shape and in a2av0's union of 1.0 and
// 0.3, read as the interfaces they list; 1.0's come first.
func TestParseCardsOfA2AGo(t *testing.T) {
	card := &sdk.AgentCard{Name: "go", Description: "an a2a-go agent", Version: "1",
		SupportedInterfaces: []*sdk.AgentInterface{
			sdk.NewAgentInterface("https://a.example/rpc", sdk.TransportProtocolJSONRPC),
			sdk.NewAgentInterface("https://a.example/grpc", sdk.TransportProtocolGRPC),
			{URL: "https://a.example/v0", ProtocolBinding: sdk.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version},
		},
		Capabilities: sdk.AgentCapabilities{Streaming: true, PushNotifications: true},
		Skills:       []sdk.AgentSkill{{ID: "s1", Name: "search"}, {ID: "s2", Name: "summarise"}},
	}
	want := &w.PeerCard{Name: "go", Description: "an a2a-go agent", Streaming: true, Push: true,
		Interfaces: []w.Interface{
			{URL: "https://a.example/rpc", Transport: "JSONRPC", Version: w.V10},
			{URL: "https://a.example/grpc", Transport: "GRPC", Version: w.V10},
			{URL: "https://a.example/v0", Transport: "JSONRPC", Version: w.V03},
		},
		Skills: []string{"search", "summarise"}}

	for name, h := range map[string]http.Handler{
		"1.0":   a2asrv.NewStaticAgentCardHandler(card),
		"union": a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(card)),
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			got, err := w.FetchCard(t.Context(), srv.Client(), srv.URL+"/card.json", nil)
			if err != nil {
				t.Fatal(err)
			}
			wantHere := *want
			if name == "union" { // and the 0.3 view of the same card: its preferred interface
				wantHere.Interfaces = append(wantHere.Interfaces, w.Interface{URL: "https://a.example/v0", Transport: "JSONRPC", Version: w.V03})
			}
			if d := cmp.Diff(&wantHere, got); d != "" {
				t.Errorf("card (-want +got):\n%s", d)
			}
			if i, ok := got.JSONRPC(); !ok || i.Version != w.V10 || i.URL != "https://a.example/rpc" {
				t.Errorf("JSONRPC() = %+v %v; want the 1.0 interface", i, ok)
			}
		})
	}
}

// A 0.3 card: its url with its preferred transport (JSONRPC when unsaid),
// then the additional interfaces; interfaces of versions wunder does not
// speak are skipped.
func TestParseCard03(t *testing.T) {
	for name, tc := range map[string]struct {
		card    string
		want    []w.Interface
		jsonrpc string
	}{
		"preferred gRPC, JSON-RPC additional": {
			`{"name":"x","url":"https://b/grpc","preferredTransport":"GRPC","protocolVersion":"0.3.0","additionalInterfaces":[{"url":"https://b/rpc","transport":"JSONRPC"}]}`,
			[]w.Interface{{URL: "https://b/grpc", Transport: "GRPC", Version: w.V03}, {URL: "https://b/rpc", Transport: "JSONRPC", Version: w.V03}},
			"https://b/rpc"},
		"no preferred transport": {`{"url":"https://b/a2a"}`,
			[]w.Interface{{URL: "https://b/a2a", Transport: "JSONRPC", Version: w.V03}}, "https://b/a2a"},
		"unknown versions and empty URLs skipped": {
			`{"supportedInterfaces":[{"url":"https://c/2","protocolBinding":"JSONRPC","protocolVersion":"2.0"},{"url":"","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"https://c/1","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}]}`,
			[]w.Interface{{URL: "https://c/1", Transport: "HTTP+JSON", Version: w.V10}}, ""},
		"binding spelled in lower case": {
			`{"supportedInterfaces":[{"url":"https://d/rpc","protocolBinding":"jsonrpc","protocolVersion":"1.0"}]}`,
			[]w.Interface{{URL: "https://d/rpc", Transport: "jsonrpc", Version: w.V10}}, "https://d/rpc"},
	} {
		c, err := w.ParseCard([]byte(tc.card))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if d := cmp.Diff(tc.want, c.Interfaces); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
		i, ok := c.JSONRPC()
		if ok != (tc.jsonrpc != "") || i.URL != tc.jsonrpc {
			t.Errorf("%s: JSONRPC() = %+v %v; want %q", name, i, ok, tc.jsonrpc)
		}
	}
	for card, errText := range map[string]string{
		`{"name":"x"}`: "no interface",
		`{"supportedInterfaces":[{"url":"https://c","protocolBinding":"JSONRPC","protocolVersion":"9"}]}`: "no interface",
		`[]`:                "agent card",
		`{"skills":"many"}`: "agent card",
	} {
		if _, err := w.ParseCard([]byte(card)); err == nil || !strings.Contains(err.Error(), errText) {
			t.Errorf("card %s: %v; want %q", card, err, errText)
		}
	}
}

// FetchCardRaw looks where the card should be: the URL itself when it
// names a .json, else the well-known path under it, and with tryOrigin
// the origin's well-known path too. It sends the caller's headers and
// asks for JSON; a card it cannot use is an error that names the URL.
func TestFetchCardRaw(t *testing.T) {
	const card = `{"name":"n","url":"https://x/rpc"}`
	var mu sync.Mutex
	var seen []string
	mux := http.NewServeMux()
	serve := func(path, body string) {
		mux.HandleFunc(path, func(rw http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, r.URL.Path+" "+r.Header.Get("Authorization")+" "+r.Header.Get("Accept"))
			mu.Unlock()
			_, _ = rw.Write([]byte(body))
		})
	}
	serve("/.well-known/agent-card.json", card)
	serve("/agents/one/.well-known/agent-card.json", `{"name":"one","url":"https://x/one"}`)
	serve("/custom/card.json", card)
	serve("/broken/.well-known/agent-card.json", `{"name":`)
	mux.HandleFunc("/big/.well-known/agent-card.json", func(rw http.ResponseWriter, _ *http.Request) {
		_, _ = rw.Write([]byte(`{"name":"` + strings.Repeat("x", 5<<20) + `"}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	hdr := http.Header{"Authorization": {"Bearer k"}}

	for _, tc := range []struct {
		url       string
		tryOrigin bool
		found     string // "" = an error
		errText   string
	}{
		{srv.URL, false, srv.URL + w.WellKnownCardPath, ""},
		{srv.URL + "/", false, srv.URL + w.WellKnownCardPath, ""},
		{srv.URL + "/agents/one", false, srv.URL + "/agents/one" + w.WellKnownCardPath, ""},
		{srv.URL + "/custom/card.json", false, srv.URL + "/custom/card.json", ""},
		{srv.URL + "/a2a", true, srv.URL + w.WellKnownCardPath, ""},
		{srv.URL + "/a2a", false, "", "HTTP 404"},
		{srv.URL + "/missing.json", true, "", "HTTP 404"},
		{srv.URL + "/broken", false, "", "not JSON"},
		{srv.URL + "/big", false, "", "not JSON"}, // over 4 MiB: cut, so not JSON
		{"http://[::1]:namedport", false, "", "invalid port"},
	} {
		b, found, err := w.FetchCardRaw(t.Context(), srv.Client(), tc.url, hdr, tc.tryOrigin)
		if tc.found == "" {
			if err == nil || !strings.Contains(err.Error(), tc.errText) {
				t.Errorf("%s: %v; want an error with %q", tc.url, err, tc.errText)
			}
			continue
		}
		if err != nil || found != tc.found || !json.Valid(b) {
			t.Errorf("%s: found %q %v; want %q", tc.url, found, err, tc.found)
		}
	}
	if _, err := w.FetchCard(t.Context(), srv.Client(), srv.URL+"/broken", nil); err == nil {
		t.Error("FetchCard read a broken card")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range seen {
		if !strings.HasSuffix(s, " Bearer k application/json") && !strings.HasPrefix(s, "/broken/") {
			t.Errorf("request %q lacks the caller's header or Accept", s)
		}
	}
}
