package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/accounts/accountstest"
	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/auth"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// The hostile cases of issue 35 around identity, on the gateway: ids that
// look like others, ids the server uses, reused ids, tokens outliving a
// password, token lifetimes, and logins that cost a hash.

func TestUserIDRule(t *testing.T) {
	rule := gateway.NewUserIDRule("mcp-user", "a2a")
	accepted := map[string]string{
		"alice":                   "alice",
		"Alice":                   "alice",
		"ＡＬＩＣＥ":                   "alice", // fullwidth: NFKC
		"ﬁona":                    "fiona", // a ligature
		"e\u0301mile":             "émile", // composed
		"STRAẞE":                  "straße",
		"Σοφία":                   "σοφία",
		"alice.b-c_d.example.org": "alice.b-c_d.example.org",
		"小明":                      "小明",
		"zhang三":                  "zhang三",
		"たなか太郎":                   "たなか太郎",
		"user42":                  "user42",
		"42":                      "42",
		"rooted":                  "rooted",
		"admins":                  "admins",
	}
	for in, want := range accepted {
		got, err := rule.Check(in)
		if err != nil || got != want {
			t.Errorf("Check(%q) = %q, %v; want %q", in, got, err, want)
			continue
		}
		// The normal form is its own case fold: the key the store keeps
		// ids unique by is the id itself.
		if k := orchestrator.FoldUserID(got); k != got {
			t.Errorf("FoldUserID(%q) = %q; a new id must be its own key", got, k)
		}
	}
	refused := map[string]string{
		"":                           "required",
		" alice":                     "must start with a letter or digit",
		"alice ":                     "contains a space",
		"al ice":                     "contains a space",
		"alice\u200b":                "invisible character U+200B",
		"\u200balice":                "must start with a letter or digit",
		"ali\u202ece":                "invisible character U+202E",
		"ali\tce":                    "contains a space",
		"ali\x07ce":                  "invisible character U+0007",
		"a/b":                        `contains '/'`,
		"..":                         "must start with a letter or digit",
		"alice.":                     "must end with a letter or digit",
		"-alice":                     "must start with a letter or digit",
		"alice!":                     `contains '!'`,
		"alice@srv":                  `contains '@'`, // alice@srv@echo would be alice's tool
		"bob@example.org":            `contains '@'`,
		"\u0430lice":                 "mixes the scripts Cyrillic, Latin", // Cyrillic а
		"p\u0430ypal":                "mixes the scripts Cyrillic, Latin",
		"\xffalice":                  "not valid UTF-8",
		strings.Repeat("a", 129):     "longer than 128 bytes",
		strings.Repeat("ａ", 129):     "longer than 128 bytes", // 387 bytes as sent, 129 once normal
		"a2a":                        "reserved",
		"A2A":                        "reserved",
		"wunder":                     "reserved",
		"Wunder":                     "reserved",
		"admin":                      "reserved",
		"ADMIN":                      "reserved",
		"system":                     "reserved",
		"root":                       "reserved",
		"anonymous":                  "reserved",
		"wunder-eval-x-1":            "reserved",
		"wunder-throughput-3":        "reserved",
		"bench-1":                    "reserved",
		"mcp-user":                   "reserved",
		"MCP-User":                   "reserved",
		strings.Repeat("x", 100_000): "longer than 128 bytes",
	}
	for in, want := range refused {
		got, err := rule.Check(in)
		if !errors.Is(err, orchestrator.ErrInvalidArgument) || !strings.Contains(err.Error(), want) {
			t.Errorf("Check(%.40q) = %q, %v; want ErrInvalidArgument saying %q", in, got, err, want)
		}
	}
	for id, want := range map[string]bool{"a2a": true, "A2A": true, "wunder": true, "wunder-eval-1-c": true, "bench-3": true,
		"mcp-user": true, "admin": false, "alice": false, "benchmark": false} {
		if got := rule.ServerOwned(id); got != want {
			t.Errorf("ServerOwned(%q) = %v; want %v", id, got, want)
		}
	}
}

