package toolconfig_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/toolconfig"
	"github.com/wunder/wunder/toolconfig/toolconfigtest"
)

func TestCheckToolName(t *testing.T) {
	for _, ok := range []string{"docs", "code-review", "a.b", "写作", "x_1", strings.Repeat("n", 64)} {
		if err := toolconfig.CheckName("skill", ok); err != nil {
			t.Errorf("CheckToolName(%q) = %v; want ok", ok, err)
		}
	}
	for _, bad := range []string{"", "a@b", "a/b", "..", ".hidden", "-x", "a b", "a\x00", "a\\b", strings.Repeat("n", 65), "\xff"} {
		if err := toolconfig.CheckName("skill", bad); !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Errorf("CheckToolName(%q) = %v; want ErrInvalidArgument", bad, err)
		}
	}
}

func TestCheckToolFilePath(t *testing.T) {
	for _, ok := range []string{"SKILL.md", "a/b/c.txt", "中文/说明.md", "..a", "a..b/c"} {
		if err := toolconfig.CheckFilePath(ok); err != nil {
			t.Errorf("CheckToolFilePath(%q) = %v; want ok", ok, err)
		}
	}
	for _, bad := range []string{"", "/etc/passwd", "../x", "..", "a/../../x", "a/./b", "a//b", "a/", ".", `a\b`, "c:x", "a\x00b", "a\nb", strings.Repeat("p", 513)} {
		if err := toolconfig.CheckFilePath(bad); !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Errorf("CheckToolFilePath(%q) = %v; want ErrInvalidArgument", bad, err)
		}
	}
}

// Configs: its own writes are seen at once; another writer's (a
// replica sharing the store) within the TTL, never later.
func TestUserToolConfigsCache(t *testing.T) {
	store := toolconfigtest.NewMemStore()
	ctx := t.Context()
	ttl := time.Hour // a long TTL makes "not yet" certain; the clock is moved by hand below
	here := toolconfig.NewConfigs(store, ttl)
	other := toolconfig.NewConfigs(store, ttl)
	now := time.Unix(1e9, 0)
	toolconfig.SetClockForTest(here, func() time.Time { return now })

	if c, err := here.Get(ctx, "alice"); err != nil || c.Revision != 0 || c.UserID != "alice" {
		t.Fatalf("Get before any write = %+v, %v; want an empty configuration", c, err)
	}
	if s, err := here.Shared(ctx); err != nil || len(s) != 0 {
		t.Fatalf("Shared before any write = %v, %v; want none", s, err)
	}
	if _, err := other.Update(ctx, "alice", func(c *toolconfig.UserConfig) error {
		c.Knowledge = []toolconfig.Knowledge{{Name: "kb", Shared: true}}
		return nil
	}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if c, _ := here.Get(ctx, "alice"); c.Revision != 0 {
		t.Errorf("another replica's write seen before the TTL: revision %d (a cache that never caches?)", c.Revision)
	}
	now = now.Add(ttl)
	if c, _ := here.Get(ctx, "alice"); c.Revision != 1 {
		t.Errorf("another replica's write not seen after the TTL: revision %d", c.Revision)
	}
	if s, _ := here.Shared(ctx); len(s) != 1 || s[0].UserID != "alice" {
		t.Errorf("Shared after the TTL = %v; want alice's", s)
	}
	if _, err := here.Update(ctx, "alice", func(c *toolconfig.UserConfig) error {
		c.Knowledge = nil
		return nil
	}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if c, _ := here.Get(ctx, "alice"); c.Revision != 2 || len(c.Knowledge) != 0 {
		t.Errorf("own write not seen at once: %+v", c)
	}
	if s, _ := here.Shared(ctx); len(s) != 0 {
		t.Errorf("own unsharing not seen at once: Shared = %v", s)
	}
}
