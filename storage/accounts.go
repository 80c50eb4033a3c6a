package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/wunder/wunder/accounts"
	"github.com/wunder/wunder/orchestrator"
)

// Accounts: users and their bearer tokens ([accounts.Store]).
//
// A row's id_key is its id under orchestrator.FoldUserID, and a unique
// index on it keeps ids unique ignoring case, whatever order concurrent
// inserts commit in. A deleted account stays as a tombstone (deleted_at
// set, password and tool rule cleared, disabled): every lookup skips it,
// and its key keeps the id from being registered again.

var _ accounts.Store = (*Store)(nil)

type userRow struct {
	bun.BaseModel `bun:"table:users"`

	ID string `bun:"id,pk"`
	// IDKey is orchestrator.FoldUserID(ID), unique; NULL on a row a
	// migration could not key (a case-duplicate from before the index).
	IDKey        *string    `bun:"id_key"`
	DisplayName  string     `bun:"display_name,notnull"`
	PasswordHash string     `bun:"password_hash,notnull"`
	Roles        string     `bun:"roles,notnull"`
	Disabled     bool       `bun:"disabled,notnull"`
	ToolAccess   *string    `bun:"tool_access"`
	CreatedAt    time.Time  `bun:"created_at,notnull"`
	UpdatedAt    *time.Time `bun:"updated_at"`
	// DeletedAt marks a tombstone.
	DeletedAt *time.Time `bun:"deleted_at"`
}

type tokenRow struct {
	bun.BaseModel `bun:"table:auth_tokens"`

	ID        string     `bun:"id,pk"`
	Hash      string     `bun:"hash,notnull"`
	UserID    string     `bun:"user_id,notnull"`
	Name      string     `bun:"name,notnull"`
	Kind      string     `bun:"kind,notnull"`
	CreatedAt time.Time  `bun:"created_at,notnull"`
	ExpiresAt *time.Time `bun:"expires_at"`
}

func toUserRow(u *accounts.User) *userRow {
	roles := u.Roles
	if roles == nil {
		roles = []string{}
	}
	b, _ := json.Marshal(roles)
	up := u.UpdatedAt
	key := orchestrator.FoldUserID(u.ID)
	return &userRow{ID: u.ID, IDKey: &key, DisplayName: u.DisplayName, PasswordHash: u.PasswordHash, Roles: string(b),
		Disabled: u.Disabled, CreatedAt: u.CreatedAt, UpdatedAt: &up}
}

func fromUserRow(r *userRow) *accounts.User {
	u := &accounts.User{ID: r.ID, DisplayName: r.DisplayName, PasswordHash: r.PasswordHash, Disabled: r.Disabled,
		CreatedAt: r.CreatedAt.UTC(), Roles: []string{}}
	_ = json.Unmarshal([]byte(r.Roles), &u.Roles)
	u.UpdatedAt = u.CreatedAt
	if r.UpdatedAt != nil {
		u.UpdatedAt = r.UpdatedAt.UTC()
	}
	return u
}

func fromTokenRow(r *tokenRow) *accounts.Token {
	t := &accounts.Token{ID: r.ID, Hash: r.Hash, UserID: r.UserID, Name: r.Name, Kind: accounts.TokenKind(r.Kind),
		CreatedAt: r.CreatedAt.UTC()}
	if r.ExpiresAt != nil {
		e := r.ExpiresAt.UTC()
		t.ExpiresAt = &e
	}
	return t
}

// CreateUser implements [accounts.Store].
func (s *Store) CreateUser(ctx context.Context, u *accounts.User) error {
	if u == nil || u.ID == "" {
		return invalid("user id is empty")
	}
	u.CreatedAt = stamp(u.CreatedAt)
	if u.UpdatedAt.IsZero() {
		u.UpdatedAt = u.CreatedAt
	}
	u.UpdatedAt = stamp(u.UpdatedAt)
	defer s.access.changed()
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		_, err := db.NewInsert().Model(toUserRow(u)).Exec(ctx)
		if constraintOf(err) == uniqueViolation {
			return fmt.Errorf("%w: user %s: the id is taken (ids are unique ignoring case, and a deleted account's id is not reused)", orchestrator.ErrConflict, u.ID)
		}
		return dbErr(err, "create user", "user "+u.ID)
	})
}

