package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/mcpserver"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// deploy is the side effect approvals guard: a tool that counts its calls
// and records their arguments; approvals.tools names it.
type deploy struct {
	mu    sync.Mutex
	calls []string
}

func (d *deploy) called() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

type approvalEnv struct {
	model  *orchestratortest.ScriptedModel
	o      *orchestrator.Orchestrator
	deploy *deploy
	url    string
}

// validator checks edited arguments with the library the SDK uses.
type validator struct{}

func (validator) Validate(schema, value json.RawMessage) error {
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return err
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(value, &v); err != nil {
		return err
	}
	return rs.Validate(v)
}

// newApprovalEnv serves /wunder/mcp over an orchestrator whose policy makes
// every call of deploy (input {env: string, required}) wait for approval.
func newApprovalEnv(t *testing.T, opts mcpserver.Options, turns ...orchestratortest.Turn) *approvalEnv {
	t.Helper()
	return newApprovalEnvTokens(t, opts, nil, turns...)
}

// newApprovalEnvTokens is newApprovalEnv behind a stand-in gateway that
// knows tokens (see serve).
func newApprovalEnvTokens(t *testing.T, opts mcpserver.Options, tokens map[string]string, turns ...orchestratortest.Turn) *approvalEnv {
	t.Helper()
	e := &approvalEnv{model: orchestratortest.NewScriptedModel(turns...), deploy: &deploy{}}
	tool := orchestratortest.NewTool("deploy", false, func(_ context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		e.deploy.mu.Lock()
		e.deploy.calls = append(e.deploy.calls, string(inv.Arguments))
		e.deploy.mu.Unlock()
		return &orchestrator.ToolResult{Content: "deployed " + string(inv.Arguments)}, nil
	})
	tool.S.InputSchema = json.RawMessage(`{"type":"object","properties":{"env":{"type":"string","description":"where to deploy"}},"required":["env"]}`)
	reg := orchestrator.NewRegistry("", nil, orchestrator.StaticToolset{SetName: "ops", List: []orchestrator.Tool{tool}})
	models := orchestratortest.Models{Model: e.model, Settings: orchestrator.ModelSettings{Name: "scripted", ToolCallMode: orchestrator.ModeFunctionCall, MaxRounds: 5, Stream: true}}
	e.o = orchestrator.New(orchestratortest.NewMemStore(), models, reg, &orchestrator.Options{
		Approvals: orchestrator.ApprovalPolicy{Tools: []string{"deploy"}}, Schemas: validator{},
	})
	t.Cleanup(func() { _ = e.o.Close(context.Background()) })
	_, e.url = serve(t, e.o, &opts, tokens)
	return e
}

// deployTurns: the model deploys to prod, then answers with what the tool
// said.
func deployTurns(args ...string) []orchestratortest.Turn {
	var calls []orchestrator.ToolCall
	for i, a := range args {
		c := orchestratortest.Call("deploy", a)
		c.ID = "call_" + string(rune('a'+i))
		calls = append(calls, c)
	}
	return []orchestratortest.Turn{{ToolCalls: calls}, {Content: "all done"}}
}

// elicitations records the elicitation requests a client gets and answers
// each with the next of its results.
type elicitations struct {
	mu      sync.Mutex
	answers []*mcp.ElicitResult
	got     []*mcp.ElicitParams
}

func (el *elicitations) handler(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	el.mu.Lock()
	defer el.mu.Unlock()
	el.got = append(el.got, req.Params)
	if len(el.answers) == 0 {
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	a := el.answers[0]
	el.answers = el.answers[1:]
	return a, nil
}

func (el *elicitations) requests() []*mcp.ElicitParams {
	el.mu.Lock()
	defer el.mu.Unlock()
	return slices.Clone(el.got)
}

func accept(content map[string]any) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "accept", Content: content}
}

func runTask(t *testing.T, cs *mcp.ClientSession, args map[string]any) (*mcp.CallToolResult, mcpserver.RunOutput) {
	t.Helper()
	return callTool(t, cs, "wunder__run", args)
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, mcpserver.RunOutput) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out mcpserver.RunOutput
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: structured content %s: %v", name, raw, err)
	}
	return res, out
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text + "\n")
		}
	}
	return b.String()
}

// toolResults are the tool messages of the model's last request: what the
// model read of the round.
func toolResults(m *orchestratortest.ScriptedModel) []string {
	reqs := m.Requests()
	var out []string
	for _, msg := range reqs[len(reqs)-1].Messages {
		if msg.Role == orchestrator.RoleTool {
			out = append(out, msg.Content)
		}
	}
	return out
}

