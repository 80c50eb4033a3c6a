package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/gen/wunder/v1/wunderv1connect"
	"github.com/wunder/wunder/internal/config"
)

// One identity middleware (issue 35): every front-end reads the principal
// the gateway's authenticator established, and takes the API key as
// X-API-Key and as a bearer token, as docs/security.md says. The matrix
// is {REST, /a2a, /wunder/mcp, Connect} × {X-API-Key, bearer API key,
// bearer user token, no credential, bad credential}, against the wired
// server.

// probe sends one request that needs a principal on a front-end with the
// headers hdr, and says what came back: "ok" (with who the REST route
// says the caller is), "401", or anything else verbatim.
type probe func(t *testing.T, s *server, hdr map[string]string) string

var frontEndProbes = []struct {
	name  string
	probe probe
}{
	{"REST", func(t *testing.T, s *server, hdr map[string]string) string {
		r := s.rest(t, "GET", "/wunder/auth/me", "", hdr)
		if r.StatusCode != 200 {
			return statusOutcome(r)
		}
		var me struct {
			UserID     string `json:"user_id"`
			Credential string `json:"credential"`
		}
		if err := json.NewDecoder(r.Body).Decode(&me); err != nil {
			t.Fatal(err)
		}
		return "ok as " + me.Credential + " " + me.UserID
	}},
	{"A2A", func(t *testing.T, s *server, hdr map[string]string) string {
		h := clone(hdr)
		h["A2A-Version"] = "1.0"
		r := s.rest(t, "POST", "/a2a", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`, h)
		if r.StatusCode != 200 {
			return statusOutcome(r)
		}
		var res struct {
			Result json.RawMessage
			Error  *struct{ Code int }
		}
		if err := json.NewDecoder(r.Body).Decode(&res); err != nil {
			t.Fatal(err)
		}
		if res.Error != nil || res.Result == nil {
			return fmt.Sprintf("json-rpc error %+v", res.Error)
		}
		return "ok"
	}},
	{"MCP", func(t *testing.T, s *server, hdr map[string]string) string {
		h := clone(hdr)
		h["Accept"] = "application/json, text/event-stream"
		r := s.rest(t, "POST", "/wunder/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"matrix","version":"1"}}}`, h)
		if r.StatusCode == 401 {
			if want := `Bearer resource_metadata="` + s.url + `/.well-known/oauth-protected-resource/wunder/mcp"`; r.Header.Get("WWW-Authenticate") != want {
				return fmt.Sprintf("401 with WWW-Authenticate %q, not %q", r.Header.Get("WWW-Authenticate"), want)
			}
			return "401"
		}
		if r.StatusCode != 200 {
			return statusOutcome(r)
		}
		b, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(b), `"serverInfo"`) {
			return "200 without an initialize result: " + string(b)
		}
		return "ok"
	}},
	{"Connect", func(t *testing.T, s *server, hdr map[string]string) string {
		runs := wunderv1connect.NewRunServiceClient(&http.Client{Transport: headerRT{hdr: hdr}}, s.url)
		_, err := runs.ListRuns(t.Context(), connect.NewRequest(&wunderv1.ListRunsRequest{}))
		switch connect.CodeOf(err) {
		case connect.CodeUnknown:
			if err == nil {
				return "ok"
			}
		case connect.CodeUnauthenticated:
			return "401"
		}
		return "error: " + err.Error()
	}},
}

func statusOutcome(r *http.Response) string {
	_, _ = io.Copy(io.Discard, r.Body)
	if r.StatusCode == 401 {
		if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Bearer ") {
			return "401 without a bearer challenge"
		}
		return "401"
	}
	return fmt.Sprintf("HTTP %d", r.StatusCode)
}

// identityServer is a wired server with an API key and the account alice
// (password alice-password), and a login token of hers.
func identityServer(t *testing.T, mutate func(c *config.Config)) (s *server, aliceToken string) {
	t.Helper()
	s = startServer(t, func(c *config.Config) {
		c.Security.APIKey = "admin-key"
		if mutate != nil {
			mutate(c)
		}
	})
	mustStatus(t, s.rest(t, "POST", "/wunder/admin/user_accounts", `{"user_id":"alice","password":"alice-password"}`, map[string]string{"X-API-Key": "admin-key"}), 201)
	var lr struct{ Token string }
	decodeInto(t, s.rest(t, "POST", "/wunder/auth/login", `{"user_id":"alice","password":"alice-password"}`, nil), 200, &lr)
	return s, lr.Token
}

func TestEveryFrontEndReadsTheOnePrincipal(t *testing.T) {
	s, alice := identityServer(t, nil)
	credentials := []struct {
		name string
		hdrs []map[string]string // each must give the cell's outcome
	}{
		{"X-API-Key", []map[string]string{{"X-API-Key": "admin-key"}}},
		{"bearer API key", []map[string]string{{"Authorization": "Bearer admin-key"}}},
		{"bearer user token", []map[string]string{{"Authorization": "Bearer " + alice}}},
		{"no credential", []map[string]string{{}}},
		{"bad credential", []map[string]string{{"X-API-Key": "wrong"}, {"Authorization": "Bearer wrong"},
			{"Authorization": "Bearer wdr_" + strings.Repeat("a", 52)}, {"Authorization": "Basic YWxpY2U6YWxpY2UtcGFzc3dvcmQ="}}},
	}
	want := map[string][5]string{
		"REST":    {"ok as api_key ", "ok as api_key ", "ok as token alice", "401", "401"},
		"A2A":     {"ok", "ok", "ok", "401", "401"},
		"MCP":     {"ok", "ok", "ok", "401", "401"},
		"Connect": {"ok", "ok", "ok", "401", "401"},
	}
	for _, fe := range frontEndProbes {
		for i, c := range credentials {
			for _, hdr := range c.hdrs {
				if got := fe.probe(t, s, hdr); got != want[fe.name][i] {
					t.Errorf("%s with %s %v: %s; want %s", fe.name, c.name, hdr, got, want[fe.name][i])
				}
			}
		}
	}
}

