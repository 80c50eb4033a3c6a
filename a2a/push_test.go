package a2a_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/wunder/wunder/a2a"
	"github.com/wunder/wunder/orchestrator"
)

type delivery struct {
	auth, token, ctype string
	body               []byte
}

// receiver is a local webhook; its first answer is a 500, to exercise the
// retry.
func receiver(t *testing.T) (string, <-chan delivery) {
	ch := make(chan delivery, 32)
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if n.Add(1) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		ch <- delivery{auth: r.Header.Get("Authorization"), token: r.Header.Get("X-A2A-Notification-Token"), ctype: r.Header.Get("Content-Type"), body: b}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/hook", ch
}

func pushOpts(allowPrivate bool) *a2a.Options {
	return &a2a.Options{Push: &a2a.PushOptions{Store: &a2a.MemoryPushStore{}, AllowPrivate: allowPrivate, InitialBackoff: 10 * time.Millisecond}}
}

// waitState reads deliveries until one shows the task in state.
func waitState(t *testing.T, ch <-chan delivery, decode func([]byte) string, state string) delivery {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case d := <-ch:
			if decode(d.body) == state {
				return d
			}
		case <-timeout:
			t.Fatalf("no push notification with state %s", state)
		}
	}
}

func TestPushGoSDK(t *testing.T) {
	for _, sc := range sdkClients[:3] { // the 1.0 bindings: JSON-RPC, HTTP+JSON, gRPC
		t.Run(sc.name, func(t *testing.T) { pushGoSDK(t, sc.new) })
	}
}

func pushGoSDK(t *testing.T, newClient func(*testing.T, *env) *a2aclient.Client) {
	e := newEnv(t, pushOpts(true))
	url, ch := receiver(t)
	c := newClient(t, e)
	req := userMsg("hold for push")
	req.Config = &sdk.SendMessageConfig{ReturnImmediately: true}
	res, err := c.SendMessage(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*sdk.Task)
	cfg, err := c.CreateTaskPushConfig(t.Context(), &sdk.PushConfig{TaskID: task.ID, ID: "p1", URL: url, Token: "tok-1",
		Auth: &sdk.PushAuthInfo{Scheme: "Bearer", Credentials: "s3cret"}})
	if err != nil || cfg.ID != "p1" || cfg.URL != url {
		t.Fatalf("CreateTaskPushConfig: %+v, %v", cfg, err)
	}
	got, err := c.GetTaskPushConfig(t.Context(), &sdk.GetTaskPushConfigRequest{TaskID: task.ID, ID: "p1"})
	if err != nil || got.Auth == nil || got.Auth.Scheme != "Bearer" {
		t.Fatalf("GetTaskPushConfig: %+v, %v", got, err)
	}
	list, err := c.ListTaskPushConfigs(t.Context(), &sdk.ListTaskPushConfigRequest{TaskID: task.ID})
	if err != nil || len(list) != 1 {
		t.Fatalf("ListTaskPushConfigs: %v, %v", list, err)
	}
	<-e.model.Held()
	e.model.Release()
	d := waitState(t, ch, func(b []byte) string {
		var sr sdk.StreamResponse
		if json.Unmarshal(b, &sr) != nil {
			return ""
		}
		if tk, ok := sr.Event.(*sdk.Task); ok {
			return string(tk.Status.State)
		}
		return ""
	}, string(sdk.TaskStateCompleted))
	if d.auth != "Bearer s3cret" || d.token != "tok-1" || d.ctype != "application/a2a+json" {
		t.Fatalf("delivery headers: %+v", d)
	}
	if err := c.DeleteTaskPushConfig(t.Context(), &sdk.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: "p1"}); err != nil {
		t.Fatalf("DeleteTaskPushConfig: %v", err)
	}
	if _, err := c.GetTaskPushConfig(t.Context(), &sdk.GetTaskPushConfigRequest{TaskID: task.ID, ID: "p1"}); err == nil {
		t.Fatal("config still there after delete")
	}
	// Delete is idempotent: the config is gone, so deleting it succeeds.
	if err := c.DeleteTaskPushConfig(t.Context(), &sdk.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: "p1"}); err != nil {
		t.Fatalf("second DeleteTaskPushConfig: %v; want success (delete is idempotent)", err)
	}
	// ... but not on a task that is not there.
	if err := c.DeleteTaskPushConfig(t.Context(), &sdk.DeleteTaskPushConfigRequest{TaskID: "no-such-task", ID: "p1"}); err == nil {
		t.Fatal("DeleteTaskPushConfig on an unknown task succeeded; want task not found")
	}
}

