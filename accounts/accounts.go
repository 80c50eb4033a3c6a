// Package accounts keeps wunder's user accounts and their bearer tokens:
// [User], [Token] and the [Store] that keeps them (storage implements it;
// accountstest.RunStoreTests is its contract). The gateway's authenticator
// turns a token or a password into an orchestrator.Principal with them;
// the admin and auth routes manage them; cmd/wunder backs the core's
// per-user tool rules (orchestrator.ToolAccessSource) and admin check
// (orchestrator.AdminSource) with the same store.
//
// The core keeps what every layer shares and it needs itself: the
// [orchestrator.Principal] on a request's context, the roles
// (orchestrator.UserRoleAdmin), the user id rules
// (orchestrator.ValidateUserID, orchestrator.FoldUserID) and the tool rule
// (orchestrator.ToolAccess) its policy applies. Moving those here would
// make the core import this package; they stay there, and this package
// imports the core.
package accounts

import (
	"context"
	"slices"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// User is an account.
type User struct {
	ID          string
	DisplayName string
	// Roles, e.g. [orchestrator.UserRoleUser] or
	// [orchestrator.UserRoleAdmin]; never empty once stored (front-ends
	// default it to [orchestrator.UserRoleUser]).
	Roles []string
	// Disabled users cannot log in, and their tokens are refused.
	Disabled bool
	// PasswordHash is the encoded argon2id hash (internal/auth); "" means
	// the user cannot log in with a password (tokens only). It never
	// leaves the server, and changes only through Store.SetPassword.
	PasswordHash string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// IsAdmin reports whether u has the admin role.
func (u *User) IsAdmin() bool {
	return u != nil && slices.Contains(u.Roles, orchestrator.UserRoleAdmin)
}

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

// Store keeps users and their tokens. storage.Store and the in-memory
// store implement it; both pass accountstest.RunStoreTests. Lookups by id
// return an error wrapping orchestrator.ErrNotFound when nothing matches.
//
// Account ids are unique ignoring case: the store keeps one account per
// [orchestrator.FoldUserID] key, enforced where it writes (a unique
// index), not by a check before the insert. A deleted account leaves a tombstone holding
// its key, so its id is never given to a new account: data stored under
// the id (sessions, runs, workspace files, tool configurations) is never
// inherited by whoever registers it next.
type Store interface {
	// CreateUser adds a user; an id whose orchestrator.FoldUserID key is
	// taken (by an account, live or deleted) is orchestrator.ErrConflict.
	// Zero times are set to now and written back.
	CreateUser(ctx context.Context, u *User) error
	// GetUser returns the account with exactly this id; a deleted account
	// is orchestrator.ErrNotFound.
	GetUser(ctx context.Context, id string) (*User, error)
	// ListUsers returns the accounts (deleted ones left out) ordered by id;
	// a page After a [UserKey] reads only that page.
	ListUsers(ctx context.Context, page orchestrator.Page) ([]*User, error)
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

	// CreateToken stores a token; its user must exist
	// (orchestrator.ErrNotFound).
	CreateToken(ctx context.Context, t *Token) error
	// TokenByHash finds a token by the hash of its secret, expired or not.
	TokenByHash(ctx context.Context, hash string) (*Token, error)
	// ListTokens returns a user's tokens, newest first.
	ListTokens(ctx context.Context, userID string) ([]*Token, error)
	// DeleteToken revokes the token id of userID ("" = of any user); a
	// token of another user is orchestrator.ErrNotFound.
	DeleteToken(ctx context.Context, userID, id string) error

	// GetToolAccess returns the user's tool rule, nil when none is set;
	// orchestrator.ErrNotFound when there is no such user.
	GetToolAccess(ctx context.Context, userID string) (*orchestrator.ToolAccess, error)
	// SetToolAccess sets (nil: clears) the user's tool rule.
	SetToolAccess(ctx context.Context, userID string, a *orchestrator.ToolAccess) error
}

// UserKey is where a listing of users goes on after u.
func UserKey(u *User) *orchestrator.PageKey { return &orchestrator.PageKey{ID: u.ID} }
