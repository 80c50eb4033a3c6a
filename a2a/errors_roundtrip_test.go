package a2a_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/wunder/wunder/a2a"
	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// The bindings of the round trip: JSON-RPC in both versions, HTTP+JSON
// and gRPC (1.0 only).
var bindings = []string{"jsonrpc/1.0", "jsonrpc/0.3", "http+json", "grpc"}

// peer is wunder's client side of one binding: each method makes one real
// request and returns the error that binding's decoder (internal/a2awire:
// Client and Error.Unwrap, FromHTTP, FromGRPC) reads from the answer.
type peer interface {
	get(ctx context.Context, id string) error
	cancel(ctx context.Context, id string) error
	send(ctx context.Context, m w.Message) error
	subscribe(ctx context.Context, id string) error
	pushConfig(ctx context.Context, taskID string) error
	extendedCard(ctx context.Context) error
}

// newPeer returns binding's peer of the server at url, sending hdr with
// every request; version, when set, is the A2A-Version it claims.
func newPeer(binding, url string, hdr http.Header, version string) peer {
	switch binding {
	case "jsonrpc/1.0", "jsonrpc/0.3":
		v := w.Version(strings.TrimPrefix(binding, "jsonrpc/"))
		if version != "" {
			v = w.Version(version)
		}
		return rpcPeer{&w.Client{URL: url + "/a2a", Version: v, Header: hdr}}
	case "http+json":
		return restPeer{url + a2a.DefaultRESTPath + "/", withVersion(hdr, version)}
	}
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true) // gRPC over h2c, as wunder serves it
	return grpcPeer{&http.Client{Transport: tr}, url + a2a.GRPCServicePath, withVersion(hdr, version)}
}

func withVersion(hdr http.Header, version string) http.Header {
	hdr = hdr.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	if version != "" {
		hdr.Set("A2A-Version", version)
	}
	return hdr
}

// rpcPeer is wunder's own JSON-RPC client, a2awire.Client.
type rpcPeer struct{ c *w.Client }

func (p rpcPeer) get(ctx context.Context, id string) error {
	_, err := p.c.GetTask(ctx, id)
	return err
}

func (p rpcPeer) cancel(ctx context.Context, id string) error {
	_, err := p.c.CancelTask(ctx, id)
	return err
}

func (p rpcPeer) send(ctx context.Context, m w.Message) error {
	_, err := p.c.Send(ctx, &w.SendRequest{Message: m})
	return err
}

func (p rpcPeer) subscribe(ctx context.Context, id string) error {
	for _, err := range p.c.Subscribe(ctx, id) {
		if err != nil {
			return err
		}
	}
	return nil
}

func (p rpcPeer) pushConfig(ctx context.Context, taskID string) error {
	params := map[string]any{"taskId": taskID, "id": "c1"}
	if p.c.Version == w.V03 {
		params = map[string]any{"id": taskID, "pushNotificationConfigId": "c1"}
	}
	_, err := p.c.Call(ctx, w.MethodsOf(p.c.Version).PushGet, params)
	return err
}

func (p rpcPeer) extendedCard(ctx context.Context) error {
	_, err := p.c.Call(ctx, w.MethodsOf(p.c.Version).ExtendedCard, map[string]any{})
	return err
}

// raw posts a JSON-RPC body as it is, for the requests the client cannot
// get wrong, and decodes the answer's error as the client does.
func (p rpcPeer) raw(ctx context.Context, body string) error {
	return p.rawAs(ctx, "application/json", body)
}

// rawAs is raw with the body's Content-Type.
func (p rpcPeer) rawAs(ctx context.Context, contentType, body string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.c.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("A2A-Version", string(p.c.Version))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var r w.Response
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return err
	}
	if r.Error != nil {
		return r.Error
	}
	return nil
}

// restPeer speaks the HTTP+JSON binding; a2awire.FromHTTP reads its errors.
type restPeer struct {
	base string
	hdr  http.Header
}

