package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
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
	row("task", "cancel", "POST", task+":cancel", "")
	row("tasks", "list", "GET", "/a2a/v1/tasks", f.taskA)
	row("push config", "get", "GET", task+"/pushNotificationConfigs/r1", "")
	row("push config", "list", "GET", task+"/pushNotificationConfigs", "")
	row("push config", "delete", "DELETE", task+"/pushNotificationConfigs/r1", "")
	return rows
}

// a2aRESTOutcome reads a REST binding answer: 200 (or a task that ended,
// FAILED_PRECONDITION) reached the resource; 404 is denied, 403 forbidden.
// With contains, a 200 listing must hold it to count as reached.
func a2aRESTOutcome(r *http.Response, contains string) string {
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	var st struct{ Error struct{ Status string } }
	_ = json.Unmarshal(b, &st)
	switch {
	case r.StatusCode == http.StatusOK && contains != "" && !strings.Contains(string(b), contains):
		return denied
	case r.StatusCode == http.StatusOK, r.StatusCode == http.StatusBadRequest && st.Error.Status == "FAILED_PRECONDITION":
		return ok
	case r.StatusCode == http.StatusNotFound:
		return denied
	case r.StatusCode == http.StatusForbidden:
		return forbidden
	}
	return fmt.Sprintf("HTTP %d %s", r.StatusCode, st.Error.Status)
}
