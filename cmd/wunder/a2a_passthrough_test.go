package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/cardsig"
	"github.com/wunder/wunder/internal/config"
)

// passPeer is an a2a-go v2.4.0 agent behind wunder's A2A pass-through:
// a message "wait" leaves its task input-required (so it can be
// cancelled); any other is answered "echo: <text>" with a working status
// between, "hold" only once the test sends on hold. It notes the tasks it
// made, the tenants it was sent and the credentials it saw.
type passPeer struct {
	url  string
	hold chan struct{}
	// mu guards the fields below.
	mu      sync.Mutex
	tasks   []string
	tenants []string
	auth    []string
}

func (p *passPeer) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[sdk.Event, error] {
	return func(yield func(sdk.Event, error) bool) {
		p.mu.Lock()
		p.tasks = append(p.tasks, string(ec.TaskID))
		p.tenants = append(p.tenants, ec.Tenant)
		p.mu.Unlock()
		if ec.StoredTask == nil && !yield(sdk.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		text := ""
		for _, part := range ec.Message.Parts {
			text += part.Text()
		}
		if text == "wait" {
			yield(sdk.NewStatusUpdateEvent(ec, sdk.TaskStateInputRequired, sdk.NewMessage(sdk.MessageRoleAgent, sdk.NewTextPart("what next?"))), nil)
			return
		}
		if text == "hold" {
			if !yield(sdk.NewStatusUpdateEvent(ec, sdk.TaskStateWorking, nil), nil) {
				return
			}
			select {
			case <-p.hold:
			case <-ctx.Done():
				return
			}
		}
		if !yield(sdk.NewStatusUpdateEvent(ec, sdk.TaskStateWorking, nil), nil) ||
			!yield(sdk.NewArtifactEvent(ec, sdk.NewTextPart("echo: "+text)), nil) {
			return
		}
		yield(sdk.NewStatusUpdateEvent(ec, sdk.TaskStateCompleted, nil), nil)
	}
}

func (p *passPeer) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[sdk.Event, error] {
	return func(yield func(sdk.Event, error) bool) {
		yield(sdk.NewStatusUpdateEvent(ec, sdk.TaskStateCanceled, nil), nil)
	}
}

// peerAuth names the peer's caller.
type peerAuth struct {
	a2asrv.PassthroughCallInterceptor
}

func (peerAuth) Before(ctx context.Context, cc *a2asrv.CallContext, _ *a2asrv.Request) (context.Context, any, error) {
	cc.User = a2asrv.NewAuthenticatedUser("wunder", nil)
	return ctx, nil, nil
}

func (p *passPeer) made(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Contains(p.tasks, id)
}

// startPassPeer serves the agent over JSON-RPC (/rpc, its interface
// declaring the tenant "peer-t") and HTTP+JSON (/rest), with its card,
// and wants the bearer token "peer-secret" on every call.
func startPassPeer(t *testing.T) *passPeer { return startSignedPassPeer(t, nil) }

// startSignedPassPeer is startPassPeer with its card signed by signer
// (nil: unsigned); the card changed after signing is served at
// /tampered-card.json.
func startSignedPassPeer(t *testing.T, signer *cardsig.Signer) *passPeer {
	t.Helper()
	p := &passPeer{hold: make(chan struct{})}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	p.url = srv.URL
	rpc := sdk.NewAgentInterface(srv.URL+"/rpc", sdk.TransportProtocolJSONRPC)
	rpc.Tenant = "peer-t"
	card := &sdk.AgentCard{Name: "pass-peer", Description: "echoes, or waits", Version: "1",
		SupportedInterfaces: []*sdk.AgentInterface{rpc, sdk.NewAgentInterface(srv.URL+"/rest", sdk.TransportProtocolHTTPJSON)},
		Capabilities:        sdk.AgentCapabilities{Streaming: true, PushNotifications: true},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []sdk.AgentSkill{{ID: "echo", Name: "echo", Description: "echoes", Tags: []string{"echo"}}}}
	// The peer knows its one caller, wunder, by the bearer token (its
	// task store lists an authenticated user's tasks).
	h := a2asrv.NewHandler(p, a2asrv.WithCallInterceptors(peerAuth{}))
	guard := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p.mu.Lock()
			p.auth = append(p.auth, r.Header.Get("Authorization")+"|"+r.Header.Get("X-API-Key"))
			p.mu.Unlock()
			if r.Header.Get("Authorization") != "Bearer peer-secret" {
				http.Error(w, "who are you?", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	mux.Handle("/rpc", guard(a2asrv.NewJSONRPCHandler(h)))
	mux.Handle("/rest/", guard(http.StripPrefix("/rest", a2asrv.NewRESTHandler(h))))
	body, err := json.Marshal(card)
	if err != nil {
		t.Fatal(err)
	}
	if signer != nil {
		if body, err = signer.Sign(body); err != nil {
			t.Fatal(err)
		}
	}
	serve := func(b []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(b)
		}
	}
	mux.Handle(w.WellKnownCardPath, serve(body))
	mux.Handle("/tampered-card.json", serve(bytes.Replace(body, []byte(`"echoes, or waits"`), []byte(`"echoes, or worse"`), 1)))
	return p
}

// passWunder serves wunder with the peer published as "peer", alice and
// bob allowed to use it and carol denied (her tool access), and returns
// it with the three users' tokens.
func passWunder(t *testing.T, peer *passPeer, mutate func(*config.Config)) (*fixture, map[string]string) {
	t.Helper()
	s := startServer(t, func(c *config.Config) {
		c.Security.APIKey = "admin-key"
		c.A2A.Services = append(c.A2A.Services, config.A2AService{Name: "peer", Endpoint: peer.url, Enabled: true,
			BearerToken: "peer-secret", MaxDepth: 3, Publish: true})
		if mutate != nil {
			mutate(c)
		}
	})
	f := &fixture{s: s}
	admin := map[string]string{"X-API-Key": "admin-key"}
	tokens := map[string]string{}
	for _, u := range []string{"alice", "bob", "carol"} {
		mustStatus(t, f.rest(t, "POST", "/wunder/admin/user_accounts", `{"user_id":"`+u+`","password":"`+u+`-password"}`, admin), 201)
		tokens[u] = f.login(t, u)
	}
	mustStatus(t, f.rest(t, "PUT", "/wunder/admin/user_accounts/carol/tool_access", `{"denied_tools":["a2a@peer"]}`, admin), 200)
	return f, tokens
}

// passClient resolves the peer's card through wunder as a user and makes
// an a2a-go client preferring binding.
func passClient(t *testing.T, f *fixture, token string, binding sdk.TransportProtocol) (*sdk.AgentCard, *a2aclient.Client) {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(t.Context(), f.s.url+"/a2a/peer", agentcard.WithRequestHeader("Authorization", "Bearer "+token))
	if err != nil {
		t.Fatalf("resolve the peer's card through wunder: %v", err)
	}
	hc := &http.Client{Transport: headerRT{hdr: bearerOf(token)}}
	c, err := a2aclient.NewFromCard(t.Context(), card, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []sdk.TransportProtocol{binding}}),
		a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	return card, c
}

// A real a2a-go peer behind wunder, reached by a2a-go clients at
// /a2a/peer over JSON-RPC and HTTP+JSON: the card says wunder's URLs;
// send returns the task id the peer made; get, stream and cancel pass
// through; another user's task is not found, a user without access to
// a2a@peer is refused, push configs are refused; the peer sees wunder's
// credentials for it, never the caller's, and its own interface's tenant;
// every call is in the audit.
func TestA2APassThroughWithGoSDK(t *testing.T) {
	peer := startPassPeer(t)
	f, tok := passWunder(t, peer, nil)

	for _, binding := range []sdk.TransportProtocol{sdk.TransportProtocolJSONRPC, sdk.TransportProtocolHTTPJSON} {
		t.Run(string(binding), func(t *testing.T) {
			card, alice := passClient(t, f, tok["alice"], binding)
			urls := map[sdk.TransportProtocol]string{}
			for _, i := range card.SupportedInterfaces {
				urls[i.ProtocolBinding] = i.URL
				// gRPC names the peer in its tenant
				// (a2a_passthrough_grpc_test.go); the others name none.
				if want := map[sdk.TransportProtocol]string{sdk.TransportProtocolGRPC: "peers/peer"}[i.ProtocolBinding]; i.Tenant != want {
					t.Errorf("the card through wunder names the tenant %q: %+v", i.Tenant, i)
				}
			}
			if want := map[sdk.TransportProtocol]string{sdk.TransportProtocolJSONRPC: f.s.url + "/a2a/peer", sdk.TransportProtocolHTTPJSON: f.s.url + "/a2a/peer/v1",
				sdk.TransportProtocolGRPC: strings.TrimPrefix(f.s.url, "http://")}; !mapsEqual(urls, want) {
				t.Fatalf("interfaces through wunder = %v; want %v", urls, want)
			}
			if card.Capabilities.PushNotifications || card.Name != "pass-peer" || len(card.Skills) != 1 {
				t.Errorf("card through wunder: %+v", card)
			}
			if _, ok := card.SecuritySchemes["apiKey"]; !ok {
				t.Errorf("the card through wunder has not wunder's security schemes: %v", card.SecuritySchemes)
			}

			// Send: the task id the peer made.
			res, err := alice.SendMessage(t.Context(), &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hello"))})
			if err != nil {
				t.Fatal(err)
			}
			task, ok := res.(*sdk.Task)
			if !ok || task.Status.State != sdk.TaskStateCompleted || !peer.made(string(task.ID)) || len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Text() != "echo: hello" {
				t.Fatalf("send through wunder: %#v; the peer made %v", res, peer.tasks)
			}
			got, err := alice.GetTask(t.Context(), &sdk.GetTaskRequest{ID: task.ID})
			if err != nil || got.ID != task.ID || got.Status.State != sdk.TaskStateCompleted {
				t.Fatalf("get through wunder: %+v %v", got, err)
			}

			// Stream: every event of the peer's, with its ids.
			streamed, states, artifacts := streamStates(t, alice.SendStreamingMessage(t.Context(), &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("stream me"))}))
			if !peer.made(string(streamed)) || !slices.Equal(states, []sdk.TaskState{sdk.TaskStateSubmitted, sdk.TaskStateWorking, sdk.TaskStateCompleted}) {
				t.Fatalf("streamed task %s, states %v", streamed, states)
			}
			for _, a := range artifacts {
				if a.Parts[0].Text() != "echo: stream me" {
					t.Errorf("artifact %+v", a)
				}
			}

			// Cancel a task that waits for input.
			res, err = alice.SendMessage(t.Context(), &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("wait"))})
			if err != nil || res.(*sdk.Task).Status.State != sdk.TaskStateInputRequired {
				t.Fatalf("a waiting task: %#v %v", res, err)
			}
			waiting := res.(*sdk.Task).ID
			cancelled, err := alice.CancelTask(t.Context(), &sdk.CancelTaskRequest{ID: waiting})
			if err != nil || cancelled.ID != waiting || cancelled.Status.State != sdk.TaskStateCanceled {
				t.Fatalf("cancel through wunder: %+v %v", cancelled, err)
			}

			// Bob may use the peer, but not alice's tasks.
			_, bob := passClient(t, f, tok["bob"], binding)
			if _, err := bob.GetTask(t.Context(), &sdk.GetTaskRequest{ID: task.ID}); !errors.Is(err, sdk.ErrTaskNotFound) {
				t.Errorf("bob gets alice's task: %v; want task not found", err)
			}
			if _, err := bob.CancelTask(t.Context(), &sdk.CancelTaskRequest{ID: waiting}); !errors.Is(err, sdk.ErrTaskNotFound) {
				t.Errorf("bob cancels alice's task: %v; want task not found", err)
			}
			m := sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("again"))
			m.TaskID = task.ID
			if _, err := bob.SendMessage(t.Context(), &sdk.SendMessageRequest{Message: m}); !errors.Is(err, sdk.ErrTaskNotFound) {
				t.Errorf("bob continues alice's task: %v; want task not found", err)
			}
			list, err := bob.ListTasks(t.Context(), &sdk.ListTasksRequest{})
			if err != nil {
				t.Fatalf("bob lists: %v", err)
			}
			for _, lt := range list.Tasks {
				if lt.ID == task.ID || lt.ID == waiting {
					t.Errorf("bob's listing shows alice's task %s", lt.ID)
				}
			}
			list, err = alice.ListTasks(t.Context(), &sdk.ListTasksRequest{})
			if err != nil || !slices.ContainsFunc(list.Tasks, func(lt *sdk.Task) bool { return lt.ID == task.ID }) {
				t.Errorf("alice's listing: %+v %v", list, err)
			}

			// Push configs are not forwarded.
			if _, err := alice.CreateTaskPushConfig(t.Context(), &sdk.PushConfig{TaskID: task.ID, URL: "https://example.com/hook"}); !errors.Is(err, sdk.ErrPushNotificationNotSupported) {
				t.Errorf("a push config through wunder: %v; want push not supported", err)
			}
		})
	}

	// Carol may not use a2a@peer: her card and calls are refused.
	r := f.rest(t, "GET", "/a2a/peer/.well-known/agent-card.json", "", bearerOf(tok["carol"]))
	if r.StatusCode != http.StatusForbidden {
		t.Errorf("carol reads the card: HTTP %d; want 403", r.StatusCode)
	}
	r.Body.Close()
	res, code := f.a2aAt(t, "/a2a/peer", "1.0", "SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, bearerOf(tok["carol"]))
	if code != -403 {
		t.Errorf("carol sends: %s %d; want permission denied", res, code)
	}
	r = f.rest(t, "POST", "/a2a/peer/v1/message:send", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, bearerOf(tok["carol"]))
	if r.StatusCode != http.StatusForbidden {
		t.Errorf("carol sends over HTTP+JSON: HTTP %d; want 403", r.StatusCode)
	}
	r.Body.Close()
	// Without credentials: the gateway's 401, in the binding's shape.
	r = f.rest(t, "GET", "/a2a/peer/v1/tasks", "", nil)
	var st struct{ Error struct{ Status string } }
	_ = json.NewDecoder(r.Body).Decode(&st)
	r.Body.Close()
	if r.StatusCode != http.StatusUnauthorized || st.Error.Status != "UNAUTHENTICATED" {
		t.Errorf("no credentials: HTTP %d %+v", r.StatusCode, st)
	}

	// The peer saw wunder's credentials for it, never a caller's, and the
	// tenant of its own JSON-RPC interface (none on HTTP+JSON).
	peer.mu.Lock()
	for _, a := range peer.auth {
		if a != "Bearer peer-secret|" {
			t.Errorf("the peer saw credentials %q", a)
		}
	}
	if !slices.Contains(peer.tenants, "peer-t") || !slices.Contains(peer.tenants, "") {
		t.Errorf("tenants the peer saw: %q; want its JSON-RPC interface's and none", peer.tenants)
	}
	peer.mu.Unlock()

	// The audit has every call: alice's allowed, bob's refused ones
	// denied, carol's denied by the policy.
	type record struct {
		UserID    string `json:"user_id"`
		Tool      string `json:"tool"`
		Via       string `json:"via"`
		Outcome   string `json:"outcome"`
		FrontEnd  string `json:"front_end"`
		Arguments json.RawMessage
	}
	var page struct{ Records []record }
	decodeInto(t, f.rest(t, "GET", "/wunder/admin/audit?tool=a2a@peer&limit=200", "", map[string]string{"X-API-Key": "admin-key"}), 200, &page)
	count := map[string]int{}
	for _, rec := range page.Records {
		if rec.Via != "passthrough" || rec.FrontEnd != "a2a" || rec.Tool != "a2a@peer" {
			t.Errorf("audit record %+v", rec)
		}
		count[rec.UserID+" "+rec.Outcome]++
	}
	// Per binding alice: send, get, stream, send, cancel, list allowed,
	// the push config an error; bob: 3 denied, list allowed; carol: 1
	// denied per binding she tried.
	want := map[string]int{"alice allowed": 12, "alice error": 2, "bob denied": 6, "bob allowed": 2, "carol denied": 2}
	if !mapsEqual(count, want) {
		t.Errorf("audit = %v; want %v", count, want)
	}
}

