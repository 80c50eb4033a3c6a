package accountstest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/accounts"
	"github.com/wunder/wunder/internal/testutil/storetest"
	"github.com/wunder/wunder/orchestrator"
)

// RunStoreTests runs the contract every [accounts.Store]
// passes. newStore returns a fresh, empty store on every call and registers
// its own cleanup (closing it, removing files) with t.Cleanup.
//
// Beyond the comments on [accounts.Store], the suite pins: times
// round-trip at microsecond precision in UTC; roles keep their order; a
// token lookup matches the hash exactly; deleting a user deletes their
// tokens; DeleteToken scoped to another user is ErrNotFound and leaves the
// token working; ids are unique by orchestrator.FoldUserID, also against
// concurrent creators and deleted accounts; SetPassword revokes the
// user's tokens and no one else's.
func RunStoreTests(t *testing.T, newStore func(t *testing.T) accounts.Store) {
	t.Helper()
	tests := map[string]func(t *testing.T, s accounts.Store){
		"UserRoundTrip":      testUserRoundTrip,
		"UserConflict":       testUserConflict,
		"UserUpdate":         testUserUpdate,
		"UserListAndDelete":  testUserListAndDelete,
		"UsersWhileAdding":   testUsersWhileAdding,
		"TokenRoundTrip":     testTokenRoundTrip,
		"TokenNeedsUser":     testTokenNeedsUser,
		"TokenScopedDelete":  testTokenScopedDelete,
		"TokenListByUser":    testTokenListByUser,
		"TokenInvalidInputs": testTokenInvalid,
		"ToolAccess":         testToolAccess,
		"IDsUniqueByFold":    testIDsUniqueByFold,
		"IDRace":             testIDRace,
		"SetPassword":        testSetPassword,
		"DeleteTombstone":    testDeleteTombstone,
	}
	for name, fn := range tests {
		t.Run("Account/"+name, func(t *testing.T) {
			t.Parallel()
			fn(t, newStore(t))
		})
	}
}

func addUser(t *testing.T, s accounts.Store, id string, roles ...string) *accounts.User {
	t.Helper()
	u := &accounts.User{ID: id, DisplayName: "User " + id, Roles: roles, PasswordHash: "$argon2id$x", CreatedAt: at(0)}
	mustDo(t, "CreateUser", s.CreateUser(t.Context(), u))
	return u
}

func testUserRoundTrip(t *testing.T, s accounts.Store) {
	u := addUser(t, s, "alice", orchestrator.UserRoleUser, orchestrator.UserRoleAdmin)
	got, err := s.GetUser(t.Context(), "alice")
	mustDo(t, "GetUser", err)
	want := &accounts.User{ID: "alice", DisplayName: "User alice", Roles: []string{"user", "admin"},
		PasswordHash: "$argon2id$x", CreatedAt: us(at(0)), UpdatedAt: us(at(0))}
	diff(t, "GetUser(alice)", want, got)
	if !u.CreatedAt.Equal(us(at(0))) || u.CreatedAt.Location() != time.UTC {
		t.Errorf("CreateUser wrote back CreatedAt %v; want %v in UTC", u.CreatedAt, us(at(0)))
	}
	got.Roles[0] = "changed"
	again, err := s.GetUser(t.Context(), "alice")
	mustDo(t, "GetUser", err)
	if again.Roles[0] != "user" {
		t.Errorf("mutating a result changed the store: roles %v", again.Roles)
	}
	_, err = s.GetUser(t.Context(), "bob")
	wantErr(t, "GetUser(bob)", err, orchestrator.ErrNotFound)
}

func testUserConflict(t *testing.T, s accounts.Store) {
	addUser(t, s, "alice", "user")
	err := s.CreateUser(t.Context(), &accounts.User{ID: "alice", Roles: []string{"user"}})
	wantErr(t, "CreateUser(alice) again", err, orchestrator.ErrConflict)
	wantErr(t, "CreateUser(empty id)", s.CreateUser(t.Context(), &accounts.User{}), orchestrator.ErrInvalidArgument)
}

