package gateway_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/accounts/accountstest"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/memory"
	"github.com/wunder/wunder/memory/memorytest"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// memEnv is a gateway with accounts (alice, bob) over the real long-term
// memory on an in-memory store, each user with two records.
type memEnv struct {
	*authEnv
	alice, bob, admin []string
}

func newMemEnv(t *testing.T, enabled bool) *memEnv {
	t.Helper()
	st := memorytest.NewMemStore()
	mem := memory.New(st, nil, orchestratortest.Models{}, &memory.Options{Enabled: enabled, PollInterval: time.Hour})
	t.Cleanup(mem.Close)
	e := newEnv(t, envOpts{noModel: true, gw: gateway.Options{APIKey: adminKey, Memory: mem,
		Auth: gateway.AuthOptions{Accounts: accountstest.NewMemStore(), TokenTTL: time.Hour}}})
	ae := &authEnv{env: e}
	ae.addUser(t, "alice", "alice-password")
	ae.addUser(t, "bob", "bob-password!")
	now := time.Now().UTC()
	for _, u := range []string{"alice", "bob"} {
		if err := st.SetMemoryEnabled(t.Context(), u, true, now); err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"s1", "s2"} {
			if err := st.PutMemoryRecord(t.Context(), &memory.Record{ID: u + "-" + s, UserID: u, SessionID: s, Summary: u + " said " + s, CreatedAt: now, UpdatedAt: now}, 30); err != nil {
				t.Fatal(err)
			}
		}
	}
	return &memEnv{authEnv: ae, admin: []string{"X-API-Key", adminKey},
		alice: bearer(ae.login(t, "alice", "alice-password").Token), bob: bearer(ae.login(t, "bob", "bob-password!").Token)}
}

type recordsBody struct {
	UserID  string `json:"user_id"`
	Enabled bool   `json:"enabled"`
	Records []struct {
		SessionID string `json:"session_id"`
		Summary   string `json:"summary"`
	} `json:"records"`
}

func summaries(b recordsBody) string {
	var out []string
	for _, r := range b.Records {
		out = append(out, r.SessionID+"="+r.Summary)
	}
	return strings.Join(out, ",")
}

// A user reads and changes their own memory only; the admin routes are
// the admin's; a user naming another is refused, and the other's records
// stay as they were.
func TestMemoryRoutesIsolation(t *testing.T) {
	m := newMemEnv(t, true)
	got := decode[recordsBody](t, m.do(t, "GET", "/wunder/memory", "", m.alice...), 200)
	if got.UserID != "alice" || !strings.Contains(summaries(got), "s1=alice said s1") || strings.Contains(summaries(got), "bob") {
		t.Fatalf("alice's memory = %+v", got)
	}
	for _, rq := range []struct{ method, path, body string }{
		{"GET", "/wunder/memory?user_id=bob", ""},
		{"DELETE", "/wunder/memory?user_id=bob", ""},
		{"PUT", "/wunder/memory/enabled?user_id=bob", `{"enabled":false}`},
		{"PUT", "/wunder/memory/s1?user_id=bob", `{"summary":"alice wrote this"}`},
		{"DELETE", "/wunder/memory/s1?user_id=bob", ""},
		// The admin routes, with a user's token.
		{"GET", "/wunder/admin/memory/users", ""},
		{"GET", "/wunder/admin/memory/status", ""},
		{"GET", "/wunder/admin/memory/status/t1", ""},
		{"GET", "/wunder/admin/memory/bob", ""},
		{"DELETE", "/wunder/admin/memory/bob", ""},
		{"POST", "/wunder/admin/memory/bob/enabled", `{"enabled":false}`},
		{"PUT", "/wunder/admin/memory/bob/s1", `{"summary":"x"}`},
		{"DELETE", "/wunder/admin/memory/bob/s1", ""},
	} {
		wantProblem(t, m.do(t, rq.method, rq.path, rq.body, m.alice...), 403, "permission_denied")
	}
	got = decode[recordsBody](t, m.do(t, "GET", "/wunder/admin/memory/bob", "", m.admin...), 200)
	if summaries(got) != "s1=bob said s1,s2=bob said s2" && summaries(got) != "s2=bob said s2,s1=bob said s1" || !got.Enabled {
		t.Fatalf("bob's memory after alice's attempts = %+v", got)
	}
	// The admin names the user on the user routes, and must.
	wantProblem(t, m.do(t, "GET", "/wunder/memory", "", m.admin...), 400, "missing_user_id")
	if got := decode[recordsBody](t, m.do(t, "GET", "/wunder/memory?user_id=bob", "", m.admin...), 200); got.UserID != "bob" || len(got.Records) != 2 {
		t.Errorf("the admin reading bob's = %+v", got)
	}
	wantProblem(t, m.do(t, "GET", "/wunder/memory", ""), 401, "unauthenticated")
}