// a2aAt is fixture.a2a at another endpoint.
func (f *fixture) a2aAt(t *testing.T, path, version, method, params string, hdr map[string]string) (json.RawMessage, int) {
	t.Helper()
	g := *f
	g.a2aPath = path
	return g.a2a(t, version, method, params, hdr)
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// Signed cards through the pass-through. The peer signs its card and the
// service checks it (card_verification): the card wunder serves for it is
// wunder's rewrite, signed by wunder's key (a2a.server.card_signing_key) —
// wunder's verifier and node's independent JCS/JWS check accept it by
// wunder's key and refuse it changed; the peer's signature is gone. A
// peer card changed on the way is refused, and so is every call for that
// peer, before anything reaches it.
func TestA2APassThroughSignedCards(t *testing.T) {
	peerPriv, peerPub := cardKey(t, "ES256")
	peerSigner, err := cardsig.NewSigner(peerPriv, nil)
	if err != nil {
		t.Fatal(err)
	}
	peer := startSignedPassPeer(t, peerSigner)
	priv, pub := cardKey(t, "EdDSA")
	f, tok := passWunder(t, peer, func(c *config.Config) {
		c.A2A.Server.CardSigningKey = priv
		c.A2A.Services[0].CardVerification = config.A2ACardVerification{Require: true, Keys: []string{peerPub}}
		c.A2A.Services = append(c.A2A.Services, config.A2AService{Name: "bad", Endpoint: peer.url + "/tampered-card.json", Enabled: true,
			BearerToken: "peer-secret", MaxDepth: 3, Publish: true, CardVerification: config.A2ACardVerification{Require: true, Keys: []string{peerPub}}})
	})
	alice := bearerOf(tok["alice"])
	r := f.rest(t, "GET", "/a2a/peer/.well-known/agent-card.json", "", alice)
	mustStatus(t, r, 200)
	card, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if !bytes.Contains(card, []byte(f.s.url+"/a2a/peer")) || bytes.Contains(card, []byte(peer.url)) {
		t.Fatalf("the card through wunder: %s", card)
	}
	byWunder, err := cardsig.NewVerifier(cardsig.VerifyOptions{Require: true, Keys: []string{pub}})
	if err != nil {
		t.Fatal(err)
	}
	if err := byWunder.Verify(t.Context(), card); err != nil {
		t.Errorf("wunder's key: %v", err)
	}
	byPeer, err := cardsig.NewVerifier(cardsig.VerifyOptions{Require: true, Keys: []string{peerPub}})
	if err != nil {
		t.Fatal(err)
	}
	if err := byPeer.Verify(t.Context(), card); !errors.Is(err, cardsig.ErrRefused) {
		t.Errorf("the peer's key on wunder's rewrite: %v; want refused", err)
	}
	// The same card and wunder's JWKS, served where node reads them
	// without credentials.
	jwks := f.rest(t, "GET", cardsig.JWKSPath, "", nil)
	keys, _ := io.ReadAll(jwks.Body)
	jwks.Body.Close()
	mux := http.NewServeMux()
	mux.HandleFunc(w.WellKnownCardPath, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(card) })
	mux.HandleFunc("/jwks.json", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(keys) })
	local := httptest.NewServer(mux)
	defer local.Close()
	verifyCardJS(t, local.URL+w.WellKnownCardPath, local.URL+"/jwks.json", "independent")
	verifyCardJS(t, local.URL+w.WellKnownCardPath, local.URL+"/jwks.json", "sdk")

	// The tampered peer card: refused, and no call reaches the peer.
	r = f.rest(t, "GET", "/a2a/bad/.well-known/agent-card.json", "", alice)
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusBadGateway || !bytes.Contains(body, []byte("the card was changed after it was signed")) {
		t.Errorf("the tampered card through wunder: HTTP %d %s", r.StatusCode, body)
	}
	peer.mu.Lock()
	before := len(peer.tasks)
	peer.mu.Unlock()
	if res, code := f.a2aAt(t, "/a2a/bad", "1.0", "SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, alice); code != -32006 {
		t.Errorf("a send for the tampered card: %s %d; want -32006", res, code)
	}
	peer.mu.Lock()
	after := len(peer.tasks)
	peer.mu.Unlock()
	if after != before {
		t.Errorf("the peer ran %d tasks for a refused card", after-before)
	}
}

