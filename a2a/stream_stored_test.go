package a2a_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/orchestrator"
)

// A streamed task on a new context may be stored with its first events
// (orchestrator.RunRequest.IDsWithEvents), so the stream's first item,
// the Task, goes out only once the task is stored: ListTasks, which
// reads the store, lists it as soon as the Task arrives. The model is
// held, so the task cannot end; its first events are stored once the
// stream's delay passes. Sent at once, the Task named a task and a
// context the store did not have yet.
func TestStreamSendsTheTaskOnceStored(t *testing.T) {
	e := newEnvWith(t, nil, orchestrator.Options{Events: orchestrator.EventPolicy{StreamDelay: orchestrator.DelayOf(100 * time.Millisecond)}})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/a2a",
		strings.NewReader(`{"jsonrpc":"2.0","id":"s","method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hold on"}]}}}`))
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := sse.NewReader(resp.Body, sse.MaxEvent)
	next := func() rpcResp {
		t.Helper()
		ev, err := rd.Next()
		if err != nil {
			t.Fatalf("the stream ended: %v", err)
		}
		var r rpcResp
		if err := json.Unmarshal(ev.Data, &r); err != nil || r.Error != nil {
			t.Fatalf("stream item %s: %v", ev.Data, err)
		}
		return r
	}
	var first struct {
		Task *struct {
			ID        string `json:"id"`
			ContextID string `json:"contextId"`
		} `json:"task"`
	}
	if r := next(); json.Unmarshal(r.Result, &first) != nil || first.Task == nil || first.Task.ID == "" {
		t.Fatalf("first item %s; want the Task", r.Result)
	}
	list := post(t, e, "1.0", `{"jsonrpc":"2.0","id":2,"method":"ListTasks","params":{"contextId":"`+first.Task.ContextID+`"}}`)
	e.model.Release()
	if list.Error != nil || !strings.Contains(string(list.Result), first.Task.ID) {
		t.Fatalf("ListTasks of the Task's context: %+v %s; want the task stored", list.Error, list.Result)
	}
	for !strings.Contains(string(next().Result), "TASK_STATE_COMPLETED") {
	}
}