// Look-alikes of an account are refused at registration, and the account
// is reached under its normal form whichever way its id is typed.
func TestLookalikeIDsAreOneAccount(t *testing.T) {
	e := newAuthEnv(t, true)
	reg := func(id string) *http.Response {
		b, _ := json.Marshal(map[string]string{"user_id": id, "password": "a-password"})
		return e.do(t, "POST", "/wunder/auth/register", string(b))
	}
	created := decode[struct {
		User struct {
			UserID string `json:"user_id"`
		}
	}](t, reg("Alice"), 201)
	if created.User.UserID != "alice" {
		t.Fatalf("registered %q; want the normal form alice", created.User.UserID)
	}
	for _, id := range []string{"alice", "ALICE", "ａｌｉｃｅ"} {
		wantProblem(t, reg(id), 409, "conflict")
	}
	for _, id := range []string{"alice\u200b", " alice", "alice ", "\u0430lice"} {
		wantProblem(t, reg(id), 400, "invalid_argument")
	}
	for _, typed := range []string{"alice", "Alice", "ＡＬＩＣＥ"} {
		if got := e.login(t, typed, "a-password"); got.User.UserID != "alice" {
			t.Errorf("login as %q = %q; want alice", typed, got.User.UserID)
		}
	}
}

// The ids the server acts as (A2A's and MCP's default users, its load
// tests') and names passing for it are refused, at registration and at
// admin creation alike.
func TestReservedIDsRefused(t *testing.T) {
	e := newAuthEnvWith(t, func(o *gateway.AuthOptions) {
		o.AllowRegister = true
		o.UserIDs = gateway.NewUserIDRule("a2a-agents")
	})
	for _, id := range []string{"a2a", "wunder", "A2A", "admin", "system", "root", "anonymous", "wunder-eval-1", "a2a-agents"} {
		b, _ := json.Marshal(map[string]string{"user_id": id, "password": "a-password"})
		p := wantProblem(t, e.do(t, "POST", "/wunder/auth/register", string(b)), 400, "invalid_argument")
		if !strings.Contains(p.Detail, "reserved") {
			t.Errorf("register %q: %q; want it called reserved", id, p.Detail)
		}
		wantProblem(t, e.do(t, "POST", "/wunder/admin/user_accounts", string(b), "X-API-Key", adminKey), 400, "invalid_argument")
	}
}

// A deleted account's id stays taken, in every case: whoever registers it
// next would inherit the sessions, runs and files stored under it.
func TestDeletedIDNotReused(t *testing.T) {
	e := newAuthEnv(t, true, orchestratortest.Turn{Content: "bob's answer"})
	e.addUser(t, "bob", "bob-password")
	tok := e.login(t, "bob", "bob-password").Token
	decode[map[string]any](t, e.do(t, "POST", "/wunder", `{"question":"hi","stream":false}`, bearer(tok)...), 200)
	if r := e.do(t, "DELETE", "/wunder/admin/user_accounts/bob", "", "X-API-Key", adminKey); r.StatusCode != 204 {
		t.Fatalf("delete bob = %d", r.StatusCode)
	}
	wantProblem(t, e.do(t, "GET", "/wunder/auth/me", "", bearer(tok)...), 401, "unauthenticated")
	for _, id := range []string{"bob", "Bob"} {
		body := `{"user_id":"` + id + `","password":"new-bob-password"}`
		p := wantProblem(t, e.do(t, "POST", "/wunder/auth/register", body), 409, "conflict")
		if !strings.Contains(p.Detail, "not reused") {
			t.Errorf("register %s after bob was deleted: %q; want it to say ids are not reused", id, p.Detail)
		}
		wantProblem(t, e.do(t, "POST", "/wunder/admin/user_accounts", body, "X-API-Key", adminKey), 409, "conflict")
	}
	wantProblem(t, e.do(t, "POST", "/wunder/auth/login", `{"user_id":"bob","password":"bob-password"}`), 401, "unauthenticated")
	// bob's data is still there for the admin, who can delete it.
	sessions := decode[struct{ Sessions []map[string]any }](t, e.do(t, "GET", "/wunder/sessions?user_id=bob", "", "X-API-Key", adminKey), 200)
	if len(sessions.Sessions) != 1 {
		t.Errorf("bob's sessions after the account went = %d; want 1, kept for the admin", len(sessions.Sessions))
	}
}