// A service changed while wunder runs (POST /wunder/admin/a2a): its next
// call goes where its new endpoint's card says, and a service that stops
// publishing is gone from /a2a/.
func TestA2APassThroughReconfigured(t *testing.T) {
	first, second := startPassPeer(t), startPassPeer(t)
	f, tok := passWunder(t, first, nil)
	admin := map[string]string{"X-API-Key": "admin-key"}
	alice := bearerOf(tok["alice"])
	send := func() string {
		t.Helper()
		res, code := f.a2aAt(t, "/a2a/peer", "1.0", "SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, alice)
		var sent struct{ Task struct{ ID string } }
		if err := json.Unmarshal(res, &sent); code != 0 || err != nil {
			t.Fatalf("send: %s %d %v", res, code, err)
		}
		return sent.Task.ID
	}
	if id := send(); !first.made(id) {
		t.Fatalf("task %s not made by the first peer", id)
	}
	mustStatus(t, f.rest(t, "POST", "/wunder/admin/a2a", `{"services":[{"name":"peer","endpoint":"`+second.url+`","bearer_token":"peer-secret","publish":true}]}`, admin), 200)
	if id := send(); !second.made(id) {
		t.Fatalf("after the change, task %s not made by the second peer", id)
	}
	mustStatus(t, f.rest(t, "POST", "/wunder/admin/a2a", `{"services":[{"name":"peer","endpoint":"`+second.url+`","bearer_token":"peer-secret"}]}`, admin), 200)
	r := f.rest(t, "GET", "/a2a/peer/.well-known/agent-card.json", "", alice)
	r.Body.Close()
	if r.StatusCode != http.StatusNotFound {
		t.Errorf("an unpublished peer's card: HTTP %d; want 404", r.StatusCode)
	}
}

// streamStates reads an A2A stream to its end: the task's id (from its
// first event), the states its task and status events carry, in order
// (a status of another task fails the test), and its artifacts.
func streamStates(t *testing.T, seq iter.Seq2[sdk.Event, error]) (sdk.TaskID, []sdk.TaskState, []*sdk.Artifact) {
	t.Helper()
	var states []sdk.TaskState
	var artifacts []*sdk.Artifact
	streamed := sdk.TaskID("")
	for ev, err := range seq {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch e := ev.(type) {
		case *sdk.Task:
			streamed = e.ID
			states = append(states, e.Status.State)
		case *sdk.TaskStatusUpdateEvent:
			if e.TaskID != streamed {
				t.Errorf("status update of %s in the stream of %s", e.TaskID, streamed)
			}
			states = append(states, e.Status.State)
		case *sdk.TaskArtifactUpdateEvent:
			artifacts = append(artifacts, e.Artifact)
		}
	}
	return streamed, states, artifacts
}
