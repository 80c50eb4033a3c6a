package knowledge

import (
	"context"
	"errors"
	"sync"
	"time"
)

// DefaultMaxCachedIndexes bounds how many bases keep a parsed index.
const DefaultMaxCachedIndexes = 64

// errClosed is returned by searches after [Set.Close].
var errClosed = errors.New("knowledge: closed")

// cache keeps the parsed index of each base, keyed by [source.key]. A
// search asks for the index with the base's current fingerprint: a base
// whose files did not change is served from memory, one whose files did is
// parsed and indexed again (once, however many searches wait for it; other
// bases are not held up). The least recently used bases beyond max are
// dropped.
type cache struct {
	max      int
	maxChars int
	now      func() time.Time

	mu      sync.Mutex // guards the fields below; never held across I/O
	entries map[string]*entry
	closed  bool
	// builds counts indexes built, for tests.
	builds int
}

// entry is one base's slot.
type entry struct {
	used time.Time // guarded by cache.mu

	mu      sync.Mutex // held while the base is checked and (re)built
	cur     *index
	dropped bool // evicted or closed: a build here is retired at once
}

func newCache(max, maxChars int) *cache {
	if max <= 0 {
		max = DefaultMaxCachedIndexes
	}
	return &cache{max: max, maxChars: maxChars, now: time.Now, entries: map[string]*entry{}}
}

// acquire returns the current index of src and its release func, which
// must be called once the search is done.
func (c *cache) acquire(ctx context.Context, src source) (*index, func(), error) {
	return c.get(ctx, src, false)
}

// rebuild parses and indexes src again whatever its fingerprint says.
func (c *cache) rebuild(ctx context.Context, src source) (*index, func(), error) {
	return c.get(ctx, src, true)
}

func (c *cache) get(ctx context.Context, src source, force bool) (*index, func(), error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, nil, errClosed
	}
	e := c.entries[src.key()]
	if e == nil {
		e = &entry{}
		c.entries[src.key()] = e
	}
	e.used = c.now()
	victims := c.evictLocked(src.key())
	c.mu.Unlock()
	for _, v := range victims {
		v.drop()
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	if !force && e.cur != nil {
		fp, err := src.fingerprint(ctx)
		if err != nil {
			return nil, nil, err
		}
		if fp == e.cur.fp && e.cur.ref() {
			return e.cur, e.cur.unref, nil
		}
	}
	files, fp, err := src.load(ctx)
	if err != nil {
		return nil, nil, err
	}
	ix, err := buildIndex(fp, parse(files, c.maxChars))
	if err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	c.builds++
	c.mu.Unlock()
	ix.ref()
	if e.dropped {
		ix.retire() // closes at this search's release
		return ix, ix.unref, nil
	}
	if e.cur != nil {
		e.cur.retire()
	}
	e.cur = ix
	return ix, ix.unref, nil
}

// evictLocked removes the least recently used entries beyond max (never
// keep) from the map and returns them, to be dropped outside c.mu.
func (c *cache) evictLocked(keep string) []*entry {
	var out []*entry
	for len(c.entries) > c.max {
		oldest := ""
		var at time.Time
		for k, e := range c.entries {
			if k != keep && (oldest == "" || e.used.Before(at)) {
				oldest, at = k, e.used
			}
		}
		if oldest == "" {
			break
		}
		out = append(out, c.entries[oldest])
		delete(c.entries, oldest)
	}
	return out
}

// drop retires the entry's index; a build under way retires its own.
func (e *entry) drop() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.dropped = true
	if e.cur != nil {
		e.cur.retire()
		e.cur = nil
	}
}

// forget drops the index of one base (its files were removed).
func (c *cache) forget(key string) {
	c.mu.Lock()
	e := c.entries[key]
	delete(c.entries, key)
	c.mu.Unlock()
	if e != nil {
		e.drop()
	}
}

// close drops every index; searches still running finish on theirs.
func (c *cache) close() {
	c.mu.Lock()
	c.closed = true
	entries := c.entries
	c.entries = map[string]*entry{}
	c.mu.Unlock()
	for _, e := range entries {
		e.drop()
	}
}

// buildCount reports how many indexes were built.
func (c *cache) buildCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.builds
}
