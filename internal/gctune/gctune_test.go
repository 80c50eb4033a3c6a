package gctune

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name               string
		live, roots, floor uint64
		want               int
	}{
		{"small heap reaches the floor", 4 * mib, 0, 64 * mib, 1500},
		{"roots count as scanned", 4 * mib, 4 * mib, 64 * mib, 750},
		{"base already reaches the floor", 40 * mib, 0, 64 * mib, basePercent},
		{"live above the floor", 100 * mib, 0, 64 * mib, basePercent},
		{"nearly empty heap is capped", 1024, 0, 64 * mib, maxPercent},
		{"nothing measured yet", 0, 0, 64 * mib, basePercent},
	} {
		if got := Percent(tc.live, tc.roots, tc.floor); got != tc.want {
			t.Errorf("%s: Percent(%d, %d, %d) = %d, want %d", tc.name, tc.live, tc.roots, tc.floor, got, tc.want)
		}
	}
}

// waitAdjusted returns the percentage the tuner sets after the collection
// the test ran. The finalizer runs soon after the collection; the bound
// only keeps a broken tuner from hanging the test.
func waitAdjusted(t *testing.T, adjusted <-chan int) int {
	t.Helper()
	select {
	case p := <-adjusted:
		return p
	case <-time.After(30 * time.Second):
		t.Fatal("no adjustment within 30 s of a collection")
		return 0
	}
}

// newTestTuner is a tuner armed on the real collector that sets each
// percentage with setter, records it, and tells of it on the channel.
func newTestTuner(floor uint64, setter func(int) int) (*Tuner, chan int, *[]int) {
	var set []int
	adjusted := make(chan int, 16)
	tu := newTuner(floor, func(p int) int {
		set = append(set, p)
		select {
		case adjusted <- p:
		default:
		}
		return setter(p)
	})
	tu.arm()
	return tu, adjusted, &set
}

// noSetter stands for the runtime in tests that only record.
func noSetter(int) int { return 0 }

func TestTunerRaisesThePercentAfterACollection(t *testing.T) {
	// The test binary's live heap is a few MiB: a floor of 1 GiB needs far
	// more than the base percentage.
	tu, adjusted, _ := newTestTuner(1<<30, noSetter)
	defer tu.Stop()
	runtime.GC()
	if p := waitAdjusted(t, adjusted); p <= basePercent {
		t.Fatalf("after a collection the tuner set %d, want more than %d", p, basePercent)
	}
}

func TestTunerKeepsTheBaseWhenTheHeapIsLarge(t *testing.T) {
	// A floor below any live heap: the base already reaches it, and the
	// tuner never moves off it.
	tu, adjusted, set := newTestTuner(1, noSetter)
	runtime.GC()
	runtime.GC()
	select {
	case p := <-adjusted:
		t.Fatalf("the tuner set %d with a floor below the live heap", p)
	default:
	}
	tu.Stop()
	if got := *set; len(got) != 1 || got[0] != basePercent {
		t.Fatalf("percentages set = %v, want only Stop's %d", got, basePercent)
	}
}

func TestStopSetsTheBaseBack(t *testing.T) {
	tu, adjusted, set := newTestTuner(1<<30, noSetter)
	runtime.GC()
	waitAdjusted(t, adjusted)
	tu.Stop()
	tu.Stop() // twice is once
	got := *set
	if n := len(got); n < 2 || got[n-1] != basePercent || got[n-2] == basePercent {
		t.Fatalf("percentages set = %v, want a raised one then %d once", got, basePercent)
	}
}

func TestStartLeavesGOGCToTheOperator(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "GOGC" {
				return v
			}
			return ""
		}
	}
	if tu := Start(64<<20, env("200")); tu != nil {
		tu.Stop()
		t.Fatal("Start ran a tuner although GOGC is set")
	}
	if tu := Start(0, env("")); tu != nil {
		tu.Stop()
		t.Fatal("Start ran a tuner with no floor")
	}
	var none *Tuner
	none.Stop() // a nil tuner stops as nothing
}

func TestTheRuntimeTakesThePercent(t *testing.T) {
	tu, adjusted, _ := newTestTuner(1<<30, debug.SetGCPercent)
	runtime.GC()
	p := waitAdjusted(t, adjusted)
	tu.Stop()
	// Stop set the base back; what it replaced is what the runtime had.
	if got := debug.SetGCPercent(basePercent); got != basePercent {
		t.Fatalf("after Stop the runtime's GC percent is %d, want %d", got, basePercent)
	}
	if p <= basePercent {
		t.Fatalf("the tuner set %d, want more than %d", p, basePercent)
	}
}

func TestTunerFollowsEachCollection(t *testing.T) {
	tu, adjusted, _ := newTestTuner(1<<30, noSetter)
	defer tu.Stop()
	runtime.GC()
	first := waitAdjusted(t, adjusted)
	// A live heap a quarter of the floor needs a much lower percentage: the
	// tuner, armed again after the first collection, sees the second.
	live := make([]byte, 256<<20)
	runtime.GC()
	second := waitAdjusted(t, adjusted)
	runtime.KeepAlive(live)
	if second >= first || second <= basePercent {
		t.Fatalf("percentages after a small then a 256 MiB live heap = %d, %d; want the second lower, above %d", first, second, basePercent)
	}
}
