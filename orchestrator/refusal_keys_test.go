package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/testutil/fakemodel"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// holdAll makes every model call of h wait for a Release; it returns a
// func that waits until n calls are held.
func holdAll(t *testing.T, m *fakemodel.Model) func(n int) {
	t.Helper()
	m.Hold(func(*orchestrator.ModelRequest) bool { return true })
	t.Cleanup(func() { m.Hold(nil) })
	return func(n int) {
		t.Helper()
		for range n {
			select {
			case <-m.Held():
			case <-time.After(20 * time.Second):
				t.Fatal("a model call was not held within 20s")
			}
		}
	}
}

// The core's most common refusals name their sentence (KeyedError): a
// front-end says them in the request's language from the key and args,
// and errors.Is still finds the sentinel; Error is the English sentence,
// sentinel first, as the message catalog's English entry has it.
func TestRefusalsNameTheirSentence(t *testing.T) {
	type refusal struct {
		sentinel error
		key      string
		args     []any
		text     string
		retry    time.Duration // 0: no hint
	}
	cases := []struct {
		name  string
		opts  orchestrator.Options
		setup func(t *testing.T, h *harness) orchestrator.RunRequest
		want  refusal
	}{
		{
			name: "a person's second run",
			setup: func(t *testing.T, h *harness) orchestrator.RunRequest {
				mustStart(t, h.o, orchestrator.RunRequest{UserID: "alice", Question: "one"})
				return orchestrator.RunRequest{UserID: "alice", Question: "two"}
			},
			want: refusal{orchestrator.ErrBusy, "busy_user", []any{"alice"}, "busy: user alice already has a running run", 0},
		},
		{
			name: "past a per-user limit of two",
			opts: orchestrator.Options{PerUser: 2},
			setup: func(t *testing.T, h *harness) orchestrator.RunRequest {
				mustStart(t, h.o, orchestrator.RunRequest{UserID: "alice", Question: "one"})
				mustStart(t, h.o, orchestrator.RunRequest{UserID: "alice", Question: "two"})
				return orchestrator.RunRequest{UserID: "alice", Question: "three"}
			},
			want: refusal{orchestrator.ErrBusy, "busy_user_n", []any{"alice", 2}, "busy: user alice already has 2 running runs", 0},
		},
		{
			name: "a busy session",
			setup: func(t *testing.T, h *harness) orchestrator.RunRequest {
				r := mustStart(t, h.o, orchestrator.RunRequest{UserID: "peer", Question: "one", Caller: orchestrator.CallerAgent})
				return orchestrator.RunRequest{UserID: "peer", Question: "two", SessionID: r.SessionID, Caller: orchestrator.CallerAgent}
			},
			want: refusal{orchestrator.ErrBusy, "busy_session", nil, "", 0},
		},
		{
			name: "no slot and no queue",
			opts: orchestrator.Options{MaxActiveRuns: 1, QueueSize: -1, QueueRetryAfter: 3 * time.Second},
			setup: func(t *testing.T, h *harness) orchestrator.RunRequest {
				mustStart(t, h.o, orchestrator.RunRequest{UserID: "a", Question: "q"})
				return orchestrator.RunRequest{UserID: "b", Question: "q"}
			},
			want: refusal{orchestrator.ErrUnavailable, "queue_full", []any{1, 0}, "unavailable: 1 runs active and the queue of 0 is full", 3 * time.Second},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{opts: c.opts, turns: []orchestratortest.Turn{{Content: "ok"}}})
			held := holdAll(t, h.model)
			req := c.setup(t, h)
			running, err := h.o.ListRuns(t.Context(), orchestrator.RunFilter{})
			if err != nil {
				t.Fatal(err)
			}
			held(len(running))
			_, err = h.o.Start(t.Context(), req)
			if !errors.Is(err, c.want.sentinel) {
				t.Fatalf("Start = %v; want %v", err, c.want.sentinel)
			}
			var keyed *orchestrator.KeyedError
			if !errors.As(err, &keyed) {
				t.Fatalf("Start = %#v; want a KeyedError in the chain", err)
			}
			key, args := keyed.MessageKey()
			if key != c.want.key {
				t.Errorf("key = %q; want %q", key, c.want.key)
			}
			if c.want.args != nil && fmt.Sprint(args) != fmt.Sprint(c.want.args) {
				t.Errorf("args = %v; want %v", args, c.want.args)
			}
			if c.want.text != "" && err.Error() != c.want.text {
				t.Errorf("Error() = %q; want %q", err.Error(), c.want.text)
			}
			after, ok := orchestrator.RetryAfter(err)
			if ok != (c.want.retry > 0) || after != c.want.retry {
				t.Errorf("RetryAfter = %v, %v; want %v", after, ok, c.want.retry)
			}
			for range running {
				h.model.Release()
			}
			for _, r := range running {
				collect(t, h.o, r.ID, 0)
			}
		})
	}
}

// After Close, Start is refused as shutting down, with its key, and
// nothing is stored.
func TestStartAfterCloseIsShuttingDown(t *testing.T) {
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{{Content: "ok"}}})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := h.o.Close(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := h.o.Start(t.Context(), orchestrator.RunRequest{UserID: "u", Question: "q"})
	var keyed *orchestrator.KeyedError
	if !errors.Is(err, orchestrator.ErrUnavailable) || !errors.As(err, &keyed) {
		t.Fatalf("Start after Close = %v; want a keyed ErrUnavailable", err)
	}
	if key, _ := keyed.MessageKey(); key != "shutting_down" {
		t.Errorf("key = %q; want shutting_down", key)
	}
	// Another replica takes it at once: a short hint, which every
	// front-end sends as Retry-After.
	if d, ok := orchestrator.RetryAfter(err); !ok || d != time.Second {
		t.Errorf("retry hint = %v, %v; want 1s", d, ok)
	}
	if runs, err := h.store.ListRuns(t.Context(), orchestrator.RunFilter{}); err != nil || len(runs) != 0 {
		t.Errorf("runs stored by a refused Start = %+v, %v", runs, err)
	}
	// A second Close is harmless (the harness closes once more).
	if err := h.o.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// A retry hint survives wrapping and is absent from other errors.
func TestRetryAfterThroughWrapping(t *testing.T) {
	base := orchestrator.WithRetryAfter(fmt.Errorf("%w: queue full", orchestrator.ErrUnavailable), 2*time.Second)
	cases := []struct {
		name string
		err  error
		want time.Duration
		ok   bool
	}{
		{"as made", base, 2 * time.Second, true},
		{"wrapped", fmt.Errorf("start run: %w", base), 2 * time.Second, true},
		{"joined", errors.Join(errors.New("other"), base), 2 * time.Second, true},
		{"zero hint", orchestrator.WithRetryAfter(orchestrator.ErrBusy, 0), 0, true},
		{"plain sentinel", orchestrator.ErrUnavailable, 0, false},
		{"nil", nil, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := orchestrator.RetryAfter(c.err)
			if got != c.want || ok != c.ok {
				t.Fatalf("RetryAfter = %v, %v; want %v, %v", got, ok, c.want, c.ok)
			}
		})
	}
	if !errors.Is(base, orchestrator.ErrUnavailable) || base.Error() != "unavailable: queue full" {
		t.Errorf("the hint changes the error: %v", base)
	}
}