// A password reset ends every session and API token of the user, and no
// one else's.
func TestPasswordResetRevokesTokens(t *testing.T) {
	e := newAuthEnv(t, false)
	e.addUser(t, "alice", "alice-password")
	e.addUser(t, "bob", "bob-password")
	login := e.login(t, "alice", "alice-password").Token
	api := decode[struct{ Token string }](t, e.do(t, "POST", "/wunder/auth/tokens", `{"name":"ide"}`, bearer(login)...), 201).Token
	bob := e.login(t, "bob", "bob-password").Token
	if r := e.do(t, "POST", "/wunder/admin/user_accounts/alice/password", `{"password":"new-alice-password"}`, "X-API-Key", adminKey); r.StatusCode != 204 {
		t.Fatalf("reset = %d", r.StatusCode)
	}
	for name, tok := range map[string]string{"login token": login, "API token": api} {
		r := e.do(t, "GET", "/wunder/auth/me", "", bearer(tok)...)
		if r.StatusCode != 401 {
			t.Errorf("alice's %s after the reset = %d; want 401", name, r.StatusCode)
		}
	}
	decode[map[string]any](t, e.do(t, "GET", "/wunder/auth/me", "", bearer(bob)...), 200)
	e.login(t, "alice", "new-alice-password")
	wantProblem(t, e.do(t, "POST", "/wunder/admin/user_accounts/nobody/password", `{"password":"a-password"}`, "X-API-Key", adminKey), 404, "not_found")
}

// A token's lifetime is bounded: more than the maximum is 400 naming it
// and its key, never an overflow into a date in the past.
func TestTokenTTLBounded(t *testing.T) {
	e := newAuthEnvWith(t, func(o *gateway.AuthOptions) { o.MaxTokenTTL = 30 * 24 * time.Hour })
	e.addUser(t, "alice", "alice-password")
	tok := e.login(t, "alice", "alice-password").Token
	for _, ttl := range []string{"1000000000000000000", "9223372036854775807", "2592001", "-1"} {
		p := wantProblem(t, e.do(t, "POST", "/wunder/auth/tokens", `{"name":"x","ttl_s":`+ttl+`}`, bearer(tok)...), 400, "invalid_argument")
		if !strings.Contains(p.Detail, "auth.max_token_ttl_s") || !strings.Contains(p.Detail, "2592000") {
			t.Errorf("ttl_s %s: %q; want the maximum 2592000 and its key", ttl, p.Detail)
		}
	}
	wantProblem(t, e.do(t, "POST", "/wunder/auth/tokens", `{"name":"x","ttl_s":1e18}`, bearer(tok)...), 400, "invalid_json") // not an integer
	for ttl, want := range map[string]time.Duration{`,"ttl_s":2592000`: 30 * 24 * time.Hour, `,"ttl_s":60`: time.Minute, ``: 30 * 24 * time.Hour} {
		got := decode[struct {
			ExpiresAt *time.Time `json:"expires_at"`
		}](t, e.do(t, "POST", "/wunder/auth/tokens", `{"name":"x"`+ttl+`}`, bearer(tok)...), 201)
		if w := e.clock.now().Add(want).Truncate(time.Microsecond); got.ExpiresAt == nil || !got.ExpiresAt.Equal(w) {
			t.Errorf("token with %q expires at %v; want %v", ttl, got.ExpiresAt, w)
		}
	}
}

