package a2a_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/wunder/wunder/a2a"
	"github.com/wunder/wunder/orchestrator"
)

// grpcMeta is gRPC metadata sent with every call (the user named, a
// credential).
type grpcMeta map[string]string

func (m grpcMeta) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return m, nil
}

func (grpcMeta) RequireTransportSecurity() bool { return false }

// passGRPCClient resolves the card of the front's peer and makes a2a-go's
// gRPC client from it, acting as user.
func passGRPCClient(t *testing.T, f *passFront, peer, user string) (*sdk.AgentCard, *a2aclient.Client) {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(t.Context(), f.url+"/a2a/"+peer)
	if err != nil {
		t.Fatalf("the card through the front: %v", err)
	}
	c, err := a2aclient.NewFromCard(t.Context(), card,
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []sdk.TransportProtocol{sdk.TransportProtocolGRPC}}),
		a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithPerRPCCredentials(grpcMeta{"x-wunder-user": user})))
	if err != nil {
		t.Fatal(err)
	}
	return card, c
}

// rawGRPC is a plain A2A gRPC client of the front.
func rawGRPC(t *testing.T, f *passFront) a2apb.A2AServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(strings.TrimPrefix(f.url, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return a2apb.NewA2AServiceClient(conn)
}

// A second wunder published behind the first, reached by a2a-go's gRPC
// client from the card the front serves for it: the card lists the
// front's gRPC target with the tenant peers/w; send keeps the peer's task
// id (made for the peer's default user: the tenant went no further), get,
// stream, subscribe and cancel pass through; another user reaches none of
// it.
func TestPassThroughGRPC(t *testing.T) {
	f := newPassFront(t)
	card, alice := passGRPCClient(t, f, "w", "alice")
	i := slices.IndexFunc(card.SupportedInterfaces, func(i *sdk.AgentInterface) bool { return i.ProtocolBinding == sdk.TransportProtocolGRPC })
	if i < 0 || card.SupportedInterfaces[i].Tenant != "peers/w" || card.SupportedInterfaces[i].URL != strings.TrimPrefix(f.url, "http://") {
		t.Fatalf("the card's gRPC interface through the front: %+v", card.SupportedInterfaces)
	}
	ctx := t.Context()

	res, err := alice.SendMessage(ctx, userMsg("hello"))
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*sdk.Task)
	if !ok || task.Status.State != sdk.TaskStateCompleted || taskText(task) != "echo: hello" {
		t.Fatalf("send through the front: %#v", res)
	}
	run, err := f.peer.o.GetRun(ctx, "", string(task.ID))
	if err != nil || run.UserID != "a2a" {
		t.Fatalf("the peer's run %s: %+v %v; want one of its default user's", task.ID, run, err)
	}
	got, err := alice.GetTask(ctx, &sdk.GetTaskRequest{ID: task.ID})
	if err != nil || got.ID != task.ID || got.Status.State != sdk.TaskStateCompleted {
		t.Fatalf("get through the front: %+v %v", got, err)
	}

	var states []sdk.TaskState
	streamed := sdk.TaskID("")
	for ev, err := range alice.SendStreamingMessage(ctx, userMsg("stream me")) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch e := ev.(type) {
		case *sdk.Task:
			streamed = e.ID
		case *sdk.TaskStatusUpdateEvent:
			if e.TaskID != streamed {
				t.Errorf("status of %s in the stream of %s", e.TaskID, streamed)
			}
			states = append(states, e.Status.State)
		}
	}
	if _, err := f.peer.o.GetRun(ctx, "", string(streamed)); err != nil || len(states) == 0 || states[len(states)-1] != sdk.TaskStateCompleted {
		t.Fatalf("streamed task %s (%v), states %v", streamed, err, states)
	}

	// Subscribe to a task the peer holds: the task, then its end.
	var held sdk.TaskID
	for ev, err := range alice.SendStreamingMessage(ctx, userMsg("hold on")) {
		if err != nil {
			t.Fatal(err)
		}
		held = ev.(*sdk.Task).ID
		break
	}
	<-f.peer.model.Held()
	states, first := nil, true
	for ev, err := range alice.SubscribeToTask(ctx, &sdk.SubscribeToTaskRequest{ID: held}) {
		if err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		if first {
			if tk, ok := ev.(*sdk.Task); !ok || tk.ID != held {
				t.Fatalf("the subscription starts with %#v; want task %s", ev, held)
			}
			first = false
			f.peer.model.Release()
			continue
		}
		if su, ok := ev.(*sdk.TaskStatusUpdateEvent); ok {
			states = append(states, su.Status.State)
		}
	}
	if len(states) == 0 || states[len(states)-1] != sdk.TaskStateCompleted {
		t.Fatalf("the subscription: states %v", states)
	}

	// Cancel a held task.
	req := userMsg("hold again")
	req.Config = &sdk.SendMessageConfig{ReturnImmediately: true}
	res, err = alice.SendMessage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	waiting := res.(*sdk.Task).ID
	canceled, err := alice.CancelTask(ctx, &sdk.CancelTaskRequest{ID: waiting})
	if err != nil || canceled.ID != waiting || canceled.Status.State != sdk.TaskStateCanceled {
		t.Fatalf("cancel through the front: %+v %v", canceled, err)
	}

	// Bob reaches none of alice's tasks.
	_, bob := passGRPCClient(t, f, "w", "bob")
	if _, err := bob.GetTask(ctx, &sdk.GetTaskRequest{ID: task.ID}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Errorf("bob gets alice's task: %v; want task not found", err)
	}
	if _, err := bob.CancelTask(ctx, &sdk.CancelTaskRequest{ID: held}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Errorf("bob cancels alice's task: %v; want task not found", err)
	}
	for _, err := range bob.SubscribeToTask(ctx, &sdk.SubscribeToTaskRequest{ID: task.ID}) {
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
	if err != nil || slices.ContainsFunc(list.Tasks, func(lt *sdk.Task) bool { return lt.ID == task.ID }) {
		t.Errorf("bob's listing: %+v %v", list, err)
	}
}

