package a2a_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
)

// sdkClient03 resolves wunder's card with a2a-go's 0.3 card parser and
// builds a client that speaks only 0.3 JSON-RPC (a2acompat/a2av0, backed by
// the a2a-go v0.3.15 module): message/send, message/stream, tasks/get,
// tasks/cancel, tasks/resubscribe, without the A2A-Version header.
func sdkClient03(t *testing.T, e *env) *a2aclient.Client {
	c, _ := sdkClient03Rec(t, e)
	return c
}

// methodLog records the JSON-RPC methods a client sends and fails the test
// if one announces a version other than 0.3 (a2av0 sends "A2A-Version:
// 0.3"; wunder reads a missing header as 0.3 too).
type methodLog struct {
	t       *testing.T
	mu      sync.Mutex
	methods []string
}

func (l *methodLog) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(b, &m)
		l.mu.Lock()
		l.methods = append(l.methods, m.Method)
		l.mu.Unlock()
	}
	if v := r.Header.Get("A2A-Version"); v != "" && v != "0.3" {
		l.t.Errorf("0.3 client sent A2A-Version: %s", v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (l *methodLog) seen() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.methods)
}

func sdkClient03Rec(t *testing.T, e *env) (*a2aclient.Client, *methodLog) {
	t.Helper()
	log := &methodLog{t: t}
	r := &agentcard.Resolver{CardParser: a2av0.NewAgentCardParser()}
	card, err := r.Resolve(t.Context(), e.url)
	if err != nil {
		t.Fatalf("resolve card (0.3 parser): %v", err)
	}
	c, err := a2aclient.NewFromCard(t.Context(), card, a2aclient.WithDefaultsDisabled(),
		a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: &http.Client{Transport: log}}))
	if err != nil {
		t.Fatalf("0.3 client from card: %v", err)
	}
	return c, log
}

func TestGoSDK03SendGet(t *testing.T) {
	e := newEnv(t, nil)
	c, log := sdkClient03Rec(t, e)
	res, err := c.SendMessage(t.Context(), userMsg("hello"))
	if err != nil {
		t.Fatalf("message/send: %v", err)
	}
	task, ok := res.(*sdk.Task)
	if !ok {
		t.Fatalf("message/send result is %T, want *a2a.Task", res)
	}
	if task.Status.State != sdk.TaskStateCompleted || taskText(task) != "echo: hello" {
		t.Fatalf("task = %s %q, want completed \"echo: hello\"", task.Status.State, taskText(task))
	}
	one := 1
	got, err := c.GetTask(t.Context(), &sdk.GetTaskRequest{ID: task.ID, HistoryLength: &one})
	if err != nil {
		t.Fatalf("tasks/get: %v", err)
	}
	if got.ID != task.ID || got.ContextID != task.ContextID || got.Status.State != sdk.TaskStateCompleted {
		t.Fatalf("tasks/get: %+v, want the completed task %s", got, task.ID)
	}
	if len(got.History) != 1 || got.History[0].Role != sdk.MessageRoleAgent {
		t.Fatalf("tasks/get historyLength=1: history %+v", got.History)
	}
	// A follow-up in the same context is a new task of the same session.
	req := userMsg("again")
	req.Message.ContextID = task.ContextID
	res2, err := c.SendMessage(t.Context(), req)
	if err != nil {
		t.Fatalf("message/send in context: %v", err)
	}
	if t2 := res2.(*sdk.Task); t2.ContextID != task.ContextID || t2.ID == task.ID {
		t.Fatalf("follow-up task %s in context %s, want a new task in %s", t2.ID, t2.ContextID, task.ContextID)
	}
	if got := log.seen(); !slices.Equal(got, []string{"message/send", "tasks/get", "message/send"}) {
		t.Fatalf("methods on the wire: %v, want the 0.3 names", got)
	}
}

func TestGoSDK03Stream(t *testing.T) {
	e := newEnv(t, nil)
	c := sdkClient03(t, e)
	var kinds []string
	var final *sdk.TaskStatusUpdateEvent
	var answer string
	for ev, err := range c.SendStreamingMessage(t.Context(), userMsg("stream me")) {
		if err != nil {
			t.Fatalf("message/stream: %v", err)
		}
		switch v := ev.(type) {
		case *sdk.Task:
			kinds = append(kinds, "task")
		case *sdk.TaskStatusUpdateEvent:
			kinds = append(kinds, "status:"+string(v.Status.State))
			final = v
		case *sdk.TaskArtifactUpdateEvent:
			kinds = append(kinds, "artifact")
			answer = v.Artifact.Parts[0].Text()
		default:
			t.Fatalf("unexpected event %T", ev)
		}
	}
	if len(kinds) == 0 || kinds[0] != "task" {
		t.Fatalf("stream must start with the task: %v", kinds)
	}
	if final == nil || final.Status.State != sdk.TaskStateCompleted || answer != "echo: stream me" {
		t.Fatalf("stream %v ended with %v, answer %q", kinds, final, answer)
	}
}