// recordingHasher records what each password check is asked to check
// against, then does it.
type recordingHasher struct {
	gateway.PasswordHasher
	mu     sync.Mutex
	checks []string // the encoded hashes
}

func (r *recordingHasher) Check(ctx context.Context, encoded, pw string) (bool, error) {
	r.mu.Lock()
	r.checks = append(r.checks, encoded)
	r.mu.Unlock()
	return r.PasswordHasher.Check(ctx, encoded, pw)
}

func (r *recordingHasher) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.checks
	r.checks = nil
	return out
}

// A login naming no account is checked by the hasher exactly as one with
// a wrong password is, against no hash (which costs a real derivation:
// internal/auth's TestCheckWithoutHashDerivesLikeARealOne), and gets the
// same answer. The timing equality comes from this mechanism; a test of
// timings would be flaky and prove less.
func TestLoginUnknownIDCostsAHash(t *testing.T) {
	rec := &recordingHasher{PasswordHasher: auth.NewHasher(auth.MemoryPerHash, time.Second)}
	e := newAuthEnvWith(t, func(o *gateway.AuthOptions) { o.Passwords = rec })
	e.addUser(t, "alice", "alice-password")
	rec.take()
	known := wantProblem(t, e.do(t, "POST", "/wunder/auth/login", `{"user_id":"alice","password":"wrong-password"}`), 401, "unauthenticated")
	if c := rec.take(); len(c) != 1 || !strings.HasPrefix(c[0], "$argon2id$") {
		t.Fatalf("a known id's wrong password checked %q; want once against alice's hash", c)
	}
	unknown := wantProblem(t, e.do(t, "POST", "/wunder/auth/login", `{"user_id":"nobody","password":"wrong-password"}`), 401, "unauthenticated")
	if c := rec.take(); len(c) != 1 || c[0] != "" {
		t.Fatalf("an unknown id checked %q; want once, against no hash", c)
	}
	if known.Detail != unknown.Detail {
		t.Errorf("answers differ: %q for a known id, %q for an unknown one", known.Detail, unknown.Detail)
	}
}

// busyHasher finds every hash busy.
type busyHasher struct{}

func (busyHasher) Hash(context.Context, string) (string, error) { return "", auth.ErrBusy }
func (busyHasher) Check(context.Context, string, string) (bool, error) {
	return false, fmt.Errorf("checking: %w", auth.ErrBusy)
}

// With every hash busy, a login or registration gets 503 with Retry-After
// naming the limit's keys, not a hang.
func TestLoginWhileHashingIsFull(t *testing.T) {
	e := newAuthEnvWith(t, func(o *gateway.AuthOptions) { o.Passwords = busyHasher{}; o.AllowRegister = true })
	for _, req := range [][2]string{
		{"/wunder/auth/login", `{"user_id":"alice","password":"alice-password"}`},
		{"/wunder/auth/register", `{"user_id":"carol","password":"carol-password"}`},
	} {
		r := e.do(t, "POST", req[0], req[1])
		if r.Header.Get("Retry-After") == "" {
			t.Errorf("%s: 503 without Retry-After", req[0])
		}
		p := wantProblem(t, r, 503, "unavailable")
		if !strings.Contains(p.Detail, "auth.password_hashing.max_memory_mb") {
			t.Errorf("%s: %q; want the limit's key", req[0], p.Detail)
		}
	}
}

