// Package gctune keeps the garbage collector from running on a small heap
// many times a second: it gives the heap a floor, a size it may reach
// before a collection, whatever GOGC's percentage of the live heap says.
//
// The Go collector starts a cycle when the heap reaches its goal, the live
// heap (and the roots it scans) plus GOGC percent of it: 100 by default,
// so the heap may double. wunder's live heap is small (about 5 MiB under
// load) and what a run allocates is short-lived: 80 KB a run of garbage at
// a thousand runs a second is twenty collections a second, each of them
// marking the live heap again and slowing every allocation while it runs.
// A floor of 64 MiB lets the collector run a few times a second instead.
//
// After each collection the tuner raises the GC percentage so that the
// next goal is at least the floor, and lowers it back to the base (GOGC's
// default, 100) once the live heap is large enough that the base reaches
// the floor by itself: a server with a large live heap (thousands of open
// streams) collects exactly as Go would, and the floor costs at most its
// own size in resident memory. A memory limit (GOMEMLIMIT, or
// debug.SetMemoryLimit) still bounds the heap: the collector runs when the
// limit nears, whatever the percentage.
//
// An operator who sets GOGC has chosen: the tuner does not start. The
// runtime has no minimum heap size of its own (golang/go#42430 asks for
// one); the tuner gets the same effect from outside, with
// debug.SetGCPercent after each cycle. It learns of a cycle from the
// finalizer of an object it leaves unreachable, armed again each time.
package gctune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// basePercent is the GC percentage the tuner never goes below: GOGC's
// default.
const basePercent = 100

// maxPercent bounds the percentage on a nearly empty heap.
const maxPercent = 5000

// Percent is the GC percentage that makes the next heap goal at least
// floor bytes, for a live heap of live bytes and roots (stacks and globals)
// of roots bytes: the goal is live + (live+roots)×percent/100. It is never
// below basePercent nor above maxPercent.
func Percent(live, roots, floor uint64) int {
	scan := live + roots
	if scan == 0 || live >= floor {
		return basePercent
	}
	p := (floor - live) * 100 / scan
	switch {
	case p <= basePercent:
		return basePercent
	case p >= maxPercent:
		return maxPercent
	}
	return int(p)
}

// Tuner sets the GC percentage after each collection.
type Tuner struct {
	floor   uint64
	stopped atomic.Bool
	mu      sync.Mutex
	current int
	samples []metrics.Sample
	set     func(int) int // debug.SetGCPercent, but in tests
}

// sentinel is the object whose finalizer runs after each collection.
type sentinel struct{ t *Tuner }

// Start starts a tuner with a floor of floor bytes, or returns nil when
// floor is 0 or getenv("GOGC") is set. A nil Tuner's Stop does nothing.
func Start(floor uint64, getenv func(string) string) *Tuner {
	if floor == 0 || getenv("GOGC") != "" {
		return nil
	}
	t := newTuner(floor, debug.SetGCPercent)
	t.arm()
	return t
}

func newTuner(floor uint64, set func(int) int) *Tuner {
	return &Tuner{
		floor:   floor,
		current: basePercent,
		set:     set,
		samples: []metrics.Sample{
			{Name: "/gc/heap/live:bytes"},
			{Name: "/gc/scan/stack:bytes"},
			{Name: "/gc/scan/globals:bytes"},
		},
	}
}

// arm sets a finalizer on a new sentinel: the next collection finds it
// unreachable and runs the finalizer, which adjusts and arms again.
func (t *Tuner) arm() {
	runtime.SetFinalizer(&sentinel{t: t}, func(s *sentinel) {
		if s.t.stopped.Load() {
			return
		}
		s.t.adjust()
		s.t.arm()
	})
}

// adjust reads the live heap the last collection marked and sets the
// percentage for the next goal.
func (t *Tuner) adjust() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped.Load() {
		return
	}
	metrics.Read(t.samples)
	var v [3]uint64
	for i, s := range t.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	p := Percent(v[0], v[1]+v[2], t.floor)
	// Set it only when it moves by more than a tenth: each set recomputes
	// the pacer's goal.
	if d := p - t.current; d*10 > t.current || -d*10 > t.current {
		t.set(p)
		t.current = p
	}
}

// Stop stops the tuner and sets the percentage back to the base.
func (t *Tuner) Stop() {
	if t == nil || t.stopped.Swap(true) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.set(basePercent)
	t.current = basePercent
}