func TestGoSDK03CancelAndResubscribe(t *testing.T) {
	e := newEnv(t, nil)
	c := sdkClient03(t, e)
	// Start a task that holds; drop the connection after the first event.
	var taskID sdk.TaskID
	for ev, err := range c.SendStreamingMessage(t.Context(), userMsg("hold on")) {
		if err != nil {
			t.Fatal(err)
		}
		taskID = ev.(*sdk.Task).ID
		break
	}
	<-e.model.started
	// tasks/resubscribe: the task as it is, then everything to the end.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var states []sdk.TaskState
	var answer string
	first := true
	for ev, err := range c.SubscribeToTask(ctx, &sdk.SubscribeToTaskRequest{ID: taskID}) {
		if err != nil {
			t.Fatalf("tasks/resubscribe: %v", err)
		}
		if first {
			if _, ok := ev.(*sdk.Task); !ok {
				t.Fatalf("resubscribe must start with the task, got %T", ev)
			}
			first = false
			e.model.release()
			continue
		}
		switch v := ev.(type) {
		case *sdk.TaskStatusUpdateEvent:
			states = append(states, v.Status.State)
		case *sdk.TaskArtifactUpdateEvent:
			answer = v.Artifact.Parts[0].Text()
		}
	}
	if len(states) == 0 || states[len(states)-1] != sdk.TaskStateCompleted || answer != "echo: hold on" {
		t.Fatalf("after resubscribe: states %v answer %q", states, answer)
	}
	got, err := c.GetTask(t.Context(), &sdk.GetTaskRequest{ID: taskID})
	if err != nil || got.Status.State != sdk.TaskStateCompleted || taskText(got) != "echo: hold on" {
		t.Fatalf("tasks/get after resubscribe: %+v, %v", got, err)
	}
	// tasks/cancel: a held task is canceled; a terminal one is not cancelable.
	req := userMsg("hold again")
	req.Config = &sdk.SendMessageConfig{ReturnImmediately: true}
	res, err := c.SendMessage(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	held := res.(*sdk.Task)
	canceled, err := c.CancelTask(t.Context(), &sdk.CancelTaskRequest{ID: held.ID})
	if err != nil || canceled.Status.State != sdk.TaskStateCanceled {
		t.Fatalf("tasks/cancel: %v, %v", canceled, err)
	}
	if _, err := c.CancelTask(t.Context(), &sdk.CancelTaskRequest{ID: held.ID}); !errors.Is(err, sdk.ErrTaskNotCancelable) {
		t.Fatalf("cancel a canceled task: %v, want ErrTaskNotCancelable", err)
	}
}

func TestGoSDK03Errors(t *testing.T) {
	e := newEnv(t, nil)
	c := sdkClient03(t, e)
	if _, err := c.GetTask(t.Context(), &sdk.GetTaskRequest{ID: "run_nope"}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Fatalf("tasks/get unknown: %v, want ErrTaskNotFound", err)
	}
	if _, err := c.CancelTask(t.Context(), &sdk.CancelTaskRequest{ID: "run_nope"}); !errors.Is(err, sdk.ErrTaskNotFound) {
		t.Fatalf("tasks/cancel unknown: %v, want ErrTaskNotFound", err)
	}
	for _, err := range c.SubscribeToTask(t.Context(), &sdk.SubscribeToTaskRequest{ID: "run_nope"}) {
		if !errors.Is(err, sdk.ErrTaskNotFound) {
			t.Fatalf("tasks/resubscribe unknown: %v, want ErrTaskNotFound", err)
		}
		break
	}
	if _, err := c.GetTaskPushConfig(t.Context(), &sdk.GetTaskPushConfigRequest{TaskID: "run_nope", ID: "x"}); !errors.Is(err, sdk.ErrPushNotificationNotSupported) {
		t.Fatalf("push without support: %v, want ErrPushNotificationNotSupported", err)
	}
}
