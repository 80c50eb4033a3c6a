package a2atools_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/wunder/wunder/adapters/a2atools"
)

// goEcho03 is the a2a-go echo agent served over a2a-go's 0.3 JSON-RPC
// binding (a2acompat/a2av0, backed by the a2a-go v0.3.15 module), with a
// card listing only a 0.3 interface, in the 0.3 shape (url,
// preferredTransport, protocolVersion). methods records the JSON-RPC
// methods it received.
type goEcho03 struct {
	url     string
	mu      sync.Mutex
	methods []string
}

func (g *goEcho03) seen() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.methods)
}

func startGoEcho03(t testing.TB, streaming bool) *goEcho03 {
	g := &goEcho03{}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	g.url = srv.URL
	card := &sdk.AgentCard{Name: "go-echo-03", Description: "echoes over A2A 0.3", Version: "1",
		SupportedInterfaces: []*sdk.AgentInterface{{URL: srv.URL + "/rpc", ProtocolBinding: sdk.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version}},
		Capabilities:        sdk.AgentCapabilities{Streaming: streaming},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"}}
	rpc := a2av0.NewJSONRPCHandler(a2asrv.NewHandler(goEcho{}))
	mux.Handle("/rpc", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(b, &m)
		g.mu.Lock()
		g.methods = append(g.methods, m.Method)
		g.mu.Unlock()
		rpc.ServeHTTP(w, r)
	}))
	mux.Handle("/.well-known/agent-card.json", a2asrv.NewAgentCardHandler(a2av0.NewStaticAgentCardProducer(card)))
	return g
}

// TestCallGoSDK03Peer: a2a@service reads a 0.3 card from a2a-go and talks
// 0.3 to it, streaming when the card says so and plain message/send when
// not.
func TestCallGoSDK03Peer(t *testing.T) {
	for _, streaming := range []bool{true, false} {
		peer := startGoEcho03(t, streaming)
		s := newSet(t, a2atools.Service{Name: "goecho03", URL: peer.url})
		rec := &recorder{}
		res, err := toolNamed(t, s, "a2a@goecho03").Call(t.Context(), invocation(`{"message":"ping 03"}`, rec, nil))
		if err != nil || res.IsError || !strings.HasPrefix(res.Content, "echo: ping 03") {
			t.Fatalf("streaming=%v: result %+v, %v", streaming, res, err)
		}
		types := rec.types()
		if len(types) < 2 || types[0] != "a2a_request" || types[len(types)-1] != "a2a_result" {
			t.Fatalf("streaming=%v: events %v", streaming, types)
		}
		if streaming && !slices.Contains(types, "a2a_status") {
			t.Fatalf("streaming: no a2a_status among %v", types)
		}
		// The tool sends without blocking, then follows the task
		// (tasks/resubscribe when the peer streams, tasks/get otherwise):
		// all in 0.3 method names.
		got := peer.seen()
		if len(got) == 0 || got[0] != "message/send" {
			t.Fatalf("streaming=%v: peer saw methods %v, want message/send first", streaming, got)
		}
		for _, m := range got[1:] {
			if m != "tasks/resubscribe" && m != "tasks/get" {
				t.Fatalf("streaming=%v: peer saw %q among %v, want only 0.3 methods", streaming, m, got)
			}
		}
		t.Logf("streaming=%v: methods %v", streaming, got)
	}
}
