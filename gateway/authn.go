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

	"github.com/wunder/wunder/internal/auth"
	"github.com/wunder/wunder/orchestrator"
)

// The one authenticator (DESIGN 5a): an API key, a user token or — through
// a pluggable Verifier — a JWT becomes an orchestrator.Principal on the
// context. Every front-end reads that principal (orchestrator.ActingUser);
// none checks credentials its own way. MCP's bearer check calls
// Authenticator.VerifyBearer, the same code.

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
	Accounts orchestrator.AccountStore
	// Verifier, when set, is asked about bearer credentials that are
	// neither the API key nor a wunder token (JWTs).
	Verifier Verifier
	// Anonymous lets requests without credentials through as the anonymous
	// principal (the local operator, who names user_id in requests). The
	// composition root sets it only when no API key is configured, which
	// start-up allows on loopback (or with allow_unauthenticated).
	Anonymous bool
	// TokenTTL is the lifetime of login sessions. Default 24h.
	TokenTTL time.Duration
	// AllowRegister opens POST /wunder/auth/register. Default false.
	AllowRegister bool
	// LoginLimiter limits login attempts per user id; nil = a built-in
	// limit of 5 failures, then one attempt per second per user id.
	LoginLimiter Limiter
	// Now is the clock; nil = time.Now.
	Now func() time.Time
}

// Authenticator turns credentials into principals.
type Authenticator struct {
	o AuthOptions
}

// NewAuthenticator returns an authenticator with o.
func NewAuthenticator(o AuthOptions) *Authenticator {
	if o.TokenTTL <= 0 {
		o.TokenTTL = 24 * time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.LoginLimiter == nil {
		// Five attempts at once, then one a second per user id.
		o.LoginLimiter = auth.NewLimiter(1, 5).WithClock(o.Now)
	}
	return &Authenticator{o: o}
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
	return a.VerifyBearer(r.Context(), raw)
}

// VerifyBearer checks one credential: the API key (compared in constant
// time), a wunder token (by the hash of its secret: known, not expired,
// of an enabled user), else the Verifier.
func (a *Authenticator) VerifyBearer(ctx context.Context, raw string) (*orchestrator.Principal, error) {
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
// answers 401 with WWW-Authenticate (problem JSON, or the RPC protocol's
// UNAUTHENTICATED). Open paths pass without credentials; one that presents
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
				w.Header().Set("WWW-Authenticate", `Bearer realm="wunder"`)
				if isRPC(r) {
					writeRPCUnauthenticated(w, r, err.Error())
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