// refusal is a gRPC error's code and ErrorInfo reason.
func refusal(err error) (codes.Code, string) {
	st, _ := status.FromError(err)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return st.Code(), info.Reason
		}
	}
	return st.Code(), ""
}

// Every gRPC request for a peer that cannot be served is refused in the
// binding's shape — a tenant naming no published peer NOT_FOUND as a path
// naming none, the pass-through's refusals with the code and reason of
// the error table — never INTERNAL but for a peer's answer that is no A2A
// answer, and nothing reaches the peer. Over the Connect protocol's JSON,
// params that name a field twice are refused or read once, never
// forwarded ambiguously.
func TestPassThroughGRPCRefusals(t *testing.T) {
	restOnly := &a2a.Peer{Name: "restonly", HTTP: http.DefaultClient, Timeout: 10 * time.Second,
		Card: func(context.Context, string) (json.RawMessage, error) {
			return json.RawMessage(`{"name":"r","supportedInterfaces":[{"url":"http://127.0.0.1:1/v1","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}]}`), nil
		}}
	f := newPassFront(t, restOnly)
	c := rawGRPC(t, f)
	msg := &a2apb.Message{MessageId: "m", Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hi"}}}}
	send := func(tenant string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := c.SendMessage(ctx, &a2apb.SendMessageRequest{Tenant: tenant, Message: msg})
			return err
		}
	}
	get := func(tenant string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := c.GetTask(ctx, &a2apb.GetTaskRequest{Tenant: tenant, Id: "run_0000000000000000000000000a"})
			return err
		}
	}
	stream := func(tenant string) func(context.Context) error {
		return func(ctx context.Context) error {
			st, err := c.SendStreamingMessage(ctx, &a2apb.SendMessageRequest{Tenant: tenant, Message: msg})
			if err != nil {
				return err
			}
			for {
				if _, err := st.Recv(); err != nil {
					if errors.Is(err, io.EOF) {
						return nil
					}
					return err
				}
			}
		}
	}
	with := func(k, v string, call func(context.Context) error) func(context.Context) error {
		return func(ctx context.Context) error { return call(metadata.AppendToOutgoingContext(ctx, k, v)) }
	}
	cases := []struct {
		name   string
		call   func(context.Context) error
		code   codes.Code
		reason string
	}{
		{"no such peer", get("peers/nobody"), codes.NotFound, ""},
		{"no peer named", get("peers/"), codes.NotFound, ""},
		{"a path in the name", get("peers/w/../w"), codes.NotFound, ""},
		{"a long name", get("peers/" + strings.Repeat("x", 4000)), codes.NotFound, ""},
		{"no such peer, streaming", stream("peers/nobody"), codes.NotFound, ""},
		{"a task wunder never made there", get("peers/w"), codes.NotFound, "TASK_NOT_FOUND"},
		{"no message", func(ctx context.Context) error {
			_, err := c.SendMessage(ctx, &a2apb.SendMessageRequest{Tenant: "peers/w"})
			return err
		}, codes.InvalidArgument, "INVALID_PARAMS"},
		{"push config", func(ctx context.Context) error {
			_, err := c.CreateTaskPushNotificationConfig(ctx, &a2apb.TaskPushNotificationConfig{Tenant: "peers/w", TaskId: "t", Url: "https://example.com/h"})
			return err
		}, codes.FailedPrecondition, "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		{"extended card", func(ctx context.Context) error {
			_, err := c.GetExtendedAgentCard(ctx, &a2apb.GetExtendedAgentCardRequest{Tenant: "peers/w"})
			return err
		}, codes.FailedPrecondition, "EXTENDED_AGENT_CARD_NOT_CONFIGURED"},
		{"0.3", with("a2a-version", "0.3", send("peers/w")), codes.Unimplemented, "VERSION_NOT_SUPPORTED"},
		{"hops not a number", with("x-wunder-a2a-hops", "many", send("peers/w")), codes.InvalidArgument, "INVALID_PARAMS"},
		{"no JSON-RPC 1.0 interface", send("peers/restonly"), codes.Unimplemented, "VERSION_NOT_SUPPORTED"},
		{"a loop", send("peers/loop"), codes.FailedPrecondition, "UNSUPPORTED_OPERATION"},
		{"down", send("peers/down"), codes.Unavailable, "UNAVAILABLE"},
		{"down, streaming", stream("peers/down"), codes.Unavailable, "UNAVAILABLE"},
		{"junk", send("peers/junk"), codes.Internal, "INVALID_AGENT_RESPONSE"},
		{"a stream broken off", stream("peers/cut"), codes.Unavailable, "UNAVAILABLE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, reason := refusal(tc.call(t.Context()))
			if code != tc.code || reason != tc.reason {
				t.Fatalf("%s %q; want %s %q", code, reason, tc.code, tc.reason)
			}
		})
	}

	// The Connect protocol's JSON: a field named twice is refused, or read
	// once (ProtoJSON drops a spelling it does not know: the id read is
	// the one checked, no task of the caller's).
	for _, tc := range []struct{ name, method, body, code string }{
		{"id twice", "GetTask", `{"tenant":"peers/w","id":"run_0000000000000000000000000a","ID":"run_0000000000000000000000000b"}`, "not_found"},
		{"taskId twice", "SendMessage", `{"tenant":"peers/w","message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"taskId":"a","task_id":"b"}}`, "invalid_argument"},
		{"a key twice", "GetTask", `{"tenant":"peers/w","id":"a","id":"b"}`, "invalid_argument"},
		{"tenant not a string", "GetTask", `{"tenant":7,"id":"a"}`, "invalid_argument"},
	} {
		t.Run("Connect JSON "+tc.name, func(t *testing.T) {
			status, body := f.do(t, "POST", a2a.GRPCServicePath+tc.method, tc.body, map[string]string{"Content-Type": "application/json"})
			var e struct{ Code string }
			if json.Unmarshal([]byte(body), &e) != nil || status/100 != 4 || e.Code != tc.code {
				t.Fatalf("HTTP %d %s; want %s", status, clipBody(body), tc.code)
			}
		})
	}

	runs, err := f.peer.o.ListRuns(t.Context(), orchestrator.RunFilter{})
	if err != nil || len(runs) != 0 {
		t.Errorf("the peer ran %d tasks (%v)", len(runs), err)
	}
}