// GetUser implements [accounts.Store].
func (s *Store) GetUser(ctx context.Context, id string) (*accounts.User, error) {
	row := new(userRow)
	if err := s.db.NewSelect().Model(row).Where("id = ?", id).Where("deleted_at IS NULL").Scan(ctx); err != nil {
		return nil, dbErr(err, "get user", "user "+id)
	}
	return fromUserRow(row), nil
}

// ListUsers implements [accounts.Store].
func (s *Store) ListUsers(ctx context.Context, p orchestrator.Page) ([]*accounts.User, error) {
	var rows []userRow
	q := s.db.NewSelect().Model(&rows).Where("deleted_at IS NULL").OrderExpr("id ASC")
	if p.After != nil {
		q = q.Where("id > ?", p.After.ID)
	}
	if err := paged(q, p).Scan(ctx); err != nil {
		return nil, dbErr(err, "list users", "")
	}
	out := make([]*accounts.User, len(rows))
	for i := range rows {
		out[i] = fromUserRow(&rows[i])
	}
	return out, nil
}

// UpdateUser implements [accounts.Store].
func (s *Store) UpdateUser(ctx context.Context, u *accounts.User) error {
	if u == nil || u.ID == "" {
		return invalid("user id is empty")
	}
	u.UpdatedAt = stamp(u.UpdatedAt)
	row := toUserRow(u)
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		res, err := db.NewUpdate().Model(row).
			Column("display_name", "roles", "disabled", "updated_at").
			WherePK().Where("deleted_at IS NULL").Exec(ctx)
		return affected(res, err, "update user", "user "+u.ID)
	})
}

// SetPassword implements [accounts.Store]: the new hash and
// the revocation of the user's tokens commit together.
func (s *Store) SetPassword(ctx context.Context, userID, hash string) error {
	now := stamp(time.Time{})
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			res, err := tx.NewUpdate().Model((*userRow)(nil)).Set("password_hash = ?", hash).Set("updated_at = ?", now).
				Where("id = ?", userID).Where("deleted_at IS NULL").Exec(ctx)
			if err := affected(res, err, "set password", "user "+userID); err != nil {
				return err
			}
			_, err = tx.NewDelete().Model((*tokenRow)(nil)).Where("user_id = ?", userID).Exec(ctx)
			return dbErr(err, "revoke tokens of", "user "+userID)
		})
	})
}

// DeleteUser implements [accounts.Store]: the row becomes a
// tombstone (disabled, no password, no tool rule) that keeps its id_key,
// and the user's tokens go in the same transaction.
func (s *Store) DeleteUser(ctx context.Context, id string) error {
	now := stamp(time.Time{})
	defer s.access.changed()
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			res, err := tx.NewUpdate().Model((*userRow)(nil)).
				Set("deleted_at = ?", now).Set("updated_at = ?", now).Set("disabled = ?", true).
				Set("password_hash = ''").Set("display_name = ''").Set("tool_access = NULL").
				Where("id = ?", id).Where("deleted_at IS NULL").Exec(ctx)
			if err := affected(res, err, "delete user", "user "+id); err != nil {
				return err
			}
			_, err = tx.NewDelete().Model((*tokenRow)(nil)).Where("user_id = ?", id).Exec(ctx)
			return dbErr(err, "delete tokens of", "user "+id)
		})
	})
}

// CreateToken implements [accounts.Store].
func (s *Store) CreateToken(ctx context.Context, t *accounts.Token) error {
	if t == nil || t.ID == "" || t.Hash == "" || t.UserID == "" {
		return invalid("token needs an id, a hash and a user")
	}
	t.CreatedAt = stamp(t.CreatedAt)
	t.ExpiresAt = stampPtr(t.ExpiresAt)
	row := &tokenRow{ID: t.ID, Hash: t.Hash, UserID: t.UserID, Name: t.Name, Kind: string(t.Kind),
		CreatedAt: t.CreatedAt, ExpiresAt: t.ExpiresAt}
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			// A tombstone satisfies the foreign key, so the user is looked
			// up (the authenticator refuses a deleted user's token anyway).
			n, err := tx.NewSelect().Model((*userRow)(nil)).Where("id = ?", t.UserID).Where("deleted_at IS NULL").Count(ctx)
			if err != nil {
				return dbErr(err, "create token", "user "+t.UserID)
			}
			if n == 0 {
				return fmt.Errorf("%w: user %s", orchestrator.ErrNotFound, t.UserID)
			}
			_, err = tx.NewInsert().Model(row).Exec(ctx)
			if constraintOf(err) == foreignKeyViolation {
				return dbErr(err, "create token", "user "+t.UserID)
			}
			return dbErr(err, "create token", "token "+t.ID)
		})
	})
}

