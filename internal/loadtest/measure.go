package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/wunder/wunder/internal/client"
)

// Sample is one measured run.
type Sample struct {
	// Total is the run's whole time; First the time to its first event
	// (to the answer, when not streamed); FirstOutput the time to the
	// first text of the model's answer (an llm_output_delta or
	// llm_output event; for a model called directly, the first chunk
	// with content), the figure to hold against the model's own first
	// token. Zero when the run streamed none.
	Total, First, FirstOutput time.Duration
	// Err is why the run failed; nil for a run that finished.
	Err error
}

// Plan is one step of load: Workers callers at once, each making Runs
// runs one after another, or, with Duration, as many as fit in it (runs
// started before it ends are finished and counted).
type Plan struct {
	Workers  int
	Runs     int
	Duration time.Duration
}

// Drive runs fn as the plan says and returns every sample and the wall
// time the step took. It stops starting runs when ctx ends.
func Drive(ctx context.Context, p Plan, fn func(ctx context.Context, worker int) Sample) ([]Sample, time.Duration) {
	var mu sync.Mutex
	var out []Sample
	var wg sync.WaitGroup
	start := time.Now()
	var deadline time.Time
	if p.Duration > 0 {
		deadline = start.Add(p.Duration)
	}
	more := func(done int) bool {
		if ctx.Err() != nil {
			return false
		}
		if !deadline.IsZero() {
			return time.Now().Before(deadline)
		}
		return done < p.Runs
	}
	for w := range p.Workers {
		wg.Go(func() {
			for i := 0; more(i); i++ {
				s := fn(ctx, w)
				mu.Lock()
				out = append(out, s)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out, time.Since(start)
}

// Ask makes one run through POST /wunder, as SSE when stream is set (the
// first event timed) or as JSON, and measures it. A run that does not end
// finished is an error.
func Ask(ctx context.Context, c *client.Client, req client.RunRequest, stream bool) Sample {
	start := time.Now()
	var s Sample
	if !stream {
		a, err := c.AskJSON(ctx, req)
		s.Total = time.Since(start)
		s.First = s.Total
		switch {
		case err != nil:
			s.Err = err
		case a.State != "finished":
			s.Err = fmt.Errorf("run %s: %s", a.State, a.Error)
		}
		return s
	}
	final := false
	for ev, err := range c.Ask(ctx, req) {
		if err != nil {
			s.Err = err
			break
		}
		if s.First == 0 {
			s.First = time.Since(start)
		}
		if s.FirstOutput == 0 && (ev.Type == "llm_output_delta" || ev.Type == "llm_output") {
			s.FirstOutput = time.Since(start)
		}
		if ev.Type == "final" {
			final = true
			var fin client.Final
			_ = json.Unmarshal(ev.Data, &fin)
			if fin.State != "finished" {
				s.Err = fmt.Errorf("run %s: %s", fin.State, fin.Error)
			}
		}
	}
	if s.Err == nil && !final {
		s.Err = fmt.Errorf("the stream ended without a final event")
	}
	s.Total = time.Since(start)
	return s
}

// Step is the summary of one step of load. Durations are in milliseconds.
type Step struct {
	Concurrency int     `json:"concurrency"`
	Runs        int     `json:"total_requests"`
	Successes   int     `json:"success_requests"`
	Errors      int     `json:"error_requests"`
	ElapsedS    float64 `json:"elapsed_s"`
	RunsPerSec  float64 `json:"rps"`
	AvgMS       float64 `json:"avg_latency_ms"`
	P50MS       float64 `json:"p50_latency_ms"`
	P95MS       float64 `json:"p95_latency_ms"`
	P99MS       float64 `json:"p99_latency_ms"`
	FirstP50MS  float64 `json:"first_event_p50_ms"`
	FirstP95MS  float64 `json:"first_event_p95_ms"`
	FirstP99MS  float64 `json:"first_event_p99_ms"`
	// FirstOutput* are of the runs that streamed model output (0: none).
	FirstOutputP50MS float64 `json:"first_output_p50_ms,omitempty"`
	FirstOutputP95MS float64 `json:"first_output_p95_ms,omitempty"`
	// FirstError is the first error's message ("" = none).
	FirstError string `json:"first_error,omitempty"`
}

// Summarize reduces a step's samples: runs/s counts the runs that
// succeeded over the wall time; percentiles are of successful runs.
func Summarize(concurrency int, ss []Sample, wall time.Duration) Step {
	st := Step{Concurrency: concurrency, Runs: len(ss), ElapsedS: round(wall.Seconds())}
	var totals, firsts, outputs []time.Duration
	var sum time.Duration
	for _, s := range ss {
		if s.Err != nil {
			st.Errors++
			if st.FirstError == "" {
				st.FirstError = s.Err.Error()
			}
			continue
		}
		totals = append(totals, s.Total)
		firsts = append(firsts, s.First)
		if s.FirstOutput > 0 {
			outputs = append(outputs, s.FirstOutput)
		}
		sum += s.Total
	}
	st.Successes = len(totals)
	if wall > 0 {
		st.RunsPerSec = round(float64(len(totals)) / wall.Seconds())
	}
	if len(totals) > 0 {
		st.AvgMS = ms(sum / time.Duration(len(totals)))
	}
	st.P50MS, st.P95MS, st.P99MS = ms(Percentile(totals, 50)), ms(Percentile(totals, 95)), ms(Percentile(totals, 99))
	st.FirstP50MS, st.FirstP95MS, st.FirstP99MS = ms(Percentile(firsts, 50)), ms(Percentile(firsts, 95)), ms(Percentile(firsts, 99))
	st.FirstOutputP50MS, st.FirstOutputP95MS = ms(Percentile(outputs, 50)), ms(Percentile(outputs, 95))
	return st
}

// Percentile is the nearest-rank p-th percentile of d (sorted in place);
// 0 for none.
func Percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	i := (len(d)*p + 99) / 100
	return d[min(max(i-1, 0), len(d)-1)]
}

func ms(d time.Duration) float64 { return round(float64(d.Microseconds()) / 1000) }

func round(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }
