package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"

	"connectrpc.com/connect"
	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"

	"github.com/wunder/wunder/a2a"
)

// The A2A pass-through's rows of the isolation matrix: an a2a-go peer
// published as "peer" (startPassPeer) that everyone may use; alice's task
// there waits for input. The peer sees one caller, wunder: wunder keeps
// whose each task is (a2a_peer_ids), so bob reaches none of alice's. A
// caller names a user with X-Wunder-User, or with the A2A 1.0 tenant
// (rows "naming by tenant"), which the same rule checks.
func (f *fixture) a2aPassRows(t *testing.T) []matrixRow {
	t.Helper()
	res, code := f.a2aAt(t, "/a2a/peer", "1.0", "SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"wait"}]}}`, bearerOf(f.alice))
	var sent struct{ Task struct{ ID string } }
	if err := json.Unmarshal(res, &sent); code != 0 || err != nil || sent.Task.ID == "" {
		t.Fatalf("alice's task at the peer: %s %d %v", res, code, err)
	}
	task := sent.Task.ID
	std := [4]string{ok, denied, forbidden, ok}
	var rows []matrixRow
	naming := func(c caller) map[string]string {
		h := clone(c.hdr)
		if c.names != "" {
			h["X-Wunder-User"] = c.names
		}
		return h
	}
	rpc := func(resource, action, method, params string, want [4]string, byTenant bool, contains string) {
		rows = append(rows, matrixRow{frontend: "A2A pass-through (JSON-RPC)", resource: resource, action: action, want: want,
			try: func(t *testing.T, c caller) string {
				h, p := naming(c), params
				if byTenant && c.names != "" {
					h = clone(c.hdr)
					p = `{"tenant":"` + c.names + `",` + params[1:]
				}
				res, code := f.a2aAt(t, "/a2a/peer", "1.0", method, p, h)
				if code == 0 && contains != "" && !bytes.Contains(res, []byte(contains)) {
					return denied
				}
				return a2aOutcome(code)
			}})
	}
	rpc("peer task", "get", "GetTask", `{"id":"`+task+`"}`, std, false, "")
	rpc("peer task", "get, naming by tenant", "GetTask", `{"id":"`+task+`"}`, std, true, "")
	rpc("peer tasks", "list", "ListTasks", `{"pageSize":100}`, std, false, task)
	rpc("peer task", "continue (SendMessage)", "SendMessage", `{"message":{"messageId":"m2","taskId":"`+task+`","role":"ROLE_USER","parts":[{"text":"wait"}]}}`, std, false, "")
	rpc("peer task", "cancel", "CancelTask", `{"id":"`+task+`"}`, std, false, "")
	// No subscribe row: a2a-go answers TaskNotFound to a subscription of
	// a task it runs nothing for (alice's waits for input), so the row
	// could not tell her reach from a refusal. wunder checks the task's
	// owner before forwarding a subscription as it does a get
	// (passthrough_owner.go).
	rows = append(rows, matrixRow{frontend: "A2A pass-through (HTTP+JSON)", resource: "peer task", action: "get", want: std,
		try: func(t *testing.T, c caller) string {
			return a2aRESTOutcome(f.rest(t, "GET", "/a2a/peer/v1/tasks/"+task, "", naming(c)), "")
		}})
	rows = append(rows, matrixRow{frontend: "A2A pass-through (HTTP+JSON)", resource: "peer task", action: "get, naming by tenant", want: std,
		try: func(t *testing.T, c caller) string {
			p := "/a2a/peer/v1/tasks/" + task
			if c.names != "" {
				p = "/a2a/peer/v1/" + c.names + "/tasks/" + task
			}
			return a2aRESTOutcome(f.rest(t, "GET", p, "", c.hdr), "")
		}})
	// gRPC: the request names the peer in its tenant (peers/peer), the
	// user as X-Wunder-User metadata; after the JSON-RPC rows alice's task
	// is cancelled, so her cancel is not cancelable (found: ok).
	grpcRow := func(resource, action string, call func(t *testing.T, hc *http.Client) error) {
		rows = append(rows, matrixRow{frontend: "A2A pass-through (gRPC)", resource: resource, action: action, want: std,
			try: func(t *testing.T, c caller) string {
				return connectOutcome(call(t, &http.Client{Transport: headerRT{hdr: naming(c), h2c: true}}))
			}})
	}
	grpcRow("peer task", "get", func(t *testing.T, hc *http.Client) error {
		c := connect.NewClient[a2apb.GetTaskRequest, a2apb.Task](hc, f.s.url+a2a.GRPCServicePath+"GetTask", connect.WithGRPC())
		_, err := c.CallUnary(t.Context(), connect.NewRequest(&a2apb.GetTaskRequest{Tenant: "peers/peer", Id: task}))
		return err
	})
	grpcRow("peer tasks", "list", func(t *testing.T, hc *http.Client) error {
		c := connect.NewClient[a2apb.ListTasksRequest, a2apb.ListTasksResponse](hc, f.s.url+a2a.GRPCServicePath+"ListTasks", connect.WithGRPC())
		res, err := c.CallUnary(t.Context(), connect.NewRequest(&a2apb.ListTasksRequest{Tenant: "peers/peer"}))
		if err == nil && !slices.ContainsFunc(res.Msg.GetTasks(), func(x *a2apb.Task) bool { return x.GetId() == task }) {
			return connect.NewError(connect.CodeNotFound, errors.New("alice's task is not listed"))
		}
		return err
	})
	grpcRow("peer task", "cancel", func(t *testing.T, hc *http.Client) error {
		c := connect.NewClient[a2apb.CancelTaskRequest, a2apb.Task](hc, f.s.url+a2a.GRPCServicePath+"CancelTask", connect.WithGRPC())
		_, err := c.CallUnary(t.Context(), connect.NewRequest(&a2apb.CancelTaskRequest{Tenant: "peers/peer", Id: task}))
		return err
	})
	// The card is no one's: whoever may use the peer reads it.
	rows = append(rows, matrixRow{frontend: "A2A pass-through", resource: "peer card", action: "get", want: [4]string{ok, ok, forbidden, ok},
		try: func(t *testing.T, c caller) string {
			return a2aRESTOutcome(f.rest(t, "GET", "/a2a/peer/.well-known/agent-card.json", "", naming(c)), "")
		}})
	return rows
}