// MCP with the API key as X-API-Key acts as mcp.server.user_id, as with
// the key as a bearer token; with a user's token, as the user.
func TestMCPActsAsThePrincipal(t *testing.T) {
	s, alice := identityServer(t, nil)
	run := func(hdr map[string]string) {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: s.url + "/wunder/mcp", HTTPClient: &http.Client{Transport: headerRT{hdr: hdr}}}, nil)
		if err != nil {
			t.Fatalf("connect with %v: %v", hdr, err)
		}
		defer cs.Close()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "wunder__run", Arguments: map[string]any{"task": "hello"}})
		if err != nil || res.IsError {
			t.Fatalf("wunder__run with %v: %v %+v", hdr, err, res)
		}
	}
	run(map[string]string{"X-API-Key": "admin-key"})
	run(map[string]string{"Authorization": "Bearer " + alice})
	admin := map[string]string{"X-API-Key": "admin-key"}
	for user, want := range map[string]int{"wunder": 1, "alice": 1} {
		var list struct{ Runs []json.RawMessage }
		decodeInto(t, s.rest(t, "GET", "/wunder/runs?user_id="+user, "", admin), 200, &list)
		if len(list.Runs) != want {
			t.Errorf("runs of %s = %d; want %d", user, len(list.Runs), want)
		}
	}
}

// A password reset ends the user's tokens on every front-end, not only on
// the REST routes; so does deleting the account.
func TestPasswordResetAndDeleteEndTokensEverywhere(t *testing.T) {
	s, alice := identityServer(t, nil)
	admin := map[string]string{"X-API-Key": "admin-key"}
	var api struct{ Token string }
	decodeInto(t, s.rest(t, "POST", "/wunder/auth/tokens", `{"name":"ide"}`, bearerOf(alice)), 201, &api)
	for _, tok := range []string{alice, api.Token} {
		for _, fe := range frontEndProbes {
			if got := fe.probe(t, s, bearerOf(tok)); !strings.HasPrefix(got, "ok") {
				t.Fatalf("%s with alice's token before the reset: %s", fe.name, got)
			}
		}
	}
	mustStatus(t, s.rest(t, "POST", "/wunder/admin/user_accounts/alice/password", `{"password":"new-alice-password"}`, admin), 204)
	for name, tok := range map[string]string{"login token": alice, "API token": api.Token} {
		for _, fe := range frontEndProbes {
			if got := fe.probe(t, s, bearerOf(tok)); got != "401" {
				t.Errorf("%s with alice's %s after the reset: %s; want 401", fe.name, name, got)
			}
		}
	}
	var lr struct{ Token string }
	decodeInto(t, s.rest(t, "POST", "/wunder/auth/login", `{"user_id":"alice","password":"new-alice-password"}`, nil), 200, &lr)
	mustStatus(t, s.rest(t, "DELETE", "/wunder/admin/user_accounts/alice", "", admin), 204)
	for _, fe := range frontEndProbes {
		if got := fe.probe(t, s, bearerOf(lr.Token)); got != "401" {
			t.Errorf("%s with alice's token after her account was deleted: %s; want 401", fe.name, got)
		}
	}
}

// The report of issue 35: the admin key sends an A2A task, which belongs to
// a2a.server.user_id; a stranger registering that id would have seen it in
// their own sessions and ListTasks. The id, any case of it, MCP's, and a
// deleted account's are refused, and so are look-alikes of an account.
func TestRegistrationCannotTakeServerOrOthersIDs(t *testing.T) {
	s, _ := identityServer(t, func(c *config.Config) { c.Auth.AllowRegister = true })
	admin := map[string]string{"X-API-Key": "admin-key"}
	res, code := (&fixture{s: s}).a2a(t, "1.0", "SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, admin)
	if code != 0 {
		t.Fatalf("the admin's A2A task: code %d %s", code, res)
	}
	mustStatus(t, s.rest(t, "POST", "/wunder/admin/user_accounts", `{"user_id":"carol","password":"carol-password"}`, admin), 201)
	mustStatus(t, s.rest(t, "DELETE", "/wunder/admin/user_accounts/carol", "", admin), 204)
	for id, want := range map[string]int{
		"a2a": 400, "A2A": 400, "wunder": 400, "admin": 400, "root": 400, "wunder-eval-x": 400,
		"Alice": 409, "ALICE": 409, "alice\u200b": 400, " alice": 400,
		"carol": 409, "Carol": 409,
	} {
		body, _ := json.Marshal(map[string]string{"user_id": id, "password": "a-password"})
		r := s.rest(t, "POST", "/wunder/auth/register", string(body), nil)
		if r.StatusCode != want {
			b, _ := io.ReadAll(r.Body)
			t.Errorf("register %q = %d %s; want %d", id, r.StatusCode, b, want)
		}
	}
	// Nothing was registered, so the admin's task is still nobody else's.
	var list struct {
		Users []struct {
			UserID string `json:"user_id"`
		}
	}
	decodeInto(t, s.rest(t, "GET", "/wunder/admin/user_accounts", "", admin), 200, &list)
	if len(list.Users) != 1 || list.Users[0].UserID != "alice" {
		t.Errorf("accounts = %+v; want alice alone", list.Users)
	}
}
