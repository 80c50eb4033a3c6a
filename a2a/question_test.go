package a2a_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/wunder/wunder/a2a"
)

// askedQuestion is the data part of an input-required status that asks
// the model's question.
type askedQuestion struct {
	QuestionID string   `json:"question_id"`
	Kind       string   `json:"kind"`
	Question   string   `json:"question"`
	Options    []string `json:"options"`
}

func questionOf(t *testing.T, st sdk.TaskStatus) askedQuestion {
	t.Helper()
	if st.State != sdk.TaskStateInputRequired || st.Message == nil {
		t.Fatalf("status = %s with message %v, want input-required with the question", st.State, st.Message)
	}
	var q askedQuestion
	text := ""
	for _, p := range st.Message.Parts {
		if d := p.Data(); d != nil {
			b, _ := json.Marshal(d)
			if err := json.Unmarshal(b, &q); err != nil {
				t.Fatalf("data part %s: %v", b, err)
			}
		}
		text += p.Text()
	}
	if q.Kind != "question" || q.QuestionID == "" || q.Question != "Which environment?" || !slices.Equal(q.Options, []string{"staging", "prod"}) ||
		!strings.Contains(text, "Which environment?") || !strings.Contains(text, "staging, prod") {
		t.Fatalf("input-required message: text %q, data %+v; want the question and its options", text, q)
	}
	return q
}

// TestGoSDKQuestion: the model's ask_user makes the task input-required
// with the question as its message, over every binding and both
// versions; a2a-go's client answers on the same taskId, in plain text or
// with a data part, and the model reads the answer. An answer that is no
// option is refused and the task still waits; "cancel" ends it.
func TestGoSDKQuestion(t *testing.T) {
	for _, sc := range sdkClients {
		t.Run(sc.name, func(t *testing.T) {
			e := newEnv(t, &a2a.Options{ToolNames: []string{"deploy", "ask_user"}})
			c := sc.new(t, e)

			res, err := c.SendMessage(t.Context(), userMsg("please #ask"))
			if err != nil {
				t.Fatalf("SendMessage: %v", err)
			}
			task := res.(*sdk.Task)
			questionOf(t, task.Status)
			if _, err := c.SendMessage(t.Context(), answerMsg(task, sdk.NewTextPart("production"))); !errors.Is(err, sdk.ErrInvalidParams) {
				t.Fatalf("an answer that is no option: %v, want ErrInvalidParams", err)
			}
			got, err := c.GetTask(t.Context(), &sdk.GetTaskRequest{ID: task.ID})
			if err != nil || got.Status.State != sdk.TaskStateInputRequired {
				t.Fatalf("GetTask after a refused answer: %v, %v", got, err)
			}
			first, last, answer := streamTo(t, c, answerMsg(task, sdk.NewTextPart("prod")))
			if first.ID != task.ID || last.Status.State != sdk.TaskStateCompleted || answer != `ask said: {"answer":"prod"}` {
				t.Fatalf("after the answer: task %s, last %s, answer %q", first.ID, last.Status.State, answer)
			}

			// A data part answers, naming the question.
			_, last, _ = streamTo(t, c, userMsg("#ask again"))
			q := questionOf(t, last.Status)
			task2 := &sdk.Task{ID: last.TaskID, ContextID: last.ContextID}
			res, err = c.SendMessage(t.Context(), answerMsg(task2, sdk.NewDataPart(map[string]any{"question_id": q.QuestionID, "answer": "staging"})))
			if err != nil {
				t.Fatalf("data answer: %v", err)
			}
			if done := res.(*sdk.Task); done.Status.State != sdk.TaskStateCompleted || !strings.HasSuffix(taskText(done), `{"answer":"staging"}`) {
				t.Fatalf("after the data answer: %s %q", done.Status.State, taskText(done))
			}

			// cancel ends the task.
			res, err = c.SendMessage(t.Context(), userMsg("#ask a third time"))
			if err != nil {
				t.Fatal(err)
			}
			task3 := res.(*sdk.Task)
			questionOf(t, task3.Status)
			res, err = c.SendMessage(t.Context(), answerMsg(task3, sdk.NewTextPart("cancel")))
			if err != nil {
				t.Fatalf("cancel: %v", err)
			}
			if done := res.(*sdk.Task); done.Status.State != sdk.TaskStateCanceled {
				t.Fatalf("after cancel: %s", done.Status.State)
			}
		})
	}
}
