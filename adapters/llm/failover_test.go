package llm_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/orchestrator"
)

// generate drains one call: its events and its response or error.
func generate(t *testing.T, m orchestrator.Model) ([]orchestrator.ModelEvent, *orchestrator.ModelResponse, error) {
	t.Helper()
	var evs []orchestrator.ModelEvent
	for ev, err := range m.Generate(context.Background(), &orchestrator.ModelRequest{Stream: true, Messages: []orchestrator.Message{{Role: orchestrator.RoleUser, Content: "hi"}}}) {
		if err != nil {
			return evs, nil, err
		}
		evs = append(evs, ev)
		if ev.Response != nil {
			return evs, ev.Response, nil
		}
	}
	return evs, nil, errors.New("no response")
}

func switches(evs []orchestrator.ModelEvent) []string {
	var out []string
	for _, ev := range evs {
		if ev.Retry != nil && strings.Contains(ev.Retry.Reason, "switching to") {
			out = append(out, ev.Retry.Reason)
		}
	}
	return out
}

// A primary whose retries are spent on 5xx hands the call to the
// fallback, which answers; the breaker then skips the primary until its
// circuit closes again.
func TestFailoverOnServerFailures(t *testing.T) {
	down := newServer(t, status(http.StatusBadGateway, `{"error":{"message":"upstream down"}}`))
	up := newServer(t, streamOf(text("from backup"), finish("stop")))
	b := llm.NewBreaker(time.Minute)
	now := time.Unix(1e9, 0)
	llm.SetBreakerClock(b, func() time.Time { return now })
	f := llm.NewFailover(b, llm.Named{Name: "primary", Model: down.client(t)}, llm.Named{Name: "backup", Model: up.client(t)})

	evs, resp, err := generate(t, f)
	if err != nil || resp.Content != "from backup" || resp.Model != "backup" {
		t.Fatalf("first call: %+v, %v; want backup's answer, attributed to backup", resp, err)
	}
	if s := switches(evs); len(s) != 1 || !strings.Contains(s[0], "model primary failed") || !strings.Contains(s[0], "switching to backup") {
		t.Fatalf("switch events = %q; want one naming primary and backup", s)
	}
	if n := len(down.requests()); n != 3 {
		t.Errorf("primary got %d requests; want its 3 attempts", n)
	}
	// The circuit is open: the next call goes straight to the backup.
	evs, resp, err = generate(t, f)
	if err != nil || resp.Model != "backup" || len(switches(evs)) != 0 || len(down.requests()) != 3 {
		t.Fatalf("second call: %+v, %v, switches %q, primary requests %d; want backup at once", resp, err, switches(evs), len(down.requests()))
	}
	// Once it closes the primary is tried again.
	now = now.Add(time.Minute)
	if _, _, err = generate(t, f); err != nil || len(down.requests()) != 6 {
		t.Fatalf("after the circuit closed: %v, primary requests %d; want it tried again", err, len(down.requests()))
	}
}

// A 4xx is the request's own fault: no failover, whatever the status
// (429 included, which the client retries but does not hand on).
func TestNoFailoverOn4xx(t *testing.T) {
	for _, code := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusTooManyRequests} {
		bad := newServer(t, status(code, `{"error":{"message":"no"}}`))
		up := newServer(t, streamOf(text("from backup"), finish("stop")))
		f := llm.NewFailover(llm.NewBreaker(0), llm.Named{Name: "primary", Model: bad.client(t)}, llm.Named{Name: "backup", Model: up.client(t)})
		if _, _, err := generate(t, f); err == nil || len(up.requests()) != 0 {
			t.Errorf("HTTP %d: err %v, backup requests %d; want the primary's error and no failover", code, err, len(up.requests()))
		}
	}
}

// When every model fails, the call fails with the last one's error.
func TestFailoverAllDown(t *testing.T) {
	a := newServer(t, status(http.StatusServiceUnavailable, `{}`))
	c := newServer(t, status(http.StatusInternalServerError, `{"error":{"message":"second is down too"}}`))
	f := llm.NewFailover(llm.NewBreaker(0), llm.Named{Name: "a", Model: a.client(t)}, llm.Named{Name: "c", Model: c.client(t)})
	_, _, err := generate(t, f)
	if !errors.Is(err, orchestrator.ErrUnavailable) || !strings.Contains(err.Error(), "second is down too") {
		t.Fatalf("err = %v; want c's unavailable error", err)
	}
}
