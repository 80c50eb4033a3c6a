package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/a2aproject/a2a-go/v2/a2apb/v1"
)

// a2aRESTRows are the isolation matrix's rows of the A2A HTTP+JSON binding
// (/a2a/v1/...): the same tasks and push configs as JSON-RPC, reached
// through REST routes.
func (f *fixture) a2aRESTRows() []matrixRow {
	std := [4]string{ok, denied, forbidden, ok}
	var rows []matrixRow
	row := func(resource, action, method, path string, contains string) {
		rows = append(rows, matrixRow{frontend: "A2A 1.0 HTTP+JSON", resource: resource, action: action, want: std,
			try: func(t *testing.T, c caller) string {
				h := clone(c.hdr)
				if c.names != "" {
					h["X-Wunder-User"] = c.names
				}
				p := path
				if method == "DELETE" && c.name != "alice" {
					p = strings.Replace(p, "/r1", "/r2", 1) // alice deleted r1; the others try r2
				}
				return a2aRESTOutcome(f.rest(t, method, p, "", h), contains)
			}})
	}
	task := "/a2a/v1/tasks/" + f.taskA
	row("task", "get", "GET", task, "")
	// The tenant as the path prefix names a user as X-Wunder-User does.
	rows = append(rows, matrixRow{frontend: "A2A 1.0 HTTP+JSON", resource: "task", action: "get, naming by tenant", want: std,
		try: func(t *testing.T, c caller) string {
			p := task
			if c.names != "" {
				p = "/a2a/v1/" + c.names + "/tasks/" + f.taskA
			}
			return a2aRESTOutcome(f.rest(t, "GET", p, "", c.hdr), "")
		}})
	row("task", "cancel", "POST", task+":cancel", "")
	row("tasks", "list", "GET", "/a2a/v1/tasks", f.taskA)
	row("push config", "get", "GET", task+"/pushNotificationConfigs/r1", "")
	row("push config", "list", "GET", task+"/pushNotificationConfigs", "")
	row("push config", "delete", "DELETE", task+"/pushNotificationConfigs/r1", "")
	return rows
}

// a2aRESTOutcome reads a REST binding answer: 200 (or a task that ended:
// 409 not cancelable, 400 FAILED_PRECONDITION) reached the resource; 404
// is denied, 403 forbidden.
// With contains, a 200 listing must hold it to count as reached.
func a2aRESTOutcome(r *http.Response, contains string) string {
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	var st struct{ Error struct{ Status string } }
	_ = json.Unmarshal(b, &st)
	switch {
	case r.StatusCode == http.StatusOK && contains != "" && !strings.Contains(string(b), contains):
		return denied
	case r.StatusCode == http.StatusOK, r.StatusCode == http.StatusConflict,
		r.StatusCode == http.StatusBadRequest && st.Error.Status == "FAILED_PRECONDITION":
		return ok
	case r.StatusCode == http.StatusNotFound:
		return denied
	case r.StatusCode == http.StatusForbidden:
		return forbidden
	}
	return fmt.Sprintf("HTTP %d %s", r.StatusCode, st.Error.Status)
}

// a2aGRPCRows are the rows of the A2A gRPC binding (lf.a2a.v1.A2AService
// through connect-go), spoken as gRPC over h2c.
func (f *fixture) a2aGRPCRows() []matrixRow {
	std := [4]string{ok, denied, forbidden, ok}
	var rows []matrixRow
	row := func(resource, action string, call func(t *testing.T, hc *http.Client) error) {
		rows = append(rows, matrixRow{frontend: "A2A 1.0 gRPC", resource: resource, action: action, want: std,
			try: func(t *testing.T, c caller) string {
				h := clone(c.hdr)
				if c.names != "" {
					h["X-Wunder-User"] = c.names
				}
				return connectOutcome(call(t, &http.Client{Transport: headerRT{hdr: h, h2c: true}}))
			}})
	}
	proc := func(m string) string { return f.s.url + "/lf.a2a.v1.A2AService/" + m }
	row("task", "get", func(t *testing.T, hc *http.Client) error {
		_, err := connect.NewClient[a2apb.GetTaskRequest, a2apb.Task](hc, proc("GetTask"), connect.WithGRPC()).
			CallUnary(t.Context(), connect.NewRequest(&a2apb.GetTaskRequest{Id: f.taskA}))
		return err
	})
	row("task", "cancel", func(t *testing.T, hc *http.Client) error {
		_, err := connect.NewClient[a2apb.CancelTaskRequest, a2apb.Task](hc, proc("CancelTask"), connect.WithGRPC()).
			CallUnary(t.Context(), connect.NewRequest(&a2apb.CancelTaskRequest{Id: f.taskA}))
		return err
	})
	row("tasks", "list", func(t *testing.T, hc *http.Client) error {
		res, err := connect.NewClient[a2apb.ListTasksRequest, a2apb.ListTasksResponse](hc, proc("ListTasks"), connect.WithGRPC()).
			CallUnary(t.Context(), connect.NewRequest(&a2apb.ListTasksRequest{}))
		if err != nil {
			return err
		}
		for _, tk := range res.Msg.GetTasks() {
			if tk.GetId() == f.taskA {
				return nil
			}
		}
		return connect.NewError(connect.CodeNotFound, fmt.Errorf("task %s not listed", f.taskA))
	})
	row("push config", "list", func(t *testing.T, hc *http.Client) error {
		_, err := connect.NewClient[a2apb.ListTaskPushNotificationConfigsRequest, a2apb.ListTaskPushNotificationConfigsResponse](hc, proc("ListTaskPushNotificationConfigs"), connect.WithGRPC()).
			CallUnary(t.Context(), connect.NewRequest(&a2apb.ListTaskPushNotificationConfigsRequest{TaskId: f.taskA}))
		return err
	})
	return rows
}
