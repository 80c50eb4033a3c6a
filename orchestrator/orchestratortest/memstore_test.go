package orchestratortest

import (
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

func TestMemStore(t *testing.T) {
	RunStoreTests(t, func(*testing.T) orchestrator.Store { return NewMemStore() })
}

// The Store interface cannot read tool logs back, so the cascade of
// DeleteSession to them is checked on the internals.
func TestMemStoreDeleteSessionRemovesToolLogs(t *testing.T) {
	s := NewMemStore().(*memStore)
	ctx := t.Context()
	for _, id := range []string{"s1", "s2"} {
		mustDo(t, "CreateSession", s.CreateSession(ctx, &orchestrator.Session{ID: id, UserID: "u"}))
		mustDo(t, "AppendToolLog", s.AppendToolLog(ctx, &orchestrator.ToolLog{SessionID: id, Tool: "t"}))
	}
	mustDo(t, "DeleteSession", s.DeleteSession(ctx, "s1"))
	if len(s.toolLogs) != 1 || s.toolLogs[0].SessionID != "s2" {
		t.Errorf("tool logs after DeleteSession(s1) = %+v; want only the one of s2", s.toolLogs)
	}
}

// Arbitrary text through the in-memory store: it keeps what the SQL stores
// keep (storage's FuzzStoreText). The seeds run in every go test.
func FuzzMemStoreText(f *testing.F) {
	for _, s := range TextSeeds() {
		f.Add(s)
	}
	s := NewMemStore()
	f.Fuzz(func(t *testing.T, text string) { CheckStoredText(t, s, text) })
}

func TestPageKeyOrder(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	k := &orchestrator.PageKey{At: at, ID: "m"}
	for _, c := range []struct {
		at   time.Time
		id   string
		want bool
	}{
		{at.Add(-time.Microsecond), "z", true}, // older: after the key
		{at, "a", true},                        // same time, lower id: after
		{at, "m", false},                       // the key's own item
		{at, "z", false},                       // same time, higher id: before
		{at.Add(time.Microsecond), "a", false}, // newer
	} {
		if got := pastKey(k, c.at, c.id); got != c.want {
			t.Errorf("key %v,%s: pastKey(%v, %s) = %v", k.At, k.ID, c.at, c.id, got)
		}
	}
	// The key's time counts at the store's precision, a microsecond.
	if !pastKey(&orchestrator.PageKey{At: at.Add(999 * time.Nanosecond), ID: "m"}, at, "a") {
		t.Error("a key with nanoseconds: the item at its microsecond with a lower id is not after it")
	}
}
