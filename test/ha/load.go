package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wunder/wunder/internal/sse"
)

// load is what the users of one phase did: their runs and the requests
// that failed, by kind. A failed request is one the client saw fail (a
// connection error, a 5xx, a stream cut without a resumable end); the
// client retries it (submits with the same Idempotency-Key, streams with
// Last-Event-ID).
type load struct {
	lb   string
	http *http.Client

	// mu guards runs, failed and attempts.
	mu       sync.Mutex
	runs     []*runRec
	failed   map[string]int // requests that failed, by the kind of their first failure
	attempts map[string]int // failed attempts, retries included

	submitted atomic.Int64
	inflight  atomic.Int64 // requests under way now
	resumable atomic.Int64 // streams that ended with a retry: hint, before the final event
}

// runRec is one run as its user saw it.
type runRec struct {
	user, id, token string
	follower        bool
	seen            []int64 // every seq received, in order, duplicates kept
	state           string
	answer          string
	lastSeq         int64
	resumed         bool
	resultBeforeRes bool // a tool_result stored before the "resumed" event
}

func newLoad(lb string) *load {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 256,
	}
	return &load{lb: lb, http: &http.Client{Transport: tr}, failed: map[string]int{}, attempts: map[string]int{}}
}

// request is one request of a client, retried until it succeeds: it
// counts once as failed, by the kind of its first failure, however many
// attempts fail.
type request struct {
	l      *load
	failed bool
}

func (l *load) request() *request { return &request{l: l} }

func (r *request) fail(kind string) {
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	r.l.attempts[kind]++
	if !r.failed {
		r.failed = true
		r.l.failed[kind]++
	}
}

// failures returns the failed requests by kind, their total and the
// total of failed attempts.
func (l *load) failures() (map[string]int, int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	total, attempts := 0, 0
	out := map[string]int{}
	for k, v := range l.failed {
		out[k] = v
		total += v
	}
	for _, v := range l.attempts {
		attempts += v
	}
	return out, total, attempts
}

func newToken() string { return strings.ToLower(rand.Text()[:16]) }

// do sends one request, counted in flight while it runs.
func (l *load) do(req *http.Request) (*http.Response, error) {
	l.inflight.Add(1)
	defer l.inflight.Add(-1)
	return l.http.Do(req)
}

