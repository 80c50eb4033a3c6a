package orchestrator

import (
	"context"
	"fmt"
	"slices"
)

// Identity: who calls. A front-end never decides this itself: the gateway's
// one authenticator turns a credential into a [Principal] on the context
// ([WithPrincipal]), and every front-end asks [ActingUser] which user a
// request acts for.
//
// The principal stays in the core, though the accounts it is made from
// are package accounts': every layer reads it (the front-ends, the
// approvals of the core, telemetry), and the core cannot import the
// package that keeps accounts. A principal is a credential's user id and
// roles, not an account.

// Roles of a user.
const (
	UserRoleAdmin = "admin"
	UserRoleUser  = "user"
)

// CredentialKind says what a principal presented.
type CredentialKind string

// Credential kinds.
const (
	// CredentialAPIKey is the admin API key (security.api_key).
	CredentialAPIKey CredentialKind = "api_key"
	// CredentialToken is an opaque user token (a login session or a named
	// API token).
	CredentialToken CredentialKind = "token"
	// CredentialJWT is a JWT of an external identity provider.
	CredentialJWT CredentialKind = "jwt"
	// CredentialAnonymous is no credential, allowed only where the server
	// runs without an API key (loopback by default): the local operator,
	// who acts for whichever user_id a request names.
	CredentialAnonymous CredentialKind = "anonymous"
)

// Principal is who a request acts as.
type Principal struct {
	// UserID is the user the credential belongs to; "" for the API key and
	// anonymous callers, who belong to no user.
	UserID string
	// Roles are the user's roles (UserRoleAdmin, UserRoleUser).
	Roles []string
	Kind  CredentialKind
	// TokenID is the id of the user token presented (Kind token), so that
	// logout can revoke it.
	TokenID string
}

// IsAdmin reports whether p may act for any user and see every user's
// resources: the API key, an admin's credential, and the anonymous local
// operator.
func (p *Principal) IsAdmin() bool {
	if p == nil {
		return false
	}
	return p.Kind == CredentialAPIKey || p.Kind == CredentialAnonymous || slices.Contains(p.Roles, UserRoleAdmin)
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal on ctx, if any.
func PrincipalFrom(ctx context.Context) (*Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(*Principal)
	return p, ok && p != nil
}

// ActingUser is THE rule of which user a request acts for, given the
// user_id it names (requested, "" when it names none). Every front-end
// calls it with what the request names:
//
//   - a user's credential pins the user: naming none or itself acts for
//     itself; naming another user is ErrPermissionDenied;
//   - an admin (the API key, an admin's credential, the anonymous local
//     operator) acts for the user it names, and "" means every user in
//     lookups and listings (a front-end that must start something for
//     one user asks for a user_id, or uses its configured default user);
//   - no principal at all is ErrUnauthenticated.
//
// The user id named is checked with [ValidateUserID] when not empty.
func ActingUser(ctx context.Context, requested string) (string, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return "", fmt.Errorf("%w: no credentials", ErrUnauthenticated)
	}
	if requested != "" {
		if err := ValidateUserID(requested); err != nil {
			return "", err
		}
	}
	if p.IsAdmin() {
		return requested, nil
	}
	if p.UserID == "" {
		return "", fmt.Errorf("%w: the credential names no user", ErrUnauthenticated)
	}
	if requested != "" && requested != p.UserID {
		return "", fmt.Errorf("%w: this credential acts for user %q only", ErrPermissionDenied, p.UserID)
	}
	return p.UserID, nil
}
