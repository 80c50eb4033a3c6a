package a2a_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wunder/wunder/a2a"
	"github.com/wunder/wunder/orchestrator"
)

// A run whose model answers with the reply tool is answered with a
// Message by a blocking SendMessage (section 3.1.1), on each 1.0 binding
// and in 0.3; the run stays on record. A stream, which sends its Task
// before the answer is known, and the answer to a task the client holds
// stay tasks.
func TestDirectReplyIsAMessage(t *testing.T) {
	e := newEnv(t, &a2a.Options{ToolNames: []string{"deploy", "ask_user", "reply"}})
	for name, c := range map[string]interface {
		SendMessage(ctx context.Context, req *sdk.SendMessageRequest) (sdk.SendMessageResult, error)
	}{"JSON-RPC": sdkClient(t, e), "HTTP+JSON": sdkClientREST(t, e), "gRPC": sdkClientGRPC(t, e)} {
		t.Run(name, func(t *testing.T) {
			res, err := c.SendMessage(t.Context(), userMsg("#reply please"))
			if err != nil {
				t.Fatal(err)
			}
			m, ok := res.(*sdk.Message)
			if !ok || m.Role != sdk.MessageRoleAgent || m.TaskID != "" || m.ContextID == "" || len(m.Parts) != 1 || m.Parts[0].Text() != "replied" {
				b, _ := json.Marshal(res)
				t.Fatalf("answer %s; want an agent Message with the reply and its context, no task", b)
			}
			runID := strings.TrimSuffix(m.ID, "-answer")
			if r, err := e.o.GetRun(t.Context(), "", runID); err != nil || r.StopReason != orchestrator.StopReply || r.Answer != "replied" {
				t.Fatalf("the run behind the message: %+v, %v", r, err)
			}
		})
	}

	c := sdkClient(t, e)
	// 0.3: the result is a message (kind "message").
	if r := post(t, e, "0.3", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"#reply in 0.3"}]}}}`); r.Error != nil || !strings.Contains(string(r.Result), `"kind":"message"`) || strings.Contains(string(r.Result), `"taskId"`) {
		t.Fatalf("0.3 message/send: %s %+v; want a message without a task", r.Result, r.Error)
	}
	// A stream starts with its task and stays one.
	var kinds []string
	for ev, err := range c.SendStreamingMessage(t.Context(), userMsg("#reply streamed")) {
		if err != nil {
			t.Fatal(err)
		}
		switch v := ev.(type) {
		case *sdk.Task:
			kinds = append(kinds, "task")
		case *sdk.TaskStatusUpdateEvent:
			kinds = append(kinds, "status:"+string(v.Status.State))
		case *sdk.Message:
			kinds = append(kinds, "message")
		}
	}
	if len(kinds) < 2 || kinds[0] != "task" || kinds[len(kinds)-1] != "status:"+string(sdk.TaskStateCompleted) {
		t.Fatalf("stream %v; want the task to its completion", kinds)
	}
	// The answer to a task the client holds is that task, even by reply.
	res, err := c.SendMessage(t.Context(), userMsg("#ask #reply"))
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*sdk.Task)
	if !ok || task.Status.State != sdk.TaskStateInputRequired {
		t.Fatalf("#ask: %T %+v; want an input-required task", res, res)
	}
	res, err = c.SendMessage(t.Context(), answerMsg(task, sdk.NewTextPart("staging")))
	if err != nil {
		t.Fatal(err)
	}
	if done, ok := res.(*sdk.Task); !ok || done.ID != task.ID || done.Status.State != sdk.TaskStateCompleted || !strings.Contains(taskText(done), "ask said:") {
		b, _ := json.Marshal(res)
		t.Fatalf("answer to the held task: %s; want the task, completed", b)
	}
}
