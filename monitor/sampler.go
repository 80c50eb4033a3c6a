package monitor

import (
	"slices"
	"sync"
	"time"
)

// Sampler keeps a short time series of this process's load for the
// performance page (GET /wunder/admin/performance): per interval, the
// runs that ended (runs/s) with their latency, and the tool calls with
// theirs, as points in a ring of fixed size. It is in memory, bounded
// and per process; nothing is stored.
//
// The run loop reports each end ([Sampler.RunEnded], [Sampler.ToolEnded];
// cmd/wunder wraps the core's observer to do so), and [Sampler.Sample]
// closes the interval being filled into a point. cmd/wunder calls Sample
// every [Sampler.Interval] on a ticker of its own; tests call it
// themselves, with a clock of their own ([SamplerOptions.Now]).
//
// It is safe for concurrent use.
type Sampler struct {
	interval time.Duration
	now      func() time.Time
	gauges   func() (active, queued int)

	// mu guards everything below.
	mu    sync.Mutex
	start time.Time // of the interval being filled
	cur   window
	ring  []Point // the points, oldest at next when full
	next  int
	full  bool
}

// SamplerOptions configure a [Sampler]; nil means the defaults.
type SamplerOptions struct {
	// Interval between two points. Default 10 s.
	Interval time.Duration
	// Points kept: the newest ones. Default 360 (an hour at 10 s).
	Points int
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Gauges, when set, is read at each sample: the runs executing and
	// queued then (the core's admission counters).
	Gauges func() (active, queued int)
}

// Point is one interval of a [Sampler].
type Point struct {
	// At is the end of the interval; Seconds its length.
	At      time.Time `json:"at"`
	Seconds float64   `json:"seconds"`
	// Runs ended in the interval (finished, failed or cancelled);
	// RunsPerSecond is Runs over Seconds.
	Runs          int     `json:"runs"`
	RunsPerSecond float64 `json:"runs_per_s"`
	// RunFailed of them failed.
	RunFailed int `json:"runs_failed"`
	// Run latency: from the run's admission here (or its resumption after
	// a pause) to its end, in milliseconds: the median, the 95th
	// percentile and the longest. Zero without runs.
	RunP50MS int64 `json:"run_p50_ms"`
	RunP95MS int64 `json:"run_p95_ms"`
	RunMaxMS int64 `json:"run_max_ms"`
	// Tool calls that ended in the interval, those that failed, and their
	// latency in milliseconds.
	Tools      int   `json:"tool_calls"`
	ToolErrors int   `json:"tool_errors"`
	ToolP50MS  int64 `json:"tool_p50_ms"`
	ToolP95MS  int64 `json:"tool_p95_ms"`
	ToolMaxMS  int64 `json:"tool_max_ms"`
	// Active and Queued runs at the end of the interval (with
	// SamplerOptions.Gauges).
	Active int `json:"active"`
	Queued int `json:"queued"`
}

// maxLatencies bounds the latencies one interval keeps per kind: beyond
// it, each new one replaces an older one in turn, so the percentiles are
// of a sample while the counts stay exact.
const maxLatencies = 4096

// window is the interval being filled.
type window struct {
	runs, runFailed, tools, toolErrors int
	runMS, toolMS                      []int64
}

func keep(list []int64, n int, v int64) []int64 {
	if len(list) < maxLatencies {
		return append(list, v)
	}
	list[n%maxLatencies] = v
	return list
}

// NewSampler returns a sampler with no points.
func NewSampler(opts *SamplerOptions) *Sampler {
	var o SamplerOptions
	if opts != nil {
		o = *opts
	}
	if o.Interval <= 0 {
		o.Interval = 10 * time.Second
	}
	if o.Points <= 0 {
		o.Points = 360
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Sampler{interval: o.Interval, now: o.Now, gauges: o.Gauges, ring: make([]Point, o.Points)}
	s.start = s.now()
	return s
}

// Interval is the time between two points.
func (s *Sampler) Interval() time.Duration { return s.interval }

// RunEnded counts a run that ended after d, failed or not.
func (s *Sampler) RunEnded(d time.Duration, failed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur.runMS = keep(s.cur.runMS, s.cur.runs, d.Milliseconds())
	s.cur.runs++
	if failed {
		s.cur.runFailed++
	}
}

// ToolEnded counts a tool call that ended after d.
func (s *Sampler) ToolEnded(d time.Duration, isError bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur.toolMS = keep(s.cur.toolMS, s.cur.tools, d.Milliseconds())
	s.cur.tools++
	if isError {
		s.cur.toolErrors++
	}
}

// Sample closes the interval being filled: it becomes the newest point
// (the oldest goes when the ring is full), which Sample returns, and a
// new interval starts now.
func (s *Sampler) Sample() Point {
	var active, queued int
	if s.gauges != nil {
		active, queued = s.gauges()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	w := s.cur
	p := Point{At: now, Seconds: now.Sub(s.start).Seconds(), Runs: w.runs, RunFailed: w.runFailed,
		Tools: w.tools, ToolErrors: w.toolErrors, Active: active, Queued: queued}
	if p.Seconds > 0 {
		p.RunsPerSecond = float64(w.runs) / p.Seconds
	}
	p.RunP50MS, p.RunP95MS, p.RunMaxMS = spread(w.runMS)
	p.ToolP50MS, p.ToolP95MS, p.ToolMaxMS = spread(w.toolMS)
	s.ring[s.next] = p
	s.next = (s.next + 1) % len(s.ring)
	s.full = s.full || s.next == 0
	s.cur = window{}
	s.start = now
	return p
}

// spread is the median, 95th percentile and maximum of ms (sorted in
// place); zeros when empty.
func spread(ms []int64) (p50, p95, most int64) {
	if len(ms) == 0 {
		return 0, 0, 0
	}
	slices.Sort(ms)
	return percentile(ms, 50), percentile(ms, 95), ms[len(ms)-1]
}

// Points returns the points kept, oldest first: at most the newest n
// (n <= 0: all of them).
func (s *Sampler) Points(n int) []Point {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Point
	if s.full {
		out = append(append(out, s.ring[s.next:]...), s.ring[:s.next]...)
	} else {
		out = append(out, s.ring[:s.next]...)
	}
	if n > 0 && len(out) > n {
		out = out[len(out)-n:]
	}
	if out == nil {
		out = []Point{}
	}
	return out
}
