package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/gen/wunder/v1/wunderv1connect"
	"github.com/wunder/wunder/internal/config"
	"github.com/wunder/wunder/internal/sse"
)

// The isolation matrix of issue 10: every front-end × every resource, run
// against the real wired server (SQLite). Alice owns the resources; for
// each cell four callers try it:
//
//   - alice, with her own token: reaches it (the control);
//   - bob, with his token: never reads, follows, cancels or deletes it
//     ("denied": not found, or absent from a listing);
//   - bob naming alice (user_id, X-Wunder-User): "forbidden" (403 and each
//     protocol's equivalent), where the front-end lets a caller name a user;
//   - the admin API key naming alice: reaches it.
//
// The table in docs/security.md (between the isolation-matrix markers) is
// generated from this test: go test ./cmd/wunder -run TestIsolationMatrix -update-matrix.

var updateMatrix = flag.Bool("update-matrix", false, "rewrite the isolation matrix in docs/security.md")

const (
	ok        = "ok"
	denied    = "denied"
	forbidden = "forbidden"
	na        = "n/a"
)

// caller is who makes a request: its headers.
type caller struct {
	name string
	hdr  map[string]string
	// names is the user_id this caller names ("" = none).
	names string
}

type matrixRow struct {
	frontend, resource, action string
	// try returns the outcome for a caller; na when the caller cannot be
	// expressed on this front-end.
	try func(t *testing.T, c caller) string
	// want per caller (alice, bob, bob naming alice, admin).
	want [4]string
}

type fixture struct {
	s *server
	// replica is a second wunder on the same database (PostgreSQL), for
	// the rows of what must hold across replicas; on SQLite, which one
	// process owns, it is s.
	replica              *server
	alice, bob           string // tokens
	runA, sessA, sessDel string
	// sessDel2 and push config p2 are what the others try to delete after
	// alice deleted hers (sessDel, p1): bob must fail, the admin succeed.
	sessDel2 string
	taskA    string
	// taskCtxA is alice's A2A task in the context she named "alices-ctx".
	taskCtxA string
	// a2aPath is where a2a posts JSON-RPC; "" = /a2a.
	a2aPath string
}

// TestIsolationMatrix runs the matrix on SQLite and, where the suite has
// PostgreSQL, on PostgreSQL; both must give the documented table.
func TestIsolationMatrix(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { isolationMatrix(t, "") })
	t.Run("postgres", func(t *testing.T) { isolationMatrix(t, pgSchema(t)) })
}