// TokenByHash implements [accounts.Store].
func (s *Store) TokenByHash(ctx context.Context, hash string) (*accounts.Token, error) {
	row := new(tokenRow)
	if err := s.db.NewSelect().Model(row).Where("hash = ?", hash).Scan(ctx); err != nil {
		return nil, dbErr(err, "get token", "token")
	}
	return fromTokenRow(row), nil
}

// ListTokens implements [accounts.Store].
func (s *Store) ListTokens(ctx context.Context, userID string) ([]*accounts.Token, error) {
	var rows []tokenRow
	err := s.db.NewSelect().Model(&rows).Where("user_id = ?", userID).OrderExpr("created_at DESC, id DESC").Scan(ctx)
	if err != nil {
		return nil, dbErr(err, "list tokens", "of user "+userID)
	}
	out := make([]*accounts.Token, len(rows))
	for i := range rows {
		out[i] = fromTokenRow(&rows[i])
	}
	return out, nil
}

// DeleteToken implements [accounts.Store]: the user is part of
// the query, so nobody revokes another user's token by its id.
func (s *Store) DeleteToken(ctx context.Context, userID, id string) error {
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		q := db.NewDelete().Model((*tokenRow)(nil)).Where("id = ?", id)
		if userID != "" {
			q = q.Where("user_id = ?", userID)
		}
		res, err := q.Exec(ctx)
		return affected(res, err, "delete token", "token "+id)
	})
}

// GetToolAccess implements [accounts.Store].
func (s *Store) GetToolAccess(ctx context.Context, userID string) (*orchestrator.ToolAccess, error) {
	if e, ok := s.access.get(userID); ok {
		if !e.found {
			return nil, fmt.Errorf("%w: user %s", orchestrator.ErrNotFound, userID)
		}
		return cloneAccess(e.rule), nil
	}
	gen, at := s.access.read()
	rule, err := s.readToolAccess(ctx, userID)
	switch {
	case err == nil:
		s.access.put(userID, accessEntry{rule: cloneAccess(rule), found: true, gen: gen, at: at})
	case errors.Is(err, orchestrator.ErrNotFound):
		s.access.put(userID, accessEntry{gen: gen, at: at})
	}
	return rule, err
}

// readToolAccess reads a user's tool rule from the database.
func (s *Store) readToolAccess(ctx context.Context, userID string) (*orchestrator.ToolAccess, error) {
	var raw *string
	err := s.queryRow(ctx, "select_users", `SELECT "tool_access" FROM "users" WHERE "id" = ? AND "deleted_at" IS NULL`, userID).Scan(&raw)
	if err != nil {
		return nil, dbErr(err, "get tool access", "user "+userID)
	}
	if raw == nil {
		return nil, nil
	}
	a := new(orchestrator.ToolAccess)
	if err := json.Unmarshal([]byte(*raw), a); err != nil {
		return nil, fmt.Errorf("storage: tool access of user %s: %w", userID, err)
	}
	return a, nil
}

// SetToolAccess implements [accounts.Store].
func (s *Store) SetToolAccess(ctx context.Context, userID string, a *orchestrator.ToolAccess) error {
	var raw *string
	if a != nil {
		b, err := json.Marshal(a)
		if err != nil {
			return err
		}
		v := string(b)
		raw = &v
	}
	defer s.access.changed()
	return s.update(ctx, func(ctx context.Context, db bun.IDB) error {
		res, err := db.NewUpdate().Model((*userRow)(nil)).Set("tool_access = ?", raw).Where("id = ?", userID).Where("deleted_at IS NULL").Exec(ctx)
		return affected(res, err, "set tool access", "user "+userID)
	})
}
