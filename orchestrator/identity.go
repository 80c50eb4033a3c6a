package orchestrator

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Identity: who calls. A front-end never decides this itself: the gateway's
// one authenticator turns a credential into a [Principal] on the context
// ([WithPrincipal]), and every front-end asks [ActingUser] which user a
// request acts for.

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

// User is an account.
type User struct {
	ID          string
	DisplayName string
	// Roles, e.g. [UserRoleUser] or [UserRoleAdmin]; never empty once stored
	// (front-ends default it to [UserRoleUser]).
	Roles []string
	// Disabled users cannot log in, and their tokens are refused.
	Disabled bool
	// PasswordHash is the encoded argon2id hash (internal/auth); "" means
	// the user cannot log in with a password (tokens only). It never
	// leaves the server, and changes only through AccountStore.SetPassword.
	PasswordHash string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// IsAdmin reports whether u has the admin role.
func (u *User) IsAdmin() bool { return u != nil && slices.Contains(u.Roles, UserRoleAdmin) }

// TokenKind tells login sessions from named API tokens.
type TokenKind string

// Token kinds.
const (
	// TokenSession is issued by login and revoked by logout; it expires
	// after auth.token_ttl_s.
	TokenSession TokenKind = "session"
	// TokenAPI is a named, long-lived token for agents and IDEs.
	TokenAPI TokenKind = "api"
)

// Token is a user's bearer token as stored: only the SHA-256 hash of the
// secret is kept.
type Token struct {
	// ID is the public id (listing, revocation); not the secret.
	ID string
	// Hash is the hex SHA-256 of the secret (internal/auth.HashToken).
	Hash   string
	UserID string
	Name   string
	Kind   TokenKind
	// ExpiresAt is when the token stops working; nil means never.
	ExpiresAt *time.Time
	CreatedAt time.Time
}

// Expired reports whether t has expired at now.
func (t *Token) Expired(now time.Time) bool {
	return t.ExpiresAt != nil && !now.Before(*t.ExpiresAt)
}

// AccountStore keeps users and their tokens. storage.Store and the
// in-memory store implement it; both pass
// orchestratortest.RunAccountStoreTests. Lookups by id return an error
// wrapping ErrNotFound when nothing matches.
//
// Account ids are unique ignoring case: the store keeps one account per
// [FoldUserID] key, enforced where it writes (a unique index), not by a
// check before the insert. A deleted account leaves a tombstone holding
// its key, so its id is never given to a new account: data stored under
// the id (sessions, runs, workspace files, tool configurations) is never
// inherited by whoever registers it next.
type AccountStore interface {
	// CreateUser adds a user; an id whose FoldUserID key is taken (by an
	// account, live or deleted) is ErrConflict. Zero times are set to now
	// and written back.
	CreateUser(ctx context.Context, u *User) error
	// GetUser returns the account with exactly this id; a deleted account
	// is ErrNotFound.
	GetUser(ctx context.Context, id string) (*User, error)
	// ListUsers returns the accounts (deleted ones left out) ordered by id;
	// a page After a [UserKey] reads only that page.
	ListUsers(ctx context.Context, page Page) ([]*User, error)
	// UpdateUser writes display name, roles, disabled and UpdatedAt (set to
	// now when zero). It never writes the password hash: that is
	// SetPassword's, which revokes the user's tokens with it.
	UpdateUser(ctx context.Context, u *User) error
	// SetPassword replaces the user's password hash and revokes every token
	// of theirs, in one transaction: after a password change or reset, no
	// session or API token issued before it works.
	SetPassword(ctx context.Context, userID, hash string) error
	// DeleteUser deletes the account and every token of theirs, and leaves
	// the tombstone that keeps the id from being reused.
	DeleteUser(ctx context.Context, id string) error

	// CreateToken stores a token; its user must exist (ErrNotFound).
	CreateToken(ctx context.Context, t *Token) error
	// TokenByHash finds a token by the hash of its secret, expired or not.
	TokenByHash(ctx context.Context, hash string) (*Token, error)
	// ListTokens returns a user's tokens, newest first.
	ListTokens(ctx context.Context, userID string) ([]*Token, error)
	// DeleteToken revokes the token id of userID ("" = of any user); a
	// token of another user is ErrNotFound.
	DeleteToken(ctx context.Context, userID, id string) error

	// GetToolAccess returns the user's tool rule, nil when none is set;
	// ErrNotFound when there is no such user.
	GetToolAccess(ctx context.Context, userID string) (*ToolAccess, error)
	// SetToolAccess sets (nil: clears) the user's tool rule.
	SetToolAccess(ctx context.Context, userID string, a *ToolAccess) error
}
