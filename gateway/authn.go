package gateway

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/wunder/wunder/accounts"
	"github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/auth"
	"github.com/wunder/wunder/internal/i18n"
	"github.com/wunder/wunder/orchestrator"
)

// The one authenticator (DESIGN 5a): an API key, a user token or — through
// a pluggable Verifier — a JWT becomes an orchestrator.Principal on the
// context. Every front-end reads that principal (orchestrator.ActingUser);
// none checks credentials its own way: /wunder/mcp is mounted behind it
// too (MountChallenged), and hands the principal to the MCP SDK.

// Verifier checks a bearer credential the authenticator does not know
// itself (a JWT of an external identity provider). It returns an error
// wrapping orchestrator.ErrUnauthenticated for a credential that is not
// valid.
type Verifier interface {
	Verify(ctx context.Context, raw string) (*orchestrator.Principal, error)
}

// Limiter decides whether key may make one more attempt now; internal/auth's
// token bucket implements it.
type Limiter interface {
	Allow(key string) (ok bool, retryAfter time.Duration)
}

// AuthOptions configure the authenticator; zero values mean the defaults
// stated.
type AuthOptions struct {
	// APIKey, when set, is the admin credential (X-API-Key or bearer).
	APIKey string
	// Accounts enables user tokens, login and the account routes; nil =
	// only the API key (and anonymous use) is accepted.
	Accounts accounts.Store
	// Verifier, when set, is asked about bearer credentials that are
	// neither the API key nor a wunder token (JWTs).
	Verifier Verifier
	// Anonymous lets requests without credentials through as the anonymous
	// principal (the local operator, who names user_id in requests). The
	// composition root sets it only when no API key is configured, which
	// start-up allows on loopback (or with allow_unauthenticated).
	Anonymous bool
	// TokenTTL is the lifetime of login sessions (auth.token_ttl_s).
	// Default 24h; at most MaxTokenTTL.
	TokenTTL time.Duration
	// MaxTokenTTL bounds the lifetime of every token issued
	// (auth.max_token_ttl_s): a named API token may ask for no more, and
	// gets it when it asks for none. Default a year.
	MaxTokenTTL time.Duration
	// AllowRegister opens POST /wunder/auth/register. Default false.
	AllowRegister bool
	// LoginLimiter limits login attempts per user id, its case folded
	// (auth.login.per_user); nil = 5 at once, then one a second.
	LoginLimiter Limiter
	// AddressLimiter limits logins and registrations per client address,
	// whatever user ids they name (auth.login.per_address); nil = 20 at
	// once, then one a second.
	AddressLimiter Limiter
	// Passwords hashes and checks passwords within a memory budget
	// (auth.password_hashing); nil = internal/auth's Hasher with 256 MiB
	// (four hashes at once) and a wait of 2s.
	Passwords PasswordHasher
	// UserIDs is the rule for the ids of new accounts; its zero value
	// reserves the built-in ids (the composition root adds
	// a2a.server.user_id and mcp.server.user_id). Credentials of an
	// identity provider naming an id the server uses are refused too.
	UserIDs UserIDRule
	// Now is the clock; nil = time.Now.
	Now func() time.Time
}

// PasswordHasher hashes and checks passwords; internal/auth's Hasher
// implements it. Check against "" (no such user, or no password) costs
// what a real check does. Both fail with an error wrapping auth.ErrBusy
// when the hashes in flight take the whole budget.
type PasswordHasher interface {
	Hash(ctx context.Context, pw string) (string, error)
	Check(ctx context.Context, encoded, pw string) (bool, error)
}

// Authenticator turns credentials into principals.
type Authenticator struct {
	o AuthOptions
	// challenges are the WWW-Authenticate values of 401s under some paths
	// (MountChallenged); set before serving, read-only after.
	challenges []pathChallenge
}

// pathChallenge is the WWW-Authenticate value of a 401 under path.
type pathChallenge struct {
	path  string
	value func(*http.Request) string
}

// Default limits of logins and hashing (AuthOptions); internal/config's
// defaults are the same.
const (
	defaultMaxTokenTTL    = 365 * 24 * time.Hour
	defaultHashMemory     = 256 << 20
	defaultHashWait       = 2 * time.Second
	loginRetryWhenHashing = time.Second // Retry-After when every hash is busy
)

