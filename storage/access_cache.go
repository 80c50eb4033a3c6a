package storage

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// Users' tool rules are read by every run that offers tools
// ([Store.GetToolAccess], through the tool registry), and rarely change.
// Read from SQLite each time, the rule was 4 % of a short run's CPU, most
// of it the read transaction's locks and page reads (a reader's page
// cache is emptied by every commit of the writer). accessCache keeps
// them for accessCacheTTL.
//
// A change made through this Store is seen at once: each write of the
// users table moves gen after it committed, and an entry read before
// that is not used again. A change made by another process (another
// replica on PostgreSQL, a command on the same SQLite file) is seen
// within accessCacheTTL.
const (
	accessCacheTTL = time.Second
	accessCacheMax = 10000 // users remembered at most; then it starts over
)

type accessCache struct {
	gen atomic.Uint64
	now func() time.Time // time.Now; tests move it

	mu sync.Mutex
	m  map[string]accessEntry
}

// accessEntry is a user's rule as read: found is false for a user with
// no account (ErrNotFound); rule nil for an account without a rule.
type accessEntry struct {
	rule  *orchestrator.ToolAccess
	found bool
	gen   uint64
	at    time.Time
}

func newAccessCache() *accessCache {
	return &accessCache{now: time.Now, m: map[string]accessEntry{}}
}

// get is userID's entry when it is fresh: read since the last write of
// this Store and within the TTL.
func (c *accessCache) get(userID string) (accessEntry, bool) {
	gen := c.gen.Load()
	c.mu.Lock()
	e, ok := c.m[userID]
	c.mu.Unlock()
	if !ok || e.gen != gen || c.now().Sub(e.at) >= accessCacheTTL {
		return accessEntry{}, false
	}
	return e, true
}

// read is the generation to stamp on an entry about to be read: taken
// before the read, so a write that commits meanwhile makes it stale.
func (c *accessCache) read() (gen uint64, at time.Time) { return c.gen.Load(), c.now() }

func (c *accessCache) put(userID string, e accessEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= accessCacheMax {
		clear(c.m)
	}
	c.m[userID] = e
}

// changed is called after every write of the users table, committed or
// not: no entry read before it is used again.
func (c *accessCache) changed() { c.gen.Add(1) }

// cloneAccess copies a rule, so no caller shares the cached one.
func cloneAccess(a *orchestrator.ToolAccess) *orchestrator.ToolAccess {
	if a == nil {
		return nil
	}
	return &orchestrator.ToolAccess{Allowed: slices.Clone(a.Allowed), Denied: slices.Clone(a.Denied), Approval: slices.Clone(a.Approval)}
}