func testUserUpdate(t *testing.T, s accounts.Store) {
	u := addUser(t, s, "alice", "user")
	u.Disabled, u.Roles, u.DisplayName, u.PasswordHash, u.UpdatedAt = true, []string{"admin"}, "A", "$argon2id$y", at(time.Hour)
	u.CreatedAt = at(5 * time.Hour) // ignored: CreatedAt is as created
	mustDo(t, "UpdateUser", s.UpdateUser(t.Context(), u))
	got, err := s.GetUser(t.Context(), "alice")
	mustDo(t, "GetUser", err)
	// The password hash is ignored too: only SetPassword changes it.
	want := &accounts.User{ID: "alice", DisplayName: "A", Roles: []string{"admin"}, Disabled: true,
		PasswordHash: "$argon2id$x", CreatedAt: us(at(0)), UpdatedAt: us(at(time.Hour))}
	diff(t, "GetUser after UpdateUser", want, got)
	err = s.UpdateUser(t.Context(), &accounts.User{ID: "nobody", Roles: []string{"user"}})
	wantErr(t, "UpdateUser(nobody)", err, orchestrator.ErrNotFound)
}

func testUserListAndDelete(t *testing.T, s accounts.Store) {
	for _, id := range []string{"carol", "alice", "bob"} {
		addUser(t, s, id, "user")
	}
	ids := func(p orchestrator.Page) []string {
		list, err := s.ListUsers(t.Context(), p)
		mustDo(t, "ListUsers", err)
		out := []string{}
		for _, u := range list {
			out = append(out, u.ID)
		}
		return out
	}
	diff(t, "ListUsers", []string{"alice", "bob", "carol"}, ids(orchestrator.Page{}))
	diff(t, "ListUsers(limit 1)", []string{"alice"}, ids(orchestrator.Page{Limit: 1}))
	diff(t, "ListUsers(after alice)", []string{"bob", "carol"}, ids(orchestrator.Page{After: accounts.UserKey(&accounts.User{ID: "alice"})}))
	diff(t, "ListUsers(after b, limit 1)", []string{"bob"}, ids(orchestrator.Page{Limit: 1, After: &orchestrator.PageKey{ID: "b"}}))
	diff(t, "ListUsers(after carol)", []string{}, ids(orchestrator.Page{After: &orchestrator.PageKey{ID: "carol"}}))
	tok := &accounts.Token{ID: "t1", Hash: "h1", UserID: "bob", Kind: accounts.TokenSession}
	mustDo(t, "CreateToken", s.CreateToken(t.Context(), tok))
	mustDo(t, "DeleteUser", s.DeleteUser(t.Context(), "bob"))
	diff(t, "ListUsers after DeleteUser(bob)", []string{"alice", "carol"}, ids(orchestrator.Page{}))
	_, err := s.TokenByHash(t.Context(), "h1")
	wantErr(t, "TokenByHash of a deleted user's token", err, orchestrator.ErrNotFound)
	wantErr(t, "DeleteUser(bob) again", s.DeleteUser(t.Context(), "bob"), orchestrator.ErrNotFound)
}

func testTokenRoundTrip(t *testing.T, s accounts.Store) {
	addUser(t, s, "alice", "user")
	exp := at(time.Hour)
	tok := &accounts.Token{ID: "t1", Hash: "abc", UserID: "alice", Name: "ide", Kind: accounts.TokenAPI,
		ExpiresAt: &exp, CreatedAt: at(0)}
	mustDo(t, "CreateToken", s.CreateToken(t.Context(), tok))
	got, err := s.TokenByHash(t.Context(), "abc")
	mustDo(t, "TokenByHash", err)
	uexp := us(exp)
	diff(t, "TokenByHash(abc)", &accounts.Token{ID: "t1", Hash: "abc", UserID: "alice", Name: "ide",
		Kind: accounts.TokenAPI, ExpiresAt: &uexp, CreatedAt: us(at(0))}, got)
	for _, h := range []string{"ABC", "ab", "abcd", ""} {
		_, err := s.TokenByHash(t.Context(), h)
		wantErr(t, "TokenByHash("+h+")", err, orchestrator.ErrNotFound)
	}
	never := &accounts.Token{ID: "t2", Hash: "def", UserID: "alice", Kind: accounts.TokenAPI}
	mustDo(t, "CreateToken", s.CreateToken(t.Context(), never))
	got, err = s.TokenByHash(t.Context(), "def")
	mustDo(t, "TokenByHash", err)
	if got.ExpiresAt != nil || got.CreatedAt.IsZero() {
		t.Errorf("token without expiry = %+v; want nil ExpiresAt and CreatedAt set", got)
	}
	dup := &accounts.Token{ID: "t3", Hash: "abc", UserID: "alice", Kind: accounts.TokenAPI}
	wantErr(t, "CreateToken(same hash)", s.CreateToken(t.Context(), dup), orchestrator.ErrConflict)
}

func testTokenNeedsUser(t *testing.T, s accounts.Store) {
	err := s.CreateToken(t.Context(), &accounts.Token{ID: "t1", Hash: "h", UserID: "ghost", Kind: accounts.TokenAPI})
	wantErr(t, "CreateToken for a missing user", err, orchestrator.ErrNotFound)
	_, err = s.TokenByHash(t.Context(), "h")
	wantErr(t, "TokenByHash after the failed create", err, orchestrator.ErrNotFound)
}

