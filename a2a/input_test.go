package a2a_test

import (
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// asked is the data part of an input-required status message.
type asked struct {
	ApprovalID string          `json:"approval_id"`
	Kind       string          `json:"kind"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"`
	Decisions  []string        `json:"decisions"`
}

// askedOf reads what an input-required status asks for.
func askedOf(t *testing.T, st sdk.TaskStatus) []asked {
	t.Helper()
	if st.State != sdk.TaskStateInputRequired || st.Message == nil {
		t.Fatalf("status = %s with message %v, want input-required with a message", st.State, st.Message)
	}
	var out []asked
	text := ""
	for _, p := range st.Message.Parts {
		if d := p.Data(); d != nil {
			b, _ := json.Marshal(d)
			var a asked
			if err := json.Unmarshal(b, &a); err != nil {
				t.Fatalf("data part %s: %v", b, err)
			}
			out = append(out, a)
		}
		text += p.Text()
	}
	if len(out) == 0 || !strings.Contains(text, "deploy") {
		t.Fatalf("input-required message: text %q, data %+v; want the tool named and a data part", text, out)
	}
	return out
}

// answerMsg is a message on task with the given parts.
func answerMsg(task *sdk.Task, parts ...*sdk.Part) *sdk.SendMessageRequest {
	m := sdk.NewMessage(sdk.MessageRoleUser, parts...)
	m.TaskID, m.ContextID = task.ID, task.ContextID
	return &sdk.SendMessageRequest{Message: m}
}

// streamTo reads a stream to its end: the first event must be the task;
// it returns the last status and the answer artifact's text.
func streamTo(t *testing.T, c *a2aclient.Client, req *sdk.SendMessageRequest) (*sdk.Task, *sdk.TaskStatusUpdateEvent, string) {
	t.Helper()
	var first *sdk.Task
	var last *sdk.TaskStatusUpdateEvent
	answer := ""
	for ev, err := range c.SendStreamingMessage(t.Context(), req) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch v := ev.(type) {
		case *sdk.Task:
			if first != nil {
				t.Fatal("a second task in one stream")
			}
			first = v
		case *sdk.TaskStatusUpdateEvent:
			last = v
		case *sdk.TaskArtifactUpdateEvent:
			answer = v.Artifact.Parts[0].Text()
		}
	}
	if first == nil || last == nil {
		t.Fatalf("stream: task %v, last status %v", first, last)
	}
	return first, last, answer
}

