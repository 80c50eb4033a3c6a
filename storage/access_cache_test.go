package storage

import (
	"errors"
	"testing"
	"time"

	"github.com/wunder/wunder/accounts"
	"github.com/wunder/wunder/orchestrator"
)

// A rule changed by another process (a second Store on the same
// database) is seen within accessCacheTTL; one changed through the Store
// itself at once (the shared account suite).
func TestToolAccessChangedElsewhere(t *testing.T) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			opts := be.fresh(t)
			a, b := open(t, opts), open(t, opts)
			ctx := t.Context()
			now := time.Now()
			a.access.now = func() time.Time { return now }
			must(t, a.CreateUser(ctx, &accounts.User{ID: "alice", DisplayName: "Alice", Roles: []string{"user"}}))
			if got, err := a.GetToolAccess(ctx, "alice"); err != nil || got != nil {
				t.Fatalf("GetToolAccess = %+v, %v; want no rule", got, err)
			}
			rule := &orchestrator.ToolAccess{Denied: []string{"execute_command"}}
			must(t, b.SetToolAccess(ctx, "alice", rule))
			if got, err := a.GetToolAccess(ctx, "alice"); err != nil || got != nil {
				t.Fatalf("GetToolAccess within the TTL = %+v, %v; want the rule a read (none)", got, err)
			}
			now = now.Add(accessCacheTTL)
			got, err := a.GetToolAccess(ctx, "alice")
			if err != nil || got == nil || len(got.Denied) != 1 || got.Denied[0] != "execute_command" {
				t.Fatalf("GetToolAccess after the TTL = %+v, %v; want %+v", got, err, rule)
			}
			must(t, b.DeleteUser(ctx, "alice"))
			now = now.Add(accessCacheTTL)
			if _, err := a.GetToolAccess(ctx, "alice"); !errors.Is(err, orchestrator.ErrNotFound) {
				t.Fatalf("GetToolAccess of a user deleted elsewhere, after the TTL: %v; want ErrNotFound", err)
			}
		})
	}
}