func (p restPeer) do(ctx context.Context, method, path string, body any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(ctx, method, p.base+path, rd)
	for k, vs := range p.hdr {
		req.Header[k] = vs
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close() // a stream that answered is not read: only errors are under test
	if resp.StatusCode/100 == 2 {
		return nil
	}
	return w.FromHTTP(resp)
}

func (p restPeer) get(ctx context.Context, id string) error {
	return p.do(ctx, http.MethodGet, "tasks/"+id, nil)
}

func (p restPeer) cancel(ctx context.Context, id string) error {
	return p.do(ctx, http.MethodPost, "tasks/"+id+":cancel", nil)
}

func (p restPeer) send(ctx context.Context, m w.Message) error {
	return p.do(ctx, http.MethodPost, "message:send", w.EncodeEvent(w.V10, w.Event{Message: &m}))
}

func (p restPeer) subscribe(ctx context.Context, id string) error {
	return p.do(ctx, http.MethodPost, "tasks/"+id+":subscribe", nil)
}

func (p restPeer) pushConfig(ctx context.Context, taskID string) error {
	return p.do(ctx, http.MethodGet, "tasks/"+taskID+"/pushNotificationConfigs/c1", nil)
}

func (p restPeer) extendedCard(ctx context.Context) error {
	return p.do(ctx, http.MethodGet, "extendedAgentCard", nil)
}

// grpcPeer speaks the gRPC binding through connect-go; a2awire.FromGRPC
// reads its errors.
type grpcPeer struct {
	hc   *http.Client
	base string
	hdr  http.Header
}

func unaryCall[Req, Res any](ctx context.Context, p grpcPeer, method string, in *Req) error {
	r := connect.NewRequest(in)
	for k, vs := range p.hdr {
		r.Header()[k] = vs
	}
	_, err := connect.NewClient[Req, Res](p.hc, p.base+method, connect.WithGRPC()).CallUnary(ctx, r)
	return fromConnect(err)
}

// fromConnect decodes a Connect error with a2awire.FromGRPC: its code,
// message and details (each as ProtoJSON's Any, with "@type").
func fromConnect(err error) error {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return err
	}
	details := []json.RawMessage{}
	for _, d := range ce.Details() {
		v, err := d.Value()
		if err != nil {
			continue
		}
		a, err := anypb.New(v)
		if err != nil {
			continue
		}
		b, err := protojson.Marshal(a)
		if err == nil {
			details = append(details, b)
		}
	}
	raw, _ := json.Marshal(details)
	return w.FromGRPC(int(ce.Code()), ce.Message(), raw)
}

func (p grpcPeer) get(ctx context.Context, id string) error {
	return unaryCall[a2apb.GetTaskRequest, a2apb.Task](ctx, p, "GetTask", &a2apb.GetTaskRequest{Id: id})
}

func (p grpcPeer) cancel(ctx context.Context, id string) error {
	return unaryCall[a2apb.CancelTaskRequest, a2apb.Task](ctx, p, "CancelTask", &a2apb.CancelTaskRequest{Id: id})
}

func (p grpcPeer) send(ctx context.Context, m w.Message) error {
	b, _ := json.Marshal(w.EncodeEvent(w.V10, w.Event{Message: &m}))
	var req a2apb.SendMessageRequest
	if err := protojson.Unmarshal(b, &req); err != nil {
		return err
	}
	return unaryCall[a2apb.SendMessageRequest, a2apb.SendMessageResponse](ctx, p, "SendMessage", &req)
}

func (p grpcPeer) subscribe(ctx context.Context, id string) error {
	r := connect.NewRequest(&a2apb.SubscribeToTaskRequest{Id: id})
	for k, vs := range p.hdr {
		r.Header()[k] = vs
	}
	st, err := connect.NewClient[a2apb.SubscribeToTaskRequest, a2apb.StreamResponse](p.hc, p.base+"SubscribeToTask", connect.WithGRPC()).CallServerStream(ctx, r)
	if err != nil {
		return fromConnect(err)
	}
	defer st.Close()
	for st.Receive() {
	}
	return fromConnect(st.Err())
}

func (p grpcPeer) pushConfig(ctx context.Context, taskID string) error {
	return unaryCall[a2apb.GetTaskPushNotificationConfigRequest, a2apb.TaskPushNotificationConfig](ctx, p,
		"GetTaskPushNotificationConfig", &a2apb.GetTaskPushNotificationConfigRequest{TaskId: taskID, Id: "c1"})
}