// NewAuthenticator returns an authenticator with o.
func NewAuthenticator(o AuthOptions) *Authenticator {
	if o.MaxTokenTTL <= 0 {
		o.MaxTokenTTL = defaultMaxTokenTTL
	}
	if o.TokenTTL <= 0 {
		o.TokenTTL = 24 * time.Hour
	}
	o.TokenTTL = min(o.TokenTTL, o.MaxTokenTTL)
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.LoginLimiter == nil {
		o.LoginLimiter = auth.NewLimiter(1, 5).WithClock(o.Now)
	}
	if o.AddressLimiter == nil {
		o.AddressLimiter = auth.NewLimiter(1, 20).WithClock(o.Now)
	}
	if o.Passwords == nil {
		o.Passwords = auth.NewHasher(defaultHashMemory, defaultHashWait)
	}
	return &Authenticator{o: o}
}

// MountChallenged mounts h at path (a trailing "/" mounts the subtree)
// behind the authenticator, as Mount does, and a request there without
// valid credentials gets 401 with WWW-Authenticate set to challenge(r)
// instead of the gateway's own: MCP's pointer to its protected-resource
// metadata (RFC 9728). Call it before Handler.
func (s *Server) MountChallenged(path string, h http.Handler, challenge func(*http.Request) string) {
	s.Mount(path, h)
	s.auth.challenges = append(s.auth.challenges, pathChallenge{path: path, value: challenge})
}

// challenge is the WWW-Authenticate value of a 401 answering r.
func (a *Authenticator) challenge(r *http.Request) string {
	for _, c := range a.challenges {
		if isOpenPath([]string{c.path}, r.URL.Path) {
			return c.value(r)
		}
	}
	return `Bearer realm="wunder"`
}

// errBadCredential is the one answer for every credential that is not
// valid: malformed, unknown, expired, revoked or of a disabled user (they
// are not told apart).
var errBadCredential = fmt.Errorf("%w: the credentials are not valid (not the API key, or an unknown, expired or revoked token)", orchestrator.ErrUnauthenticated)

var errNoCredential = fmt.Errorf("%w: missing credentials: send a token or the API key as Authorization: Bearer (or X-API-Key)", orchestrator.ErrUnauthenticated)

// credential is what r presents: X-API-Key, else a bearer token.
func credential(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get("X-API-Key")); k != "" {
		return k
	}
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// Authenticate returns the principal of r: its credential's, else the
// anonymous principal where allowed. Errors wrap ErrUnauthenticated.
func (a *Authenticator) Authenticate(r *http.Request) (*orchestrator.Principal, error) {
	raw := credential(r)
	if raw == "" {
		if a.o.Anonymous {
			return &orchestrator.Principal{Kind: orchestrator.CredentialAnonymous}, nil
		}
		return nil, errNoCredential
	}
	return a.verifyBearer(r.Context(), raw)
}

// verifyBearer checks one credential: the API key (compared in constant
// time), a wunder token (by the hash of its secret: known, not expired,
// of an enabled user), else the Verifier.
func (a *Authenticator) verifyBearer(ctx context.Context, raw string) (*orchestrator.Principal, error) {
	if a.o.APIKey != "" && subtle.ConstantTimeCompare([]byte(raw), []byte(a.o.APIKey)) == 1 {
		return &orchestrator.Principal{Kind: orchestrator.CredentialAPIKey, Roles: []string{orchestrator.UserRoleAdmin}}, nil
	}
	if auth.LooksLikeToken(raw) && a.o.Accounts != nil {
		return a.userToken(ctx, raw)
	}
	if a.o.Verifier != nil && !strings.HasPrefix(raw, auth.TokenPrefix) {
		p, err := a.o.Verifier.Verify(ctx, raw)
		if err != nil {
			if errors.Is(err, orchestrator.ErrUnauthenticated) {
				return nil, errBadCredential
			}
			return nil, err
		}
		if p.UserID != "" && a.o.UserIDs.ServerOwned(p.UserID) {
			// The server's own traffic (A2A, MCP, load tests) stores data
			// under these ids; no identity provider's user may read it.
			return nil, fmt.Errorf("%w: the token names user %q, an id the server uses itself", orchestrator.ErrUnauthenticated, p.UserID)
		}
		if p.UserID != "" && a.o.Accounts != nil {
			// A JWT names a user; a disabled account is refused.
			if u, err := a.o.Accounts.GetUser(ctx, p.UserID); err == nil && u.Disabled {
				return nil, errBadCredential
			}
		}
		return p, nil
	}
	return nil, errBadCredential
}