func testTokenScopedDelete(t *testing.T, s accounts.Store) {
	addUser(t, s, "alice", "user")
	addUser(t, s, "bob", "user")
	mustDo(t, "CreateToken", s.CreateToken(t.Context(), &accounts.Token{ID: "ta", Hash: "ha", UserID: "alice", Kind: accounts.TokenAPI}))
	mustDo(t, "CreateToken", s.CreateToken(t.Context(), &accounts.Token{ID: "tb", Hash: "hb", UserID: "bob", Kind: accounts.TokenAPI}))
	wantErr(t, "DeleteToken(bob, ta)", s.DeleteToken(t.Context(), "bob", "ta"), orchestrator.ErrNotFound)
	if _, err := s.TokenByHash(t.Context(), "ha"); err != nil {
		t.Fatalf("alice's token after bob's failed delete: %v", err)
	}
	mustDo(t, "DeleteToken(alice, ta)", s.DeleteToken(t.Context(), "alice", "ta"))
	_, err := s.TokenByHash(t.Context(), "ha")
	wantErr(t, "TokenByHash after revocation", err, orchestrator.ErrNotFound)
	mustDo(t, "DeleteToken(any user, tb)", s.DeleteToken(t.Context(), "", "tb"))
	wantErr(t, "DeleteToken(tb) again", s.DeleteToken(t.Context(), "", "tb"), orchestrator.ErrNotFound)
}

func testTokenListByUser(t *testing.T, s accounts.Store) {
	addUser(t, s, "alice", "user")
	addUser(t, s, "bob", "user")
	for i, id := range []string{"t1", "t2", "t3"} {
		mustDo(t, "CreateToken", s.CreateToken(t.Context(), &accounts.Token{ID: id, Hash: "h" + id, UserID: "alice",
			Kind: accounts.TokenSession, CreatedAt: at(time.Duration(i) * time.Minute)}))
	}
	mustDo(t, "CreateToken", s.CreateToken(t.Context(), &accounts.Token{ID: "tb", Hash: "hb", UserID: "bob", Kind: accounts.TokenAPI}))
	list, err := s.ListTokens(t.Context(), "alice")
	mustDo(t, "ListTokens", err)
	got := []string{}
	for _, tok := range list {
		got = append(got, tok.ID)
	}
	diff(t, "ListTokens(alice) ids", []string{"t3", "t2", "t1"}, got)
	list, err = s.ListTokens(t.Context(), "nobody")
	mustDo(t, "ListTokens", err)
	if len(list) != 0 {
		t.Errorf("ListTokens(nobody) = %d tokens; want none", len(list))
	}
}

func testTokenInvalid(t *testing.T, s accounts.Store) {
	addUser(t, s, "alice", "user")
	for _, tok := range []*accounts.Token{
		{Hash: "h", UserID: "alice", Kind: accounts.TokenAPI},
		{ID: "t", UserID: "alice", Kind: accounts.TokenAPI},
		{ID: "t", Hash: "h", Kind: accounts.TokenAPI},
	} {
		wantErr(t, "CreateToken(incomplete)", s.CreateToken(t.Context(), tok), orchestrator.ErrInvalidArgument)
	}
}

