package a2a_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// A client may name the context of a new task (specification section
// 3.4): the name is accepted and echoed, a second task naming it joins the
// same context, and each user's names are their own: bob naming alice's
// context gets a context of his own, sees none of her tasks, and learns
// nothing of hers; a context id wunder issued to alice is not bob's to
// use; a name wunder cannot hold is refused with its bound.
func TestClientContextID(t *testing.T) {
	for _, v := range []w.Version{w.V10, w.V03} {
		t.Run(string(v), func(t *testing.T) {
			e := newEnv(t, nil)
			client := func(user string) *w.Client {
				return &w.Client{URL: e.url + "/a2a", Version: v, Header: http.Header{"X-Wunder-User": {user}}}
			}
			send := func(user, ctxID, text string) (*w.Task, error) {
				t.Helper()
				ev, err := client(user).Send(t.Context(), &w.SendRequest{Blocking: true,
					Message: w.Message{MessageID: "m-" + text, Role: w.RoleUser, ContextID: ctxID, Parts: []w.Part{w.TextPart(text)}}})
				if err != nil {
					return nil, err
				}
				if ev.Task == nil {
					t.Fatalf("send %q: no task in %+v", text, ev)
				}
				return ev.Task, nil
			}
			first, err := send("alice", "ctx-client-1", "first")
			if err != nil {
				t.Fatal(err)
			}
			if first.ContextID != "ctx-client-1" || first.Status.Message == nil || first.Status.Message.ContextID != "ctx-client-1" {
				t.Fatalf("task context %q, status message %+v; want the client's ctx-client-1 echoed", first.ContextID, first.Status.Message)
			}
			second, err := send("alice", "ctx-client-1", "second")
			if err != nil || second.ContextID != "ctx-client-1" || second.ID == first.ID {
				t.Fatalf("second task in the context: %+v %v", second, err)
			}
			// A taskId and a contextId that disagree are refused, even for
			// an ended task; agreeing ones reach the terminal-task refusal.
			follow := func(ctxID string) error {
				_, err := client("alice").Send(t.Context(), &w.SendRequest{Blocking: true,
					Message: w.Message{MessageID: "m-follow", Role: w.RoleUser, TaskID: first.ID, ContextID: ctxID, Parts: []w.Part{w.TextPart("more")}}})
				return err
			}
			if err := follow("another-ctx"); !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), "not the context of task") {
				t.Errorf("a mismatching contextId: %v; want invalid params", err)
			}
			if err := follow("ctx-client-1"); !errors.Is(err, w.ErrUnsupportedOperation) {
				t.Errorf("the task's own context, the task ended: %v; want unsupported operation", err)
			}
			got, err := client("alice").GetTask(t.Context(), first.ID)
			if err != nil || got.ContextID != "ctx-client-1" {
				t.Fatalf("GetTask context %+v %v", got, err)
			}
			raw, _ := json.Marshal(got)
			if strings.Contains(string(raw), "ctx_") {
				t.Errorf("the task shows the session behind the name: %s", raw)
			}

			// bob's ctx-client-1 is his own.
			bobs, err := send("bob", "ctx-client-1", "bob")
			if err != nil || bobs.ContextID != "ctx-client-1" {
				t.Fatalf("bob naming the same context: %+v %v", bobs, err)
			}
			if v == w.V10 {
				list := func(user string) []string {
					t.Helper()
					b, err := client(user).Call(t.Context(), "ListTasks", map[string]any{"contextId": "ctx-client-1"})
					if err != nil {
						t.Fatal(err)
					}
					var r struct {
						Tasks []struct{ ID, ContextID string }
					}
					_ = json.Unmarshal(b, &r)
					var ids []string
					for _, tk := range r.Tasks {
						if tk.ContextID != "ctx-client-1" {
							t.Errorf("listed task %s in context %q", tk.ID, tk.ContextID)
						}
						ids = append(ids, tk.ID)
					}
					return ids
				}
				if ids := list("alice"); len(ids) != 2 {
					t.Errorf("alice's context lists %v; want her two tasks", ids)
				}
				if ids := list("bob"); len(ids) != 1 || ids[0] != bobs.ID {
					t.Errorf("bob's context lists %v; want his one task %s", ids, bobs.ID)
				}
			}
			if _, err := client("bob").GetTask(t.Context(), first.ID); !errors.Is(err, orchestrator.ErrNotFound) {
				t.Errorf("bob reads alice's task: %v", err)
			}

			// A context wunder issued is found among the caller's own only.
			issued, err := send("alice", "", "issued")
			if err != nil || !strings.HasPrefix(issued.ContextID, "sess_") {
				t.Fatalf("an issued context: %+v %v", issued, err)
			}
			if _, err := send("bob", issued.ContextID, "intrude"); !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), "not a context of this agent") {
				t.Errorf("bob in alice's issued context: %v; want invalid params", err)
			}
			if again, err := send("alice", issued.ContextID, "again"); err != nil || again.ContextID != issued.ContextID {
				t.Errorf("alice continuing her issued context: %+v %v", again, err)
			}

			for _, bad := range []string{"has space", strings.Repeat("c", 108), "ctx/../x"} {
				if _, err := send("alice", bad, "bad"); !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), "at most 107") {
					t.Errorf("contextId %.20q: %v; want invalid params naming the bound", bad, err)
				}
			}
			if tk, err := send("alice", strings.Repeat("c", 107), "long"); err != nil || tk.ContextID != strings.Repeat("c", 107) {
				t.Errorf("a name of 107 bytes: %v", err)
			}
		})
	}
}