func isolationMatrix(t *testing.T, dsn string) {
	up := passThroughUpstream(t) // isolation_passthrough_test.go
	peer := startPassPeer(t)     // isolation_a2apass_test.go
	configure := func(c *config.Config) {
		c.MCP.Servers = append(c.MCP.Servers, up)
		c.A2A.Services = append(c.A2A.Services, config.A2AService{Name: "peer", Endpoint: peer.url, Enabled: true,
			BearerToken: "peer-secret", MaxDepth: 3, Publish: true})
		if dsn != "" {
			c.Storage.Postgres.DSN = dsn
		}
		c.Security.APIKey = "admin-key"
		c.A2A.Push.AllowPrivate = true
		c.MCP.Server.ExposeCatalog = true
		c.UserTools.AllowPrivateURLs = true // alice's MCP server (isolation_usertools_test.go)
		c.Concurrency.PerUser = 4           // two of alice's runs wait for approval, two for her answer, at once (isolation_approvals_test.go, isolation_questions_test.go)
		c.Observability.PProf = true        // admins only (isolation_monitor_test.go)
	}
	s := startServer(t, configure)
	f := &fixture{s: s, replica: s}
	if dsn != "" {
		f.replica = startServer(t, configure)
	}
	admin := map[string]string{"X-API-Key": "admin-key"}
	for _, u := range []string{"alice", "bob"} {
		mustStatus(t, f.rest(t, "POST", "/wunder/admin/user_accounts", `{"user_id":"`+u+`","password":"`+u+`-password"}`, admin), 201)
	}
	f.alice, f.bob = f.login(t, "alice"), f.login(t, "bob")
	// Alice's resources: a run that wrote notes.txt in her workspace, a
	// second session (for the admin's delete), an A2A task with a push
	// config.
	var run struct {
		RunID     string `json:"run_id"`
		SessionID string `json:"session_id"`
	}
	decodeInto(t, f.rest(t, "POST", "/wunder", `{"question":"write a note","tool_names":["write_file","read_file"],"stream":false}`, bearerOf(f.alice)), 200, &run)
	f.runA, f.sessA = run.RunID, run.SessionID
	var run2 struct {
		SessionID string `json:"session_id"`
	}
	decodeInto(t, f.rest(t, "POST", "/wunder", `{"question":"hello","stream":false}`, bearerOf(f.alice)), 200, &run2)
	f.sessDel = run2.SessionID
	res, _ := f.a2a(t, "1.0", "SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, bearerOf(f.alice))
	var sent struct{ Task struct{ ID string } }
	if err := json.Unmarshal(res, &sent); err != nil || sent.Task.ID == "" {
		t.Fatalf("alice's A2A task: %s %v", res, err)
	}
	f.taskA = sent.Task.ID
	res, _ = f.a2a(t, "1.0", "SendMessage", `{"message":{"messageId":"m2","contextId":"alices-ctx","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, bearerOf(f.alice))
	if err := json.Unmarshal(res, &sent); err != nil || sent.Task.ID == "" {
		t.Fatalf("alice's A2A task in a named context: %s %v", res, err)
	}
	f.taskCtxA = sent.Task.ID
	for _, id := range []string{"p1", "p2", "r1", "r2"} { // r1, r2: the HTTP+JSON binding's rows
		if _, code := f.a2a(t, "1.0", "CreateTaskPushNotificationConfig", `{"taskId":"`+f.taskA+`","id":"`+id+`","url":"http://127.0.0.1:9/hook"}`, bearerOf(f.alice)); code != 0 {
			t.Fatalf("alice's push config %s: code %d", id, code)
		}
	}
	decodeInto(t, f.rest(t, "POST", "/wunder", `{"question":"hello","stream":false}`, bearerOf(f.alice)), 200, &run2)
	f.sessDel2 = run2.SessionID
	f.setupSkills(t) // isolation_skills_test.go
	mustStatus(t, f.rest(t, "PUT", "/wunder/admin/user_accounts/alice/tool_access", `{"denied_tools":["up@write"]}`, admin), 200)

	callers := [4]caller{
		{name: "alice", hdr: bearerOf(f.alice)},
		{name: "bob", hdr: bearerOf(f.bob)},
		{name: "bob naming alice", hdr: bearerOf(f.bob), names: "alice"},
		{name: "admin key naming alice", hdr: admin, names: "alice"},
	}
	rows := append(f.rows(), userToolsRows(t, f)...)
	rows = append(rows, f.memoryRows(t)...)      // isolation_memory_test.go
	rows = append(rows, f.evalRows(t)...)        // isolation_eval_test.go
	rows = append(rows, f.attachmentRows(t)...)  // isolation_attachments_test.go
	rows = append(rows, f.passThroughRows(t)...) // isolation_passthrough_test.go
	rows = append(rows, f.a2aPassRows(t)...)     // isolation_a2apass_test.go
	rows = append(rows, f.mcpAppRows()...)       // isolation_mcpapps_test.go
	rows = append(rows, f.adminSkillRows(t)...)  // isolation_skills_test.go
	rows = append(rows, f.workspaceRows()...)    // isolation_workspace_test.go; last: it empties alice's workspace
	var table strings.Builder
	table.WriteString("| front-end | resource | action | alice (owner) | bob | bob naming alice | admin key naming alice |\n")
	table.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		got := [4]string{}
		for i, c := range callers {
			got[i] = r.try(t, c)
		}
		if got != r.want {
			t.Errorf("%s %s %s: got %v; want %v (alice, bob, bob naming alice, admin)", r.frontend, r.resource, r.action, got, r.want)
		}
		fmt.Fprintf(&table, "| %s | %s | %s | %s |\n", r.frontend, r.resource, r.action, strings.Join(got[:], " | "))
	}
	checkMatrixDoc(t, table.String())
}

func (f *fixture) rows() []matrixRow {
	std := [4]string{ok, denied, forbidden, ok}
	var rows []matrixRow
	rest := func(resource, action, method, path, body string, naming func(user string) (string, string)) {
		rows = append(rows, matrixRow{frontend: "REST", resource: resource, action: action, want: std,
			try: func(t *testing.T, c caller) string {
				p, b := path, body
				if c.names != "" {
					p, b = naming(c.names)
				}
				return restOutcome(f.rest(t, method, p, b, c.hdr))
			}})
	}
	q := func(path string) func(string) (string, string) {
		return func(u string) (string, string) { return path + sep(path) + "user_id=" + u, "" }
	}
	rest("run", "get", "GET", "/wunder/runs/"+f.runA, "", q("/wunder/runs/"+f.runA))
	rest("events", "follow", "GET", "/wunder/runs/"+f.runA+"/events", "", q("/wunder/runs/"+f.runA+"/events"))
	rest("plan", "get", "GET", "/wunder/runs/"+f.runA+"/plan", "", q("/wunder/runs/"+f.runA+"/plan"))
	rest("run", "cancel", "POST", "/wunder/runs/"+f.runA+"/cancel", "", q("/wunder/runs/"+f.runA+"/cancel"))
	rest("session + history", "get", "GET", "/wunder/sessions/"+f.sessA, "", q("/wunder/sessions/"+f.sessA))
	rest("session", "continue (POST /wunder)", "POST", "/wunder", `{"question":"again","stream":false,"session_id":"`+f.sessA+`"}`,
		func(u string) (string, string) {
			return "/wunder", `{"user_id":"` + u + `","question":"again","stream":false,"session_id":"` + f.sessA + `"}`
		})
	rest("session", "rename", "POST", "/wunder/sessions/"+f.sessA+"/title", `{"title":"renamed"}`,
		func(u string) (string, string) {
			return "/wunder/sessions/" + f.sessA + "/title", `{"user_id":"` + u + `","title":"renamed for ` + u + `"}`
		})
	rest("tools", "list", "GET", "/wunder/tools", "", q("/wunder/tools"))
	rows[len(rows)-1].want = [4]string{ok, ok, forbidden, ok} // bob lists his own tools
	rows[len(rows)-1].resource = "tools (own catalog)"
	for _, l := range []struct{ resource, path, id string }{{"runs", "/wunder/runs", f.runA}, {"sessions", "/wunder/sessions", f.sessA}} {
		rows = append(rows, matrixRow{frontend: "REST", resource: l.resource, action: "list", want: std,
			try: func(t *testing.T, c caller) string {
				p := l.path
				if c.names != "" {
					p += "?user_id=" + c.names
				}
				return listOutcome(f.rest(t, "GET", p, "", c.hdr), l.id)
			}})
	}
	rows = append(rows, matrixRow{frontend: "REST", resource: "session", action: "delete", want: std,
		try: func(t *testing.T, c caller) string {
			path := "/wunder/sessions/" + f.sessDel2
			if c.name == "alice" {
				path = "/wunder/sessions/" + f.sessDel
			}
			if c.names != "" {
				path += "?user_id=" + c.names
			}
			return restOutcome(f.rest(t, "DELETE", path, "", c.hdr))
		}})

	rows = append(rows, f.skillRows()...) // isolation_skills_test.go
	// A2A: the user named in X-Wunder-User.
	a2aRow := func(v, method, params string, want [4]string, resource, action string) {
		rows = append(rows, matrixRow{frontend: "A2A " + v, resource: resource, action: action, want: want,
			try: func(t *testing.T, c caller) string {
				h := clone(c.hdr)
				if c.names != "" {
					h["X-Wunder-User"] = c.names
				}
				_, code := f.a2a(t, v, method, params, h)
				return a2aOutcome(code)
			}})
	}
	a2aRow("1.0", "GetTask", `{"id":"`+f.taskA+`"}`, std, "task", "get")
	// The A2A 1.0 tenant names a user as X-Wunder-User does (tenant.go).
	rows = append(rows, matrixRow{frontend: "A2A 1.0", resource: "task", action: "get, naming by tenant", want: std,
		try: func(t *testing.T, c caller) string {
			params := `{"id":"` + f.taskA + `"}`
			if c.names != "" {
				params = `{"tenant":"` + c.names + `","id":"` + f.taskA + `"}`
			}
			_, code := f.a2a(t, "1.0", "GetTask", params, c.hdr)
			return a2aOutcome(code)
		}})
	a2aRow("1.0", "CancelTask", `{"id":"`+f.taskA+`"}`, std, "task", "cancel")
	a2aRow("1.0", "SubscribeToTask", `{"id":"`+f.taskA+`"}`, std, "task", "subscribe")
	a2aRow("1.0", "GetTaskPushNotificationConfig", `{"taskId":"`+f.taskA+`","id":"p1"}`, std, "push config", "get")
	a2aRow("1.0", "ListTaskPushNotificationConfigs", `{"taskId":"`+f.taskA+`"}`, std, "push config", "list")
	a2aRow("0.3", "tasks/get", `{"id":"`+f.taskA+`"}`, std, "task", "get")
	a2aRow("0.3", "tasks/cancel", `{"id":"`+f.taskA+`"}`, std, "task", "cancel")
	a2aRow("0.3", "tasks/pushNotificationConfig/get", `{"id":"`+f.taskA+`","pushNotificationConfigId":"p1"}`, std, "push config", "get")
	rows = append(rows, matrixRow{frontend: "A2A 1.0", resource: "tasks", action: "list", want: std,
		try: func(t *testing.T, c caller) string {
			h := clone(c.hdr)
			if c.names != "" {
				h["X-Wunder-User"] = c.names
			}
			res, code := f.a2a(t, "1.0", "ListTasks", `{}`, h)
			if code != 0 {
				return a2aOutcome(code)
			}
			if bytes.Contains(res, []byte(f.taskA)) {
				return ok
			}
			return denied
		}})
	// A context its client named is the namer's: listing it shows the
	// caller's own tasks, and a task sent naming it joins the caller's
	// own context of that name (alice's listing shows it only when the
	// caller acted as alice).
	inCtx := func(c caller) map[string]string {
		h := clone(c.hdr)
		if c.names != "" {
			h["X-Wunder-User"] = c.names
		}
		return h
	}
	rows = append(rows, matrixRow{frontend: "A2A 1.0", resource: "context named by its client", action: "list its tasks", want: std,
		try: func(t *testing.T, c caller) string {
			res, code := f.a2a(t, "1.0", "ListTasks", `{"contextId":"alices-ctx"}`, inCtx(c))
			if code != 0 {
				return a2aOutcome(code)
			}
			if bytes.Contains(res, []byte(f.taskCtxA)) {
				return ok
			}
			return denied
		}})
	rows = append(rows, matrixRow{frontend: "A2A 1.0", resource: "context named by its client", action: "send into it", want: std,
		try: func(t *testing.T, c caller) string {
			res, code := f.a2a(t, "1.0", "SendMessage", `{"message":{"messageId":"m-`+c.name+`","contextId":"alices-ctx","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, inCtx(c))
			if code != 0 {
				return a2aOutcome(code)
			}
			var sent struct {
				Task struct{ ID, ContextID string }
			}
			if err := json.Unmarshal(res, &sent); err != nil || sent.Task.ContextID != "alices-ctx" {
				return fmt.Sprintf("not echoed: %s", res)
			}
			list, code := f.a2a(t, "1.0", "ListTasks", `{"contextId":"alices-ctx"}`, bearerOf(f.alice))
			if code != 0 {
				return a2aOutcome(code)
			}
			if bytes.Contains(list, []byte(sent.Task.ID)) {
				return ok
			}
			return denied
		}})
	rows = append(rows, matrixRow{frontend: "A2A 1.0", resource: "push config", action: "delete", want: std,
		try: func(t *testing.T, c caller) string {
			h, id := clone(c.hdr), "p2"
			if c.name == "alice" {
				id = "p1"
			}
			if c.names != "" {
				h["X-Wunder-User"] = c.names
			}
			_, code := f.a2a(t, "1.0", "DeleteTaskPushNotificationConfig", `{"taskId":"`+f.taskA+`","id":"`+id+`"}`, h)
			return a2aOutcome(code)
		}})

	rows = append(rows, f.a2aRESTRows()...) // isolation_a2arest_test.go
	rows = append(rows, f.a2aGRPCRows()...)

	rows = append(rows, f.knowledgeRows()...) // isolation_knowledge_test.go
	rows = append(rows, f.approvalRows()...)  // isolation_approvals_test.go
	rows = append(rows, f.questionRows()...)  // isolation_questions_test.go
	rows = append(rows, f.monitorRows()...)   // isolation_monitor_test.go
	rows = append(rows, f.authRows()...)      // isolation_auth_test.go
	rows = append(rows, f.configRows()...)    // isolation_config_test.go
	rows = append(rows, f.consoleRows()...)   // isolation_console_test.go

	// MCP: the token is the only way to say who one is; the API key acts
	// as mcp.server.user_id, so the admin cannot reach alice's resources here.
	mcpRow := func(resource, action, tool string, args map[string]any) {
		rows = append(rows, matrixRow{frontend: "MCP", resource: resource, action: action, want: [4]string{ok, denied, na, denied},
			try: func(t *testing.T, c caller) string {
				if c.names != "" && c.hdr["X-API-Key"] == "" {
					return na
				}
				return f.mcpCall(t, c, tool, args)
			}})
	}
	mcpRow("session", "continue (wunder__run)", "wunder__run", map[string]any{"task": "again", "session_id": f.sessA})
	mcpRow("workspace file", "read (catalog read_file)", "read_file", map[string]any{"path": "notes.txt"})
	rows = append(rows, f.mcpApprovalRows()...) // isolation_mcpapprovals_test.go
	rows = append(rows, f.mcpTaskRows()...)     // isolation_mcptasks_test.go

	// Connect over each protocol.
	for _, p := range []struct {
		name string
		opts []connect.ClientOption
		h2c  bool
	}{{"Connect", nil, false}, {"gRPC", []connect.ClientOption{connect.WithGRPC()}, true}, {"gRPC-Web", []connect.ClientOption{connect.WithGRPCWeb()}, false}} {
		cr := func(resource, action string, want [4]string, call func(t *testing.T, runs wunderv1connect.RunServiceClient, sess wunderv1connect.SessionServiceClient, user string) error) {
			rows = append(rows, matrixRow{frontend: p.name, resource: resource, action: action, want: want,
				try: func(t *testing.T, c caller) string {
					hc := &http.Client{Transport: headerRT{hdr: c.hdr, h2c: p.h2c}}
					runs := wunderv1connect.NewRunServiceClient(hc, f.s.url, p.opts...)
					sess := wunderv1connect.NewSessionServiceClient(hc, f.s.url, p.opts...)
					return connectOutcome(call(t, runs, sess, c.names))
				}})
		}
		cr("run", "get", std, func(t *testing.T, runs wunderv1connect.RunServiceClient, _ wunderv1connect.SessionServiceClient, u string) error {
			_, err := runs.GetRun(t.Context(), connect.NewRequest(&wunderv1.GetRunRequest{UserId: u, RunId: f.runA}))
			return err
		})
		cr("run", "cancel", std, func(t *testing.T, runs wunderv1connect.RunServiceClient, _ wunderv1connect.SessionServiceClient, u string) error {
			_, err := runs.Cancel(t.Context(), connect.NewRequest(&wunderv1.CancelRequest{UserId: u, RunId: f.runA}))
			return err
		})
		cr("events", "follow", std, func(t *testing.T, runs wunderv1connect.RunServiceClient, _ wunderv1connect.SessionServiceClient, u string) error {
			st, err := runs.Follow(t.Context(), connect.NewRequest(&wunderv1.FollowRequest{UserId: u, RunId: f.runA}))
			if err != nil {
				return err
			}
			defer st.Close()
			for st.Receive() {
			}
			return st.Err()
		})
		cr("session + history", "get", std, func(t *testing.T, _ wunderv1connect.RunServiceClient, sess wunderv1connect.SessionServiceClient, u string) error {
			_, err := sess.GetSession(t.Context(), connect.NewRequest(&wunderv1.GetSessionRequest{UserId: u, SessionId: f.sessA}))
			return err
		})
		cr("session", "rename", std, func(t *testing.T, _ wunderv1connect.RunServiceClient, sess wunderv1connect.SessionServiceClient, u string) error {
			_, err := sess.RenameSession(t.Context(), connect.NewRequest(&wunderv1.RenameSessionRequest{UserId: u, SessionId: f.sessA, Title: "renamed over Connect"}))
			return err
		})
		cr("runs", "list", std, func(t *testing.T, runs wunderv1connect.RunServiceClient, _ wunderv1connect.SessionServiceClient, u string) error {
			res, err := runs.ListRuns(t.Context(), connect.NewRequest(&wunderv1.ListRunsRequest{UserId: u}))
			if err != nil {
				return err
			}
			for _, r := range res.Msg.GetRuns() {
				if r.GetRunId() == f.runA {
					return nil
				}
			}
			return connect.NewError(connect.CodeNotFound, errors.New("not listed"))
		})
		rows = append(rows, f.connectApprovalRows(p.name, p.opts, p.h2c)...) // isolation_connectapprovals_test.go
	}
	return rows
}

func sep(p string) string {
	if strings.Contains(p, "?") {
		return "&"
	}
	return "?"
}

func clone(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func bearerOf(tok string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + tok}
}

func (f *fixture) login(t *testing.T, u string) string {
	t.Helper()
	var lr struct{ Token string }
	decodeInto(t, f.rest(t, "POST", "/wunder/auth/login", `{"user_id":"`+u+`","password":"`+u+`-password"}`, nil), 200, &lr)
	return lr.Token
}

func (f *fixture) rest(t *testing.T, method, path, body string, hdr map[string]string) *http.Response {
	t.Helper()
	return f.s.rest(t, method, path, body, hdr)
}

// rest sends a request (a JSON body when not empty) with the headers hdr;
// the response's body is closed when the test ends.
func (s *server) rest(t *testing.T, method, path, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func mustStatus(t *testing.T, r *http.Response, want int) {
	t.Helper()
	if r.StatusCode != want {
		b, _ := io.ReadAll(r.Body)
		t.Fatalf("%s %s = %d %s; want %d", r.Request.Method, r.Request.URL.Path, r.StatusCode, b, want)
	}
}

func decodeInto(t *testing.T, r *http.Response, want int, v any) {
	t.Helper()
	mustStatus(t, r, want)
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// restOutcome: found (2xx, or 409 for a finished run) is ok.
func restOutcome(r *http.Response) string {
	_, _ = io.Copy(io.Discard, r.Body)
	switch {
	case r.StatusCode < 300, r.StatusCode == http.StatusConflict:
		return ok
	case r.StatusCode == http.StatusNotFound:
		return denied
	case r.StatusCode == http.StatusForbidden:
		return forbidden
	}
	return fmt.Sprintf("HTTP %d", r.StatusCode)
}

func listOutcome(r *http.Response, id string) string {
	if r.StatusCode != 200 {
		return restOutcome(r)
	}
	b, _ := io.ReadAll(r.Body)
	if bytes.Contains(b, []byte(id)) {
		return ok
	}
	return denied
}

// a2a posts one JSON-RPC call and returns its result or error code (0 =
// none). A streaming method's first SSE data line is taken as the answer.
func (f *fixture) a2a(t *testing.T, version, method, params string, hdr map[string]string) (json.RawMessage, int) {
	t.Helper()
	h := clone(hdr)
	if version == "1.0" {
		h["A2A-Version"] = "1.0"
	}
	path := f.a2aPath
	if path == "" {
		path = "/a2a"
	}
	r := f.rest(t, "POST", path, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`, h)
	if r.StatusCode != 200 {
		return nil, -r.StatusCode
	}
	b, _ := io.ReadAll(r.Body)
	if strings.HasPrefix(r.Header.Get("Content-Type"), sse.ContentType) {
		for ev, err := range sse.Read(bytes.NewReader(b)) {
			if err != nil {
				t.Fatalf("%s: %v", method, err)
			}
			b = ev.Data
			break
		}
	}
	var resp struct {
		Result json.RawMessage
		Error  *struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		t.Fatalf("%s: %s: %v", method, b, err)
	}
	if resp.Error != nil {
		if strings.Contains(resp.Error.Message, "permission denied") {
			return nil, -403
		}
		return nil, resp.Error.Code
	}
	return resp.Result, 0
}

// a2aOutcome: TaskNotFound is denied; permission denied (HTTP 403 or the
// JSON-RPC error carrying it) forbidden; a task that is found but cannot
// be cancelled or subscribed to (terminal) is ok.
func a2aOutcome(code int) string {
	switch code {
	case 0, -32002, -32004:
		return ok
	case -32001:
		return denied
	case -403:
		return forbidden
	}
	return fmt.Sprintf("code %d", code)
}

func (f *fixture) mcpCall(t *testing.T, c caller, tool string, args map[string]any) string {
	t.Helper()
	hc := &http.Client{Transport: headerRT{hdr: c.hdr}} // X-API-Key works here as on every front-end
	cl := mcp.NewClient(&mcp.Implementation{Name: "matrix", Version: "1"}, nil)
	cs, err := cl.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: f.s.url + "/wunder/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("MCP connect as %s: %v", c.name, err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		if strings.Contains(err.Error(), "not found") {
			return denied
		}
		return "error: " + err.Error()
	}
	text := ""
	if len(res.Content) > 0 {
		if tc, isText := res.Content[0].(*mcp.TextContent); isText {
			text = tc.Text
		}
	}
	if res.IsError {
		if strings.Contains(strings.ToLower(text), "not found") || strings.Contains(text, "no such file") {
			return denied
		}
		return "tool error: " + text
	}
	return ok
}

type headerRT struct {
	hdr map[string]string
	h2c bool
}

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.hdr {
		r.Header.Set(k, v)
	}
	tr := &http.Transport{}
	if h.h2c {
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetUnencryptedHTTP2(true)
	}
	return tr.RoundTrip(r)
}

func connectOutcome(err error) string {
	switch connect.CodeOf(err) {
	case connect.CodeUnknown:
		if err == nil {
			return ok
		}
	case connect.CodeFailedPrecondition:
		return ok // found, but finished
	case connect.CodeNotFound:
		return denied
	case connect.CodePermissionDenied:
		return forbidden
	}
	if err == nil {
		return ok
	}
	return "error: " + connect.CodeOf(err).String()
}

const (
	matrixBegin = "<!-- isolation-matrix:begin (generated by TestIsolationMatrix; -update-matrix rewrites it) -->\n"
	matrixEnd   = "<!-- isolation-matrix:end -->"
)

func checkMatrixDoc(t *testing.T, table string) {
	t.Helper()
	path := filepath.Join("..", "..", "docs", "security.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, matrixBegin), strings.Index(doc, matrixEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no isolation-matrix markers", path)
	}
	cur := doc[i+len(matrixBegin) : j]
	if cur == table {
		return
	}
	if *updateMatrix {
		if err := os.WriteFile(path, []byte(doc[:i+len(matrixBegin)]+table+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the isolation matrix in %s is not what the test found; run go test ./cmd/wunder -run TestIsolationMatrix -update-matrix\ngot:\n%s", path, table)
}
