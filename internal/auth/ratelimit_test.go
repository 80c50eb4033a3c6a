package auth

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// fakeClock gives b a clock that only moves when the test says so.
func fakeClock(b *buckets) *clock {
	c := &clock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	b.now = c.now
	return c
}

func allow(t *testing.T, l interface {
	Allow(string) (bool, time.Duration)
}, key string, want bool) time.Duration {
	t.Helper()
	ok, retry := l.Allow(key)
	if ok != want {
		t.Fatalf("Allow(%q) = %v, want %v", key, ok, want)
	}
	if ok != (retry == 0) {
		t.Fatalf("Allow(%q) = %v with retryAfter %v", key, ok, retry)
	}
	return retry
}

func TestLimiterBurstAndRefill(t *testing.T) {
	l := NewLimiter(2, 3) // 2 a second, 3 at once
	c := fakeClock(l.b)
	for range 3 {
		allow(t, l, "alice", true)
	}
	if retry := allow(t, l, "alice", false); retry != 500*time.Millisecond {
		t.Errorf("retryAfter = %v, want 500ms (one token at 2/s)", retry)
	}
	// Refusals cost nothing: the wait does not grow.
	if retry := allow(t, l, "alice", false); retry != 500*time.Millisecond {
		t.Errorf("retryAfter after a refusal = %v, want 500ms", retry)
	}
	allow(t, l, "bob", true) // keys are independent
	c.advance(499 * time.Millisecond)
	allow(t, l, "alice", false)
	c.advance(time.Millisecond)
	allow(t, l, "alice", true)
	allow(t, l, "alice", false)
	c.advance(10 * time.Second) // refills to the burst, not beyond
	for range 3 {
		allow(t, l, "alice", true)
	}
	allow(t, l, "alice", false)
}

func TestLimiterUnlimited(t *testing.T) {
	for _, l := range []*Limiter{NewLimiter(0, 5), NewLimiter(-1, 0)} {
		for i := range 1000 {
			allow(t, l, fmt.Sprint(i%3), true)
		}
	}
	f := NewFailureLimiter(0, time.Minute)
	for range 100 {
		allow(t, f, "alice", true)
	}
}

func TestLimiterZeroBurstIsOne(t *testing.T) {
	l := NewLimiter(1, 0)
	fakeClock(l.b)
	allow(t, l, "alice", true)
	if retry := allow(t, l, "alice", false); retry != time.Second {
		t.Errorf("retryAfter = %v, want 1s", retry)
	}
}

func TestLimiterForgetsRefilledKeys(t *testing.T) {
	l := NewLimiter(10, 5) // refilled 500ms after its last use
	c := fakeClock(l.b)
	for i := range 1000 {
		allow(t, l, fmt.Sprint("k", i), true)
	}
	if n := l.b.lru.Len(); n != 1000 {
		t.Fatalf("keys = %d, want 1000", n)
	}
	c.advance(499 * time.Millisecond)
	allow(t, l, "fresh", true)
	if n := l.b.lru.Len(); n != 1001 {
		t.Fatalf("keys before refill = %d, want 1001", n)
	}
	c.advance(time.Millisecond)
	allow(t, l, "fresh", true)
	if n, m := l.b.lru.Len(), len(l.b.byKey); n != 1 || m != 1 {
		t.Errorf("keys after refill = %d (map %d), want 1", n, m)
	}
}

func TestLimiterCapsKeys(t *testing.T) {
	l := NewLimiter(1, 1)
	fakeClock(l.b)
	l.b.max = 100
	for i := range 1000 {
		allow(t, l, fmt.Sprint("k", i), true)
		if n := l.b.lru.Len(); n > 100 || len(l.b.byKey) != n {
			t.Fatalf("after %d keys: %d in the list, %d in the map; want <= 100 and equal", i+1, n, len(l.b.byKey))
		}
	}
	// The most recent keys are kept (still empty); the oldest were forgotten.
	allow(t, l, "k999", false)
	allow(t, l, "k0", true)
}

func TestFailureLimiter(t *testing.T) {
	f := NewFailureLimiter(3, time.Minute) // 3 attempts, one back every 20s
	c := fakeClock(f.b)
	for range 3 {
		allow(t, f, "alice", true)
	}
	if retry := allow(t, f, "alice", false); retry != 20*time.Second {
		t.Errorf("retryAfter = %v, want 20s", retry)
	}
	allow(t, f, "bob", true)
	c.advance(20 * time.Second)
	allow(t, f, "alice", true)
	allow(t, f, "alice", false)
	f.Success("alice") // a right password gives every attempt back
	for range 3 {
		allow(t, f, "alice", true)
	}
	allow(t, f, "alice", false)
	f.Success("nobody") // forgetting an unknown key is harmless
}

func TestLimiterConcurrent(t *testing.T) {
	l := NewLimiter(1, 50)
	fakeClock(l.b) // time stands still: exactly the burst gets through
	l.b.max = 8
	f := NewFailureLimiter(5, time.Hour)
	var mu sync.Mutex
	allowed := map[string]int{}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 200 {
				key := fmt.Sprint("k", i%4)
				if ok, _ := l.Allow(key); ok {
					mu.Lock()
					allowed[key]++
					mu.Unlock()
				}
				f.Allow(key)
				if i%50 == 0 {
					f.Success(fmt.Sprint("k", g%4))
				}
			}
		})
	}
	wg.Wait()
	for i := range 4 {
		if got := allowed[fmt.Sprint("k", i)]; got != 50 {
			t.Errorf("k%d: %d allowed, want the burst of 50", i, got)
		}
	}
}