func testToolAccess(t *testing.T, s accounts.Store) {
	addUser(t, s, "alice", "user")
	got, err := s.GetToolAccess(t.Context(), "alice")
	mustDo(t, "GetToolAccess", err)
	if got != nil {
		t.Fatalf("GetToolAccess of a new user = %+v; want nil", got)
	}
	_, err = s.GetToolAccess(t.Context(), "nobody")
	wantErr(t, "GetToolAccess(nobody)", err, orchestrator.ErrNotFound)
	wantErr(t, "SetToolAccess(nobody)", s.SetToolAccess(t.Context(), "nobody", &orchestrator.ToolAccess{}), orchestrator.ErrNotFound)
	for _, want := range []*orchestrator.ToolAccess{
		{Allowed: []string{"read_file", "srv@*"}, Denied: []string{"execute_command"}, Approval: []string{"write_file"}},
		{Allowed: nil, Denied: []string{"x"}},
		{Allowed: []string{}},
	} {
		mustDo(t, "SetToolAccess", s.SetToolAccess(t.Context(), "alice", want))
		got, err := s.GetToolAccess(t.Context(), "alice")
		mustDo(t, "GetToolAccess", err)
		diff(t, "GetToolAccess after SetToolAccess", want, got)
	}
	// UpdateUser leaves the rule alone.
	u, err := s.GetUser(t.Context(), "alice")
	mustDo(t, "GetUser", err)
	u.Disabled = true
	mustDo(t, "UpdateUser", s.UpdateUser(t.Context(), u))
	got, err = s.GetToolAccess(t.Context(), "alice")
	mustDo(t, "GetToolAccess", err)
	diff(t, "GetToolAccess after UpdateUser", &orchestrator.ToolAccess{Allowed: []string{}}, got)
	mustDo(t, "SetToolAccess(nil)", s.SetToolAccess(t.Context(), "alice", nil))
	got, err = s.GetToolAccess(t.Context(), "alice")
	mustDo(t, "GetToolAccess", err)
	if got != nil {
		t.Errorf("GetToolAccess after clearing = %+v; want nil", got)
	}
	// Read while there was no account, then created, given a rule and
	// deleted: each read sees the change before it.
	_, err = s.GetToolAccess(t.Context(), "bob")
	wantErr(t, "GetToolAccess(bob) before bob exists", err, orchestrator.ErrNotFound)
	addUser(t, s, "bob", "user")
	got, err = s.GetToolAccess(t.Context(), "bob")
	mustDo(t, "GetToolAccess(bob) once created", err)
	if got != nil {
		t.Errorf("GetToolAccess of the new bob = %+v; want nil", got)
	}
	rule := &orchestrator.ToolAccess{Denied: []string{"execute_command"}}
	mustDo(t, "SetToolAccess(bob)", s.SetToolAccess(t.Context(), "bob", rule))
	got, err = s.GetToolAccess(t.Context(), "bob")
	mustDo(t, "GetToolAccess(bob)", err)
	diff(t, "GetToolAccess(bob) after SetToolAccess", rule, got)
	for range 2 { // a store that remembers rules must not hand out the one it keeps
		got, err = s.GetToolAccess(t.Context(), "bob")
		mustDo(t, "GetToolAccess(bob)", err)
		got.Denied[0] = "changed by the caller"
	}
	got, err = s.GetToolAccess(t.Context(), "bob")
	mustDo(t, "GetToolAccess(bob)", err)
	diff(t, "GetToolAccess(bob) after its caller changed the last answer", rule, got)
	mustDo(t, "DeleteUser(bob)", s.DeleteUser(t.Context(), "bob"))
	_, err = s.GetToolAccess(t.Context(), "bob")
	wantErr(t, "GetToolAccess(bob) once deleted", err, orchestrator.ErrNotFound)
}

// Ids differing only in case are one account: the second is a conflict,
// and lookups stay exact (a legacy "Alice" is found as "Alice" only).
func testIDsUniqueByFold(t *testing.T, s accounts.Store) {
	for _, pair := range [][2]string{{"alice", "Alice"}, {"BOB", "bob"}, {"Émile", "éMILE"}, {"straße", "STRAẞE"}, {"Σοφία", "ΣΟΦΊΑ"}} {
		addUser(t, s, pair[0], "user")
		err := s.CreateUser(t.Context(), &accounts.User{ID: pair[1], Roles: []string{"user"}})
		wantErr(t, "CreateUser("+pair[1]+") beside "+pair[0], err, orchestrator.ErrConflict)
		_, err = s.GetUser(t.Context(), pair[1])
		wantErr(t, "GetUser("+pair[1]+")", err, orchestrator.ErrNotFound)
		if _, err := s.GetUser(t.Context(), pair[0]); err != nil {
			t.Errorf("GetUser(%s) after the refused %s: %v", pair[0], pair[1], err)
		}
	}
}

// Concurrent creators of case variants of one id: exactly one wins, so
// uniqueness is the store's, not a check before the insert.
func testIDRace(t *testing.T, s accounts.Store) {
	ids := []string{"carol", "Carol", "CAROL", "cArOl", "caRol", "CaroL"}
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.CreateUser(t.Context(), &accounts.User{ID: id, Roles: []string{"user"}})
		}()
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, orchestrator.ErrConflict):
			t.Errorf("CreateUser(%s) = %v; want success or ErrConflict", ids[i], err)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d case variants were created; want exactly 1 (errors %v)", won, len(ids), errs)
	}
	list, err := s.ListUsers(t.Context(), orchestrator.Page{})
	mustDo(t, "ListUsers", err)
	if len(list) != 1 {
		t.Errorf("ListUsers = %d accounts; want 1", len(list))
	}
}

