package a2atools_test

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/wunder/wunder/a2a"
	"github.com/wunder/wunder/agentcard"
	"github.com/wunder/wunder/internal/testutil/fakemodel"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// goEcho is an a2a-go v2.4.0 agent: a task, an artifact "echo: <text>",
// then completed.
type goEcho struct{}

func (goEcho) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[sdk.Event, error] {
	return func(yield func(sdk.Event, error) bool) {
		if ec.StoredTask == nil && !yield(sdk.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		text := ""
		for _, p := range ec.Message.Parts {
			text += p.Text()
		}
		if !yield(sdk.NewArtifactEvent(ec, sdk.NewTextPart("echo: "+text)), nil) {
			return
		}
		yield(sdk.NewStatusUpdateEvent(ec, sdk.TaskStateCompleted, nil), nil)
	}
}

func (goEcho) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[sdk.Event, error] {
	return func(yield func(sdk.Event, error) bool) {
		yield(sdk.NewStatusUpdateEvent(ec, sdk.TaskStateCanceled, nil), nil)
	}
}

// startGoEcho serves the a2a-go echo agent with its card.
func startGoEcho(t testing.TB) string {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	card := &sdk.AgentCard{Name: "go-echo", Description: "echoes", Version: "1",
		SupportedInterfaces: []*sdk.AgentInterface{sdk.NewAgentInterface(srv.URL+"/rpc", sdk.TransportProtocolJSONRPC)},
		Capabilities:        sdk.AgentCapabilities{Streaming: true},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"}}
	mux.Handle("/rpc", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(goEcho{})))
	mux.Handle("/.well-known/agent-card.json", a2asrv.NewStaticAgentCardHandler(card))
	return srv.URL
}

type wunderPeer struct {
	url string
	o   *orchestrator.Orchestrator
	// model is the script given, or the directives (a question is
	// echoed); a question with "hold" is held until released or
	// cancelled.
	model *fakemodel.Model
}

// startWunder serves a second wunder (core + A2A front-end + card) with
// extra toolsets.
func startWunder(t testing.TB, script *orchestratortest.ScriptedModel, extra ...orchestrator.Toolset) *wunderPeer {
	p := &wunderPeer{model: script}
	if script == nil {
		p.model = fakemodel.Directives()
		p.model.Hold(func(req *orchestrator.ModelRequest) bool {
			q, _ := fakemodel.Conversation(req)
			return strings.Contains(q, "hold")
		})
	}
	reg := orchestrator.NewRegistry("", nil, extra...)
	p.o = orchestrator.New(orchestratortest.NewMemStore(), orchestratortest.Models{Model: p.model,
		Settings: orchestrator.ModelSettings{Name: "m", ToolCallMode: orchestrator.ModeFunctionCall, MaxRounds: 4}}, reg, nil)
	var names []string
	for _, ts := range extra {
		tools, _ := ts.Tools(context.Background(), "a2a")
		for _, tl := range tools {
			names = append(names, tl.Spec().Name)
		}
	}
	h := a2a.New(p.o, &a2a.Options{ToolNames: names})
	mux := http.NewServeMux()
	mux.Handle("/a2a", h)
	mux.Handle(agentcard.Path, agentcard.New(p.o, nil))
	srv := httptest.NewServer(mux)
	p.url = srv.URL
	t.Cleanup(func() {
		srv.Close()
		h.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = p.o.Close(ctx)
	})
	return p
}

// recorder collects the events a tool emits.
type recorder struct {
	mu  sync.Mutex
	evs []string
}

func (r *recorder) emit(typ string, data any) {
	b, _ := json.Marshal(data)
	r.mu.Lock()
	r.evs = append(r.evs, typ+" "+string(b))
	r.mu.Unlock()
}

func (r *recorder) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.evs {
		typ, _, _ := strings.Cut(e, " ")
		out = append(out, typ)
	}
	return out
}

func invocation(args string, rec *recorder, md map[string]string) *orchestrator.ToolInvocation {
	return &orchestrator.ToolInvocation{UserID: "u", RunID: "run_local", CallID: "c1", Arguments: json.RawMessage(args),
		Output: func(string, string) {}, Emit: rec.emit, Metadata: md}
}
