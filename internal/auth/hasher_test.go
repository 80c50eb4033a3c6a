package auth

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gatedDerive is a derive that counts the derivations in flight and holds
// each until the test lets it go.
type gatedDerive struct {
	entered  chan params
	gate     chan struct{}
	inFlight atomic.Int32
	peak     atomic.Int32
}

func newGated() *gatedDerive {
	return &gatedDerive{entered: make(chan params, 64), gate: make(chan struct{})}
}

func (g *gatedDerive) derive(pw []byte, p params) []byte {
	n := g.inFlight.Add(1)
	for {
		old := g.peak.Load()
		if n <= old || g.peak.CompareAndSwap(old, n) {
			break
		}
	}
	g.entered <- p
	<-g.gate
	g.inFlight.Add(-1)
	return make([]byte, len(p.key))
}

// Derivations beyond the budget wait for room; the budget is never
// exceeded, and every caller that waits long enough is answered.
func TestHasherBoundsDerivationsInFlight(t *testing.T) {
	g := newGated()
	h := NewHasher(2*MemoryPerHash, time.Hour)
	h.derive = g.derive
	if h.Slots() != 2 {
		t.Fatalf("Slots() = %d; want 2", h.Slots())
	}
	const callers = 6
	errs := make(chan error, callers)
	for range callers {
		go func() {
			_, err := h.Check(t.Context(), "", "password")
			errs <- err
		}()
	}
	<-g.entered
	<-g.entered
	if h.sem.TryAcquire(1) {
		t.Fatal("with two derivations in flight the budget of two still had room")
	}
	for range callers {
		g.gate <- struct{}{} // lets one finish; a waiting caller takes its place
	}
	for range callers {
		if err := <-errs; err != nil {
			t.Errorf("Check = %v; want every caller answered", err)
		}
	}
	if p := g.peak.Load(); p != 2 {
		t.Errorf("peak derivations in flight = %d; want 2 (the budget)", p)
	}
}

// A full budget refuses with ErrBusy: at once without a wait, after the
// wait with one, and a caller that goes away gets its context's error.
func TestHasherBusy(t *testing.T) {
	g := newGated()
	h := NewHasher(MemoryPerHash, 0)
	h.derive = g.derive
	done := make(chan error, 1)
	go func() { _, err := h.Hash(t.Context(), "password"); done <- err }()
	<-g.entered
	if _, err := h.Check(t.Context(), "", "password"); !errors.Is(err, ErrBusy) {
		t.Errorf("Check with the budget taken and no wait = %v; want ErrBusy", err)
	}
	h.wait = 10 * time.Millisecond
	if _, err := h.Hash(t.Context(), "password"); !errors.Is(err, ErrBusy) {
		t.Errorf("Hash with the budget taken past the wait = %v; want ErrBusy", err)
	}
	h.wait = time.Hour
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := h.Check(ctx, "", "password"); !errors.Is(err, context.Canceled) {
		t.Errorf("Check of a caller gone = %v; want context.Canceled", err)
	}
	g.gate <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if g.inFlight.Load() != 0 {
		t.Error("a refused caller derived")
	}
}

// Checking a password against no hash (a login naming no such user, or a
// user without a password) derives exactly once with the parameters of a
// real hash: the same memory, passes and threads, the same key length. So
// an unknown id costs what a known one does, and its answer takes as long.
func TestCheckWithoutHashDerivesLikeARealOne(t *testing.T) {
	stored, err := HashPassword("right password")
	if err != nil {
		t.Fatal(err)
	}
	for _, encoded := range []string{stored, "", "not a hash", "$argon2id$v=19$m=65536,t=3,p=4$AAAA$AAAA"} {
		var mu sync.Mutex
		var seen []params
		h := NewHasher(MemoryPerHash, time.Second)
		h.derive = func(pw []byte, p params) []byte {
			mu.Lock()
			seen = append(seen, p)
			mu.Unlock()
			return argonKey(pw, p)
		}
		ok, err := h.Check(t.Context(), encoded, "wrong password")
		if ok || err != nil {
			t.Errorf("Check(%q, wrong) = %v, %v; want false, nil", encoded, ok, err)
		}
		if len(seen) != 1 {
			t.Fatalf("Check(%q) derived %d times; want once", encoded, len(seen))
		}
		p := seen[0]
		if p.memory != argonMemory || p.time != argonTime || p.threads != argonThreads || len(p.key) != argonKeyLen || len(p.salt) != saltLen {
			t.Errorf("Check(%q) derived with m=%d t=%d p=%d key %d salt %d; want a real hash's m=%d t=%d p=%d key %d salt %d",
				encoded, p.memory, p.time, p.threads, len(p.key), len(p.salt), argonMemory, argonTime, argonThreads, argonKeyLen, saltLen)
		}
	}
	h := NewHasher(MemoryPerHash, time.Second)
	if ok, err := h.Check(t.Context(), stored, "right password"); !ok || err != nil {
		t.Errorf("Check(stored, right) = %v, %v; want true", ok, err)
	}
}

// A stored hash needing more memory than the whole budget is refused, not
// waited for forever.
func TestHasherRefusesHashAboveBudget(t *testing.T) {
	h := NewHasher(MemoryPerHash, time.Hour)
	big := "$argon2id$v=19$m=131072,t=3,p=4$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	if _, err := h.Check(t.Context(), big, "x"); err == nil || errors.Is(err, ErrBusy) {
		t.Errorf("Check(a 128 MiB hash) with a 64 MiB budget = %v; want an error naming the budget", err)
	}
}
