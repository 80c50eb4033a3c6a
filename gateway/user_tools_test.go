package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/accounts/accountstest"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/orchestrator"
)

// fakeUserTools keeps one list of servers and a prompt per user; a server
// named "bad" is refused.
type fakeUserTools struct {
	mu      sync.Mutex
	servers map[string][]json.RawMessage
	prompts map[string]string
}

func (f *fakeUserTools) MCPServers(_ context.Context, user string) ([]json.RawMessage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.servers[user], nil
}

func (f *fakeUserTools) SetMCPServers(_ context.Context, user string, servers []json.RawMessage) ([]json.RawMessage, error) {
	for i, s := range servers {
		if strings.Contains(string(s), `"bad"`) {
			return nil, fmt.Errorf("%w: servers[%d]: bad: refused", orchestrator.ErrInvalidArgument, i)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.servers[user] = servers
	return servers, nil
}

func (f *fakeUserTools) MCPServerTools(_ context.Context, user string, server json.RawMessage) (any, error) {
	if strings.Contains(string(server), "user_id") {
		return nil, fmt.Errorf("user_id reached the server config: %s", server)
	}
	return []string{user + " listed " + string(server)}, nil
}

func (f *fakeUserTools) ExtraPrompt(_ context.Context, user string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.prompts[user], nil
}

func (f *fakeUserTools) SetExtraPrompt(_ context.Context, user, p string) (string, error) {
	if len(p) > 10 {
		return "", fmt.Errorf("%w: extra_prompt is too long", orchestrator.ErrInvalidArgument)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prompts[user] = p
	return p, nil
}

func newUserToolsEnv(t *testing.T) (*env, string, string) {
	t.Helper()
	accts := accountstest.NewMemStore()
	e := newEnv(t, envOpts{gw: gateway.Options{APIKey: adminKey, UserTools: &fakeUserTools{servers: map[string][]json.RawMessage{}, prompts: map[string]string{}},
		Auth: gateway.AuthOptions{Accounts: accts, TokenTTL: time.Hour}}})
	ae := &authEnv{env: e}
	ae.addUser(t, "alice", "alice-password")
	ae.addUser(t, "bob", "bob-password")
	return e, ae.login(t, "alice", "alice-password").Token, ae.login(t, "bob", "bob-password").Token
}

// TestUserToolRoutesScope: a user's token acts for that user, naming
// another is 403, the admin names the user (and must name one).
func TestUserToolRoutesScope(t *testing.T) {
	t.Parallel()
	e, alice, bob := newUserToolsEnv(t)
	decode[map[string]any](t, e.do(t, "POST", "/wunder/user_tools/mcp", `{"servers":[{"name":"s","url":"https://s/x"}]}`, bearer(alice)...), 200)
	decode[map[string]any](t, e.do(t, "POST", "/wunder/user_tools/extra_prompt", `{"extra_prompt":"hi"}`, bearer(alice)...), 200)
	for _, path := range []string{"/wunder/user_tools/mcp", "/wunder/user_tools/extra_prompt", "/wunder/user_tools/tools"} {
		mine := decode[map[string]any](t, e.do(t, "GET", path, "", bearer(alice)...), 200)
		theirs := decode[map[string]any](t, e.do(t, "GET", path, "", bearer(bob)...), 200)
		if mine["user_id"] != "alice" || theirs["user_id"] != "bob" {
			t.Errorf("GET %s acts for %v and %v, want alice and bob", path, mine["user_id"], theirs["user_id"])
		}
		if b, _ := json.Marshal(theirs); strings.Contains(string(b), `"s"`) || strings.Contains(string(b), `"hi"`) {
			t.Errorf("GET %s as bob shows alice's configuration: %s", path, b)
		}
		wantProblem(t, e.do(t, "GET", path+"?user_id=alice", "", bearer(bob)...), 403, "permission_denied")
		wantProblem(t, e.do(t, "GET", path, "", "X-API-Key", adminKey), 400, "missing_user_id")
		admin := decode[map[string]any](t, e.do(t, "GET", path+"?user_id=alice", "", "X-API-Key", adminKey), 200)
		if admin["user_id"] != "alice" {
			t.Errorf("admin GET %s?user_id=alice acts for %v", path, admin["user_id"])
		}
		wantProblem(t, e.do(t, "GET", path, ""), 401, "unauthenticated")
	}
	for path, body := range map[string]string{
		"/wunder/user_tools/mcp":          `{"user_id":"alice","servers":[]}`,
		"/wunder/user_tools/mcp/tools":    `{"user_id":"alice","name":"s","url":"https://s/x"}`,
		"/wunder/user_tools/extra_prompt": `{"user_id":"alice","extra_prompt":""}`,
	} {
		wantProblem(t, e.do(t, "POST", path, body, bearer(bob)...), 403, "permission_denied")
		if r := e.do(t, "POST", path, body, "X-API-Key", adminKey); r.StatusCode != 200 {
			t.Errorf("admin POST %s for alice: %d", path, r.StatusCode)
		}
		wantProblem(t, e.do(t, "POST", path, strings.Replace(body, `"user_id":"alice",`, "", 1), "X-API-Key", adminKey), 400, "missing_user_id")
	}
	got := decode[map[string]any](t, e.do(t, "POST", "/wunder/user_tools/mcp/tools", `{"name":"s","url":"https://s/x"}`, bearer(alice)...), 200)
	if b, _ := json.Marshal(got["tools"]); !strings.Contains(string(b), "alice listed") {
		t.Errorf("mcp/tools = %s", b)
	}
}

// TestUserToolRoutesBadInput: every class of bad body is a 4xx problem.
func TestUserToolRoutesBadInput(t *testing.T) {
	t.Parallel()
	e, alice, _ := newUserToolsEnv(t)
	for _, c := range []struct {
		path, body string
		status     int
		code, want string
	}{
		{"/wunder/user_tools/mcp", `{"servers":[`, 400, "invalid_json", ""},
		{"/wunder/user_tools/mcp", `{"servers":[}`, 400, "invalid_json", "malformed JSON"},
		{"/wunder/user_tools/mcp", ``, 400, "invalid_json", "empty"},
		{"/wunder/user_tools/mcp", `{}`, 400, "invalid_argument", "servers is required"},
		{"/wunder/user_tools/mcp", `{"servers":{}}`, 400, "invalid_json", "servers"},
		{"/wunder/user_tools/mcp", `{"servers":[],"sharedtools":[]}`, 400, "unknown_field", "sharedtools"},
		{"/wunder/user_tools/mcp", `{"servers":[{"name":"bad"}]}`, 400, "invalid_argument", "servers[0]: bad: refused"},
		{"/wunder/user_tools/mcp/tools", `[1]`, 400, "invalid_json", ""},
		{"/wunder/user_tools/mcp/tools", `{"user_id":7}`, 400, "invalid_json", "user_id"},
		{"/wunder/user_tools/extra_prompt", `{}`, 400, "invalid_argument", "extra_prompt is required"},
		{"/wunder/user_tools/extra_prompt", `{"extra_prompt":42}`, 400, "invalid_json", "extra_prompt"},
		{"/wunder/user_tools/extra_prompt", `{"extra_prompt":"far too long"}`, 400, "invalid_argument", "too long"},
	} {
		resp := e.do(t, "POST", c.path, c.body, bearer(alice)...)
		p := wantProblem(t, resp, c.status, c.code)
		if !strings.Contains(p.Detail, c.want) {
			t.Errorf("POST %s %s: detail %q, want %q", c.path, c.body, p.Detail, c.want)
		}
	}
	// Without the option there are no such routes.
	plain := newEnv(t, envOpts{})
	if resp := plain.do(t, "GET", "/wunder/user_tools/mcp?user_id=a", ""); resp.StatusCode != 404 {
		b, _ := io.ReadAll(resp.Body)
		t.Errorf("no UserTools: %d %s, want 404", resp.StatusCode, b)
	}
}
