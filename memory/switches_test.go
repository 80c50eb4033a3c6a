package memory

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// switchStore is the Store part the cache reads, counting reads.
type switchStore struct {
	Store
	on    atomic.Bool
	reads atomic.Int64
	// during, when set, runs inside a read, after the value was read.
	during func()
}

func (s *switchStore) MemoryEnabled(context.Context, string) (bool, error) {
	s.reads.Add(1)
	on := s.on.Load()
	if s.during != nil {
		s.during()
	}
	return on, nil
}

func TestSwitchCache(t *testing.T) {
	ctx := t.Context()
	st := &switchStore{}
	m := &Memory{st: st, switches: switchCache{ttl: time.Hour}}
	// Read once, then served from the cache.
	for range 3 {
		if on, err := m.enabled(ctx, "u"); on || err != nil {
			t.Fatalf("enabled = %v, %v; want false", on, err)
		}
	}
	if n := st.reads.Load(); n != 1 {
		t.Fatalf("%d reads for three runs within the ttl; want 1", n)
	}
	// A write through this process applies at once.
	st.on.Store(true)
	m.switches.put("u", true, time.Now())
	if on, _ := m.enabled(ctx, "u"); !on || st.reads.Load() != 1 {
		t.Fatalf("after put: enabled %v with %d reads; want true from the cache", on, st.reads.Load())
	}
	// Forgotten (the user's data deleted): read again.
	st.on.Store(false)
	m.switches.forget("u")
	if on, _ := m.enabled(ctx, "u"); on || st.reads.Load() != 2 {
		t.Fatalf("after forget: enabled %v with %d reads; want false, read again", on, st.reads.Load())
	}
	// A read that raced a write does not overwrite what the write put.
	m.switches.forget("u")
	st.during = func() { m.switches.put("u", true, time.Now()) } // the value read was false
	if on, _ := m.enabled(ctx, "u"); on {
		t.Fatalf("the racing read returns what it read (false), got %v", on)
	}
	st.during = nil
	if on, _ := m.enabled(ctx, "u"); !on {
		t.Fatalf("the write's value must stay cached, the stale read must not replace it")
	}
	// Expired entries are read again; a negative ttl reads every time.
	before := st.reads.Load()
	e := m.switches.m["u"]
	e.at = e.at.Add(-2 * time.Hour) // read two hours ago
	m.switches.m["u"] = e
	_, _ = m.enabled(ctx, "u")
	m.switches.ttl = -1
	_, _ = m.enabled(ctx, "u")
	if n := st.reads.Load() - before; n != 2 {
		t.Fatalf("%d reads past the ttl and without a cache; want 2", n)
	}
}
