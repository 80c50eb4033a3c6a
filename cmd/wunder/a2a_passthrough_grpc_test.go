package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"
	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/wunder/wunder/a2a"
	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/config"
)

// grpcMeta is gRPC metadata sent with every call (a credential).
type grpcMeta map[string]string

func (m grpcMeta) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return m, nil
}

func (grpcMeta) RequireTransportSecurity() bool { return false }

// passGRPCClient is a2a-go's gRPC client from card (the peer's, as wunder
// serves it), sending token ("" = none) as a bearer credential.
func passGRPCClient(t *testing.T, card *sdk.AgentCard, token string) *a2aclient.Client {
	t.Helper()
	opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	if token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(grpcMeta{"authorization": "Bearer " + token}))
	}
	c, err := a2aclient.NewFromCard(t.Context(), card,
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []sdk.TransportProtocol{sdk.TransportProtocolGRPC}}),
		a2agrpc.WithGRPCTransport(opts...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// A real a2a-go peer behind wunder, reached by a2a-go's gRPC client from
// the card wunder serves for it: the card names wunder's gRPC target and
// the tenant peers/peer; send returns the task id the peer made; get,
// stream, subscribe and cancel pass through (to the peer's JSON-RPC
// interface, with its tenant and wunder's credential for it); another user
// reaches none of alice's tasks, a user denied a2a@peer is refused, a
// caller without credentials too; every call is audited.
func TestA2APassThroughGRPCWithGoSDK(t *testing.T) {
	peer := startPassPeer(t)
	f, tok := passWunder(t, peer, nil)
	card, _ := passClient(t, f, tok["alice"], sdk.TransportProtocolJSONRPC)
	i := slices.IndexFunc(card.SupportedInterfaces, func(i *sdk.AgentInterface) bool { return i.ProtocolBinding == sdk.TransportProtocolGRPC })
	if i < 0 || card.SupportedInterfaces[i].URL != strings.TrimPrefix(f.s.url, "http://") || card.SupportedInterfaces[i].Tenant != "peers/peer" {
		t.Fatalf("the gRPC interface of the card through wunder: %+v", card.SupportedInterfaces)
	}
	alice := passGRPCClient(t, card, tok["alice"])
	ctx := t.Context()

	// Send: the task id the peer made.
	res, err := alice.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hello"))})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*sdk.Task)
	if !ok || task.Status.State != sdk.TaskStateCompleted || !peer.made(string(task.ID)) || len(task.Artifacts) != 1 || task.Artifacts[0].Parts[0].Text() != "echo: hello" {
		t.Fatalf("send over gRPC through wunder: %#v", res)
	}
	got, err := alice.GetTask(ctx, &sdk.GetTaskRequest{ID: task.ID})
	if err != nil || got.ID != task.ID || got.Status.State != sdk.TaskStateCompleted {
		t.Fatalf("get over gRPC through wunder: %+v %v", got, err)
	}

	// Stream: every event of the peer's, with its ids.
	streamed, states, _ := streamStates(t, alice.SendStreamingMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("stream me"))}))
	if !peer.made(string(streamed)) || !slices.Equal(states, []sdk.TaskState{sdk.TaskStateSubmitted, sdk.TaskStateWorking, sdk.TaskStateCompleted}) {
		t.Fatalf("streamed task %s, states %v", streamed, states)
	}

	// Subscribe to a task the peer holds: the task, then, once released,
	// its answer and its end.
	res, err = alice.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hold")),
		Config: &sdk.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	held := res.(*sdk.Task).ID
	first, answer := true, ""
	states = nil
	for ev, err := range alice.SubscribeToTask(ctx, &sdk.SubscribeToTaskRequest{ID: held}) {
		if err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		if first {
			if tk, ok := ev.(*sdk.Task); !ok || tk.ID != held {
				t.Fatalf("the subscription starts with %#v; want task %s", ev, held)
			}
			first = false
			peer.hold <- struct{}{}
			continue
		}
		switch e := ev.(type) {
		case *sdk.TaskStatusUpdateEvent:
			states = append(states, e.Status.State)
		case *sdk.TaskArtifactUpdateEvent:
			answer = e.Artifact.Parts[0].Text()
		}
	}
	if answer != "echo: hold" || len(states) == 0 || states[len(states)-1] != sdk.TaskStateCompleted {
		t.Fatalf("the subscription: answer %q, states %v", answer, states)
	}

	// Cancel a task that waits for input.
	res, err = alice.SendMessage(ctx, &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("wait"))})
	if err != nil || res.(*sdk.Task).Status.State != sdk.TaskStateInputRequired {
		t.Fatalf("a waiting task: %#v %v", res, err)
	}
	waiting := res.(*sdk.Task).ID
	cancelled, err := alice.CancelTask(ctx, &sdk.CancelTaskRequest{ID: waiting})
	if err != nil || cancelled.ID != waiting || cancelled.Status.State != sdk.TaskStateCanceled {
		t.Fatalf("cancel over gRPC through wunder: %+v %v", cancelled, err)
	}

	// Bob may use the peer, but not alice's tasks.
	bob := passGRPCClient(t, card, tok["bob"])
	if _, err := bob.GetTask(ctx, &sdk.GetTaskRequest{ID: task.ID}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Errorf("bob gets alice's task: %v; want task not found", err)
	}
	if _, err := bob.CancelTask(ctx, &sdk.CancelTaskRequest{ID: waiting}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Errorf("bob cancels alice's task: %v; want task not found", err)
	}
	for _, err := range bob.SubscribeToTask(ctx, &sdk.SubscribeToTaskRequest{ID: held}) {
		if !errors.Is(err, sdk.ErrTaskNotFound) {
			t.Errorf("bob subscribes to alice's task: %v; want task not found", err)
		}
		break
	}
	m := sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("again"))
	m.TaskID = task.ID
	if _, err := bob.SendMessage(ctx, &sdk.SendMessageRequest{Message: m}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Errorf("bob continues alice's task: %v; want task not found", err)
	}
	list, err := bob.ListTasks(ctx, &sdk.ListTasksRequest{})
	if err != nil || slices.ContainsFunc(list.Tasks, func(lt *sdk.Task) bool { return lt.ID == task.ID || lt.ID == held || lt.ID == waiting }) {
		t.Errorf("bob's listing: %+v %v", list, err)
	}

	// Carol may not use a2a@peer; no credentials: the gateway's refusal.
	msg := &sdk.SendMessageRequest{Message: sdk.NewMessage(sdk.MessageRoleUser, sdk.NewTextPart("hi"))}
	if _, err := passGRPCClient(t, card, tok["carol"]).SendMessage(ctx, msg); !errors.Is(err, sdk.ErrUnauthorized) {
		t.Errorf("carol sends over gRPC: %v; want permission denied", err)
	}
	if _, err := passGRPCClient(t, card, "").SendMessage(ctx, msg); !errors.Is(err, sdk.ErrUnauthenticated) {
		t.Errorf("no credentials over gRPC: %v; want unauthenticated", err)
	}

	// The peer saw wunder's credential for it and its JSON-RPC
	// interface's tenant, never the caller's or peers/peer.
	peer.mu.Lock()
	for _, a := range peer.auth {
		if a != "Bearer peer-secret|" {
			t.Errorf("the peer saw credentials %q", a)
		}
	}
	for _, tn := range peer.tenants {
		if tn != "peer-t" {
			t.Errorf("the peer was sent the tenant %q; want its interface's, peer-t", tn)
		}
	}
	peer.mu.Unlock()

	// The audit: alice's send, get, stream, send (hold), subscribe, send
	// (wait), cancel allowed; bob's four refused denied, his list
	// allowed; carol's send denied.
	var page struct {
		Records []struct {
			UserID  string `json:"user_id"`
			Via     string `json:"via"`
			Outcome string `json:"outcome"`
		}
	}
	decodeInto(t, f.rest(t, "GET", "/wunder/admin/audit?tool=a2a@peer&limit=200", "", map[string]string{"X-API-Key": "admin-key"}), 200, &page)
	count := map[string]int{}
	for _, rec := range page.Records {
		if rec.Via != "passthrough" {
			t.Errorf("audit record %+v", rec)
		}
		count[rec.UserID+" "+rec.Outcome]++
	}
	if want := map[string]int{"alice allowed": 7, "bob denied": 4, "bob allowed": 1, "carol denied": 1}; !mapsEqual(count, want) {
		t.Errorf("audit = %v; want %v", count, want)
	}
}

