package main

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/wunder/wunder/a2a"
	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/orchestrator"
)

type keyTransport struct{ key string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-API-Key", k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// The A2A front-end through the real wiring (SQLite, gateway auth): the
// card is public, /a2a needs the key, and the a2a-go v2.4.0 client sends a
// task and keeps a push config in the database.
func TestA2AThroughRealServer(t *testing.T) {
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "a2a-key"
		c.A2A.Push.AllowPrivate = true
	})
	resp, err := http.Get(s.url + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") == "" {
		t.Fatalf("card without credentials: %d", resp.StatusCode)
	}
	resp, err = http.Post(s.url+"/a2a", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("/a2a without the key: %d %q, want 401 with WWW-Authenticate: Bearer", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}

	card, err := agentcard.DefaultResolver.Resolve(t.Context(), s.url)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := card.SecuritySchemes["apiKey"]; !ok {
		t.Fatalf("card security schemes: %v", card.SecuritySchemes)
	}
	c, err := a2aclient.NewFromCard(t.Context(), card, a2aclient.WithJSONRPCTransport(&http.Client{Transport: keyTransport{"a2a-key"}}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.SendMessage(t.Context(), &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("write a note"))})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*sdk.Task)
	if task.Status.State != sdk.TaskStateCompleted {
		t.Fatalf("task state %s", task.Status.State)
	}
	if _, err := c.CreateTaskPushConfig(t.Context(), &sdk.PushConfig{TaskID: task.ID, ID: "p", URL: "http://127.0.0.1:9/hook"}); err != nil {
		t.Fatalf("CreateTaskPushConfig: %v", err)
	}
	got, err := c.GetTaskPushConfig(t.Context(), &sdk.GetTaskPushConfigRequest{TaskID: task.ID, ID: "p"})
	if err != nil || got.URL != "http://127.0.0.1:9/hook" {
		t.Fatalf("GetTaskPushConfig from SQLite: %+v %v", got, err)
	}
}

// Without credentials configured (loopback, anonymous) the card declares
// no authenticated extended card and the method answers -32007 in both
// versions: there is nothing to authenticate (the A2A TCK checks this).
func TestA2ANoExtendedCardWithoutAuth(t *testing.T) {
	s := startServer(t, nil)
	f := &fixture{s: s}
	var card struct {
		Supports     bool `json:"supportsAuthenticatedExtendedCard"`
		Capabilities struct {
			ExtendedAgentCard bool `json:"extendedAgentCard"`
		} `json:"capabilities"`
	}
	decodeInto(t, f.rest(t, "GET", "/.well-known/agent-card.json", "", nil), 200, &card)
	if card.Supports || card.Capabilities.ExtendedAgentCard {
		t.Errorf("card without auth declares the extended card: %+v", card)
	}
	for v, method := range map[string]string{"1.0": "GetExtendedAgentCard", "0.3": "agent/getAuthenticatedExtendedCard"} {
		if _, code := f.a2a(t, v, method, `{}`, nil); code != -32007 {
			t.Errorf("%s without auth configured: code %d; want -32007", method, code)
		}
	}
}

// The real gateway's refusals reach wunder's own A2A client side as their
// kind on every binding (internal/a2awire's table): no credentials is
// unauthenticated (the authenticator's 401, in the binding's shape), and a
// user's token acting for another user is permission denied (the
// handler's ActingUser).
func TestA2AAuthErrorsRoundTripThroughTheGateway(t *testing.T) {
	s, alice := identityServer(t, nil)
	for _, tc := range []struct {
		name string
		hdr  http.Header
		want error
	}{
		{"no credentials", http.Header{}, orchestrator.ErrUnauthenticated},
		{"a wrong key", http.Header{"X-Api-Key": {"wrong"}}, orchestrator.ErrUnauthenticated},
		{"alice naming bob", http.Header{"Authorization": {"Bearer " + alice}, "X-Wunder-User": {"bob"}}, orchestrator.ErrPermissionDenied},
	} {
		calls := map[string]func() error{
			"jsonrpc/1.0": func() error {
				_, err := (&w.Client{URL: s.url + "/a2a", Version: w.V10, Header: tc.hdr}).GetTask(t.Context(), "run_x")
				return err
			},
			"jsonrpc/0.3": func() error {
				_, err := (&w.Client{URL: s.url + "/a2a", Version: w.V03, Header: tc.hdr}).GetTask(t.Context(), "run_x")
				return err
			},
			"http+json": func() error {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, s.url+"/a2a/v1/tasks/run_x", nil)
				req.Header = tc.hdr.Clone()
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				return w.FromHTTP(resp)
			},
			"grpc": func() error {
				hc := &http.Client{Transport: headerRT{h2c: true}}
				r := connect.NewRequest(&a2apb.GetTaskRequest{Id: "run_x"})
				for k, vs := range tc.hdr {
					r.Header()[k] = vs
				}
				_, err := connect.NewClient[a2apb.GetTaskRequest, a2apb.Task](hc, s.url+"/lf.a2a.v1.A2AService/GetTask", connect.WithGRPC()).CallUnary(t.Context(), r)
				var ce *connect.Error
				if !errors.As(err, &ce) {
					return err
				}
				return w.FromGRPC(int(ce.Code()), ce.Message(), nil)
			},
		}
		for binding, call := range calls {
			if err := call(); !errors.Is(err, tc.want) {
				t.Errorf("%s on %s: %v; want %v", tc.name, binding, err, tc.want)
			}
		}
	}
}

// Through the real gateway, the A2A namespace answers only at its
// bindings: another path under /a2a/ is 404 (with credentials, so the
// gateway's 401 is not what answers), and a GET of a peer-style card path
// is no JSON-RPC 200. The binding segment directly under /a2a/ (the
// HTTP+JSON binding's "v1") is one config reserves, so no a2a.services
// name can shadow it.
func TestA2ANamespaceThroughRealServer(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.Security.APIKey = "a2a-key" })
	do := func(method, path string) int {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), method, s.url+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`))
		req.Header.Set("X-API-Key", "a2a-key")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, p := range []struct{ method, path string }{{"POST", "/a2a/zzz/yyy"}, {"GET", "/a2a/friend/.well-known/agent-card.json"}, {"POST", "/a2a/friend"}} {
		if code := do(p.method, p.path); code != http.StatusNotFound {
			t.Errorf("%s %s = %d; want 404", p.method, p.path, code)
		}
	}
	if code := do("POST", "/a2a"); code != http.StatusOK {
		t.Errorf("POST /a2a = %d", code)
	}
	seg, _, _ := strings.Cut(strings.TrimPrefix(a2a.DefaultRESTPath, a2a.DefaultPath+"/"), "/")
	if !config.A2AReservedName(seg) {
		t.Errorf("the HTTP+JSON binding's segment %q under %s is not a reserved a2a.services name", seg, a2a.DefaultPath)
	}
}
