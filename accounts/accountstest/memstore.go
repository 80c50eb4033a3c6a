package accountstest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/wunder/wunder/accounts"
	"github.com/wunder/wunder/orchestrator"
)

// NewMemStore returns an in-memory [accounts.Store] for tests.
// It passes [RunStoreTests] with the same rules as the SQL store.
func NewMemStore() accounts.Store {
	return &memAccounts{users: map[string]accounts.User{}, keys: map[string]string{}, tokens: map[string]accounts.Token{},
		access: map[string]*orchestrator.ToolAccess{}}
}

type memAccounts struct {
	// mu guards the fields below.
	mu    sync.Mutex
	users map[string]accounts.User // live accounts, by id
	// keys maps each orchestrator.FoldUserID key taken to the id that took
	// it; deleted accounts keep theirs (the tombstone).
	keys   map[string]string
	tokens map[string]accounts.Token // by id
	access map[string]*orchestrator.ToolAccess
}

func cloneUser(u accounts.User) *accounts.User {
	u.Roles = slices.Clone(u.Roles)
	return &u
}

func cloneToken(t accounts.Token) *accounts.Token {
	t.ExpiresAt = stampPtr(t.ExpiresAt)
	return &t
}

func storedUser(u accounts.User) accounts.User {
	u.ID, u.DisplayName, u.PasswordHash = txt(u.ID), txt(u.DisplayName), txt(u.PasswordHash)
	roles := make([]string, len(u.Roles))
	for i, r := range u.Roles {
		roles[i] = txt(r)
	}
	u.Roles = roles
	return u
}

func (m *memAccounts) CreateUser(_ context.Context, u *accounts.User) error {
	if u == nil || u.ID == "" {
		return fmt.Errorf("%w: user id is empty", orchestrator.ErrInvalidArgument)
	}
	u.CreatedAt = stamp(u.CreatedAt)
	if u.UpdatedAt.IsZero() {
		u.UpdatedAt = u.CreatedAt
	}
	u.UpdatedAt = stamp(u.UpdatedAt)
	m.mu.Lock()
	defer m.mu.Unlock()
	row := storedUser(*u)
	key := orchestrator.FoldUserID(row.ID)
	if _, ok := m.keys[key]; ok {
		return fmt.Errorf("%w: user %s: the id is taken (ids are unique ignoring case, and a deleted account's id is not reused)", orchestrator.ErrConflict, u.ID)
	}
	m.users[row.ID] = row
	m.keys[key] = row.ID
	return nil
}

func (m *memAccounts) GetUser(_ context.Context, id string) (*accounts.User, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u, ok := m.users[txt(id)]
	if !ok {
		return nil, fmt.Errorf("%w: user %s", orchestrator.ErrNotFound, id)
	}
	return cloneUser(u), nil
}