func (p grpcPeer) extendedCard(ctx context.Context) error {
	return unaryCall[a2apb.GetExtendedAgentCardRequest, a2apb.AgentCard](ctx, p, "GetExtendedAgentCard", &a2apb.GetExtendedAgentCardRequest{})
}

// serveHandler serves h's JSON-RPC, HTTP+JSON and gRPC bindings (HTTP/1.1
// and h2c, as wunder does), behind wrap when set.
func serveHandler(t *testing.T, h *a2a.Handler, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/a2a", h)
	mux.Handle("/a2a/", h)
	mux.Handle(a2a.GRPCServicePath, h.GRPC())
	var root http.Handler = mux
	if wrap != nil {
		root = wrap(mux)
	}
	srv := httptest.NewUnstartedServer(root)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		h.Close()
	})
	return srv.URL
}

// bearerPrincipal stands for the gateway's authenticator: "Bearer <user>"
// is that user's token; no credential, no principal.
func bearerPrincipal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if user, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			r = r.WithContext(orchestrator.WithPrincipal(r.Context(), &orchestrator.Principal{UserID: user, Kind: orchestrator.CredentialToken}))
		}
		next.ServeHTTP(rw, r)
	})
}

// fixture is a server of the round trip and what its cases need.
type fixture struct {
	url string
	// done is a task that completed; held the context of a run that waits
	// for the model.
	done, held string
}

// holdRun starts a run in a new context that waits in the model until
// the test ends, and returns its context.
func holdRun(t *testing.T, e *env) string {
	t.Helper()
	ev, err := (&w.Client{URL: e.url + "/a2a", Version: w.V10}).Send(t.Context(), &w.SendRequest{
		Message: w.Message{MessageID: "m-hold", Role: w.RoleUser, Parts: []w.Part{w.TextPart("hold")}}})
	if err != nil || ev.Task == nil {
		t.Fatalf("send hold: %v %+v", err, ev)
	}
	<-e.model.Held()
	t.Cleanup(e.model.Release)
	return ev.Task.ContextID
}

// errCase raises one kind through a real request on some bindings.
type errCase struct {
	name string
	kind error
	on   []string // nil: every binding
	fx   *fixture
	// hdr is sent with every request; version is the A2A-Version claimed.
	hdr     http.Header
	version string
	do      func(ctx context.Context, binding string, p peer, fx *fixture) error
}

// msg is a user's message of parts.
func msg(parts ...w.Part) w.Message {
	return w.Message{MessageID: "m-" + parts[0].Text, Role: w.RoleUser, Parts: parts}
}

