package gateway

import (
	"sync"
	"time"
)

// failureLimiter is the built-in login limit until a configured limiter
// replaces it: each key gets `free` attempts, then one attempt per `every`
// (the count decays by one per `every` of quiet). It is a small token
// bucket, in process.
type failureLimiter struct {
	free  float64
	every time.Duration
	now   func() time.Time
	// mu guards keys.
	mu   sync.Mutex
	keys map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newFailureLimiter(free int, every time.Duration, now func() time.Time) *failureLimiter {
	return &failureLimiter{free: float64(free), every: every, now: now, keys: map[string]*bucket{}}
}

// Allow takes one attempt for key.
func (l *failureLimiter) Allow(key string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b, ok := l.keys[key]
	if !ok {
		if len(l.keys) > 100000 { // bound memory under a spray of user ids
			clear(l.keys)
		}
		b = &bucket{tokens: l.free, at: now}
		l.keys[key] = b
	}
	b.tokens = min(l.free, b.tokens+float64(now.Sub(b.at))/float64(l.every))
	b.at = now
	if b.tokens < 1 {
		return false, time.Duration((1 - b.tokens) * float64(l.every))
	}
	b.tokens--
	return true, 0
}
