package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/accounts"
	"github.com/wunder/wunder/accounts/accountstest"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

type authEnv struct {
	*env
	clock *clock
	log   *bytes.Buffer
}

const adminKey = "k3y-admin"

func newAuthEnv(t *testing.T, register bool, turns ...orchestratortest.Turn) *authEnv {
	t.Helper()
	return newAuthEnvWith(t, func(o *gateway.AuthOptions) { o.AllowRegister = register }, turns...)
}

// newAuthEnvWith is newAuthEnv with the authenticator's options changed
// by mod (after the test's defaults: accounts in memory, a settable clock,
// login tokens of an hour).
func newAuthEnvWith(t *testing.T, mod func(*gateway.AuthOptions), turns ...orchestratortest.Turn) *authEnv {
	t.Helper()
	c := &clock{t: time.Now()}
	var logBuf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logBuf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ao := gateway.AuthOptions{Accounts: accountstest.NewMemStore(), TokenTTL: time.Hour, Now: c.now}
	mod(&ao)
	e := newEnv(t, envOpts{turns: turns, gw: gateway.Options{APIKey: adminKey, Logger: log, Auth: ao}})
	return &authEnv{env: e, clock: c, log: &logBuf}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func decode[T any](t *testing.T, r *http.Response, want int) T {
	t.Helper()
	var v T
	if r.StatusCode != want {
		var p map[string]any
		_ = json.NewDecoder(r.Body).Decode(&p)
		t.Fatalf("%s %s = %d %v; want %d", r.Request.Method, r.Request.URL.Path, r.StatusCode, p, want)
	}
	if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", r.Request.URL.Path, err)
	}
	return v
}

type loginResp struct {
	Token     string     `json:"token"`
	ExpiresAt *time.Time `json:"expires_at"`
	User      struct {
		UserID string   `json:"user_id"`
		Roles  []string `json:"roles"`
	} `json:"user"`
}

func (e *authEnv) addUser(t *testing.T, id, pw string, roles ...string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"user_id": id, "password": pw, "roles": roles})
	decode[map[string]any](t, e.do(t, "POST", "/wunder/admin/user_accounts", string(b), "X-API-Key", adminKey), 201)
}

func (e *authEnv) login(t *testing.T, id, pw string) loginResp {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"user_id": id, "password": pw})
	return decode[loginResp](t, e.do(t, "POST", "/wunder/auth/login", string(b)), 200)
}