func TestPush03(t *testing.T) {
	e := newEnv(t, pushOpts(true))
	url, ch := receiver(t)
	// message/send with a push config in the configuration, non-blocking.
	r := post(t, e, "", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hold 03"}]},
		"configuration":{"blocking":false,"pushNotificationConfig":{"url":"`+url+`","token":"t03","authentication":{"schemes":["Bearer"],"credentials":"c03"}}}}}`)
	if r.Error != nil {
		t.Fatal(r.Error.Message)
	}
	var task struct{ ID string }
	_ = json.Unmarshal(r.Result, &task)
	r = post(t, e, "", `{"jsonrpc":"2.0","id":2,"method":"tasks/pushNotificationConfig/list","params":{"id":"`+task.ID+`"}}`)
	var list []struct {
		TaskID string `json:"taskId"`
		Config struct {
			URL string `json:"url"`
		} `json:"pushNotificationConfig"`
	}
	if err := json.Unmarshal(r.Result, &list); err != nil || len(list) != 1 || list[0].Config.URL != url || list[0].TaskID != task.ID {
		t.Fatalf("0.3 list: %s %v", r.Result, err)
	}
	<-e.model.Held()
	e.model.Release()
	d := waitState(t, ch, func(b []byte) string {
		var tk struct {
			Kind   string `json:"kind"`
			Status struct{ State string }
		}
		_ = json.Unmarshal(b, &tk)
		return tk.Kind + ":" + tk.Status.State
	}, "task:completed")
	if d.auth != "Bearer c03" || d.token != "t03" {
		t.Fatalf("0.3 delivery headers: %+v", d)
	}
}

// TestPushSSRFGuard: without the opt-out, loopback, private and
// link-local webhooks are refused when the config is created.
func TestPushSSRFGuard(t *testing.T) {
	e := newEnv(t, pushOpts(false))
	r := post(t, e, "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}}`)
	var wrap struct {
		Task struct{ ID string } `json:"task"`
	}
	_ = json.Unmarshal(r.Result, &wrap)
	for _, u := range []string{"http://127.0.0.1:9/hook", "http://localhost/hook", "http://10.1.2.3/x", "http://169.254.169.254/latest", "http://[::1]/x", "ftp://example.com/x"} {
		r := post(t, e, "1.0", `{"jsonrpc":"2.0","id":2,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"`+wrap.Task.ID+`","url":"`+u+`"}}`)
		if r.Error == nil || r.Error.Code != -32602 {
			t.Errorf("%s: %+v, want -32602", u, r.Error)
		}
	}
}

// TestPushRefusedStartsNoTask: a SendMessage whose push config the SSRF
// guard refuses is an error and leaves no task behind.
func TestPushRefusedStartsNoTask(t *testing.T) {
	e := newEnv(t, pushOpts(false))
	r := post(t, e, "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},
		"configuration":{"returnImmediately":true,"taskPushNotificationConfig":{"url":"http://127.0.0.1:9/hook"}}}}`)
	if r.Error == nil || r.Error.Code != -32602 {
		t.Fatalf("refused push config: %+v %s, want -32602", r.Error, r.Result)
	}
	runs, err := e.o.ListRuns(t.Context(), orchestrator.RunFilter{})
	if err != nil || len(runs) != 0 {
		t.Fatalf("runs after a refused send: %d, %v; want none", len(runs), err)
	}
}

// A task with a push config that comes to wait for a person is pushed as
// input-required, and pushed again when the answer lets it complete.
func TestPushInputRequired(t *testing.T) {
	e := newEnv(t, pushOpts(true))
	url, ch := receiver(t)
	c := sdkClient(t, e)
	req := userMsg("#deploy with push")
	req.Config = &sdk.SendMessageConfig{ReturnImmediately: true, PushConfig: &sdk.PushConfig{ID: "p1", URL: url}}
	res, err := c.SendMessage(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*sdk.Task)
	state := func(b []byte) string {
		var sr sdk.StreamResponse
		if json.Unmarshal(b, &sr) != nil {
			return ""
		}
		if tk, ok := sr.Event.(*sdk.Task); ok && tk.ID == task.ID {
			return string(tk.Status.State)
		}
		return ""
	}
	waitState(t, ch, state, string(sdk.TaskStateInputRequired))
	if _, err := c.SendMessage(t.Context(), answerMsg(task, sdk.NewTextPart("approve"))); err != nil {
		t.Fatalf("approve: %v", err)
	}
	waitState(t, ch, state, string(sdk.TaskStateCompleted))
	if got := e.deploys.list(); len(got) != 1 {
		t.Fatalf("deploy calls %v, want one", got)
	}
}

// A task holds at most MaxConfigsPerTask push configs: one more is
// -32602 naming the bound and is not stored; replacing one of them (its
// id again) is no new one; deleting one makes room.
func TestPushConfigsPerTaskAreBounded(t *testing.T) {
	opts := pushOpts(true)
	opts.Push.MaxConfigsPerTask = 2
	e := newEnv(t, opts)
	url, _ := receiver(t)
	r := post(t, e, "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}}`)
	var wrap struct {
		Task struct{ ID string } `json:"task"`
	}
	if err := json.Unmarshal(r.Result, &wrap); err != nil || wrap.Task.ID == "" {
		t.Fatalf("SendMessage: %s %+v", r.Result, r.Error)
	}
	create := func(id string) rpcResp {
		return post(t, e, "1.0", `{"jsonrpc":"2.0","id":2,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"`+wrap.Task.ID+`","id":"`+id+`","url":"`+url+`"}}`)
	}
	for _, id := range []string{"a", "b", "a"} { // a again: replaced
		if r := create(id); r.Error != nil {
			t.Fatalf("config %s: %+v", id, r.Error)
		}
	}
	r = create("c")
	if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "a2a.push.max_configs_per_task") {
		t.Fatalf("a third config: %+v; want -32602 naming the bound", r.Error)
	}
	list := post(t, e, "1.0", `{"jsonrpc":"2.0","id":3,"method":"ListTaskPushNotificationConfigs","params":{"taskId":"`+wrap.Task.ID+`"}}`)
	var got struct{ Configs []struct{ ID string } }
	if err := json.Unmarshal(list.Result, &got); err != nil || len(got.Configs) != 2 {
		t.Fatalf("configs after the refusal: %s %+v; want a and b", list.Result, list.Error)
	}
	if r := post(t, e, "1.0", `{"jsonrpc":"2.0","id":4,"method":"DeleteTaskPushNotificationConfig","params":{"taskId":"`+wrap.Task.ID+`","id":"b"}}`); r.Error != nil {
		t.Fatalf("delete: %+v", r.Error)
	}
	if r := create("c"); r.Error != nil {
		t.Fatalf("c after deleting b: %+v", r.Error)
	}
}