// TestGoSDKInputRequired: a tool that needs a person's approval makes
// the task input-required, over every binding and both versions; the
// client answers on the same taskId (plain text or a data part) and the
// task goes on: approve runs the tool once, edit runs it with the new
// arguments, reject lets the model go on without it, cancel ends it.
func TestGoSDKInputRequired(t *testing.T) {
	for _, sc := range sdkClients {
		t.Run(sc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			c := sc.new(t, e)

			// approve, by plain text, streamed after a blocking send.
			res, err := c.SendMessage(t.Context(), userMsg("please #deploy"))
			if err != nil {
				t.Fatalf("SendMessage: %v", err)
			}
			task := res.(*sdk.Task)
			a := askedOf(t, task.Status)
			if len(a) != 1 || a[0].Tool != "deploy" || a[0].Kind != "authorization" || a[0].ApprovalID == "" ||
				string(a[0].Arguments) != `{"env":"prod"}` || strings.Join(a[0].Decisions, ",") != "approve,edit,reject,cancel" {
				t.Fatalf("asked %+v", a)
			}
			got, err := c.GetTask(t.Context(), &sdk.GetTaskRequest{ID: task.ID})
			if err != nil || got.Status.State != sdk.TaskStateInputRequired {
				t.Fatalf("GetTask of a waiting task: %v, %v", got, err)
			}
			if n := len(e.deploys.list()); n != 0 {
				t.Fatalf("deploy ran %d times before the approval", n)
			}
			first, last, answer := streamTo(t, c, answerMsg(task, sdk.NewTextPart("Approve")))
			if first.ID != task.ID || last.Status.State != sdk.TaskStateCompleted || answer != `deploy said: deployed {"env":"prod"}` {
				t.Fatalf("after approve: task %s, last %s, answer %q", first.ID, last.Status.State, answer)
			}
			if got := e.deploys.list(); !slices.Equal(got, []string{`{"env":"prod"}`}) {
				t.Fatalf("deploy calls %v, want one", got)
			}
			// The task is over: an answer now is refused.
			if _, err := c.SendMessage(t.Context(), answerMsg(task, sdk.NewTextPart("approve"))); !errors.Is(err, sdk.ErrUnsupportedOperation) {
				t.Fatalf("answer to a completed task: %v, want ErrUnsupportedOperation", err)
			}

			// edit, by a data part, after a stream that ended at input-required.
			_, last, _ = streamTo(t, c, userMsg("#deploy again"))
			a = askedOf(t, last.Status)
			task2 := &sdk.Task{ID: last.TaskID, ContextID: last.ContextID}
			res, err = c.SendMessage(t.Context(), answerMsg(task2, sdk.NewDataPart(map[string]any{
				"decision": "edit", "approval_id": a[0].ApprovalID, "arguments": map[string]any{"env": "staging"}})))
			if err != nil {
				t.Fatalf("edit: %v", err)
			}
			if done := res.(*sdk.Task); done.Status.State != sdk.TaskStateCompleted || !strings.HasSuffix(taskText(done), `deployed {"env":"staging"}`) {
				t.Fatalf("after edit: %s %q", done.Status.State, taskText(done))
			}

			// A reply that is no decision is refused; the task still waits.
			res, err = c.SendMessage(t.Context(), userMsg("#deploy a third time"))
			if err != nil {
				t.Fatal(err)
			}
			task3 := res.(*sdk.Task)
			askedOf(t, task3.Status)
			if _, err := c.SendMessage(t.Context(), answerMsg(task3, sdk.NewTextPart("maybe later"))); !errors.Is(err, sdk.ErrInvalidParams) {
				t.Fatalf("an answer that decides nothing: %v, want ErrInvalidParams", err)
			}
			// SubscribeToTask on a waiting task: the task, then the
			// input-required status (not the end: section 3.1.6), then,
			// once the task is answered elsewhere (reject, by text with a
			// reason: the model reads it and finishes), what the run does
			// to its terminal state, where the stream ends.
			kinds := make(chan string, 64)
			subscribed := make(chan error, 1)
			go func() {
				defer close(kinds)
				for ev, err := range c.SubscribeToTask(t.Context(), &sdk.SubscribeToTaskRequest{ID: task3.ID}) {
					if err != nil {
						subscribed <- err
						return
					}
					switch v := ev.(type) {
					case *sdk.Task:
						kinds <- "task:" + string(v.Status.State)
					case *sdk.TaskStatusUpdateEvent:
						kinds <- "status:" + string(v.Status.State)
					}
				}
				subscribed <- nil
			}()
			if k1, k2 := <-kinds, <-kinds; k1 != "task:"+string(sdk.TaskStateInputRequired) || k2 != "status:"+string(sdk.TaskStateInputRequired) {
				t.Fatalf("subscribe to a waiting task: %s, %s", k1, k2)
			}
			res, err = c.SendMessage(t.Context(), answerMsg(task3, sdk.NewTextPart("reject: not on a Friday")))
			if err != nil {
				t.Fatalf("reject: %v", err)
			}
			if done := res.(*sdk.Task); done.Status.State != sdk.TaskStateCompleted || !strings.Contains(taskText(done), "not on a Friday") {
				t.Fatalf("after reject: %s %q", done.Status.State, taskText(done))
			}
			var rest []string
			for k := range kinds {
				rest = append(rest, k)
			}
			if err := <-subscribed; err != nil {
				t.Fatalf("subscription after the answer: %v", err)
			}
			if len(rest) == 0 || rest[len(rest)-1] != "status:"+string(sdk.TaskStateCompleted) {
				t.Fatalf("subscription after the answer: %v; want it to end at completed", rest)
			}

			// cancel ends the task canceled.
			res, err = c.SendMessage(t.Context(), userMsg("#deploy, last one"))
			if err != nil {
				t.Fatal(err)
			}
			task4 := res.(*sdk.Task)
			askedOf(t, task4.Status)
			res, err = c.SendMessage(t.Context(), answerMsg(task4, sdk.NewDataPart(map[string]any{"decision": "cancel"})))
			if err != nil {
				t.Fatalf("cancel: %v", err)
			}
			if done := res.(*sdk.Task); done.Status.State != sdk.TaskStateCanceled {
				var types []string
				for ev, err := range e.o.Events(t.Context(), "", string(task4.ID), 0) {
					if err != nil {
						break
					}
					types = append(types, ev.Type)
				}
				r, _ := e.o.GetRun(t.Context(), "", string(task4.ID))
				t.Fatalf("after cancel: %s (%+v); run now %s, events %v", done.Status.State, done.Status, r.State, types)
			}
			if got := e.deploys.list(); len(got) != 2 {
				t.Fatalf("deploy calls %v, want prod then staging only", got)
			}
		})
	}
}

