package orchestrator_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// changeHub is a RunWatcher shared by the processes of a test, as
// PostgreSQL's LISTEN/NOTIFY is shared by replicas: every change goes to
// every watcher.
type changeHub struct {
	mu  sync.Mutex
	fns map[int]func(orchestrator.RunChange)
	n   int
	// watching is closed once count watchers listen.
	count    int
	watching chan struct{}
}

func newChangeHub(count int) *changeHub {
	return &changeHub{fns: map[int]func(orchestrator.RunChange){}, count: count, watching: make(chan struct{})}
}

func (h *changeHub) WatchRuns(ctx context.Context, fn func(orchestrator.RunChange)) error {
	h.mu.Lock()
	h.n++
	id := h.n
	h.fns[id] = fn
	if len(h.fns) == h.count {
		close(h.watching)
	}
	h.mu.Unlock()
	<-ctx.Done()
	h.mu.Lock()
	delete(h.fns, id)
	h.mu.Unlock()
	return ctx.Err()
}

func (h *changeHub) notify(c orchestrator.RunChange) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, fn := range h.fns {
		fn(c)
	}
}

// notifyingStore tells the hub of what the store's triggers would: events
// appended to a run (its end's included) and a cancellation requested.
type notifyingStore struct {
	orchestrator.Store
	hub *changeHub
}

func (s notifyingStore) AppendEvents(ctx context.Context, evs []orchestrator.Event) error {
	err := s.Store.AppendEvents(ctx, evs)
	if err == nil && len(evs) > 0 {
		s.hub.notify(orchestrator.RunChange{RunID: evs[0].RunID})
	}
	return err
}

func (s notifyingStore) EndRun(ctx context.Context, r *orchestrator.Run, at time.Time, keys []string, tail orchestrator.RunTail) error {
	err := s.Store.EndRun(ctx, r, at, keys, tail)
	if err == nil {
		s.hub.notify(orchestrator.RunChange{RunID: r.ID})
	}
	return err
}

func (s notifyingStore) RequestCancel(ctx context.Context, runID string) (*orchestrator.Run, error) {
	r, err := s.Store.RequestCancel(ctx, runID)
	if err == nil {
		s.hub.notify(orchestrator.RunChange{RunID: runID, Cancel: true})
	}
	return r, err
}

// replicas returns two processes over one store and one hub. Their lock
// TTL is an hour: a heartbeat (every LockTTL/3) never sees a cancel, and
// a follower's safety-net poll never comes, within a test; only the
// notifications can move them.
func replicas(t *testing.T, turns []orchestratortest.Turn, toolsets ...orchestrator.Toolset) (runs, other *harness, hub *changeHub) {
	hub = newChangeHub(2)
	store := notifyingStore{Store: orchestratortest.NewMemStore(), hub: hub}
	opts := func(id string) orchestrator.Options {
		return orchestrator.Options{Watcher: hub, InstanceID: id, LockTTL: time.Hour, FollowInterval: time.Millisecond}
	}
	runs = newHarness(t, harnessOpts{store: store, opts: opts("replica-a"), mode: orchestrator.ModeFunctionCall, toolsets: toolsets, turns: turns})
	other = newHarness(t, harnessOpts{store: store, opts: opts("replica-b"), mode: orchestrator.ModeFunctionCall, toolsets: toolsets, turns: turns})
	select {
	case <-hub.watching:
	case <-time.After(20 * time.Second):
		t.Fatal("the replicas' watchers did not start")
	}
	return runs, other, hub
}

// A cancel sent to another replica stops the run at once: the owner hears
// of it through the watcher, not at its next heartbeat; and the replica
// that follows the run is woken by each change, not by its poll.
func TestRemoteCancelThroughTheWatcher(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	a, b, _ := replicas(t, []orchestratortest.Turn{call("block", `{}`), {Content: "never"}}, blockingTool("block", started, release))
	run := mustStart(t, a.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"block"}})
	<-started
	got, err := b.o.Cancel(t.Context(), "u", run.ID)
	if err != nil || got.State != orchestrator.RunCancelling {
		t.Fatalf("Cancel through the other replica = %+v, %v; want cancelling", got, err)
	}
	evs := collect(t, b.o, run.ID, 0)
	assertDense(t, evs, 1)
	if f := final(t, evs); f.State != orchestrator.RunCancelled || f.StopReason != orchestrator.StopCancelled {
		t.Fatalf("final = %+v; want cancelled", f)
	}
	if r, err := a.store.GetRun(t.Context(), run.ID); err != nil || r.State != orchestrator.RunCancelled {
		t.Fatalf("stored run = %+v, %v", r, err)
	}
}

// A cancel notification the store does not confirm (the run is not
// cancelling there) stops nothing: the notification is a hint, the store
// is the truth.
func TestUnconfirmedCancelNotificationIsIgnored(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	a, b, hub := replicas(t, []orchestratortest.Turn{call("block", `{}`), {Content: "finished anyway"}}, blockingTool("block", started, release))
	run := mustStart(t, a.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"block"}})
	<-started
	hub.notify(orchestrator.RunChange{RunID: run.ID, Cancel: true})
	hub.notify(orchestrator.RunChange{RunID: "run_unknown", Cancel: true})
	// The other replica's follower is woken by the notifications and
	// finds nothing new; the run goes on.
	close(release)
	if f := final(t, collect(t, b.o, run.ID, 0)); f.State != orchestrator.RunFinished || f.Answer != "finished anyway" {
		t.Fatalf("final = %+v; want the run finished", f)
	}
}
