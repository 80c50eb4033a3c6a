package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/wunder/wunder/internal/config"
)

type performancePage struct {
	IntervalS float64 `json:"interval_s"`
	Points    []struct {
		At         string  `json:"at"`
		Seconds    float64 `json:"seconds"`
		Runs       int     `json:"runs"`
		RunsPerS   float64 `json:"runs_per_s"`
		RunP50MS   int64   `json:"run_p50_ms"`
		RunMaxMS   int64   `json:"run_max_ms"`
		ToolCalls  int     `json:"tool_calls"`
		ToolErrors int     `json:"tool_errors"`
		ToolMaxMS  int64   `json:"tool_max_ms"`
	} `json:"points"`
}

// GET /wunder/admin/performance: the runs and tool calls of the real
// server, counted by the observer the core reports to, in the point a
// Sample closes (the test closes it itself instead of waiting for the
// ticker); ?points= keeps the newest; bad input is 400.
func TestPerformanceRoute(t *testing.T) {
	s := startServer(t, func(c *config.Config) { c.Security.APIKey = "k" })
	code, got := adminDo(t, s, "GET", "/wunder/admin/performance", "")
	if code != 200 || got["interval_s"] != 10.0 || len(got["points"].([]any)) != 0 {
		t.Fatalf("before any sample: %d %v", code, got)
	}
	for _, body := range []string{
		`{"user_id":"u","question":"write a note","tool_names":["write_file"],"stream":false}`,
		`{"user_id":"u","question":"hello","stream":false}`,
	} {
		if c, out := adminDo(t, s, "POST", "/wunder", body); c != 200 || out["state"] != "finished" {
			t.Fatalf("a run: %d %v", c, out)
		}
	}
	// The ticker may close a point meanwhile on a slow machine: the runs
	// are counted across the points.
	s.app.perf.s.Sample()
	s.app.perf.s.Sample() // an empty interval
	var page performancePage
	r := restDo(t, "GET", s.url+"/wunder/admin/performance", "", map[string]string{"X-API-Key": "k"})
	if err := json.NewDecoder(r.Body).Decode(&page); err != nil || r.StatusCode != 200 {
		t.Fatalf("the page: %d %v", r.StatusCode, err)
	}
	runs, tools := 0, 0
	for _, p := range page.Points {
		runs += p.Runs
		tools += p.ToolCalls
		if p.Runs > 0 && (p.RunsPerS <= 0 || p.RunMaxMS < p.RunP50MS) {
			t.Errorf("a point with runs: %+v", p)
		}
	}
	if n := len(page.Points); n < 2 || runs != 2 || tools < 1 || page.Points[n-1].Runs != 0 {
		t.Fatalf("the points: %+v; want the 2 runs and their tool call, the last point empty", page.Points)
	}
	if code, got := adminDo(t, s, "GET", "/wunder/admin/performance?points=1", ""); code != 200 || len(got["points"].([]any)) != 1 {
		t.Fatalf("points=1: %d %v", code, got)
	}
	if code, got := adminDo(t, s, "GET", "/wunder/admin/performance?points=x", ""); code != http.StatusBadRequest || got["code"] != "invalid_argument" {
		t.Fatalf("points=x: %d %v", code, got)
	}
}

// The performance page draws the sampled points: after runs (one with a
// tool call) and two points closed by the test, each of the three charts
// has a line with a dot per point, and the totals count the runs; the
// page is reached from the nav after the admin page (its own lazy chunk).
func TestConsolePerformance(t *testing.T) {
	s := startServer(t, nil)
	for _, body := range []string{
		`{"user_id":"root","question":"write a note","tool_names":["write_file"],"stream":false}`,
		`{"user_id":"root","question":"hello","stream":false}`,
	} {
		var out struct{ State string }
		decodeInto(t, restDo(t, "POST", s.url+"/wunder", body, nil), 200, &out)
		if out.State != "finished" {
			t.Fatalf("a run: %+v", out)
		}
	}
	s.app.perf.s.Sample()
	decodeInto(t, restDo(t, "POST", s.url+"/wunder", `{"user_id":"root","question":"hello again","stream":false}`, nil), 200, &struct{}{})
	s.app.perf.s.Sample()
	var page performancePage
	decodeInto(t, restDo(t, "GET", s.url+"/wunder/admin/performance", "", nil), 200, &page)
	n := len(page.Points) // the ticker may have added one on a slow machine
	runs := 0
	for _, p := range page.Points {
		runs += p.Runs
	}
	if n < 2 || runs != 3 {
		t.Fatalf("the points: %+v", page.Points)
	}

	b := openAnon(t, s, "root")
	b.do("the admin page first", chromedp.Click(chromedp.CSS(`nav a[href="#/admin"]`)), chromedp.WaitVisible(chromedp.CSS(`#tab-models`)))
	b.do("the performance page", chromedp.Click(chromedp.CSS(`nav a[href="#/performance"]`)), chromedp.WaitVisible(chromedp.CSS(`figure.line-chart`)))
	b.until("three charts with a dot per point", fmt.Sprintf(`['runs-per-s', 'run-latency', 'tool-latency'].every(id => { const f = document.querySelector('figure[data-chart="' + id + '"]'); return f && [...f.querySelectorAll('g.series')].every(g => g.querySelectorAll('circle.pt').length === %d && g.querySelector('polyline').getAttribute('points').split(' ').length === %d) })`, n, n))
	b.until("the series", `document.querySelectorAll('figure[data-chart="run-latency"] g.series').length === 2 && document.querySelectorAll('figure[data-chart="runs-per-s"] g.series').length === 1`)
	b.until("the totals", `document.querySelector('.perf-totals dd').textContent.startsWith('3 ')`)
	// a point with runs is drawn above the axis: its rate is not zero
	if got := b.eval(`String([...document.querySelectorAll('figure[data-chart="runs-per-s"] circle.pt')].some(c => parseFloat(c.getAttribute('cy')) < 120))`); got != "true" {
		t.Errorf("no point of the run rate above zero")
	}
	if got := b.eval(`String(!document.querySelector('#tab-models'))`); got != "true" {
		t.Errorf("the admin page is still shown on the performance page")
	}
	b.shot("performance")
	b.axe("performance")
	b.clean()
}
