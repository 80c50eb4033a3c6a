package connectapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/gateway/connectapi"
	"github.com/wunder/wunder/gen/wunder/v1/wunderv1connect"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// env is the Connect API mounted on the gateway (its middleware included)
// over a real orchestrator with the scripted model and the in-memory store,
// served over HTTP/1.1 and h2c by an httptest server.
type env struct {
	srv   *httptest.Server
	o     *orchestrator.Orchestrator
	model *orchestratortest.ScriptedModel
	files *orchestratortest.Files
}

type envOpts struct {
	gw      gateway.Options
	orch    orchestrator.Options
	api     connectapi.Options
	turns   []orchestratortest.Turn
	noModel bool
	// toolsets are offered besides the files toolset.
	toolsets []orchestrator.Toolset
}

func newEnv(t testing.TB, eo envOpts) *env {
	t.Helper()
	e := &env{model: orchestratortest.NewScriptedModel(eo.turns...), files: orchestratortest.NewFiles()}
	models := orchestratortest.Models{Model: e.model, Settings: orchestrator.ModelSettings{Name: "scripted", ToolCallMode: orchestrator.ModeToolCall, MaxRounds: 5, Stream: true}}
	if eo.noModel {
		models = orchestratortest.Models{}
	}
	reg := orchestrator.NewRegistry("", nil, append([]orchestrator.Toolset{e.files.Toolset()}, eo.toolsets...)...)
	e.o = orchestrator.New(orchestratortest.NewMemStore(), models, reg, &eo.orch)
	gw := gateway.New(e.o, &eo.gw)
	if eo.api.Scope == nil {
		eo.api.Scope = gateway.ScopeOf
	}
	connectapi.New(e.o, &eo.api).MountOn(gw)
	e.srv = httptest.NewUnstartedServer(gw.Handler())
	e.srv.Config.Protocols = new(http.Protocols)
	e.srv.Config.Protocols.SetHTTP1(true)
	e.srv.Config.Protocols.SetUnencryptedHTTP2(true)
	e.srv.Start()
	t.Cleanup(func() {
		e.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.o.Close(ctx)
	})
	return e
}

// protocol is one of the three wire protocols a connect-go client speaks.
type protocol struct {
	name string
	opts []connect.ClientOption
	// h2c: gRPC needs HTTP/2; the others run over HTTP/1.1 here.
	h2c bool
}

var protocols = []protocol{
	{name: "connect"},
	{name: "grpc", opts: []connect.ClientOption{connect.WithGRPC()}, h2c: true},
	{name: "grpcweb", opts: []connect.ClientOption{connect.WithGRPCWeb()}},
}

func (e *env) httpClient(h2c bool) *http.Client {
	tr := &http.Transport{}
	if h2c {
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetUnencryptedHTTP2(true)
	}
	return &http.Client{Transport: tr}
}

type clients struct {
	runs     wunderv1connect.RunServiceClient
	sessions wunderv1connect.SessionServiceClient
	tools    wunderv1connect.ToolServiceClient
}

func (e *env) clients(p protocol, extra ...connect.ClientOption) clients {
	hc := e.httpClient(p.h2c)
	opts := append(append([]connect.ClientOption{}, p.opts...), extra...)
	return clients{
		runs:     wunderv1connect.NewRunServiceClient(hc, e.srv.URL, opts...),
		sessions: wunderv1connect.NewSessionServiceClient(hc, e.srv.URL, opts...),
		tools:    wunderv1connect.NewToolServiceClient(hc, e.srv.URL, opts...),
	}
}

// headerInterceptor adds headers to every request (the API key).
func headerInterceptor(kv ...string) connect.ClientOption {
	return connect.WithInterceptors(headers(kv))
}

type headers []string

func (h headers) set(hdr http.Header) {
	for i := 0; i+1 < len(h); i += 2 {
		hdr.Set(h[i], h[i+1])
	}
}

func (h headers) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		h.set(req.Header())
		return next(ctx, req)
	}
}

func (h headers) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		h.set(conn.RequestHeader())
		return conn
	}
}

func (h headers) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
