package a2a_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/a2a"
	"github.com/wunder/wunder/agentcard"
	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/testutil/fakemodel"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// newEchoModel is the fake model answering "echo: <question>". A question
// with "#reply" answers with the reply tool (after its question, with
// "#ask"); one with "#deploy" calls the tool deploy (twice for "#deploy twice"), then
// reports what it said; any other question with "hold" is held until
// released (Release) or the run is cancelled.
func newEchoModel() *fakemodel.Model {
	m := fakemodel.Reply(func(req *orchestrator.ModelRequest) fakemodel.Turn {
		q, results := fakemodel.Conversation(req)
		switch {
		case strings.Contains(q, "#ask") && strings.Contains(q, "#reply") && len(results) > 0:
			args, _ := json.Marshal(map[string]string{"content": "ask said: " + results[len(results)-1]})
			return fakemodel.Turn{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("reply", string(args))}}
		case strings.Contains(q, "#ask") && len(results) > 0:
			return fakemodel.Turn{Content: "ask said: " + results[len(results)-1]}
		case strings.Contains(q, "#reply") && !strings.Contains(q, "#ask"):
			return fakemodel.Turn{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("reply", `{"content":"replied"}`)}}
		case strings.Contains(q, "#ask"):
			return fakemodel.Turn{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("ask_user", `{"question":"Which environment?","options":["staging","prod"]}`)}}
		case !strings.Contains(q, "#deploy"):
			return fakemodel.Turn{Content: "echo: " + q}
		case len(results) > 0:
			return fakemodel.Turn{Content: "deploy said: " + results[len(results)-1]}
		case strings.Contains(q, "#deploy twice"):
			return fakemodel.Turn{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("deploy", `{"env":"prod"}`), orchestratortest.Call("deploy", `{"env":"eu"}`)}}
		}
		return fakemodel.Turn{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("deploy", `{"env":"prod"}`)}}
	})
	m.Hold(func(req *orchestrator.ModelRequest) bool {
		q, _ := fakemodel.Conversation(req)
		return strings.Contains(q, "hold") && !strings.Contains(q, "#deploy")
	})
	return m
}

type env struct {
	extra *http.ServeMux // more test routes
	url   string
	o     *orchestrator.Orchestrator
	model *fakemodel.Model
	h     *a2a.Handler
	// deploys records the arguments of each call of the deploy tool,
	// which needs a person's approval.
	deploys *calls
}

// calls records tool calls.
type calls struct {
	mu   sync.Mutex
	args []string
}

func (c *calls) add(a string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.args = append(c.args, a)
}

func (c *calls) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.args)
}

// newEnv serves wunder's A2A front-end and card from an in-process core
// with the echo model. The tool deploy asks for approval (questions with
// "#deploy" call it).
func newEnv(t testing.TB, opts *a2a.Options) *env {
	t.Helper()
	return newEnvWith(t, opts, orchestrator.Options{})
}

// newEnvWith is newEnv with the core's options (their Approvals are
// the env's).
func newEnvWith(t testing.TB, opts *a2a.Options, orch orchestrator.Options) *env {
	t.Helper()
	e := &env{model: newEchoModel(), deploys: &calls{}}
	models := orchestratortest.Models{Model: e.model, Settings: orchestrator.ModelSettings{Name: "echo", ToolCallMode: orchestrator.ModeToolCall, MaxRounds: 3}}
	deploy := orchestratortest.NewTool("deploy", false, func(_ context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		e.deploys.add(string(inv.Arguments))
		return &orchestrator.ToolResult{Content: "deployed " + string(inv.Arguments)}, nil
	})
	deploy.S.InputSchema = json.RawMessage(`{"type":"object","properties":{"env":{"type":"string"}},"required":["env"]}`)
	reg := orchestrator.NewRegistry("", nil, orchestratortest.NewFiles().Toolset(),
		orchestrator.StaticToolset{SetName: "deploy", List: []orchestrator.Tool{deploy}})
	orch.Approvals = orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}
	e.o = orchestrator.New(orchestratortest.NewMemStore(), models, reg, &orch)
	if opts == nil {
		opts = &a2a.Options{}
	}
	if opts.ToolNames == nil {
		opts.ToolNames = []string{"deploy"}
	}
	// The env stands for a deployment with credentials, which is what
	// declares (and serves) the extended card.
	card := agentcard.New(e.o, &agentcard.Options{PushNotifications: opts.Push != nil, APIKeyRequired: true, GRPC: true})
	if opts.ExtendedCard == nil {
		opts.ExtendedCard = card.Extended
	}
	e.h = a2a.New(e.o, opts)
	mux := http.NewServeMux()
	mux.Handle("/a2a", e.h)
	mux.Handle("/a2a/", e.h)
	mux.Handle(agentcard.Path, card)
	mux.Handle(a2a.GRPCServicePath, e.h.GRPC())
	e.extra = http.NewServeMux()
	mux.Handle("/test/", e.extra)
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.Protocols = new(http.Protocols) // HTTP/1.1 and h2c, as wunder serves
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	e.url = srv.URL
	t.Cleanup(func() {
		srv.Close()
		e.h.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.o.Close(ctx)
	})
	return e
}

// stateOfPush reads the task state of a push body of either version, 1.0
// ({"task":...}) or 0.3 (the Task), normalised; "" when it is no task.
func stateOfPush(b []byte) string {
	ev, err := w.DecodeEvent(b)
	if err != nil || ev.Task == nil {
		return ""
	}
	return string(ev.Task.Status.State)
}