// Attempts on one account count together whatever the case of its id, and
// one address spraying many ids is throttled across them.
func TestLoginThrottles(t *testing.T) {
	e := newAuthEnv(t, false)
	e.addUser(t, "alice", "alice-password")
	for _, id := range []string{"alice", "Alice", "ALICE", "aLICE", "alicE"} {
		wantProblem(t, e.do(t, "POST", "/wunder/auth/login", `{"user_id":"`+id+`","password":"wrong-password"}`), 401, "unauthenticated")
	}
	p := wantProblem(t, e.do(t, "POST", "/wunder/auth/login", `{"user_id":"alice","password":"alice-password"}`), 429, "busy")
	if !strings.Contains(p.Detail, "auth.login.per_user") {
		t.Errorf("per-user refusal %q; want its key", p.Detail)
	}
	// The address has spent 6 of its 20; 14 more ids, then it is refused
	// on an id it never tried.
	for i := range 14 {
		wantProblem(t, e.do(t, "POST", "/wunder/auth/login", fmt.Sprintf(`{"user_id":"user%d","password":"wrong-password"}`, i)), 401, "unauthenticated")
	}
	r := e.do(t, "POST", "/wunder/auth/login", `{"user_id":"fresh","password":"wrong-password"}`)
	if r.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	p = wantProblem(t, r, 429, "busy")
	if !strings.Contains(p.Detail, "auth.login.per_address") {
		t.Errorf("per-address refusal %q; want its key", p.Detail)
	}
	e.clock.add(time.Second)
	wantProblem(t, e.do(t, "POST", "/wunder/auth/login", `{"user_id":"fresh","password":"wrong-password"}`), 401, "unauthenticated")
}

// An identity provider's token naming an id the server uses is refused:
// it would read what A2A and MCP traffic stored there.
func TestJWTNamingServerIDRefused(t *testing.T) {
	e := newEnv(t, envOpts{gw: gateway.Options{APIKey: adminKey, Auth: gateway.AuthOptions{Accounts: accountstest.NewMemStore(),
		Verifier: fakeVerifier{}, UserIDs: gateway.NewUserIDRule("mcp-user")}}})
	for _, id := range []string{"a2a", "wunder", "wunder-throughput-1", "mcp-user"} {
		wantProblem(t, e.do(t, "GET", "/wunder/auth/me", "", bearer("jwt-"+id)...), 401, "unauthenticated")
	}
	decode[map[string]any](t, e.do(t, "GET", "/wunder/auth/me", "", bearer("jwt-admin")...), 200)
}

// A path mounted with a challenge answers a request without valid
// credentials with it (MCP's RFC 9728 pointer); other paths keep the
// gateway's.
func TestMountChallenged(t *testing.T) {
	gw := gateway.New(orchestrator.New(orchestratortest.NewMemStore(), orchestratortest.Models{}, orchestrator.NewRegistry("", nil), nil),
		&gateway.Options{APIKey: adminKey})
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	gw.MountChallenged("/x/mcp", ok, func(r *http.Request) string { return `Bearer resource_metadata="http://` + r.Host + `/meta"` })
	gw.MountChallenged("/x/mcp/", ok, func(*http.Request) string { return `Bearer resource_metadata="sub"` })
	srv := &env{srv: httptest.NewServer(gw.Handler())}
	t.Cleanup(srv.srv.Close)
	for path, want := range map[string]string{"/x/mcp": `resource_metadata="http://`, "/x/mcp/up": `resource_metadata="sub"`, "/wunder/tools": `realm="wunder"`} {
		for _, hdr := range [][]string{nil, {"X-API-Key", "wrong"}, {"Authorization", "Bearer wrong"}} {
			r := srv.do(t, "POST", path, "{}", hdr...)
			if r.StatusCode != 401 || !strings.Contains(r.Header.Get("WWW-Authenticate"), want) {
				t.Errorf("POST %s %v = %d %q; want 401 with %s", path, hdr, r.StatusCode, r.Header.Get("WWW-Authenticate"), want)
			}
		}
	}
	for _, hdr := range [][]string{{"X-API-Key", adminKey}, {"Authorization", "Bearer " + adminKey}} {
		if r := srv.do(t, "POST", "/x/mcp", "{}", hdr...); r.StatusCode != http.StatusTeapot {
			t.Errorf("POST /x/mcp with %s = %d; want the handler's answer", hdr[0], r.StatusCode)
		}
	}
}
