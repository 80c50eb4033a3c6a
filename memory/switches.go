package memory

import (
	"context"
	"sync"
	"time"
)

// switchCache keeps users' memory switches for runs. Every run needs its
// user's switch (to build the prompt, and to queue its session at its
// end), and reading it was the one read of a run that named no tool: 5 %
// of a no-tool run's CPU on SQLite, a round trip on PostgreSQL
// (docs/benchmarks.md). The switch changes rarely, so a run uses it as
// this process last read it, for up to ttl; a change made through this
// process (SetEnabled, ForgetUser) replaces or forgets the entry
// at once, so only a change made through another replica waits up to ttl.
// The routes that show the switch read the store.
type switchCache struct {
	ttl time.Duration

	mu sync.Mutex
	m  map[string]cachedSwitch
	// gen counts the changes made through this process (put, forget): a
	// read of the store that began before one is not kept, whichever
	// user's switch changed (a rare write costs a later run a read).
	gen uint64
}

type cachedSwitch struct {
	on bool
	at time.Time
}

// maxCachedSwitches bounds the cache; past it, expired entries go, and
// when none has, the whole map (it refills from the store).
const maxCachedSwitches = 1 << 16

// enabled returns the user's switch for a run.
func (m *Memory) enabled(ctx context.Context, userID string) (bool, error) {
	c := &m.switches
	if c.ttl < 0 {
		return m.st.MemoryEnabled(ctx, userID)
	}
	now := time.Now()
	c.mu.Lock()
	e, ok := c.m[userID]
	gen := c.gen
	c.mu.Unlock()
	if ok && now.Sub(e.at) < c.ttl {
		return e.on, nil
	}
	on, err := m.st.MemoryEnabled(ctx, userID)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	if c.gen == gen { // no change while the store was read
		c.putLocked(userID, on, now)
	}
	c.mu.Unlock()
	return on, nil
}

// put records a switch this process wrote; a read in flight, which may
// have found the value before the write, is not kept.
func (c *switchCache) put(userID string, on bool, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(userID, on, at)
	c.gen++
}

func (c *switchCache) putLocked(userID string, on bool, at time.Time) {
	if c.m == nil {
		c.m = map[string]cachedSwitch{}
	}
	if len(c.m) >= maxCachedSwitches {
		for k, e := range c.m {
			if at.Sub(e.at) >= c.ttl {
				delete(c.m, k)
			}
		}
		if len(c.m) >= maxCachedSwitches {
			clear(c.m)
		}
	}
	c.m[userID] = cachedSwitch{on: on, at: at}
}

// forget drops the user's entry; a read in flight is not kept.
func (c *switchCache) forget(userID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, userID)
	c.gen++
}

// ForgetUser implements [orchestrator.Memory]: the user's data was
// deleted, their switch with it.
func (m *Memory) ForgetUser(userID string) { m.switches.forget(userID) }