// Hostile gRPC requests for peers through the real wiring: a tenant
// naming no published peer (unknown, configured but not published,
// malformed) is NOT_FOUND as a path naming none is, and over the Connect
// protocol's JSON, params naming a field twice are refused or read once:
// never INTERNAL, never a 500, and nothing reaches the peer.
func TestA2APassThroughGRPCHostile(t *testing.T) {
	peer := startPassPeer(t)
	f, tok := passWunder(t, peer, func(c *config.Config) {
		c.A2A.Services = append(c.A2A.Services, config.A2AService{Name: "hidden", Endpoint: peer.url, Enabled: true,
			BearerToken: "peer-secret", MaxDepth: 3})
	})
	hc := &http.Client{Transport: headerRT{hdr: bearerOf(tok["alice"]), h2c: true}}
	get := connect.NewClient[a2apb.GetTaskRequest, a2apb.Task](hc, f.s.url+a2a.GRPCServicePath+"GetTask", connect.WithGRPC())
	for _, tenant := range []string{"peers/nobody", "peers/hidden", "peers/", "peers/peer/x", "peers/../peer", "peers/" + strings.Repeat("p", 5000)} {
		_, err := get.CallUnary(t.Context(), connect.NewRequest(&a2apb.GetTaskRequest{Tenant: tenant, Id: "t1"}))
		if connect.CodeOf(err) != connect.CodeNotFound {
			t.Errorf("tenant %.40q: %v; want not found", tenant, err)
		}
	}
	for _, tc := range []struct{ name, method, body, code string }{
		{"id twice", "GetTask", `{"tenant":"peers/peer","id":"t1","ID":"t2"}`, "not_found"},
		{"a key twice", "GetTask", `{"tenant":"peers/peer","id":"t1","id":"t2"}`, "invalid_argument"},
		{"taskId twice", "SendMessage", `{"tenant":"peers/peer","message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"taskId":"a","task_id":"b"}}`, "invalid_argument"},
		{"tenant not a string", "GetTask", `{"tenant":["peers/peer"],"id":"t1"}`, "invalid_argument"},
	} {
		h := bearerOf(tok["alice"])
		h["Content-Type"] = "application/json"
		r := f.rest(t, "POST", a2a.GRPCServicePath+tc.method, tc.body, h)
		var e struct{ Code string }
		_ = json.NewDecoder(r.Body).Decode(&e)
		r.Body.Close()
		if r.StatusCode/100 != 4 || e.Code != tc.code {
			t.Errorf("%s: HTTP %d %q; want %s", tc.name, r.StatusCode, e.Code, tc.code)
		}
	}
	peer.mu.Lock()
	defer peer.mu.Unlock()
	if len(peer.tasks) != 0 {
		t.Errorf("the peer ran %d tasks", len(peer.tasks))
	}
}

// The prefix config refuses in a2a.server.tenants is the one the card and
// the gRPC binding use for peers (config cannot import a2awire).
func TestA2APassThroughGRPCTenantPrefix(t *testing.T) {
	if config.A2APeerTenantPrefix != w.PeerTenantPrefix {
		t.Errorf("config reserves tenants %q, the pass-through uses %q", config.A2APeerTenantPrefix, w.PeerTenantPrefix)
	}
}