func bearer(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

func TestLoginMeLogout(t *testing.T) {
	e := newAuthEnv(t, false)
	e.addUser(t, "alice", "alice-password")
	lr := e.login(t, "alice", "alice-password")
	if !strings.HasPrefix(lr.Token, "wdr_") || lr.User.UserID != "alice" || lr.ExpiresAt == nil ||
		!lr.ExpiresAt.Equal(e.clock.now().Add(time.Hour).Truncate(time.Microsecond)) || strings.Join(lr.User.Roles, ",") != "user" {
		t.Fatalf("login = %+v; want a wdr_ token expiring in 1h for alice with role user", lr)
	}
	me := decode[map[string]any](t, e.do(t, "GET", "/wunder/auth/me", "", bearer(lr.Token)...), 200)
	if me["user_id"] != "alice" || me["credential"] != "token" || me["admin"] != false {
		t.Fatalf("me = %v", me)
	}
	if r := e.do(t, "POST", "/wunder/auth/logout", "", bearer(lr.Token)...); r.StatusCode != 204 {
		t.Fatalf("logout = %d", r.StatusCode)
	}
	wantProblem(t, e.do(t, "GET", "/wunder/auth/me", "", bearer(lr.Token)...), 401, "unauthenticated")
	// The API key: an admin belonging to no user.
	me = decode[map[string]any](t, e.do(t, "GET", "/wunder/auth/me", "", "X-API-Key", adminKey), 200)
	if me["credential"] != "api_key" || me["admin"] != true {
		t.Fatalf("me with the key = %v", me)
	}
}

func TestTokenExpiry(t *testing.T) {
	e := newAuthEnv(t, false)
	e.addUser(t, "alice", "alice-password")
	lr := e.login(t, "alice", "alice-password")
	e.clock.add(time.Hour - time.Second)
	decode[map[string]any](t, e.do(t, "GET", "/wunder/auth/me", "", bearer(lr.Token)...), 200)
	e.clock.add(time.Second)
	r := e.do(t, "GET", "/wunder/auth/me", "", bearer(lr.Token)...)
	if r.Header.Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
	wantProblem(t, r, 401, "unauthenticated")
}

func TestAPITokensAndRevocation(t *testing.T) {
	e := newAuthEnv(t, false)
	e.addUser(t, "alice", "alice-password")
	e.addUser(t, "bob", "bob-password!")
	alice := e.login(t, "alice", "alice-password").Token
	bob := e.login(t, "bob", "bob-password!").Token
	created := decode[struct {
		Token, ID string
		ExpiresAt *time.Time `json:"expires_at"`
	}](t, e.do(t, "POST", "/wunder/auth/tokens", `{"name":"ide"}`, bearer(alice)...), 201)
	if year := e.clock.now().Add(365 * 24 * time.Hour).Truncate(time.Microsecond); !strings.HasPrefix(created.Token, "wdr_") ||
		created.ExpiresAt == nil || !created.ExpiresAt.Equal(year) {
		t.Fatalf("api token = %+v; want a wdr_ token expiring at %v, after auth.max_token_ttl_s (a year)", created, year)
	}
	decode[map[string]any](t, e.do(t, "GET", "/wunder/auth/me", "", bearer(created.Token)...), 200)
	list := decode[struct{ Tokens []map[string]any }](t, e.do(t, "GET", "/wunder/auth/tokens", "", bearer(alice)...), 200)
	if len(list.Tokens) != 2 {
		t.Fatalf("alice's tokens = %v; want the login and the api token", list.Tokens)
	}
	for _, tk := range list.Tokens {
		if _, ok := tk["token"]; ok {
			t.Errorf("listed token carries its secret: %v", tk)
		}
	}
	// Bob can neither list nor revoke alice's tokens.
	wantProblem(t, e.do(t, "GET", "/wunder/auth/tokens?user_id=alice", "", bearer(bob)...), 403, "permission_denied")
	wantProblem(t, e.do(t, "DELETE", "/wunder/auth/tokens/"+created.ID, "", bearer(bob)...), 404, "not_found")
	decode[map[string]any](t, e.do(t, "GET", "/wunder/auth/me", "", bearer(created.Token)...), 200)
	if r := e.do(t, "DELETE", "/wunder/auth/tokens/"+created.ID, "", bearer(alice)...); r.StatusCode != 204 {
		t.Fatalf("revoke own token = %d", r.StatusCode)
	}
	wantProblem(t, e.do(t, "GET", "/wunder/auth/me", "", bearer(created.Token)...), 401, "unauthenticated")
	// The admin key revokes anyone's.
	bobs := decode[struct{ Tokens []struct{ ID string } }](t, e.do(t, "GET", "/wunder/auth/tokens?user_id=bob", "", "X-API-Key", adminKey), 200)
	if len(bobs.Tokens) != 1 {
		t.Fatalf("bob's tokens as seen by the admin = %v", bobs)
	}
	if r := e.do(t, "DELETE", "/wunder/auth/tokens/"+bobs.Tokens[0].ID, "", "X-API-Key", adminKey); r.StatusCode != 204 {
		t.Fatalf("admin revoke = %d", r.StatusCode)
	}
	wantProblem(t, e.do(t, "GET", "/wunder/auth/me", "", bearer(bob)...), 401, "unauthenticated")
}

func TestDisabledUser(t *testing.T) {
	e := newAuthEnv(t, false)
	e.addUser(t, "alice", "alice-password")
	tok := e.login(t, "alice", "alice-password").Token
	decode[map[string]any](t, e.do(t, "PATCH", "/wunder/admin/user_accounts/alice", `{"disabled":true}`, "X-API-Key", adminKey), 200)
	wantProblem(t, e.do(t, "GET", "/wunder/auth/me", "", bearer(tok)...), 401, "unauthenticated")
	wantProblem(t, e.do(t, "POST", "/wunder/auth/login", `{"user_id":"alice","password":"alice-password"}`), 401, "unauthenticated")
	decode[map[string]any](t, e.do(t, "PATCH", "/wunder/admin/user_accounts/alice", `{"disabled":false}`, "X-API-Key", adminKey), 200)
	decode[map[string]any](t, e.do(t, "GET", "/wunder/auth/me", "", bearer(tok)...), 200)
}

func TestWrongPasswordsAndRateLimit(t *testing.T) {
	e := newAuthEnv(t, false)
	e.addUser(t, "alice", "alice-password")
	bad := func(body string) *http.Response { return e.do(t, "POST", "/wunder/auth/login", body) }
	// Wrong password and unknown user get the same answer.
	r1 := decode[map[string]any](t, bad(`{"user_id":"alice","password":"nope-nope"}`), 401)
	r2 := decode[map[string]any](t, bad(`{"user_id":"nobody","password":"nope-nope"}`), 401)
	if r1["detail"] != r2["detail"] {
		t.Errorf("wrong password %q and unknown user %q are told apart", r1["detail"], r2["detail"])
	}
	for range 4 {
		wantProblem(t, bad(`{"user_id":"alice","password":"nope-nope"}`), 401, "unauthenticated")
	}
	// The sixth attempt within the same second is refused, even with the
	// right password; another user is unaffected.
	r := bad(`{"user_id":"alice","password":"alice-password"}`)
	if r.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	wantProblem(t, r, 429, "busy")
	wantProblem(t, bad(`{"user_id":"carol","password":"nope-nope"}`), 401, "unauthenticated")
	e.clock.add(time.Second)
	e.login(t, "alice", "alice-password")
}

func TestMalformedCredentials(t *testing.T) {
	e := newAuthEnv(t, false)
	e.addUser(t, "alice", "alice-password")
	tok := e.login(t, "alice", "alice-password").Token
	for _, h := range [][]string{
		{"Authorization", "Bearer"},
		{"Authorization", "Bearer " + tok[:len(tok)-1]},
		{"Authorization", "Bearer " + tok + "x"},
		{"Authorization", "Bearer " + strings.ToUpper(tok)},
		{"Authorization", "Basic YWxpY2U6YWxpY2UtcGFzc3dvcmQ="},
		{"Authorization", "Bearer wdr_" + strings.Repeat("a", 52)},
		{"Authorization", "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9."},
		{"X-API-Key", adminKey + "x"},
	} {
		wantProblem(t, e.do(t, "GET", "/wunder/tools", "", h...), 401, "unauthenticated")
	}
}

func TestRegisterAndAdminRoutes(t *testing.T) {
	off := newAuthEnv(t, false)
	wantProblem(t, off.do(t, "POST", "/wunder/auth/register", `{"user_id":"eve","password":"eve-password"}`), 403, "permission_denied")
	e := newAuthEnv(t, true)
	decode[map[string]any](t, e.do(t, "POST", "/wunder/auth/register", `{"user_id":"eve","password":"eve-password"}`), 201)
	wantProblem(t, e.do(t, "POST", "/wunder/auth/register", `{"user_id":"eve","password":"eve-password"}`), 409, "conflict")
	wantProblem(t, e.do(t, "POST", "/wunder/auth/register", `{"user_id":"x/y","password":"eve-password"}`), 400, "invalid_argument")
	wantProblem(t, e.do(t, "POST", "/wunder/auth/register", `{"user_id":"short","password":"1234"}`), 400, "invalid_argument")
	eve := e.login(t, "eve", "eve-password").Token
	// A registered user is no admin.
	wantProblem(t, e.do(t, "GET", "/wunder/admin/user_accounts", "", bearer(eve)...), 403, "permission_denied")
	wantProblem(t, e.do(t, "POST", "/wunder/admin/user_accounts", `{"user_id":"x","password":"xxxxxxxx","roles":["admin"]}`, bearer(eve)...), 403, "permission_denied")
	// An admin user manages accounts.
	e.addUser(t, "ops", "ops-password", "admin")
	root := e.login(t, "ops", "ops-password").Token
	list := decode[struct{ Users []map[string]any }](t, e.do(t, "GET", "/wunder/admin/user_accounts", "", bearer(root)...), 200)
	if len(list.Users) != 2 {
		t.Fatalf("users = %v", list.Users)
	}
	for _, u := range list.Users {
		for k := range u {
			if strings.Contains(k, "password") {
				t.Errorf("user view has %q", k)
			}
		}
	}
	wantProblem(t, e.do(t, "POST", "/wunder/admin/user_accounts", `{"user_id":"z","password":"zzzzzzzz","roles":["god"]}`, bearer(root)...), 400, "invalid_argument")
	if r := e.do(t, "POST", "/wunder/admin/user_accounts/eve/password", `{"password":"new-eve-password"}`, bearer(root)...); r.StatusCode != 204 {
		t.Fatalf("set password = %d", r.StatusCode)
	}
	wantProblem(t, e.do(t, "POST", "/wunder/auth/login", `{"user_id":"eve","password":"eve-password"}`), 401, "unauthenticated")
	e.login(t, "eve", "new-eve-password")
	if r := e.do(t, "DELETE", "/wunder/admin/user_accounts/eve", "", bearer(root)...); r.StatusCode != 204 {
		t.Fatalf("delete user = %d", r.StatusCode)
	}
	wantProblem(t, e.do(t, "GET", "/wunder/auth/me", "", bearer(eve)...), 401, "unauthenticated")
	wantProblem(t, e.do(t, "DELETE", "/wunder/admin/user_accounts/eve", "", bearer(root)...), 404, "not_found")
}

// A user's token pins the user on the REST routes: user_id may be left
// out, naming another user is 403, another user's run is not found; the
// admin key reads any user's.
func TestUserPinnedOnREST(t *testing.T) {
	e := newAuthEnv(t, false, orchestratortest.Turn{Content: "for alice"})
	e.addUser(t, "alice", "alice-password")
	e.addUser(t, "bob", "bob-password")
	alice, bob := e.login(t, "alice", "alice-password").Token, e.login(t, "bob", "bob-password").Token
	run := decode[struct {
		RunID     string `json:"run_id"`
		SessionID string `json:"session_id"`
	}](t, e.do(t, "POST", "/wunder", `{"question":"hi","stream":false}`, bearer(alice)...), 200)
	wantProblem(t, e.do(t, "POST", "/wunder", `{"user_id":"alice","question":"hi","stream":false}`, bearer(bob)...), 403, "permission_denied")
	for _, path := range []string{"/wunder/runs/" + run.RunID, "/wunder/sessions/" + run.SessionID, "/wunder/runs/" + run.RunID + "/events"} {
		wantProblem(t, e.do(t, "GET", path, "", bearer(bob)...), 404, "not_found")
		wantProblem(t, e.do(t, "GET", path+"?user_id=alice", "", bearer(bob)...), 403, "permission_denied")
		if r := e.do(t, "GET", path, "", bearer(alice)...); r.StatusCode != 200 {
			t.Errorf("alice GET %s = %d", path, r.StatusCode)
		}
		if r := e.do(t, "GET", path, "", "X-API-Key", adminKey); r.StatusCode != 200 {
			t.Errorf("admin GET %s = %d", path, r.StatusCode)
		}
	}
	runs := decode[struct{ Runs []map[string]any }](t, e.do(t, "GET", "/wunder/runs", "", bearer(bob)...), 200)
	if len(runs.Runs) != 0 {
		t.Errorf("bob lists %d runs; want none of alice's", len(runs.Runs))
	}
	wantProblem(t, e.do(t, "DELETE", "/wunder/sessions/"+run.SessionID, "", bearer(bob)...), 404, "not_found")
}

// Passwords and token secrets never reach the log.
func TestSecretsNotLogged(t *testing.T) {
	e := newAuthEnv(t, false)
	e.addUser(t, "alice", "alice-password")
	tok := e.login(t, "alice", "alice-password").Token
	e.do(t, "GET", "/wunder/auth/me", "", bearer(tok)...)
	e.do(t, "POST", "/wunder/auth/login", `{"user_id":"alice","password":"wrong-password"}`)
	e.srv.Close()
	for _, secret := range []string{"alice-password", "wrong-password", tok, tok[4:20], adminKey} {
		if strings.Contains(e.log.String(), secret) {
			t.Errorf("the log contains the secret %q", secret)
		}
	}
	if !strings.Contains(e.log.String(), "/wunder/auth/login") {
		t.Error("the log has no access line for login; the check above proves nothing")
	}
}

// fakeVerifier stands in for the JWT verifier: it accepts "jwt-<user>".
type fakeVerifier struct{}

func (fakeVerifier) Verify(_ context.Context, raw string) (*orchestrator.Principal, error) {
	u, ok := strings.CutPrefix(raw, "jwt-")
	if !ok {
		return nil, fmt.Errorf("%w: not a jwt", orchestrator.ErrUnauthenticated)
	}
	return &orchestrator.Principal{UserID: u, Roles: []string{"user"}, Kind: orchestrator.CredentialJWT}, nil
}

// A pluggable verifier (JWTs later) is asked about credentials that are
// neither the key nor a wdr_ token, and its principals are pinned like
// tokens; a disabled account is refused even with a valid JWT.
func TestPluggableVerifier(t *testing.T) {
	accts := accountstest.NewMemStore()
	e := newEnv(t, envOpts{gw: gateway.Options{APIKey: adminKey, Auth: gateway.AuthOptions{Accounts: accts, Verifier: fakeVerifier{}}}})
	me := decode[map[string]any](t, e.do(t, "GET", "/wunder/auth/me", "", bearer("jwt-carol")...), 200)
	if me["user_id"] != "carol" || me["credential"] != "jwt" {
		t.Fatalf("me with a jwt = %v", me)
	}
	wantProblem(t, e.do(t, "GET", "/wunder/sessions?user_id=dave", "", bearer("jwt-carol")...), 403, "permission_denied")
	wantProblem(t, e.do(t, "GET", "/wunder/auth/me", "", bearer("not-a-jwt")...), 401, "unauthenticated")
	// A wdr_-prefixed credential is never handed to the verifier.
	wantProblem(t, e.do(t, "GET", "/wunder/auth/me", "", bearer("wdr_jwt-carol")...), 401, "unauthenticated")
	if err := accts.CreateUser(t.Context(), &accounts.User{ID: "carol", Roles: []string{"user"}, Disabled: true}); err != nil {
		t.Fatal(err)
	}
	wantProblem(t, e.do(t, "GET", "/wunder/auth/me", "", bearer("jwt-carol")...), 401, "unauthenticated")
}
