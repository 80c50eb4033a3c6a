package mcpserver_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wunder/wunder/mcpserver"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// askTurns: the model asks the user, then answers "all done".
func askTurns(args string) []orchestratortest.Turn {
	return []orchestratortest.Turn{{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("ask_user", args)}}, {Content: "all done"}}
}

const pickEnv = `{"question":"Which environment?","options":["staging","prod"]}`

// answerSchema is the answer field of a question's requested schema.
func answerSchema(t *testing.T, p *mcp.ElicitParams) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(p.RequestedSchema)
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil || len(s.Properties) != 1 || !slices.Equal(s.Required, []string{"answer"}) {
		t.Fatalf("requested schema %s: %v; want one required field, answer", raw, err)
	}
	return s.Properties["answer"]
}

// The model's question reaches an MCP caller as elicitation (2025-11-25,
// a session) or as an input-required result (2026-07-28): a single choice
// is an enum, and the accepted answer is what the model reads.
func TestQuestionElicited(t *testing.T) {
	t.Parallel()
	for _, rev := range []string{legacy, current} {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			e := newApprovalEnv(t, mcpserver.Options{}, askTurns(pickEnv)...)
			el := &elicitations{answers: []*mcp.ElicitResult{accept(map[string]any{"answer": "prod"})}}
			cs := connectAt(t, e.url+"/wunder/mcp", nil, &mcp.ClientOptions{ElicitationHandler: el.handler}, rev)
			res, out := runTask(t, cs, map[string]any{"task": "deploy it", "tool_names": []string{"ask_user"}})
			if res.IsError || out.State != orchestrator.RunFinished || out.Answer != "all done" {
				t.Fatalf("result %+v: %s", out, text(res))
			}
			reqs := el.requests()
			if len(reqs) != 1 || !strings.Contains(reqs[0].Message, "Which environment?") {
				t.Fatalf("elicitations %+v; want one with the question", reqs)
			}
			if f := answerSchema(t, reqs[0]); f["type"] != "string" || !slices.Equal(anyStrings(f["enum"]), []string{"staging", "prod"}) {
				t.Errorf("answer field %v; want an enum of the options", f)
			}
			if got := toolResults(e.model); !slices.Equal(got, []string{`{"answer":"prod"}`}) {
				t.Errorf("the model read %q; want the answer", got)
			}
		})
	}
}

// A multiple choice is asked as an array of the options; decline tells
// the model the user would not answer, and the run goes on.
func TestQuestionMultiAndDecline(t *testing.T) {
	t.Parallel()
	turns := append(askTurns(`{"question":"Which regions?","options":["eu","us","ap"],"multi":true}`), askTurns(`{"question":"Why?"}`)...)
	e := newApprovalEnv(t, mcpserver.Options{}, turns...)
	el := &elicitations{answers: []*mcp.ElicitResult{accept(map[string]any{"answer": []any{"eu", "ap"}}), {Action: "decline"}}}
	cs := connectAt(t, e.url+"/wunder/mcp", nil, &mcp.ClientOptions{ElicitationHandler: el.handler}, legacy)
	res, out := runTask(t, cs, map[string]any{"task": "pick", "tool_names": []string{"ask_user"}})
	if res.IsError || out.State != orchestrator.RunFinished {
		t.Fatalf("result %+v: %s", out, text(res))
	}
	if f := answerSchema(t, el.requests()[0]); f["type"] != "array" {
		t.Errorf("multiple-choice field %v; want an array", f)
	}
	if got := toolResults(e.model); !slices.Equal(got, []string{`{"answer":["eu","ap"]}`}) {
		t.Errorf("the model read %q; want both regions", got)
	}
	res, out = runTask(t, cs, map[string]any{"task": "why", "tool_names": []string{"ask_user"}})
	if res.IsError || out.State != orchestrator.RunFinished {
		t.Fatalf("result %+v: %s", out, text(res))
	}
	if got := toolResults(e.model); len(got) != 1 || !strings.Contains(got[0], "declined") {
		t.Errorf("the model read %q; want the decline", got)
	}
}

// A caller that cannot be asked gets the question listed (waiting_input)
// and answers it with wunder@approve, decision answer.
func TestQuestionAnsweredWithApprove(t *testing.T) {
	t.Parallel()
	e := newApprovalEnv(t, mcpserver.Options{}, askTurns(pickEnv)...)
	cs := connectAt(t, e.url+"/wunder/mcp", nil, nil, legacy)
	res, out := runTask(t, cs, map[string]any{"task": "deploy it", "tool_names": []string{"ask_user"}})
	if res.IsError || out.State != orchestrator.RunWaitingInput || len(out.Approvals) != 1 || out.Approvals[0].Kind != "question" {
		t.Fatalf("pending result %+v: %s", out, text(res))
	}
	q := out.Approvals[0]
	if tx := text(res); !strings.Contains(tx, "Which environment?") || !strings.Contains(tx, "staging, prod") || !strings.Contains(tx, q.ApprovalID) {
		t.Errorf("text does not say what is asked: %s", tx)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "wunder__approve",
		Arguments: map[string]any{"run_id": out.RunID, "approval_id": q.ApprovalID, "decision": "answer", "answer": "qa"}}); err == nil ||
		!strings.Contains(err.Error(), "not one of the options") {
		t.Fatalf("an answer that is no option: %v; want the invalid-argument error naming the options", err)
	}
	res, out = callTool(t, cs, "wunder__approve", map[string]any{"run_id": out.RunID, "approval_id": q.ApprovalID, "decision": "answer", "answer": "staging"})
	if res.IsError || out.State != orchestrator.RunFinished || out.Answer != "all done" {
		t.Fatalf("after the answer %+v: %s", out, text(res))
	}
	if got := toolResults(e.model); !slices.Equal(got, []string{`{"answer":"staging"}`}) {
		t.Errorf("the model read %q", got)
	}
}

func anyStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
