package storage

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/accounts"
	"github.com/wunder/wunder/orchestrator"
)

// A rule GetToolAccess returns is the caller's own: changing it changes
// neither the cached rule nor the next answer, on both backends. A stored
// rule that no longer decodes is an error naming the user, not an empty
// rule that would allow every tool; and it is not remembered.
func TestToolAccessAnswersAreCopies(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			s, ctx := open(t, be.fresh(t)), t.Context()
			must(t, s.CreateUser(ctx, &accounts.User{ID: "alice", Roles: []string{"user"}}))
			must(t, s.SetToolAccess(ctx, "alice", &orchestrator.ToolAccess{Denied: []string{"execute_command"}, Allowed: []string{"read_file"}}))
			for range 2 { // the first from the database, the second from the cache
				got, err := s.GetToolAccess(ctx, "alice")
				must(t, err)
				if len(got.Denied) != 1 || got.Denied[0] != "execute_command" {
					t.Fatalf("rule = %+v", got)
				}
				got.Denied[0], got.Allowed = "nothing", append(got.Allowed, "execute_command")
			}
			_, err := s.db.ExecContext(ctx, `UPDATE users SET tool_access = '{"denied_tools": 5}' WHERE id = 'alice'`)
			must(t, err)
			s.access.changed() // as a write through the Store would
			for range 2 {
				got, err := s.GetToolAccess(ctx, "alice")
				if err == nil || errors.Is(err, orchestrator.ErrNotFound) || !strings.Contains(err.Error(), "tool access of user alice") {
					t.Errorf("an unreadable rule = %+v, %v; want an error naming the user", got, err)
				}
			}
		})
	}
}

// The cache by itself: an entry is used until the TTL or the next write
// of this Store, whichever comes first, and past accessCacheMax users it
// starts over instead of growing.
func TestAccessCacheFreshness(t *testing.T) {
	c := newAccessCache()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c.now = func() time.Time { return now }
	rule := &orchestrator.ToolAccess{Denied: []string{"x"}}

	gen, at := c.read()
	c.put("u", accessEntry{rule: rule, found: true, gen: gen, at: at})
	if e, ok := c.get("u"); !ok || e.rule != rule {
		t.Fatalf("a fresh entry = %+v, %v", e, ok)
	}
	now = now.Add(accessCacheTTL - time.Nanosecond)
	if _, ok := c.get("u"); !ok {
		t.Error("an entry just within the TTL was not used")
	}
	now = now.Add(time.Nanosecond)
	if _, ok := c.get("u"); ok {
		t.Error("an entry at the TTL was used")
	}

	// A read that started before a write is stale as soon as the write is
	// done, even if it is put after it.
	gen, at = c.read()
	c.changed()
	c.put("u", accessEntry{rule: rule, found: true, gen: gen, at: at})
	if _, ok := c.get("u"); ok {
		t.Error("an entry read before a write was used after it")
	}
	if _, ok := c.get("nobody"); ok {
		t.Error("an entry never put was found")
	}

	c = newAccessCache()
	gen, at = c.read()
	for i := range accessCacheMax {
		c.put(fmt.Sprintf("user%d", i), accessEntry{found: true, gen: gen, at: at})
	}
	if len(c.m) != accessCacheMax {
		t.Fatalf("%d entries; want %d", len(c.m), accessCacheMax)
	}
	c.put("one more", accessEntry{found: true, gen: gen, at: at})
	if len(c.m) != 1 {
		t.Errorf("%d entries after one past the bound; want the cache started over with 1", len(c.m))
	}
	if _, ok := c.get("one more"); !ok {
		t.Error("the entry put past the bound is not there")
	}
}