func (m *memAccounts) ListUsers(_ context.Context, p orchestrator.Page) ([]*accounts.User, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := make([]string, 0, len(m.users))
	for id := range m.users {
		if p.After == nil || id > p.After.ID {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	ids = ids[:pageLen(p, len(ids))]
	out := make([]*accounts.User, 0, len(ids))
	for _, id := range ids {
		out = append(out, cloneUser(m.users[id]))
	}
	return out, nil
}

func (m *memAccounts) UpdateUser(_ context.Context, u *accounts.User) error {
	if u == nil || u.ID == "" {
		return fmt.Errorf("%w: user id is empty", orchestrator.ErrInvalidArgument)
	}
	u.UpdatedAt = stamp(u.UpdatedAt)
	m.mu.Lock()
	defer m.mu.Unlock()
	row := storedUser(*u)
	old, ok := m.users[row.ID]
	if !ok {
		return fmt.Errorf("%w: user %s", orchestrator.ErrNotFound, u.ID)
	}
	row.CreatedAt, row.PasswordHash = old.CreatedAt, old.PasswordHash // the password is SetPassword's
	m.users[row.ID] = row
	return nil
}

func (m *memAccounts) SetPassword(_ context.Context, userID, hash string) error {
	userID = txt(userID)
	m.mu.Lock()
	defer m.mu.Unlock()
	u, ok := m.users[userID]
	if !ok {
		return fmt.Errorf("%w: user %s", orchestrator.ErrNotFound, userID)
	}
	u.PasswordHash, u.UpdatedAt = txt(hash), stamp(time.Time{})
	m.users[userID] = u
	m.revoke(userID)
	return nil
}

// revoke deletes every token of userID; m.mu is held.
func (m *memAccounts) revoke(userID string) {
	for tid, t := range m.tokens {
		if t.UserID == userID {
			delete(m.tokens, tid)
		}
	}
}

func (m *memAccounts) DeleteUser(_ context.Context, id string) error {
	id = txt(id)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.users[id]; !ok {
		return fmt.Errorf("%w: user %s", orchestrator.ErrNotFound, id)
	}
	delete(m.users, id) // its key stays in m.keys: the tombstone
	delete(m.access, id)
	m.revoke(id)
	return nil
}

func (m *memAccounts) CreateToken(_ context.Context, t *accounts.Token) error {
	if t == nil || t.ID == "" || t.Hash == "" || t.UserID == "" {
		return fmt.Errorf("%w: token needs an id, a hash and a user", orchestrator.ErrInvalidArgument)
	}
	t.CreatedAt = stamp(t.CreatedAt)
	t.ExpiresAt = stampPtr(t.ExpiresAt)
	m.mu.Lock()
	defer m.mu.Unlock()
	row := *t
	row.ID, row.Hash, row.UserID, row.Name = txt(row.ID), txt(row.Hash), txt(row.UserID), txt(row.Name)
	row.Kind = accounts.TokenKind(txt(string(row.Kind)))
	if _, ok := m.users[row.UserID]; !ok {
		return fmt.Errorf("%w: user %s", orchestrator.ErrNotFound, t.UserID)
	}
	for _, o := range m.tokens {
		if o.ID == row.ID || o.Hash == row.Hash {
			return fmt.Errorf("%w: token %s exists", orchestrator.ErrConflict, t.ID)
		}
	}
	m.tokens[row.ID] = row
	return nil
}

func (m *memAccounts) TokenByHash(_ context.Context, hash string) (*accounts.Token, error) {
	hash = txt(hash)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.tokens {
		if t.Hash == hash {
			return cloneToken(t), nil
		}
	}
	return nil, fmt.Errorf("%w: token", orchestrator.ErrNotFound)
}

func (m *memAccounts) ListTokens(_ context.Context, userID string) ([]*accounts.Token, error) {
	userID = txt(userID)
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*accounts.Token
	for _, t := range m.tokens {
		if t.UserID == userID {
			out = append(out, cloneToken(t))
		}
	}
	slices.SortFunc(out, func(a, b *accounts.Token) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	return out, nil
}

func (m *memAccounts) DeleteToken(_ context.Context, userID, id string) error {
	userID, id = txt(userID), txt(id)
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tokens[id]
	if !ok || (userID != "" && t.UserID != userID) {
		return fmt.Errorf("%w: token %s", orchestrator.ErrNotFound, id)
	}
	delete(m.tokens, id)
	return nil
}

func cloneAccess(a *orchestrator.ToolAccess) *orchestrator.ToolAccess {
	if a == nil {
		return nil
	}
	return &orchestrator.ToolAccess{Allowed: slices.Clone(a.Allowed), Denied: slices.Clone(a.Denied), Approval: slices.Clone(a.Approval)}
}

func (m *memAccounts) GetToolAccess(_ context.Context, userID string) (*orchestrator.ToolAccess, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.users[txt(userID)]; !ok {
		return nil, fmt.Errorf("%w: user %s", orchestrator.ErrNotFound, userID)
	}
	return cloneAccess(m.access[txt(userID)]), nil
}

func (m *memAccounts) SetToolAccess(_ context.Context, userID string, a *orchestrator.ToolAccess) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.users[txt(userID)]; !ok {
		return fmt.Errorf("%w: user %s", orchestrator.ErrNotFound, userID)
	}
	if a == nil {
		delete(m.access, txt(userID))
		return nil
	}
	m.access[txt(userID)] = cloneAccess(a)
	return nil
}