// retryPause is the client's back-off between attempts: Retry-After when
// the server gave one (capped), else 100 ms.
func retryPause(ctx context.Context, resp *http.Response) {
	d := 100 * time.Millisecond
	if resp != nil {
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			d = min(time.Duration(s)*time.Second, time.Second)
		}
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// submit starts a run through the balancer with an Idempotency-Key,
// retrying the same key until it is accepted.
func (l *load) submit(ctx context.Context, base, user, question, approvalMode string) (string, error) {
	body, _ := json.Marshal(map[string]any{"user_id": user, "question": question, "tool_names": []string{"counter@hit"},
		"approval_mode": approvalMode})
	key := newToken()
	rq := l.request()
	for {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/wunder/runs", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		resp, err := l.do(req)
		if err != nil {
			rq.fail("submit: connection")
			retryPause(ctx, nil)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusOK {
			var run struct {
				ID string `json:"run_id"`
			}
			if err := json.Unmarshal(b, &run); err != nil || run.ID == "" {
				return "", fmt.Errorf("submit answered %s", b)
			}
			return run.ID, nil
		}
		// A 409 with Retry-After: the first submit with the key is still
		// starting its run (or its replica died doing so); retry.
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests ||
			resp.StatusCode == http.StatusConflict && resp.Header.Get("Retry-After") != "" {
			rq.fail(fmt.Sprintf("submit: %d %s", resp.StatusCode, problemCode(b)))
			retryPause(ctx, resp)
			continue
		}
		return "", fmt.Errorf("submit: %d %s", resp.StatusCode, b)
	}
}

func problemCode(b []byte) string {
	var p struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(b, &p)
	return p.Code
}

// getRun reads a run through base, retrying failures (counted).
func (l *load) getRun(ctx context.Context, base, user, id string) (map[string]any, error) {
	rq := l.request()
	for {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/wunder/runs/"+id+"?user_id="+url.QueryEscape(user), nil)
		resp, err := l.do(req)
		if err != nil {
			rq.fail("get run: connection")
			retryPause(ctx, nil)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			rq.fail(fmt.Sprintf("get run: %d %s", resp.StatusCode, problemCode(b)))
			retryPause(ctx, resp)
			continue
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("get run %s: %d %s", id, resp.StatusCode, b)
		}
		var m map[string]any
		return m, json.Unmarshal(b, &m)
	}
}

func terminal(state any) bool {
	switch state {
	case "finished", "failed", "cancelled":
		return true
	}
	return false
}

// waitTerminal polls a run through the balancer until it is terminal.
func (l *load) waitTerminal(ctx context.Context, r *runRec, limit time.Duration) error {
	return pollEvery(ctx, limit, 100*time.Millisecond, "run "+r.id+" to end", func() bool {
		m, err := l.getRun(ctx, l.lb, r.user, r.id)
		if err != nil || !terminal(m["state"]) {
			return false
		}
		r.state, _ = m["state"].(string)
		r.answer, _ = m["answer"].(string)
		n, _ := m["last_seq"].(float64)
		r.lastSeq = int64(n)
		return true
	})
}

// tail remembers the last bytes of a stream, to tell a resumable end (a
// retry: hint) from a stream that was cut.
type tail struct {
	r    io.Reader
	last []byte
}

func (t *tail) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.last = append(t.last, p[:n]...)
	if len(t.last) > 256 {
		t.last = t.last[len(t.last)-256:]
	}
	return n, err
}

// follow reads the run's event stream through the balancer until its
// final event, reconnecting with Last-Event-ID, and records every seq it
// receives (a duplicate too). A stream that ends with a retry: hint is a
// resumable end; any other end before the final event is a failure.
func (l *load) follow(ctx context.Context, r *runRec, count bool, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last int64
	rq := l.request() // a stream request, retried until it connects
	fail := func(kind string) {
		if count {
			rq.fail(kind)
		}
	}
	for time.Now().Before(deadline) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, l.lb+"/wunder/runs/"+r.id+"/events?user_id="+url.QueryEscape(r.user), nil)
		if last > 0 {
			req.Header.Set("Last-Event-ID", strconv.FormatInt(last, 10))
		}
		l.inflight.Add(1)
		resp, err := l.http.Do(req)
		if err != nil {
			l.inflight.Add(-1)
			fail("follow: connection")
			retryPause(ctx, nil)
			continue
		}
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			l.inflight.Add(-1)
			fail(fmt.Sprintf("follow: %d %s", resp.StatusCode, problemCode(b)))
			retryPause(ctx, resp)
			continue
		}
		rq = l.request() // connected: what fails next is another request
		tl := &tail{r: resp.Body}
		rd := sse.NewReader(tl, sse.MaxEvent)
		done := false
		var rerr error
		for {
			ev, err := rd.Next()
			if err != nil {
				rerr = err
				break
			}
			seq, _ := strconv.ParseInt(ev.ID, 10, 64)
			if seq > 0 {
				r.seen = append(r.seen, seq)
				last = max(last, seq)
			}
			switch ev.Type {
			case "error":
				fail("follow: error event")
			case "progress":
				if strings.Contains(string(ev.Data), `"resumed"`) {
					r.resumed = true
				}
			case "tool_result":
				if !r.resumed {
					r.resultBeforeRes = true
				}
			case "final":
				done = true
			}
			if done {
				break
			}
		}
		resp.Body.Close()
		l.inflight.Add(-1)
		if done {
			return nil
		}
		resumable := errors.Is(rerr, io.EOF) && bytes.Contains(tl.last, []byte("retry:"))
		switch {
		case !count:
		case resumable:
			l.resumable.Add(1)
		default:
			rq.fail("follow: stream cut")
		}
		retryPause(ctx, nil)
	}
	return fmt.Errorf("run %s: no final event within %v", r.id, limit)
}

// drive runs users until more says stop: each user submits a run
// through the balancer (counted tool round, unique token), then follows
// it over SSE (even users) or polls it until terminal (odd users), then
// submits the next.
func (l *load) drive(ctx context.Context, users int, more func(submitted int64) bool) error {
	var wg sync.WaitGroup
	errc := make(chan error, users)
	for u := range users {
		wg.Go(func() {
			user := fmt.Sprintf("ha_user_%d", u)
			for more(l.submitted.Load()) {
				l.submitted.Add(1)
				r := &runRec{user: user, token: newToken(), follower: u%2 == 0}
				id, err := l.submit(ctx, l.lb, user, fmt.Sprintf(`call counter__hit {"token":%q}`, r.token), "")
				if err != nil {
					errc <- err
					return
				}
				r.id = id
				l.mu.Lock()
				l.runs = append(l.runs, r)
				l.mu.Unlock()
				if r.follower {
					err = l.follow(ctx, r, true, 3*time.Minute)
				} else {
					err = l.waitTerminal(ctx, r, 3*time.Minute)
				}
				if err != nil {
					// Stuck: the user's next run would meet its per-user
					// slot. The verification counts it.
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	return <-errc
}
