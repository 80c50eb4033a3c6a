package memory

import (
	"fmt"
	"testing"
	"time"
)

// The switch cache is bounded: at maxCachedSwitches entries, a new one
// drops the expired ones, and when none has expired, all of them (they
// are read again from the store); it never grows past the bound.
func TestSwitchCacheIsBounded(t *testing.T) {
	now := time.Now()
	fill := func(c *switchCache, at time.Time) {
		for i := range maxCachedSwitches {
			c.put(fmt.Sprint("user", i), true, at)
		}
	}
	cases := []struct {
		name     string
		filledAt time.Time
		// want is how many entries are left after one more.
		want int
	}{
		{"all expired", now.Add(-time.Hour), 1},
		{"none expired", now, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cache := &switchCache{ttl: time.Minute}
			fill(cache, c.filledAt)
			if n := len(cache.m); n != maxCachedSwitches {
				t.Fatalf("%d entries after filling; want %d", n, maxCachedSwitches)
			}
			cache.put("newcomer", false, now)
			if n := len(cache.m); n != c.want {
				t.Fatalf("%d entries after one more; want %d", n, c.want)
			}
			if e, ok := cache.m["newcomer"]; !ok || e.on {
				t.Fatalf("the newcomer's entry = %+v, %v", e, ok)
			}
		})
	}
	// Half expired: those go, the fresh stay.
	cache := &switchCache{ttl: time.Minute}
	for i := range maxCachedSwitches {
		at := now
		if i%2 == 0 {
			at = now.Add(-time.Hour)
		}
		cache.put(fmt.Sprint("user", i), true, at)
	}
	cache.put("newcomer", true, now)
	if n := len(cache.m); n != maxCachedSwitches/2+1 {
		t.Fatalf("%d entries after one more with half expired; want %d", n, maxCachedSwitches/2+1)
	}
	if _, ok := cache.m["user1"]; !ok {
		t.Error("a fresh entry was dropped while expired ones could go")
	}
	if _, ok := cache.m["user0"]; ok {
		t.Error("an expired entry stayed")
	}
}
