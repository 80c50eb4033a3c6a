package monitor_test

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wunder/wunder/monitor"
)

// clock is a settable time for the sampler.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

// Each Sample closes its interval into a point: counts, runs/s over the
// interval's real length, percentiles and maximum of each latency, the
// gauges; an interval with nothing is a point of zeros.
func TestSamplerPoints(t *testing.T) {
	c := &clock{t: time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)}
	s := monitor.NewSampler(&monitor.SamplerOptions{Interval: 10 * time.Second, Points: 4, Now: c.now,
		Gauges: func() (int, int) { return 3, 1 }})
	for i := 1; i <= 20; i++ {
		s.RunEnded(time.Duration(i)*100*time.Millisecond, i == 20)
	}
	s.ToolEnded(5*time.Millisecond, false)
	s.ToolEnded(7*time.Millisecond, true)
	c.advance(8 * time.Second) // a sample a little early: runs/s is over the real 8 s
	got := s.Sample()
	want := monitor.Point{At: c.t, Seconds: 8, Runs: 20, RunsPerSecond: 2.5, RunFailed: 1,
		RunP50MS: 1000, RunP95MS: 1900, RunMaxMS: 2000,
		Tools: 2, ToolErrors: 1, ToolP50MS: 5, ToolP95MS: 7, ToolMaxMS: 7, Active: 3, Queued: 1}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("the first point (-want +got):\n%s", d)
	}
	c.advance(10 * time.Second)
	empty := s.Sample()
	if d := cmp.Diff(monitor.Point{At: c.t, Seconds: 10, Active: 3, Queued: 1}, empty); d != "" {
		t.Fatalf("an interval with nothing (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]monitor.Point{want, empty}, s.Points(0)); d != "" {
		t.Fatalf("the points (-want +got):\n%s", d)
	}
}

// The ring keeps the newest points, oldest first; Points(n) the newest n.
func TestSamplerRing(t *testing.T) {
	c := &clock{t: time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)}
	s := monitor.NewSampler(&monitor.SamplerOptions{Interval: time.Second, Points: 3, Now: c.now})
	if got := s.Points(0); got == nil || len(got) != 0 {
		t.Fatalf("no sample yet: %v; want an empty list", got)
	}
	for i := 1; i <= 5; i++ {
		for range i {
			s.RunEnded(time.Millisecond, false)
		}
		c.advance(time.Second)
		s.Sample()
	}
	runs := func(ps []monitor.Point) []int {
		var out []int
		for _, p := range ps {
			out = append(out, p.Runs)
		}
		return out
	}
	if d := cmp.Diff([]int{3, 4, 5}, runs(s.Points(0))); d != "" {
		t.Errorf("the ring after 5 samples of 3 (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]int{4, 5}, runs(s.Points(2))); d != "" {
		t.Errorf("the newest 2 (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]int{3, 4, 5}, runs(s.Points(10))); d != "" {
		t.Errorf("more than kept (-want +got):\n%s", d)
	}
}

// Beyond the latencies one interval keeps, counts stay exact and the
// maximum is of those kept; reports from many goroutines all count.
func TestSamplerBoundedAndConcurrent(t *testing.T) {
	c := &clock{t: time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)}
	s := monitor.NewSampler(&monitor.SamplerOptions{Now: c.now})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				s.ToolEnded(time.Duration(g*1000+i)*time.Microsecond, false)
				s.RunEnded(time.Second, false)
			}
		})
	}
	wg.Wait()
	c.advance(10 * time.Second)
	p := s.Sample()
	if p.Tools != 8000 || p.Runs != 8000 || p.RunsPerSecond != 800 || p.RunP95MS != 1000 {
		t.Fatalf("8000 reports: %+v", p)
	}
	if p.ToolMaxMS > 7 || p.ToolP50MS > p.ToolP95MS {
		t.Fatalf("tool latencies: %+v", p)
	}
}