func (a *Authenticator) userToken(ctx context.Context, raw string) (*orchestrator.Principal, error) {
	t, err := a.o.Accounts.TokenByHash(ctx, auth.HashToken(raw))
	if errors.Is(err, orchestrator.ErrNotFound) {
		return nil, errBadCredential
	}
	if err != nil {
		return nil, err
	}
	if t.Expired(a.o.Now()) {
		return nil, errBadCredential
	}
	u, err := a.o.Accounts.GetUser(ctx, t.UserID)
	if errors.Is(err, orchestrator.ErrNotFound) {
		return nil, errBadCredential
	}
	if err != nil {
		return nil, err
	}
	if u.Disabled {
		return nil, errBadCredential
	}
	return &orchestrator.Principal{UserID: u.ID, Roles: slices.Clone(u.Roles), Kind: orchestrator.CredentialToken, TokenID: t.ID}, nil
}

// authenticate is the middleware: it puts the principal on the context or
// answers 401 with WWW-Authenticate (problem JSON, the RPC protocol's
// UNAUTHENTICATED, or A2A's error in the shape of its binding). Open paths pass without credentials; one that presents
// a valid credential still gets its principal, and without credentials
// the anonymous principal where allowed.
func authenticate(a *Authenticator, open []string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			isOpen := isOpenPath(open, r.URL.Path) || r.Method == http.MethodOptions
			p, err := a.Authenticate(r)
			if err != nil && !isOpen {
				if !errors.Is(err, orchestrator.ErrUnauthenticated) {
					writeError(w, r, err)
					return
				}
				w.Header().Set("WWW-Authenticate", a.challenge(r))
				if isRPC(r) {
					writeRPCUnauthenticated(w, r, err.Error())
					return
				}
				detail := localize(r, i18n.FromContext(r.Context()), "unauthenticated", err.Error())
				if k, _ := a2awire.KindOf(err); writeA2AError(w, r, k.New(a2aVersion(r), detail, 0)) {
					return
				}
				writeProblem(w, r, http.StatusUnauthorized, "unauthenticated", err.Error())
				return
			}
			ctx := r.Context()
			if err == nil {
				ctx = orchestrator.WithPrincipal(ctx, p)
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// principal is the request's principal; a zero one (no rights) when none.
func principal(ctx context.Context) *orchestrator.Principal {
	if p, ok := orchestrator.PrincipalFrom(ctx); ok {
		return p
	}
	return &orchestrator.Principal{}
}

// scope returns the user id a request acts for, given the user_id it
// names (orchestrator.ActingUser).
func scope(r *http.Request, requested string) (string, error) {
	return orchestrator.ActingUser(r.Context(), requested)
}

// namedScope is scope for a route whose body may name the user: the
// body's user_id, else the query's ("" stays "" for an admin: any user).
// It writes the error and returns false when the request may not act for
// that user. (bodyScope, user_tools.go, also requires a user.)
func namedScope(w http.ResponseWriter, r *http.Request, bodyUser string) (string, bool) {
	if bodyUser == "" {
		bodyUser = r.URL.Query().Get("user_id")
	}
	userID, err := scope(r, bodyUser)
	if err != nil {
		writeError(w, r, err)
		return "", false
	}
	return userID, true
}

// ScopeOf is scope for front-ends mounted on the gateway that see only the
// request's context (the Connect API): orchestrator.ActingUser.
func ScopeOf(ctx context.Context, requested string) (string, error) {
	return orchestrator.ActingUser(ctx, requested)
}

// isOpenPath reports whether p is one of the open paths: equal to one, or
// under one that ends in "/" (a subtree whose handler authenticates
// itself, like the MCP pass-through routes /wunder/mcp/{server}).
func isOpenPath(open []string, p string) bool {
	for _, o := range open {
		// A trailing "/" opens the subtree, except "/" itself, which is
		// only the root (the console's redirect), never every path.
		if p == o || (len(o) > 1 && strings.HasSuffix(o, "/") && strings.HasPrefix(p, o)) {
			return true
		}
	}
	return false
}
