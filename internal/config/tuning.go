package config

import "time"

// Tuning holds the performance knobs (the tuning section): how long writes
// may wait to be shared, how the garbage collector paces itself. Each is a
// pointer: unset (absent, or null) takes the default its comment states,
// which is the component's own; 0 turns the knob off. They change how fast
// wunder is, never what it answers (docs/benchmarks.md says what each
// bought). The keys used to live under observability and server; those
// spellings still load, with a warning naming these.
type Tuning struct {
	// BlockingEventDelayMS (blocking_event_delay_ms): how long the events
	// of a run whose caller waits for the whole answer may wait to be
	// stored, so a run that ends within it stores them with its end.
	// Unset: 20; 0-1000; 0 = none.
	BlockingEventDelayMS *int `yaml:"blocking_event_delay_ms"`
	// StreamEventDelayMS (stream_event_delay_ms): how long the first
	// events of a streamed run on a new session (POST /wunder's SSE, an
	// A2A stream, Connect's Run) may wait to be stored with the run's
	// start, so a run that ends within it is stored in one write. Unset:
	// 5; 0-1000; 0 = none.
	StreamEventDelayMS *int `yaml:"stream_event_delay_ms"`
	// ToolLogDelayMS (tool_log_delay_ms): how long a tool call's audit
	// record (the tool log) may wait to be stored, so that the records of
	// many calls share one write. Unset: 50; 0-1000; 0 = none.
	ToolLogDelayMS *int `yaml:"tool_log_delay_ms"`
	// GCMinHeapMB (gc_min_heap_mb) is a floor for the garbage collector's
	// heap goal, in MiB: the heap may reach it before a collection,
	// however small the live heap (internal/gctune). Unset: 64; 0-1048576
	// (1 TiB); 0 leaves Go's pacing as it is. The GOGC environment
	// variable, when set, wins.
	GCMinHeapMB *int `yaml:"gc_min_heap_mb"`
}

// DefaultGCMinHeapMB is tuning.gc_min_heap_mb when unset.
const DefaultGCMinHeapMB = 64

// maxGCMinHeapMB bounds tuning.gc_min_heap_mb at 1 TiB: a floor in bytes
// (the value << 20) then stays far from overflowing internal/gctune's
// arithmetic.
const maxGCMinHeapMB = 1 << 20

// Millis is one of the tuning delays as a duration, and whether it is set
// (unset: the component's default applies).
func Millis(ms *int) (d time.Duration, set bool) {
	if ms == nil {
		return 0, false
	}
	return millis(max(*ms, 0)), true
}

// GCMinHeap is gc_min_heap_mb, its default when unset.
func (t Tuning) GCMinHeap() int {
	if t.GCMinHeapMB == nil {
		return DefaultGCMinHeapMB
	}
	return *t.GCMinHeapMB
}

func (c *Config) validateTuning(v checker) {
	t := c.Tuning
	for _, k := range []struct {
		path string
		val  *int
		max  int
	}{
		{"tuning.blocking_event_delay_ms", t.BlockingEventDelayMS, 1000},
		{"tuning.stream_event_delay_ms", t.StreamEventDelayMS, 1000},
		{"tuning.tool_log_delay_ms", t.ToolLogDelayMS, 1000},
		{"tuning.gc_min_heap_mb", t.GCMinHeapMB, maxGCMinHeapMB},
	} {
		if k.val != nil {
			v.between(k.path, *k.val, 0, k.max)
		}
	}
}
