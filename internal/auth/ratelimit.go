package auth

import (
	"container/list"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// maxKeys bounds the keys a limiter tracks; past it the least recently
// used key is forgotten (and starts again with a full bucket).
const maxKeys = 1 << 16

// Limiter is a token bucket per key (a principal, an address): each key
// may spend burst requests at once and perSecond on average. Keys idle
// long enough to have refilled are forgotten, and at most maxKeys are
// kept, so memory stays bounded whatever keys callers invent. It is safe
// for concurrent use.
type Limiter struct {
	b *buckets // nil: unlimited
}

// NewLimiter returns a limiter of perSecond requests per second with the
// given burst (at least 1). perSecond <= 0 means unlimited.
func NewLimiter(perSecond float64, burst int) *Limiter {
	if perSecond <= 0 {
		return &Limiter{}
	}
	return &Limiter{b: newBuckets(rate.Limit(perSecond), burst)}
}

// WithClock makes the limiter read time from now (a test's clock, or the
// one its caller already uses); it returns l.
func (l *Limiter) WithClock(now func() time.Time) *Limiter {
	if l.b != nil && now != nil {
		l.b.now = now
	}
	return l
}

// Allow takes a token from key's bucket. When the bucket is empty it
// takes nothing and says how long until a token is there.
func (l *Limiter) Allow(key string) (ok bool, retryAfter time.Duration) {
	if l.b == nil {
		return true, 0
	}
	return l.b.take(key)
}

// FailureLimiter slows down guessing, for logins: each key (a user id, or
// a user id and an address) has maxFailures attempts, and gets them back
// at maxFailures per window; a successful attempt gives them all back.
// Allow counts the attempt before the password is checked, so concurrent
// guesses cannot overtake the count:
//
//	if ok, wait := fl.Allow(userID); !ok {
//		return tooManyRequests(wait)
//	}
//	if err := checkPassword(...); err != nil {
//		return unauthorized()
//	}
//	fl.Success(userID)
//
// It is safe for concurrent use.
type FailureLimiter struct {
	b *buckets // nil: unlimited
}

// NewFailureLimiter returns a limiter of maxFailures failed attempts per
// window. maxFailures <= 0 or window <= 0 means unlimited.
func NewFailureLimiter(maxFailures int, window time.Duration) *FailureLimiter {
	if maxFailures <= 0 || window <= 0 {
		return &FailureLimiter{}
	}
	return &FailureLimiter{b: newBuckets(rate.Every(window/time.Duration(maxFailures)), maxFailures)}
}

// Allow counts an attempt for key. When key has used up its attempts it
// counts nothing and says how long until the next one is allowed.
func (f *FailureLimiter) Allow(key string) (ok bool, retryAfter time.Duration) {
	if f.b == nil {
		return true, 0
	}
	return f.b.take(key)
}

// Success gives key all its attempts back.
func (f *FailureLimiter) Success(key string) {
	if f.b != nil {
		f.b.forget(key)
	}
}

// buckets holds a rate.Limiter per key in least-recently-used order.
type buckets struct {
	limit    rate.Limit
	burst    int
	refilled time.Duration    // an empty bucket is full again after this
	now      func() time.Time // the clock; replaced in tests

	// mu guards the fields below.
	mu    sync.Mutex
	lru   *list.List // of *bucket, most recently used first
	byKey map[string]*list.Element
	max   int // maxKeys; smaller in tests
}

type bucket struct {
	key  string
	lim  *rate.Limiter
	used time.Time
}

func newBuckets(limit rate.Limit, burst int) *buckets {
	burst = max(burst, 1)
	return &buckets{
		limit:    limit,
		burst:    burst,
		refilled: time.Duration(min(float64(burst)/float64(limit), 1<<30) * float64(time.Second)),
		now:      time.Now,
		lru:      list.New(),
		byKey:    map[string]*list.Element{},
		max:      maxKeys,
	}
}

// take takes a token from key's bucket, or says how long until there is one.
func (b *buckets) take(key string) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	lim := b.get(key, now)
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now) // a refused request costs nothing
		return false, d
	}
	return true, 0
}

// get returns key's limiter, creating it, after forgetting the keys that
// have refilled and, at the cap, the least recently used one.
func (b *buckets) get(key string, now time.Time) *rate.Limiter {
	if e, ok := b.byKey[key]; ok {
		e.Value.(*bucket).used = now
		b.lru.MoveToFront(e)
		b.sweep(now)
		return e.Value.(*bucket).lim
	}
	b.sweep(now)
	if b.lru.Len() >= b.max {
		b.remove(b.lru.Back())
	}
	bk := &bucket{key: key, lim: rate.NewLimiter(b.limit, b.burst), used: now}
	b.byKey[key] = b.lru.PushFront(bk)
	return bk.lim
}

// sweep forgets keys unused for long enough to have refilled: a full
// bucket is no different from a new one. Oldest first, so it stops at the
// first key still refilling.
func (b *buckets) sweep(now time.Time) {
	for e := b.lru.Back(); e != nil && now.Sub(e.Value.(*bucket).used) >= b.refilled; e = b.lru.Back() {
		b.remove(e)
	}
}

func (b *buckets) remove(e *list.Element) {
	delete(b.byKey, e.Value.(*bucket).key)
	b.lru.Remove(e)
}

func (b *buckets) forget(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.byKey[key]; ok {
		b.remove(e)
	}
}
