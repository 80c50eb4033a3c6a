package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wunder/wunder/accounts"
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

// createUser adds an account with a password; its id is held to the rule
// for new ids (userid.go) and stored in its normal form.
func (a *Authenticator) createUser(ctx context.Context, id, displayName, password string, roles []string) (*accounts.User, error) {
	id, err := a.o.UserIDs.Check(id)
	if err != nil {
		return nil, err
	}
	roles, err = checkRoles(roles)
	if err != nil {
		return nil, err
	}
	if err := checkPassword(password); err != nil {
		return nil, err
	}
	hash, err := a.hash(ctx, password)
	if err != nil {
		return nil, err
	}
	u := &accounts.User{ID: id, DisplayName: displayName, Roles: roles, PasswordHash: hash}
	if err := a.o.Accounts.CreateUser(ctx, u); err != nil {
		return nil, err
	}
	return u, nil
}

// login checks a user's password and issues a session token. Before any
// hashing it counts the attempt against the client's address (across user
// ids: password spraying) and against the user id, its case folded
// (guessing one account's password); either refusal is 429. An unknown id
// costs one hash, as a known one does, and gets the same answer.
func (a *Authenticator) login(ctx context.Context, addr, userID, password string) (string, *accounts.Token, *accounts.User, error) {
	if err := orchestrator.ValidateUserID(userID); err != nil {
		return "", nil, nil, err
	}
	if ok, after := a.o.AddressLimiter.Allow("login:" + addr); !ok {
		return "", nil, nil, orchestrator.WithRetryAfter(fmt.Errorf("%w: too many login attempts from this address (auth.login.per_address); retry later", orchestrator.ErrBusy), after)
	}
	if ok, after := a.o.LoginLimiter.Allow(orchestrator.FoldUserID(userID)); !ok {
		return "", nil, nil, orchestrator.WithRetryAfter(fmt.Errorf("%w: too many login attempts for this user (auth.login.per_user); retry later", orchestrator.ErrBusy), after)
	}
	u, err := a.findUser(ctx, userID)
	if err != nil {
		return "", nil, nil, err
	}
	var stored string // no such user: checked against no hash, at the same cost
	if u != nil {
		stored = u.PasswordHash
	}
	ok, err := a.o.Passwords.Check(ctx, stored, password)
	if err != nil {
		return "", nil, nil, hashErr(err)
	}
	if !ok || u == nil || u.Disabled {
		return "", nil, nil, errBadLogin
	}
	exp := a.o.Now().Add(a.o.TokenTTL)
	secret, t, err := a.issue(ctx, u.ID, "login", accounts.TokenSession, &exp)
	return secret, t, u, err
}

// findUser is the account a login names: the id as typed (an account made
// before ids were normalised keeps its exact id), else its normal form, so
// "Alice" logs in to the account "alice". Nil when there is none.
func (a *Authenticator) findUser(ctx context.Context, userID string) (*accounts.User, error) {
	u, err := a.o.Accounts.GetUser(ctx, userID)
	if errors.Is(err, orchestrator.ErrNotFound) {
		if c := canonicalUserID(userID); c != userID {
			u, err = a.o.Accounts.GetUser(ctx, c)
		}
	}
	if errors.Is(err, orchestrator.ErrNotFound) {
		return nil, nil
	}
	return u, err
}

// hash hashes a new password within the hashing budget.
func (a *Authenticator) hash(ctx context.Context, password string) (string, error) {
	hash, err := a.o.Passwords.Hash(ctx, password)
	if err != nil {
		return "", hashErr(err)
	}
	return hash, nil
}

// hashErr is a hashing error as the client gets it: every hash busy is 503
// with Retry-After, naming the limit.
func hashErr(err error) error {
	if errors.Is(err, auth.ErrBusy) {
		return orchestrator.WithRetryAfter(fmt.Errorf("%w: too many passwords are being checked at once "+
			"(auth.password_hashing.max_memory_mb, waited auth.password_hashing.max_wait_s); retry shortly", orchestrator.ErrUnavailable), loginRetryWhenHashing)
	}
	return err
}

// tokenTTL is the lifetime a named API token asking for ttlSeconds gets:
// that many seconds, or auth.max_token_ttl_s for 0; more than the maximum
// (or less than 0) is refused, naming the maximum and its key, before
// seconds could overflow a duration.
func (a *Authenticator) tokenTTL(ttlSeconds int64) (time.Duration, error) {
	maxS := int64(a.o.MaxTokenTTL / time.Second)
	switch {
	case ttlSeconds == 0:
		return a.o.MaxTokenTTL, nil
	case ttlSeconds < 0 || ttlSeconds > maxS:
		return 0, fmt.Errorf("%w: ttl_s must be between 1 and %d, the longest a token may live (auth.max_token_ttl_s); got %d",
			orchestrator.ErrInvalidArgument, maxS, ttlSeconds)
	}
	return time.Duration(ttlSeconds) * time.Second, nil
}

// issue stores a new token of userID and returns its secret.
func (a *Authenticator) issue(ctx context.Context, userID, name string, kind accounts.TokenKind, exp *time.Time) (string, *accounts.Token, error) {
	secret, hash := auth.NewToken()
	t := &accounts.Token{ID: auth.NewID(), Hash: hash, UserID: userID, Name: name, Kind: kind, ExpiresAt: exp, CreatedAt: a.o.Now()}
	if err := a.o.Accounts.CreateToken(ctx, t); err != nil {
		return "", nil, err
	}
	return secret, t, nil
}