// For every kind of the error table and every binding, a real request to
// wunder's A2A server raises the kind (through the real core where a
// request can: busy, unavailable, not found, not cancelable, unsupported
// operation and content type, invalid params, push, card, version; through
// the real handler over a Backend that fails with the kind where no
// request can), and wunder's own client side of that binding reads it
// back as the same kind: errors.Is holds for its sentinel and its core
// sentinel, and busy and unavailable keep a retry delay.
func TestEveryErrorKindRoundTrips(t *testing.T) {
	core := newEnv(t, nil)
	ev, err := (&w.Client{URL: core.url + "/a2a", Version: w.V10}).Send(t.Context(), &w.SendRequest{
		Message: w.Message{MessageID: "m-done", Role: w.RoleUser, Parts: []w.Part{w.TextPart("hello")}}, Blocking: true})
	if err != nil || ev.Task == nil || ev.Task.Status.State != w.StateCompleted {
		t.Fatalf("a completed task: %v %+v", err, ev)
	}
	coreFx := &fixture{url: core.url, done: ev.Task.ID}

	busyEnv := newEnv(t, nil)
	busyFx := &fixture{url: busyEnv.url, held: holdRun(t, busyEnv)}
	// One running run and no queue: the next new context is refused.
	fullEnv := newEnvWith(t, nil, orchestrator.Options{MaxActiveRuns: 1, QueueSize: -1})
	holdRun(t, fullEnv)
	fullFx := &fixture{url: fullEnv.url}

	// Identified as the gateway's a2aUser does (orchestrator.ActingUser).
	authFx := &fixture{url: serveHandler(t, a2a.New(core.o, &a2a.Options{Identify: func(r *http.Request, requested string) (string, error) {
		return orchestrator.ActingUser(r.Context(), requested)
	}}), bearerPrincipal)}
	noCardFx := &fixture{url: serveHandler(t, a2a.New(core.o, nil), nil)}
	failing := func(err error) *fixture { return &fixture{url: serveHandler(t, a2a.New(refusing{err}, nil), nil)} }
	get := func(ctx context.Context, _ string, p peer, _ *fixture) error {
		return p.get(ctx, "run_0000000000000000000000000a")
	}
	raw := func(body string) func(context.Context, string, peer, *fixture) error {
		return func(ctx context.Context, _ string, p peer, _ *fixture) error { return p.(rpcPeer).raw(ctx, body) }
	}
	jsonrpc, others := bindings[:2], bindings[2:]
	elf := append([]byte("\x7fELF\x02\x01\x01\x00"), make([]byte, 64)...)

	cases := []errCase{
		{name: "task not found", kind: orchestrator.ErrNotFound, fx: (coreFx), do: get},
		{name: "cancel an ended task", kind: w.ErrTaskNotCancelable, fx: (coreFx),
			do: func(ctx context.Context, _ string, p peer, fx *fixture) error { return p.cancel(ctx, fx.done) }},
		{name: "a context with a running task", kind: orchestrator.ErrBusy, fx: (busyFx),
			do: func(ctx context.Context, _ string, p peer, fx *fixture) error {
				m := msg(w.TextPart("again"))
				m.ContextID = fx.held
				return p.send(ctx, m)
			}},
		{name: "no slot and no queue", kind: orchestrator.ErrUnavailable, fx: (fullFx),
			do: func(ctx context.Context, _ string, p peer, _ *fixture) error {
				return p.send(ctx, msg(w.TextPart("more")))
			}},
		{name: "no credentials", kind: orchestrator.ErrUnauthenticated, fx: (authFx), do: get},
		{name: "alice acting for bob", kind: orchestrator.ErrPermissionDenied, fx: (authFx), do: get,
			hdr: http.Header{"Authorization": {"Bearer alice"}, "X-Wunder-User": {"bob"}}},
		{name: "no parts", kind: orchestrator.ErrInvalidArgument, fx: (coreFx),
			do: func(ctx context.Context, _ string, p peer, _ *fixture) error {
				return p.send(ctx, w.Message{MessageID: "m-empty", Role: w.RoleUser})
			}},
		{name: "push off", kind: w.ErrPushNotSupported, fx: (coreFx),
			do: func(ctx context.Context, _ string, p peer, fx *fixture) error { return p.pushConfig(ctx, fx.done) }},
		{name: "subscribe to an ended task", kind: w.ErrUnsupportedOperation, fx: (coreFx),
			do: func(ctx context.Context, _ string, p peer, fx *fixture) error { return p.subscribe(ctx, fx.done) }},
		{name: "an executable file", kind: w.ErrContentTypeNotSupported, fx: (coreFx),
			do: func(ctx context.Context, _ string, p peer, _ *fixture) error {
				return p.send(ctx, msg(w.TextPart("run it"), w.Part{Kind: "file", Raw: elf, Filename: "run.exe"}))
			}},
		{name: "no extended card", kind: w.ErrExtendedCardNotConfigured, fx: (noCardFx),
			do: func(ctx context.Context, _ string, p peer, _ *fixture) error { return p.extendedCard(ctx) }},
		{name: "version 9.9", kind: w.ErrVersionNotSupported, fx: (coreFx), version: "9.9", do: get},
		{name: "not JSON", kind: w.ErrParse, on: jsonrpc, fx: (coreFx), do: raw(`{"jsonrpc":`)},
		{name: "no id", kind: w.ErrInvalidRequest, on: jsonrpc, fx: (coreFx), do: raw(`{"jsonrpc":"2.0","method":"GetTask","params":{"id":"x"}}`)},
		{name: "unknown method", kind: w.ErrMethodNotFound, on: jsonrpc, fx: (coreFx), do: raw(`{"jsonrpc":"2.0","id":1,"method":"tasks/teleport"}`)},
		{name: "no id and bad params", kind: orchestrator.ErrInvalidArgument, on: jsonrpc, fx: (coreFx), do: raw(`{"jsonrpc":"2.0","method":"message/send","params":{"message":"x"}}`)},
		{name: "a text/plain body", kind: w.ErrContentTypeNotSupported, on: jsonrpc, fx: (coreFx),
			do: func(ctx context.Context, _ string, p peer, _ *fixture) error {
				return p.(rpcPeer).rawAs(ctx, "text/plain", `{'jsonrpc': '2.0', 'id': 1, 'method': 'SendMessage'}`)
			}},
		// A 404 is not found, whatever was missing (a2awire.FromHTTP).
		{name: "a path no binding has", kind: orchestrator.ErrNotFound, on: []string{"http+json"}, fx: (coreFx),
			do: func(ctx context.Context, _ string, p peer, _ *fixture) error {
				return p.(restPeer).do(ctx, http.MethodGet, "../friend/.well-known/agent-card.json", nil)
			}},
		{name: "wrong HTTP method", kind: w.ErrMethodNotFound, on: []string{"http+json"}, fx: (coreFx),
			do: func(ctx context.Context, _ string, p peer, _ *fixture) error {
				return p.(restPeer).do(ctx, http.MethodDelete, "message:send", nil)
			}},
		{name: "unknown procedure", kind: w.ErrMethodNotFound, on: []string{"grpc"}, fx: (coreFx),
			do: func(ctx context.Context, _ string, p peer, _ *fixture) error {
				return unaryCall[emptypb.Empty, emptypb.Empty](ctx, p.(grpcPeer), "Teleport", &emptypb.Empty{})
			}},
		// No request raises these: the backend fails with them.
		{name: "a cancelled run", kind: orchestrator.ErrCanceled, fx: failing(orchestrator.ErrCanceled), do: get},
		{name: "a crash", kind: w.ErrInternal, fx: failing(errors.New("boom")), do: get},
		{name: "a peer's bad answer", kind: w.ErrInvalidAgentResponse, fx: failing(w.ErrInvalidAgentResponse), do: get},
		{name: "an extension required", kind: w.ErrExtensionSupportRequired, fx: failing(w.ErrExtensionSupportRequired), do: get},
		{name: "parse error", kind: w.ErrParse, on: others, fx: failing(w.ErrParse), do: get},
		{name: "invalid request", kind: w.ErrInvalidRequest, on: others, fx: failing(w.ErrInvalidRequest), do: get},
	}

	covered := map[error][]string{}
	for _, tc := range cases {
		on := tc.on
		if on == nil {
			on = bindings
		}
		for _, b := range on {
			covered[tc.kind] = append(covered[tc.kind], b)
			t.Run(tc.name+"/"+b, func(t *testing.T) {
				err := tc.do(t.Context(), b, newPeer(b, tc.fx.url, tc.hdr, tc.version), tc.fx)
				k, _ := w.KindOf(tc.kind)
				var e *w.Error
				if !errors.As(err, &e) {
					t.Fatalf("%v; want an A2A error of kind %v", err, tc.kind)
				}
				if got := e.Kind(); got.Err != tc.kind || !errors.Is(err, tc.kind) || !errors.Is(err, coreOf(k)) {
					t.Fatalf("%v reads as %v (%s); want %v, also %v", err, got.Err, got.Reason, tc.kind, coreOf(k))
				}
				if _, ok := orchestrator.RetryAfter(err); k.Retry && !ok {
					t.Errorf("%v carries no retry delay", err)
				}
			})
		}
	}

	// Every kind a client can read (the table's rows but its aliases)
	// went through every binding.
	kinds := w.Kinds()
	for i, k := range kinds {
		if isAlias(kinds, i) {
			continue
		}
		for _, b := range bindings {
			if !slices.Contains(covered[k.Err], b) {
				t.Errorf("no case raises %v (%s) on %s", k.Err, k.Reason, b)
			}
		}
	}
}

func coreOf(k *w.Kind) error {
	if k.Core != nil {
		return k.Core
	}
	return k.Err
}

// isAlias reports whether row i of the table is sent in the shape of a row
// above it, or its sentinel is a row's above it: clients never read it.
func isAlias(kinds []w.Kind, i int) bool {
	for _, k := range kinds[:i] {
		if (k.Code == kinds[i].Code && k.Reason == kinds[i].Reason) || k.Err == kinds[i].Err {
			return true
		}
	}
	return false
}