func testSetPassword(t *testing.T, s accounts.Store) {
	addUser(t, s, "alice", "user")
	addUser(t, s, "bob", "user")
	for _, tok := range []*accounts.Token{
		{ID: "ta1", Hash: "ha1", UserID: "alice", Kind: accounts.TokenSession},
		{ID: "ta2", Hash: "ha2", UserID: "alice", Kind: accounts.TokenAPI},
		{ID: "tb", Hash: "hb", UserID: "bob", Kind: accounts.TokenSession},
	} {
		mustDo(t, "CreateToken", s.CreateToken(t.Context(), tok))
	}
	mustDo(t, "SetPassword(alice)", s.SetPassword(t.Context(), "alice", "$argon2id$new"))
	u, err := s.GetUser(t.Context(), "alice")
	mustDo(t, "GetUser", err)
	if u.PasswordHash != "$argon2id$new" {
		t.Errorf("password hash after SetPassword = %q", u.PasswordHash)
	}
	for _, h := range []string{"ha1", "ha2"} {
		_, err := s.TokenByHash(t.Context(), h)
		wantErr(t, "TokenByHash("+h+") after alice's password changed", err, orchestrator.ErrNotFound)
	}
	if _, err := s.TokenByHash(t.Context(), "hb"); err != nil {
		t.Errorf("bob's token after alice's password changed: %v", err)
	}
	wantErr(t, "SetPassword(nobody)", s.SetPassword(t.Context(), "nobody", "$x"), orchestrator.ErrNotFound)
}

// A deleted account is gone from every lookup, but its id (and every case
// variant of it) stays taken.
func testDeleteTombstone(t *testing.T, s accounts.Store) {
	addUser(t, s, "bob", "user")
	mustDo(t, "SetToolAccess", s.SetToolAccess(t.Context(), "bob", &orchestrator.ToolAccess{Denied: []string{"x"}}))
	mustDo(t, "DeleteUser(bob)", s.DeleteUser(t.Context(), "bob"))
	_, err := s.GetUser(t.Context(), "bob")
	wantErr(t, "GetUser(bob) once deleted", err, orchestrator.ErrNotFound)
	for _, id := range []string{"bob", "Bob", "BOB"} {
		err := s.CreateUser(t.Context(), &accounts.User{ID: id, Roles: []string{"user"}})
		wantErr(t, "CreateUser("+id+") after bob was deleted", err, orchestrator.ErrConflict)
	}
	wantErr(t, "UpdateUser(bob) once deleted", s.UpdateUser(t.Context(), &accounts.User{ID: "bob", Roles: []string{"user"}}), orchestrator.ErrNotFound)
	wantErr(t, "SetPassword(bob) once deleted", s.SetPassword(t.Context(), "bob", "$x"), orchestrator.ErrNotFound)
	wantErr(t, "SetToolAccess(bob) once deleted", s.SetToolAccess(t.Context(), "bob", nil), orchestrator.ErrNotFound)
	_, err = s.GetToolAccess(t.Context(), "bob")
	wantErr(t, "GetToolAccess(bob) once deleted", err, orchestrator.ErrNotFound)
	err = s.CreateToken(t.Context(), &accounts.Token{ID: "t", Hash: "h", UserID: "bob", Kind: accounts.TokenAPI})
	wantErr(t, "CreateToken(bob) once deleted", err, orchestrator.ErrNotFound)
	wantErr(t, "DeleteUser(bob) again", s.DeleteUser(t.Context(), "bob"), orchestrator.ErrNotFound)
	list, err := s.ListUsers(t.Context(), orchestrator.Page{})
	mustDo(t, "ListUsers", err)
	if len(list) != 0 {
		t.Errorf("ListUsers after the only account was deleted = %d accounts", len(list))
	}
}

// testUsersWhileAdding pages the accounts (by id) through the cursor
// helper while accounts are added between pages: those with an id below
// the cursor's are not shown, those above it are, and none twice.
func testUsersWhileAdding(t *testing.T, s accounts.Store) {
	var want []string
	for i := range 23 {
		id := fmt.Sprintf("m%02d", i)
		addUser(t, s, id, "user")
		want = append(want, id)
	}
	var late []string
	got := storetest.PageThrough(t, 4, "users", func(p orchestrator.Page) ([]*accounts.User, error) {
		return s.ListUsers(t.Context(), p)
	}, accounts.UserKey, func(u *accounts.User) string { return u.ID }, func(p int) {
		addUser(t, s, fmt.Sprintf("a%02d", p), "user") // ahead of the cursor
		addUser(t, s, fmt.Sprintf("z%02d", p), "user") // behind it
		late = append(late, fmt.Sprintf("z%02d", p))
	})
	diff(t, "users paged while users were added", append(want, late...), got)
}