// Raw JSON-RPC: a round with two approvals asks for both; an edit must
// name its approval; an answer in another context, for an approval that
// is not pending, or with a decision the approval does not take is
// -32602; "approve" decides both; a 0.3 stream marks input-required final.
func TestInputRequiredProtocol(t *testing.T) {
	e := newEnv(t, nil)
	r := post(t, e, "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"#deploy twice"}]}}}`)
	var res struct {
		Task struct {
			ID        string `json:"id"`
			ContextID string `json:"contextId"`
			Status    struct {
				State   string `json:"state"`
				Message struct {
					Parts []struct {
						Text string          `json:"text"`
						Data json.RawMessage `json:"data"`
					} `json:"parts"`
				} `json:"message"`
			} `json:"status"`
		} `json:"task"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &res) != nil {
		t.Fatalf("SendMessage: %s %+v", r.Result, r.Error)
	}
	task := res.Task
	if task.Status.State != "TASK_STATE_INPUT_REQUIRED" || len(task.Status.Message.Parts) != 3 ||
		!strings.Contains(task.Status.Message.Parts[0].Text, "2 tool calls") {
		t.Fatalf("task = %+v", task)
	}
	var first asked
	_ = json.Unmarshal(task.Status.Message.Parts[1].Data, &first)
	answer := func(v, method, parts string) rpcResp {
		return post(t, e, v, `{"jsonrpc":"2.0","id":2,"method":"`+method+`","params":{"message":{"messageId":"a","role":"user","taskId":"`+
			task.ID+`","parts":`+parts+`}}}`)
	}
	for name, parts := range map[string]string{
		"edit without approval_id": `[{"data":{"decision":"edit","arguments":{"env":"x"}}}]`,
		"approval not pending":     `[{"data":{"decision":"approve","approval_id":"appr_nope"}}]`,
		"decision not offered":     `[{"data":{"decision":"explode","approval_id":"` + first.ApprovalID + `"}}]`,
		"decided twice":            `[{"data":{"decision":"approve","approval_id":"` + first.ApprovalID + `"}},{"data":{"decision":"reject","approval_id":"` + first.ApprovalID + `"}}]`,
		"no decision":              `[{"text":"what is this?"}]`,
	} {
		if r := answer("1.0", "SendMessage", parts); r.Error == nil || r.Error.Code != -32602 {
			t.Errorf("%s: %s %+v, want -32602", name, r.Result, r.Error)
		}
	}
	bad := post(t, e, "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m9","role":"ROLE_USER","parts":[{"text":"hi"}],"metadata":{"approval_mode":"yolo"}}}}`)
	if bad.Error == nil || bad.Error.Code != -32602 || !strings.Contains(bad.Error.Message, "approval_mode") {
		t.Fatalf("approval_mode yolo: %+v", bad.Error)
	}
	other := post(t, e, "1.0", `{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"message":{"messageId":"a","role":"ROLE_USER","taskId":"`+
		task.ID+`","contextId":"sess_other","parts":[{"text":"approve"}]}}}`)
	if other.Error == nil || other.Error.Code != -32602 {
		t.Fatalf("answer in another context: %+v", other.Error)
	}
	if n := len(e.deploys.list()); n != 0 {
		t.Fatalf("refused answers ran deploy %d times", n)
	}
	// Two decisions, the second refused by the core (arguments not an object): the first
	// stays recorded, and the error says so.
	var second asked
	_ = json.Unmarshal(task.Status.Message.Parts[2].Data, &second)
	partial := answer("1.0", "SendMessage", `[{"data":{"decision":"approve","approval_id":"`+first.ApprovalID+`"}},`+
		`{"data":{"decision":"edit","approval_id":"`+second.ApprovalID+`","arguments":[1]}}]`)
	if partial.Error == nil || partial.Error.Code != -32602 || !strings.Contains(partial.Error.Message, "recorded before it: "+first.ApprovalID) {
		t.Fatalf("a half-refused answer: %+v", partial.Error)
	}
	// "approve" decides both; the 0.3 stream ends at the completed status.
	body := streamRaw(t, e, "", `{"jsonrpc":"2.0","id":4,"method":"message/stream","params":{"message":{"kind":"message","messageId":"a","role":"user","taskId":"`+
		task.ID+`","parts":[{"kind":"text","text":"yes, both"}]}}}`)
	if !strings.Contains(body, `"state":"completed"`) || strings.Count(body, `"final":true`) != 1 {
		t.Fatalf("0.3 stream after approve:\n%s", body)
	}
	if got := e.deploys.list(); len(got) != 2 {
		t.Fatalf("deploy calls %v, want both", got)
	}
	// A 0.3 stream that reaches input-required ends with a final status.
	body = streamRaw(t, e, "", `{"jsonrpc":"2.0","id":5,"method":"message/stream","params":{"message":{"kind":"message","messageId":"b","role":"user","parts":[{"kind":"text","text":"#deploy"}]}}}`)
	if !strings.Contains(body, `"state":"input-required"`) || !strings.Contains(body, `"final":true`) || strings.Contains(body, `"state":"completed"`) {
		t.Fatalf("0.3 stream to input-required:\n%s", body)
	}
}

// streamRaw posts a streaming request and returns the SSE body.
func streamRaw(t *testing.T, e *env, version, body string) string {
	t.Helper()
	resp := postRaw(t, e, version, body)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