func TestElicitApprove(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, mcpserver.Options{}, deployTurns(`{"env":"prod"}`)...)
	el := &elicitations{answers: []*mcp.ElicitResult{accept(map[string]any{"decision": "approve"})}}
	cs := connectAt(t, e.url+"/wunder/mcp", nil, &mcp.ClientOptions{ElicitationHandler: el.handler}, legacy)
	res, out := runTask(t, cs, map[string]any{"task": "deploy it", "tool_names": []string{"deploy"}})
	if res.IsError || out.State != orchestrator.RunFinished || out.Answer != "all done" {
		t.Fatalf("result %+v: %s", out, text(res))
	}
	if got := e.deploy.called(); !slices.Equal(got, []string{`{"env":"prod"}`}) {
		t.Errorf("deploy ran %q, want once with the model's arguments", got)
	}
	reqs := el.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d elicitations, want 1", len(reqs))
	}
	p := reqs[0]
	for _, want := range []string{"deploy", `{"env":"prod"}`, "approvals.tools names deploy", out.RunID} {
		if !strings.Contains(p.Message, want) {
			t.Errorf("message lacks %q:\n%s", want, p.Message)
		}
	}
	var schema struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type    string `json:"type"`
			Enum    []string
			Default *string `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	raw, _ := json.Marshal(p.RequestedSchema)
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	dec := schema.Properties["decision"]
	if schema.Type != "object" || !slices.Equal(dec.Enum, []string{"approve", "edit", "reject", "cancel"}) || dec.Default != nil ||
		!slices.Equal(schema.Required, []string{"decision"}) || schema.Properties["arguments"].Type != "string" || schema.Properties["reason"].Type != "string" {
		t.Errorf("requested schema %s", raw)
	}
}

func TestElicitEdit(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, mcpserver.Options{}, deployTurns(`{"env":"prod"}`)...)
	// The first answer's arguments are not JSON: asked once more, with
	// the problem in the message.
	el := &elicitations{answers: []*mcp.ElicitResult{
		accept(map[string]any{"decision": "edit", "arguments": "env=staging"}),
		accept(map[string]any{"decision": "edit", "arguments": `{"env":"staging"}`}),
	}}
	cs := connectAt(t, e.url+"/wunder/mcp", nil, &mcp.ClientOptions{ElicitationHandler: el.handler}, legacy)
	res, out := runTask(t, cs, map[string]any{"task": "deploy it", "tool_names": []string{"deploy"}})
	if res.IsError || out.State != orchestrator.RunFinished {
		t.Fatalf("result %+v: %s", out, text(res))
	}
	if got := e.deploy.called(); !slices.Equal(got, []string{`{"env":"staging"}`}) {
		t.Errorf("deploy ran %q, want once with the edited arguments", got)
	}
	reqs := el.requests()
	if len(reqs) != 2 || !strings.Contains(reqs[1].Message, "arguments must be a JSON object") {
		t.Fatalf("elicitations %d, second message: %v", len(reqs), reqs[len(reqs)-1].Message)
	}
}

// Two unusable answers: the call stops asking and says what is pending;
// wunder__approve still decides it.
func TestElicitGivesUpAfterTwoBadAnswers(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, mcpserver.Options{}, deployTurns(`{"env":"prod"}`)...)
	el := &elicitations{answers: []*mcp.ElicitResult{
		accept(map[string]any{"decision": "edit", "arguments": "["}),
		accept(map[string]any{"decision": "edit", "arguments": `{"env":7}`}), // the tool's schema refuses it
	}}
	cs := connectAt(t, e.url+"/wunder/mcp", nil, &mcp.ClientOptions{ElicitationHandler: el.handler}, legacy)
	res, out := runTask(t, cs, map[string]any{"task": "deploy it", "tool_names": []string{"deploy"}})
	if !res.IsError || out.State != orchestrator.RunWaitingApproval || len(out.Approvals) != 1 || !strings.Contains(text(res), "failed twice") {
		t.Fatalf("result %+v: %s", out, text(res))
	}
	if !strings.Contains(el.requests()[1].Message, "arguments must be a JSON object") || !strings.Contains(text(res), "do not fit the schema") {
		t.Errorf("second message: %s\nresult: %s", el.requests()[1].Message, text(res))
	}
	res, out = callTool(t, cs, "wunder__approve", map[string]any{"run_id": out.RunID, "approval_id": out.Approvals[0].ApprovalID, "decision": "approve"})
	if res.IsError || out.State != orchestrator.RunFinished || len(e.deploy.called()) != 1 {
		t.Fatalf("after wunder__approve: %+v %s, deploy %q", out, text(res), e.deploy.called())
	}
}

func TestElicitDeclineRejects(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, mcpserver.Options{}, deployTurns(`{"env":"prod"}`)...)
	el := &elicitations{answers: []*mcp.ElicitResult{{Action: "decline"}}}
	cs := connectAt(t, e.url+"/wunder/mcp", nil, &mcp.ClientOptions{ElicitationHandler: el.handler}, legacy)
	res, out := runTask(t, cs, map[string]any{"task": "deploy it", "tool_names": []string{"deploy"}})
	if res.IsError || out.State != orchestrator.RunFinished || out.Answer != "all done" {
		t.Fatalf("result %+v: %s", out, text(res))
	}
	if got := e.deploy.called(); len(got) != 0 {
		t.Errorf("deploy ran %q after a decline", got)
	}
	if got := toolResults(e.model); len(got) != 1 || !strings.Contains(got[0], "declined") {
		t.Errorf("the model read %q, want the rejection's reason", got)
	}
}

func TestElicitCancelCancelsRun(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, mcpserver.Options{}, deployTurns(`{"env":"prod"}`)...)
	el := &elicitations{answers: []*mcp.ElicitResult{{Action: "cancel"}}}
	cs := connectAt(t, e.url+"/wunder/mcp", nil, &mcp.ClientOptions{ElicitationHandler: el.handler}, legacy)
	res, out := runTask(t, cs, map[string]any{"task": "deploy it", "tool_names": []string{"deploy"}})
	if !res.IsError || out.State != orchestrator.RunCancelled || !strings.Contains(text(res), "run cancelled") {
		t.Fatalf("result %+v: %s", out, text(res))
	}
	if got := e.deploy.called(); len(got) != 0 {
		t.Errorf("deploy ran %q in a cancelled run", got)
	}
	r, err := e.o.GetRun(t.Context(), "wunder", out.RunID)
	if err != nil || r.State != orchestrator.RunCancelled {
		t.Errorf("stored run: %+v %v", r, err)
	}
}

// Several approvals of one round are asked one after another; a
// param_required approval asks for the missing property itself.
func TestElicitSeveralAndParamRequired(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, mcpserver.Options{}, deployTurns(`{"env":"prod"}`, `{}`)...)
	el := &elicitations{answers: []*mcp.ElicitResult{
		accept(map[string]any{"decision": "approve"}),
		accept(map[string]any{"decision": "edit", "env": "qa"}),
	}}
	cs := connectAt(t, e.url+"/wunder/mcp", nil, &mcp.ClientOptions{ElicitationHandler: el.handler}, legacy)
	res, out := runTask(t, cs, map[string]any{"task": "deploy twice", "tool_names": []string{"deploy"}})
	if res.IsError || out.State != orchestrator.RunFinished {
		t.Fatalf("result %+v: %s", out, text(res))
	}
	if got := e.deploy.called(); !slices.Equal(got, []string{`{"env":"prod"}`, `{"env":"qa"}`}) {
		t.Errorf("deploy ran %q", got)
	}
	reqs := el.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d elicitations, want 2", len(reqs))
	}
	raw, _ := json.Marshal(reqs[1].RequestedSchema)
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	_ = json.Unmarshal(raw, &schema)
	if schema.Properties["env"]["type"] != "string" || schema.Properties["arguments"] != nil ||
		!strings.Contains(reqs[1].Message, "left out required arguments (env)") {
		t.Errorf("param_required form: %s\n%s", raw, reqs[1].Message)
	}
	dec, _ := schema.Properties["decision"]["enum"].([]any)
	if len(dec) != 3 || dec[0] != "edit" {
		t.Errorf("param_required decisions %v, want edit, reject, cancel", dec)
	}
}

// A client without elicitation gets what is pending at once, and
// wunder__approve decides it and follows the run; two approvals of one
// round: the first decision answers with the one left.
func TestApproveTool(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, mcpserver.Options{}, deployTurns(`{"env":"prod"}`, `{"env":"dev"}`)...)
	cs := connect(t, e.url+"/wunder/mcp", nil, nil)
	res, out := runTask(t, cs, map[string]any{"task": "deploy twice", "tool_names": []string{"deploy"}})
	if res.IsError || out.State != orchestrator.RunWaitingApproval || out.RunID == "" || out.SessionID == "" || out.Answer != "" || len(out.Approvals) != 2 {
		t.Fatalf("pending result %+v: %s", out, text(res))
	}
	a := out.Approvals[0]
	if a.Kind != "authorization" || a.Tool != "deploy" || !slices.Equal(a.Decisions, []string{"approve", "edit", "reject", "cancel"}) ||
		a.Reason == "" || a.Arguments.(map[string]any)["env"] != "prod" || a.Missing != nil {
		t.Errorf("approval %+v", a)
	}
	if tx := text(res); !strings.Contains(tx, "wunder__approve") || !strings.Contains(tx, a.ApprovalID) {
		t.Errorf("text does not say how to decide: %s", tx)
	}
	if len(e.deploy.called()) != 0 {
		t.Fatal("deploy ran before a decision")
	}
	if r, err := e.o.GetRun(t.Context(), "wunder", out.RunID); err != nil || r.State != orchestrator.RunWaitingApproval {
		t.Fatalf("stored run: %+v %v", r, err)
	}

	res, out2 := callTool(t, cs, "wunder__approve", map[string]any{"run_id": out.RunID, "approval_id": a.ApprovalID, "decision": "approve"})
	if res.IsError || out2.State != orchestrator.RunWaitingApproval || len(out2.Approvals) != 1 || out2.Approvals[0].ApprovalID != out.Approvals[1].ApprovalID {
		t.Fatalf("after the first decision %+v: %s", out2, text(res))
	}
	progress := make(chan string, 64)
	pcs := connect(t, e.url+"/wunder/mcp", nil, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		progress <- r.Params.Message
	}})
	params := &mcp.CallToolParams{Name: "wunder__approve", Arguments: map[string]any{
		"run_id": out.RunID, "approval_id": out.Approvals[1].ApprovalID, "decision": "edit", "arguments": map[string]any{"env": "staging"}}}
	params.SetProgressToken("p")
	res, err := pcs.CallTool(t.Context(), params)
	if err != nil || res.IsError {
		t.Fatalf("second decision: %v %s", err, text(res))
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var fin mcpserver.RunOutput
	_ = json.Unmarshal(raw, &fin)
	if fin.State != orchestrator.RunFinished || fin.Answer != "all done" || fin.RunID != out.RunID || fin.SessionID != out.SessionID || fin.Usage == nil {
		t.Errorf("final %s", raw)
	}
	if got := e.deploy.called(); !slices.Equal(got, []string{`{"env":"prod"}`, `{"env":"staging"}`}) {
		t.Errorf("deploy ran %q", got)
	}
	// The replayed log before the decision sends no progress: the first
	// message is the resumption's.
	if msg := <-progress; !strings.Contains(msg, "resumed") {
		t.Errorf("first progress of wunder__approve: %q, want the run's resumption", msg)
	}

	// Decided already: an error result the model can read.
	res, _ = callTool(t, cs, "wunder__approve", map[string]any{"run_id": out.RunID, "approval_id": a.ApprovalID, "decision": "reject"})
	if !res.IsError || !strings.Contains(text(res), "already") {
		t.Errorf("second decision of one approval: %s", text(res))
	}
	// A decision the approval does not offer, an unknown approval: JSON-RPC errors.
	for _, args := range []map[string]any{
		{"run_id": out.RunID, "approval_id": a.ApprovalID, "decision": "maybe"},
		{"run_id": out.RunID, "approval_id": "appr_nope", "decision": "approve"},
		{"run_id": "run_nope", "approval_id": a.ApprovalID, "decision": "approve"},
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "wunder__approve", Arguments: args})
		if err == nil && !res.IsError {
			t.Errorf("%v accepted", args)
		}
	}
}

// wunder__approve acts as the caller, as wunder__run does: another user's
// token does not find the approval.
func TestApproveIsScopedToTheCaller(t *testing.T) {
	t.Parallel()
	e := newApprovalEnvTokens(t, mcpserver.Options{}, map[string]string{"alice": "alice", "bob": "bob"}, deployTurns(`{"env":"prod"}`)...)
	alice := connect(t, e.url+"/wunder/mcp", &http.Client{Transport: bearer("alice")}, nil)
	bob := connect(t, e.url+"/wunder/mcp", &http.Client{Transport: bearer("bob")}, nil)
	res, out := runTask(t, alice, map[string]any{"task": "deploy it", "tool_names": []string{"deploy"}})
	if out.State != orchestrator.RunWaitingApproval || len(out.Approvals) != 1 {
		t.Fatalf("pending result %+v: %s", out, text(res))
	}
	args := map[string]any{"run_id": out.RunID, "approval_id": out.Approvals[0].ApprovalID, "decision": "approve"}
	_, err := bob.CallTool(t.Context(), &mcp.CallToolParams{Name: "wunder__approve", Arguments: args})
	if err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("bob's decision on alice's approval: %v, want not found", err)
	}
	if len(e.deploy.called()) != 0 {
		t.Fatal("deploy ran on bob's word")
	}
	res, out = callTool(t, alice, "wunder__approve", args)
	if res.IsError || out.State != orchestrator.RunFinished || len(e.deploy.called()) != 1 {
		t.Fatalf("alice's decision: %+v %s", out, text(res))
	}
}

// Cancelling a call while its elicitation is open cancels the run.
func TestCancelDuringElicitation(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, mcpserver.Options{}, deployTurns(`{"env":"prod"}`)...)
	asked, release := make(chan struct{}), make(chan struct{})
	cs := connectAt(t, e.url+"/wunder/mcp", nil, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		close(asked)
		select { // the person never answers
		case <-ctx.Done():
		case <-release:
		}
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}}, legacy)
	t.Cleanup(func() { close(release) }) // before the session closes: Close waits for its handlers
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": "deploy it", "tool_names": []string{"deploy"}}})
		errc <- err
	}()
	<-asked
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("cancelled call returned no error")
	}
	runs, err := e.o.ListRuns(t.Context(), orchestrator.RunFilter{UserID: "wunder"})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v %d", err, len(runs))
	}
	for ev, err := range e.o.Events(t.Context(), "wunder", runs[0].ID, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == orchestrator.EventFinal {
			var fd orchestrator.FinalData
			_ = json.Unmarshal(ev.Data, &fd)
			if fd.State != orchestrator.RunCancelled {
				t.Errorf("final state %s, want cancelled", fd.State)
			}
		}
	}
	if len(e.deploy.called()) != 0 {
		t.Error("deploy ran in a cancelled run")
	}
}

// A decision taken elsewhere (the REST API, another client) while the
// caller is being asked withdraws the elicitation: the call follows the
// run to its answer while the person has not answered.
func TestElicitWithdrawnWhenDecidedElsewhere(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, mcpserver.Options{}, deployTurns(`{"env":"prod"}`)...)
	asked, release := make(chan struct{}), make(chan struct{})
	cs := connectAt(t, e.url+"/wunder/mcp", nil, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		close(asked)
		select { // the person never answers (the SDK's notifications/cancelled is best effort)
		case <-ctx.Done():
		case <-release:
		}
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}, legacy)
	t.Cleanup(func() { close(release) }) // before the session closes: Close waits for its handlers
	type result struct {
		res *mcp.CallToolResult
		out mcpserver.RunOutput
	}
	done := make(chan result, 1)
	go func() {
		res, out := runTask(t, cs, map[string]any{"task": "deploy it", "tool_names": []string{"deploy"}})
		done <- result{res, out}
	}()
	<-asked
	runs, err := e.o.ListRuns(t.Context(), orchestrator.RunFilter{UserID: "wunder"})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v %d", err, len(runs))
	}
	list, err := e.o.Approvals(t.Context(), "wunder", runs[0].ID)
	if err != nil || len(list) != 1 {
		t.Fatalf("approvals: %v %d", err, len(list))
	}
	if _, err := e.o.Decide(t.Context(), "wunder", runs[0].ID, list[0].ID, orchestrator.ApprovalDecision{Decision: "approve"}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.res.IsError || r.out.State != orchestrator.RunFinished || r.out.Answer != "all done" {
		t.Fatalf("result %+v: %s", r.out, text(r.res))
	}
	if got := e.deploy.called(); len(got) != 1 {
		t.Errorf("deploy ran %q, want once", got)
	}
}

// A stateless server cannot send requests to its clients: even a client
// with elicitation gets what is pending when it speaks a revision before
// 2026-07-28 (from 2026-07-28 on it is asked with input requests:
// TestInputRequired*).
func TestStatelessAnswersPending(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, mcpserver.Options{Stateless: true}, deployTurns(`{"env":"prod"}`)...)
	el := &elicitations{}
	cs := connectAt(t, e.url+"/wunder/mcp", nil, &mcp.ClientOptions{ElicitationHandler: el.handler}, legacy)
	res, out := runTask(t, cs, map[string]any{"task": "deploy it", "tool_names": []string{"deploy"}})
	if res.IsError || out.State != orchestrator.RunWaitingApproval || len(out.Approvals) != 1 || len(el.requests()) != 0 {
		t.Fatalf("result %+v (%d elicitations): %s", out, len(el.requests()), text(res))
	}
	res, out = callTool(t, cs, "wunder__approve", map[string]any{"run_id": out.RunID, "approval_id": out.Approvals[0].ApprovalID, "decision": "approve"})
	if res.IsError || out.State != orchestrator.RunFinished || len(e.deploy.called()) != 1 {
		t.Fatalf("after wunder__approve: %+v %s", out, text(res))
	}
}
