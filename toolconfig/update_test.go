package toolconfig_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
	"github.com/wunder/wunder/toolconfig/toolconfigtest"
)

// Concurrent edits of one user's configuration are never lost: each
// Update that loses the race reads again and reapplies its edit (run with
// -race).
func TestConcurrentUpdatesLoseNothing(t *testing.T) {
	store := toolconfigtest.NewMemStore()
	// Two caches, as two replicas over one store.
	replicas := []*toolconfig.Configs{toolconfig.NewConfigs(store, time.Hour), toolconfig.NewConfigs(store, time.Hour)}
	const writers = 6
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("skill%d", i)
			_, err := replicas[i%2].Update(t.Context(), "alice", func(c *toolconfig.UserConfig) error {
				c.Skills.Enabled = append(c.Skills.Enabled, name)
				return nil
			})
			// Eight attempts may not be enough under heavy contention;
			// then the caller is told to try again, and nothing is lost
			// silently.
			if err != nil && !errors.Is(err, orchestrator.ErrBusy) {
				t.Errorf("Update(%s): %v", name, err)
			}
		}()
	}
	wg.Wait()
	c, err := store.GetUserToolConfig(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if int(c.Revision) != len(c.Skills.Enabled) {
		t.Fatalf("revision %d with %d skills: a write replaced another's edit", c.Revision, len(c.Skills.Enabled))
	}
	if len(slices.Compact(slices.Sorted(slices.Values(c.Skills.Enabled)))) != len(c.Skills.Enabled) {
		t.Fatalf("an edit was applied twice: %v", c.Skills.Enabled)
	}
	if len(c.Skills.Enabled) == 0 {
		t.Fatal("no edit was stored")
	}
}

// conflictingStore answers every write ErrConflict after letting another
// writer in, as a store under a writer that always wins does.
type conflictingStore struct {
	toolconfig.Store
	puts   atomic.Int64
	getErr error
	putErr error
}

func (s *conflictingStore) GetUserToolConfig(ctx context.Context, userID string) (*toolconfig.UserConfig, error) {
	if s.getErr != nil {
		return nil, s.getErr
	}
	return s.Store.GetUserToolConfig(ctx, userID)
}

func (s *conflictingStore) PutUserToolConfig(ctx context.Context, c *toolconfig.UserConfig) error {
	s.puts.Add(1)
	if s.putErr != nil {
		return s.putErr
	}
	return fmt.Errorf("%w: revision moved", orchestrator.ErrConflict)
}

// Update gives up after eight lost races, saying so as ErrBusy; an edit
// that refuses, or a store that fails, writes nothing and is returned as
// it is.
func TestUpdateErrors(t *testing.T) {
	ctx := t.Context()
	noop := func(*toolconfig.UserConfig) error { return nil }

	always := &conflictingStore{Store: toolconfigtest.NewMemStore()}
	if _, err := toolconfig.NewConfigs(always, 0).Update(ctx, "alice", noop); !errors.Is(err, orchestrator.ErrBusy) {
		t.Errorf("Update against a store that always conflicts = %v; want ErrBusy", err)
	}
	if n := always.puts.Load(); n != 8 {
		t.Errorf("%d writes before giving up; want 8", n)
	}

	refused := errors.New("name taken")
	base := toolconfigtest.NewMemStore()
	configs := toolconfig.NewConfigs(base, time.Hour)
	if _, err := configs.Update(ctx, "alice", func(*toolconfig.UserConfig) error { return refused }); !errors.Is(err, refused) {
		t.Errorf("Update with a refusing edit = %v; want the edit's error", err)
	}
	if _, err := base.GetUserToolConfig(ctx, "alice"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("a refused edit wrote: %v", err)
	}

	down := errors.New("store down")
	for name, st := range map[string]*conflictingStore{
		"read fails":  {Store: base, getErr: down},
		"write fails": {Store: base, putErr: down},
	} {
		if _, err := toolconfig.NewConfigs(st, time.Hour).Update(ctx, "alice", noop); !errors.Is(err, down) {
			t.Errorf("%s: Update = %v; want the store's error", name, err)
		}
	}
	if _, err := toolconfig.NewConfigs(&conflictingStore{Store: base, getErr: down}, time.Hour).Get(ctx, "alice"); !errors.Is(err, down) {
		t.Errorf("Get from a failing store = %v; want its error", err)
	}
}

// Update applies the edit to the stored configuration and stamps the
// user id, whatever the edit wrote there: one user's edit cannot land in
// another's configuration.
func TestUpdateKeepsTheUser(t *testing.T) {
	store := toolconfigtest.NewMemStore()
	configs := toolconfig.NewConfigs(store, time.Hour)
	ctx := t.Context()
	if _, err := configs.Update(ctx, "alice", func(c *toolconfig.UserConfig) error {
		c.ExtraPrompt = "be brief"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	got, err := configs.Update(ctx, "alice", func(c *toolconfig.UserConfig) error {
		if c.ExtraPrompt != "be brief" || c.Revision != 1 {
			return fmt.Errorf("the edit sees %+v; want the stored configuration", c)
		}
		c.UserID = "bob" // an edit that tries to move it
		c.Knowledge = append(c.Knowledge, toolconfig.Knowledge{Name: "kb"})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.UserID != "alice" || got.Revision != 2 {
		t.Errorf("Update = %+v; want alice's, revision 2", got)
	}
	if _, err := store.GetUserToolConfig(ctx, "bob"); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("bob's configuration after alice's edit: %v; want none", err)
	}
	if c, _ := configs.Get(ctx, "bob"); c.UserID != "bob" || c.Revision != 0 || c.ExtraPrompt != "" {
		t.Errorf("bob's configuration = %+v; want an empty one of his", c)
	}
}

// Shares: anything marked shared, of any kind, is shared.
func TestShares(t *testing.T) {
	cases := []struct {
		name string
		c    toolconfig.UserConfig
		want bool
	}{
		{"empty", toolconfig.UserConfig{}, false},
		{"private things only", toolconfig.UserConfig{
			Skills:     toolconfig.Skills{Enabled: []string{"a"}, Preload: []string{"a"}},
			MCPServers: []toolconfig.MCPServer{{Name: "fs"}},
			Knowledge:  []toolconfig.Knowledge{{Name: "kb"}},
		}, false},
		{"a shared skill", toolconfig.UserConfig{Skills: toolconfig.Skills{Shared: []string{"a"}}}, true},
		{"a shared MCP tool", toolconfig.UserConfig{MCPServers: []toolconfig.MCPServer{{Name: "a"}, {Name: "fs", SharedTools: []string{"read"}}}}, true},
		{"a shared knowledge base", toolconfig.UserConfig{Knowledge: []toolconfig.Knowledge{{Name: "a"}, {Name: "kb", Shared: true}}}, true},
	}
	for _, c := range cases {
		if got := c.c.Shares(); got != c.want {
			t.Errorf("%s: Shares = %v; want %v", c.name, got, c.want)
		}
	}
}
