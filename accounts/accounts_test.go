package accounts_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wunder/wunder/accounts"
	"github.com/wunder/wunder/accounts/accountstest"
	"github.com/wunder/wunder/orchestrator"
)

// IsAdmin is the admin role, on a user that may be missing.
func TestIsAdmin(t *testing.T) {
	cases := []struct {
		name string
		u    *accounts.User
		want bool
	}{
		{"no user", nil, false},
		{"no roles", &accounts.User{ID: "a"}, false},
		{"a user", &accounts.User{ID: "a", Roles: []string{orchestrator.UserRoleUser}}, false},
		{"an admin", &accounts.User{ID: "a", Roles: []string{orchestrator.UserRoleUser, orchestrator.UserRoleAdmin}}, true},
		{"a role that only looks like it", &accounts.User{ID: "a", Roles: []string{"Admin", "admin "}}, false},
		{"disabled admin", &accounts.User{ID: "a", Roles: []string{orchestrator.UserRoleAdmin}, Disabled: true}, true}, // the role stays; login refuses
	}
	for _, c := range cases {
		if got := c.u.IsAdmin(); got != c.want {
			t.Errorf("%s: IsAdmin = %v; want %v", c.name, got, c.want)
		}
	}
}

// A token stops working at its expiry, not a moment later; one without
// an expiry never does.
func TestTokenExpired(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	expiring := &accounts.Token{ExpiresAt: &at}
	cases := []struct {
		name string
		tok  *accounts.Token
		now  time.Time
		want bool
	}{
		{"before", expiring, at.Add(-time.Nanosecond), false},
		{"at", expiring, at, true},
		{"after", expiring, at.Add(time.Second), true},
		{"in another zone, same instant", expiring, at.In(time.FixedZone("CST", 8*3600)), true},
		{"never expires", &accounts.Token{}, at.AddDate(100, 0, 0), false},
	}
	for _, c := range cases {
		if got := c.tok.Expired(c.now); got != c.want {
			t.Errorf("%s: Expired = %v; want %v", c.name, got, c.want)
		}
	}
}

// The users' listing pages by id with UserKey through the one cursor:
// every account once, in order, however small the pages; accounts added
// meanwhile after the cursor are served, before it are not.
func TestUsersPageByID(t *testing.T) {
	st := accountstest.NewMemStore()
	ctx := t.Context()
	var want []string
	for i := range 9 {
		id := fmt.Sprintf("user%02d", i*2)
		if err := st.CreateUser(ctx, &accounts.User{ID: id, Roles: []string{orchestrator.UserRoleUser}}); err != nil {
			t.Fatal(err)
		}
		want = append(want, id)
	}
	for _, size := range []int{1, 2, 4, 9, 20} {
		var got []string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 20 {
				t.Fatalf("size %d: the cursor does not advance", size)
			}
			p, err := orchestrator.NewPager("cursor", cursor, size, "users")
			if err != nil {
				t.Fatal(err)
			}
			users, err := st.ListUsers(ctx, p.Page)
			if err != nil {
				t.Fatal(err)
			}
			var page []*accounts.User
			page, cursor = orchestrator.CutPage(p, users, accounts.UserKey)
			for _, u := range page {
				got = append(got, u.ID)
			}
			if cursor == "" {
				break
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("size %d: paged users = %v; want %v", size, got, want)
		}
	}

	// Added while paging: an id after the cursor is served, one before is
	// not, and nothing is served twice.
	p, _ := orchestrator.NewPager("cursor", "", 3, "users")
	users, _ := st.ListUsers(ctx, p.Page)
	first, cursor := orchestrator.CutPage(p, users, accounts.UserKey)
	for _, id := range []string{"user01", "user99"} {
		if err := st.CreateUser(ctx, &accounts.User{ID: id, Roles: []string{orchestrator.UserRoleUser}}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := orchestrator.NewPager("cursor", cursor, 100, "users")
	if err != nil {
		t.Fatal(err)
	}
	rest, _ := st.ListUsers(ctx, p.Page)
	var got []string
	for _, u := range append(first, rest...) {
		got = append(got, u.ID)
	}
	if slices.Contains(got, "user01") || !slices.Contains(got, "user99") || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Errorf("paged while adding = %v; want user99 and not user01, none twice", got)
	}
	// A cursor of another list is refused.
	if _, err := orchestrator.NewPager("cursor", cursor, 3, "sessions", "alice"); !errors.Is(err, orchestrator.ErrInvalidArgument) {
		t.Errorf("the users' cursor on sessions = %v; want ErrInvalidArgument", err)
	}
}