// Each change through the routes: edit a summary, delete one record,
// switch memory off, delete all; each refusal in the core's words.
func TestMemoryRoutesChanges(t *testing.T) {
	m := newMemEnv(t, true)
	decode[map[string]any](t, m.do(t, "PUT", "/wunder/memory/s1", `{"summary":"  edited  "}`, m.alice...), 200)
	got := decode[recordsBody](t, m.do(t, "GET", "/wunder/memory", "", m.alice...), 200)
	if !strings.Contains(summaries(got), "s1=edited") {
		t.Errorf("after the edit: %s", summaries(got))
	}
	wantProblem(t, m.do(t, "PUT", "/wunder/memory/s1", `{"summary":"   "}`, m.alice...), 400, "invalid_argument")
	wantProblem(t, m.do(t, "PUT", "/wunder/memory/s1", `{"summary":"`+strings.Repeat("x", 64<<10+1)+`"}`, m.alice...), 400, "invalid_argument")
	wantProblem(t, m.do(t, "PUT", "/wunder/memory/s1", `{"summary":7}`, m.alice...), 400, "invalid_json")
	wantProblem(t, m.do(t, "PUT", "/wunder/memory/s1", `{"text":"x"}`, m.alice...), 400, "unknown_field")

	del := decode[map[string]any](t, m.do(t, "DELETE", "/wunder/memory/s2", "", m.alice...), 200)
	if del["deleted"] != 1.0 {
		t.Errorf("delete s2 = %v", del)
	}
	wantProblem(t, m.do(t, "DELETE", "/wunder/memory/s2", "", m.alice...), 404, "not_found")

	for _, b := range []string{`{}`, `{"enabled":null}`, `{"enabled":"no"}`} {
		r := m.do(t, "PUT", "/wunder/memory/enabled", b, m.alice...)
		if r.StatusCode != http.StatusBadRequest {
			t.Errorf("enabled %s = %d; want 400", b, r.StatusCode)
		}
	}
	sw := decode[map[string]any](t, m.do(t, "PUT", "/wunder/memory/enabled", `{"enabled":false}`, m.alice...), 200)
	if sw["enabled"] != false || sw["user_id"] != "alice" {
		t.Errorf("switch = %v", sw)
	}
	if got := decode[recordsBody](t, m.do(t, "GET", "/wunder/memory", "", m.alice...), 200); got.Enabled {
		t.Error("memory still on after switching it off")
	}
	// The admin's view agrees, and the admin may switch it back.
	users := decode[struct{ Users []memory.User }](t, m.do(t, "GET", "/wunder/admin/memory/users", "", m.admin...), 200)
	states := map[string]bool{}
	for _, u := range users.Users {
		states[u.UserID] = u.Enabled
	}
	if on, ok := states["alice"]; !ok || on {
		t.Errorf("users = %+v; want alice switched off", users.Users)
	}
	decode[map[string]any](t, m.do(t, "POST", "/wunder/admin/memory/alice/enabled", `{"enabled":true}`, m.admin...), 200)

	all := decode[map[string]any](t, m.do(t, "DELETE", "/wunder/memory", "", m.alice...), 200)
	if all["deleted"] != 1.0 {
		t.Errorf("delete all = %v", all)
	}
	if got := decode[recordsBody](t, m.do(t, "GET", "/wunder/admin/memory/bob", "", m.admin...), 200); len(got.Records) != 2 {
		t.Errorf("alice's delete-all reached bob: %+v", got)
	}
	wantProblem(t, m.do(t, "GET", "/wunder/admin/memory/bad%01id", "", m.admin...), 400, "invalid_argument")
	// A session id of a form wunder never issues names no session.
	wantProblem(t, m.do(t, "PUT", "/wunder/memory/s%01", `{"summary":"x"}`, m.alice...), 404, "not_found")
}

// The status routes: the limit is bounded, an unknown task is not found,
// and the lists are arrays even when empty.
func TestMemoryStatusRoutes(t *testing.T) {
	m := newMemEnv(t, true)
	for _, q := range []string{"?limit=-1", "?limit=x"} {
		wantProblem(t, m.do(t, "GET", "/wunder/admin/memory/status"+q, "", m.admin...), 400, "invalid_argument")
	}
	got := decode[map[string]any](t, m.do(t, "GET", "/wunder/admin/memory/status?limit=100000&user_id=alice", "", m.admin...), 200)
	if _, ok := got["active"].([]any); !ok {
		t.Errorf("active = %v; want an array", got["active"])
	}
	if _, ok := got["history"].([]any); !ok {
		t.Errorf("history = %v; want an array", got["history"])
	}
	wantProblem(t, m.do(t, "GET", "/wunder/admin/memory/status/no-such-task", "", m.admin...), 404, "not_found")
}

// With memory off every route says so: 503, not an empty answer that
// looks like no memory.
func TestMemoryRoutesWhenOff(t *testing.T) {
	m := newMemEnv(t, false)
	for _, rq := range []struct{ method, path, body string }{
		{"GET", "/wunder/memory", ""},
		{"PUT", "/wunder/memory/s%01", `{"summary":"x"}`},
		{"GET", "/wunder/admin/memory/users", ""},
	} {
		hdr := m.alice
		if strings.Contains(rq.path, "admin") {
			hdr = m.admin
		}
		wantProblem(t, m.do(t, rq.method, rq.path, rq.body, hdr...), 503, "unavailable")
	}
}
