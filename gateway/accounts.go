package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wunder/wunder/internal/auth"
	"github.com/wunder/wunder/orchestrator"
)

// Account operations behind the /wunder/auth and /wunder/admin/user_accounts
// routes: the handlers decode and encode, these do the work.

var errBadLogin = fmt.Errorf("%w: wrong user id or password", orchestrator.ErrUnauthenticated)

// validRoles are the roles an account may have.
var validRoles = []string{orchestrator.UserRoleAdmin, orchestrator.UserRoleUser}

func checkRoles(roles []string) ([]string, error) {
	if len(roles) == 0 {
		return []string{orchestrator.UserRoleUser}, nil
	}
	for _, r := range roles {
		if !slices.Contains(validRoles, r) {
			return nil, fmt.Errorf("%w: role %q (want %q or %q)", orchestrator.ErrInvalidArgument, r, orchestrator.UserRoleAdmin, orchestrator.UserRoleUser)
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(roles))), nil
}

func checkPassword(pw string) error {
	switch {
	case len(pw) < 8:
		return fmt.Errorf("%w: password must be at least 8 bytes", orchestrator.ErrInvalidArgument)
	case len(pw) > auth.MaxPasswordBytes:
		return fmt.Errorf("%w: password longer than %d bytes", orchestrator.ErrInvalidArgument, auth.MaxPasswordBytes)
	}
	return nil
}

// createUser adds an account with a password.
func (a *Authenticator) createUser(ctx context.Context, id, displayName, password string, roles []string) (*orchestrator.User, error) {
	if err := orchestrator.ValidateUserID(id); err != nil {
		return nil, err
	}
	roles, err := checkRoles(roles)
	if err != nil {
		return nil, err
	}
	if err := checkPassword(password); err != nil {
		return nil, err
	}
	hash, err := auth.HashPassword(password)
	if err != nil {
		return nil, err
	}
	u := &orchestrator.User{ID: id, DisplayName: displayName, Roles: roles, PasswordHash: hash}
	if err := a.o.Accounts.CreateUser(ctx, u); err != nil {
		return nil, err
	}
	return u, nil
}

// login checks a user's password (rate-limited per user id; an unknown user
// costs the same as a wrong password) and issues a session token.
func (a *Authenticator) login(ctx context.Context, userID, password string) (string, *orchestrator.Token, *orchestrator.User, error) {
	if ok, after := a.o.LoginLimiter.Allow(userID); !ok {
		return "", nil, nil, orchestrator.WithRetryAfter(fmt.Errorf("%w: too many login attempts for this user; retry later", orchestrator.ErrBusy), after)
	}
	u, err := a.o.Accounts.GetUser(ctx, userID)
	if err != nil && !errors.Is(err, orchestrator.ErrNotFound) {
		return "", nil, nil, err
	}
	if u == nil {
		auth.DummyCheck(password)
		return "", nil, nil, errBadLogin
	}
	if !auth.CheckPassword(u.PasswordHash, password) || u.Disabled {
		return "", nil, nil, errBadLogin
	}
	exp := a.o.Now().Add(a.o.TokenTTL)
	secret, t, err := a.issue(ctx, u.ID, "login", orchestrator.TokenSession, &exp)
	return secret, t, u, err
}

// issue stores a new token of userID and returns its secret.
func (a *Authenticator) issue(ctx context.Context, userID, name string, kind orchestrator.TokenKind, exp *time.Time) (string, *orchestrator.Token, error) {
	secret, hash := auth.NewToken()
	t := &orchestrator.Token{ID: auth.NewID(), Hash: hash, UserID: userID, Name: name, Kind: kind, ExpiresAt: exp, CreatedAt: a.o.Now()}
	if err := a.o.Accounts.CreateToken(ctx, t); err != nil {
		return "", nil, err
	}
	return secret, t, nil
}
