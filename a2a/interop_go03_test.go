package a2a_test

import (
	"bytes"
	"encoding/json"
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
