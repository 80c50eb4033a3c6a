package orchestrator_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

func TestOneRunningRunPerUser(t *testing.T) {
	gate := make(chan struct{})
	started := make(chan struct{})
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{{Content: "slow", Wait: gate, Started: started}, {Content: "fast"}}})
	first := mustStart(t, h.o, orchestrator.RunRequest{UserID: "alice", Question: "one"})
	<-started
	_, err := h.o.Start(t.Context(), orchestrator.RunRequest{UserID: "alice", Question: "two"})
	if !errors.Is(err, orchestrator.ErrBusy) {
		t.Fatalf("second run of alice: %v, want ErrBusy", err)
	}
	// Another user is not affected.
	other := mustStart(t, h.o, orchestrator.RunRequest{UserID: "bob", Question: "b"})
	close(gate)
	final(t, collect(t, h.o, first.ID, 0))
	final(t, collect(t, h.o, other.ID, 0))
	// Once the first ended, alice may run again.
	again := mustStart(t, h.o, orchestrator.RunRequest{UserID: "alice", Question: "three"})
	final(t, collect(t, h.o, again.ID, 0))
}

func TestAgentCallersRunInParallelSessions(t *testing.T) {
	gate := make(chan struct{})
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{{Content: "x", Wait: gate}}})
	var runs []*orchestrator.Run
	for range 4 {
		runs = append(runs, mustStart(t, h.o, orchestrator.RunRequest{UserID: "peer", Question: "task", Caller: orchestrator.CallerAgent}))
	}
	// But one session still runs one run at a time.
	_, err := h.o.Start(t.Context(), orchestrator.RunRequest{UserID: "peer", Question: "again", SessionID: runs[0].SessionID, Caller: orchestrator.CallerAgent})
	if !errors.Is(err, orchestrator.ErrBusy) {
		t.Fatalf("second run in a busy session: %v", err)
	}
	close(gate)
	for _, r := range runs {
		final(t, collect(t, h.o, r.ID, 0))
	}
}

func TestGlobalLimitQueuesThenRefuses(t *testing.T) {
	gate := make(chan struct{})
	started := make(chan struct{})
	h := newHarness(t, harnessOpts{
		opts:  orchestrator.Options{MaxActiveRuns: 1, QueueSize: 1, QueueRetryAfter: 7 * time.Second},
		turns: []orchestratortest.Turn{{Content: "a", Wait: gate, Started: started}, {Content: "b"}},
	})
	a := mustStart(t, h.o, orchestrator.RunRequest{UserID: "a", Question: "q"})
	<-started
	b := mustStart(t, h.o, orchestrator.RunRequest{UserID: "b", Question: "q"})
	if b.State != orchestrator.RunQueued {
		t.Fatalf("b state = %s, want queued", b.State)
	}
	_, err := h.o.Start(t.Context(), orchestrator.RunRequest{UserID: "c", Question: "q"})
	if !errors.Is(err, orchestrator.ErrUnavailable) {
		t.Fatalf("third run: %v, want ErrUnavailable", err)
	}
	if after, ok := orchestrator.RetryAfter(err); !ok || after != 7*time.Second {
		t.Fatalf("retry after = %v %v", after, ok)
	}
	close(gate)
	if f := final(t, collect(t, h.o, a.ID, 0)); f.Answer != "a" {
		t.Fatalf("a = %+v", f)
	}
	evs := collect(t, h.o, b.ID, 0)
	if evs[0].Type != orchestrator.EventProgress || final(t, evs).Answer != "b" {
		t.Fatalf("b events = %v", types(evs))
	}
}

func TestCancelMidToolIsPrompt(t *testing.T) {
	started := make(chan struct{})
	h := newHarness(t, harnessOpts{
		toolsets: []orchestrator.Toolset{blockingTool("wait", started, nil)},
		turns:    []orchestratortest.Turn{{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("wait", `{}`)}}, {Content: "never"}},
	})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"wait"}})
	<-started
	begin := time.Now()
	if _, err := h.o.Cancel(t.Context(), "u", run.ID); err != nil {
		t.Fatal(err)
	}
	evs := collect(t, h.o, run.ID, 0)
	t.Logf("cancel to final event: %v", time.Since(begin))
	f := final(t, evs)
	if f.State != orchestrator.RunCancelled || f.StopReason != orchestrator.StopCancelled {
		t.Fatalf("final = %+v", f)
	}
	got, _ := h.o.GetRun(t.Context(), "u", run.ID)
	if got.State != orchestrator.RunCancelled {
		t.Fatalf("stored state = %s", got.State)
	}
	if _, err := h.o.Cancel(t.Context(), "u", run.ID); !errors.Is(err, orchestrator.ErrConflict) {
		t.Fatalf("cancel of a finished run: %v", err)
	}
	// The lock is free again.
	final(t, collect(t, h.o, mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q2"}).ID, 0))
}

func TestCancelDuringModelCall(t *testing.T) {
	started := make(chan struct{})
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{{Content: "x", Wait: make(chan struct{}), Started: started}}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	<-started
	if _, err := h.o.Cancel(t.Context(), "", run.ID); err != nil {
		t.Fatal(err)
	}
	if f := final(t, collect(t, h.o, run.ID, 0)); f.State != orchestrator.RunCancelled {
		t.Fatalf("final = %+v", f)
	}
}

func TestCancelQueuedRun(t *testing.T) {
	gate := make(chan struct{})
	started := make(chan struct{})
	h := newHarness(t, harnessOpts{
		opts:  orchestrator.Options{MaxActiveRuns: 1},
		turns: []orchestratortest.Turn{{Content: "a", Wait: gate, Started: started}, {Content: "c"}},
	})
	a := mustStart(t, h.o, orchestrator.RunRequest{UserID: "a", Question: "q"})
	<-started
	b := mustStart(t, h.o, orchestrator.RunRequest{UserID: "b", Question: "q"})
	if _, err := h.o.Cancel(t.Context(), "b", b.ID); err != nil {
		t.Fatal(err)
	}
	if f := final(t, collect(t, h.o, b.ID, 0)); f.State != orchestrator.RunCancelled {
		t.Fatalf("b final = %+v", f)
	}
	close(gate)
	final(t, collect(t, h.o, a.ID, 0))
}

func TestLocksHoldAcrossProcesses(t *testing.T) {
	store := orchestratortest.NewMemStore()
	gate := make(chan struct{})
	started := make(chan struct{})
	p1 := newHarness(t, harnessOpts{store: store, opts: orchestrator.Options{LockTTL: 60 * time.Millisecond, FollowInterval: 5 * time.Millisecond},
		turns: []orchestratortest.Turn{{Content: "p1", Wait: gate, Started: started}}})
	p2 := newHarness(t, harnessOpts{store: store, opts: orchestrator.Options{LockTTL: 60 * time.Millisecond, FollowInterval: 5 * time.Millisecond},
		turns: []orchestratortest.Turn{{Content: "p2"}}})
	run := mustStart(t, p1.o, orchestrator.RunRequest{UserID: "alice", Question: "q"})
	<-started
	if _, err := p2.o.Start(t.Context(), orchestrator.RunRequest{UserID: "alice", Question: "q"}); !errors.Is(err, orchestrator.ErrBusy) {
		t.Fatalf("alice on the second process: %v, want ErrBusy", err)
	}
	// The second process follows the first one's run through the store,
	// and its cancel reaches the first one through the heartbeat.
	done := make(chan []orchestrator.Event)
	go func() { done <- collect(t, p2.o, run.ID, 0) }()
	if _, err := p2.o.Cancel(t.Context(), "alice", run.ID); err != nil {
		t.Fatal(err)
	}
	evs := <-done
	assertDense(t, evs, 1)
	if f := final(t, evs); f.State != orchestrator.RunCancelled {
		t.Fatalf("final = %+v", f)
	}
	close(gate)
}

func TestRecoverOrphans(t *testing.T) {
	store := orchestratortest.NewMemStore()
	ctx := t.Context()
	now := time.Now()
	sess := &orchestrator.Session{ID: "sess_orphan", UserID: "u", CreatedAt: now, UpdatedAt: now}
	run := &orchestrator.Run{ID: "run_orphan", SessionID: sess.ID, UserID: "u", State: orchestrator.RunRunning, CreatedAt: now}
	live := &orchestrator.Run{ID: "run_alive", SessionID: "sess_alive", UserID: "v", State: orchestrator.RunRunning, CreatedAt: now}
	for _, err := range []error{
		store.CreateSession(ctx, sess),
		store.CreateSession(ctx, &orchestrator.Session{ID: "sess_alive", UserID: "v", CreatedAt: now, UpdatedAt: now}),
		store.CreateRun(ctx, run), store.CreateRun(ctx, live),
		store.AppendEvents(ctx, []orchestrator.Event{{RunID: run.ID, SessionID: sess.ID, Seq: 1, Type: "progress", Data: []byte(`{}`), Time: now}}),
		store.AcquireLock(ctx, "session:sess_alive", "run_alive", time.Minute),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, harnessOpts{store: store})
	n, err := h.o.RecoverOrphans(ctx)
	if err != nil || n != 1 {
		t.Fatalf("recovered %d, %v; want 1", n, err)
	}
	evs := collect(t, h.o, run.ID, 0)
	assertDense(t, evs, 1)
	if f := final(t, evs); f.State != orchestrator.RunFailed || f.Error == "" {
		t.Fatalf("final = %+v", f)
	}
	if r, _ := store.GetRun(ctx, "run_alive"); r.State != orchestrator.RunRunning {
		t.Fatalf("live run touched: %s", r.State)
	}
}

func TestCloseCancelsWhatIsLeft(t *testing.T) {
	started := make(chan struct{})
	h := newHarness(t, harnessOpts{turns: []orchestratortest.Turn{{Content: "x", Wait: make(chan struct{}), Started: started}}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	<-started
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // no grace: cancel at once
	if err := h.o.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close = %v", err)
	}
	r, err := h.store.GetRun(t.Context(), run.ID)
	if err != nil || r.State != orchestrator.RunCancelled {
		t.Fatalf("run after close = %+v, %v", r, err)
	}
	if _, err := h.o.Start(t.Context(), orchestrator.RunRequest{UserID: "u2", Question: "q"}); !errors.Is(err, orchestrator.ErrUnavailable) {
		t.Fatalf("start after close: %v", err)
	}
}

// blockingCreate holds CreateRun of one run until released, so a test can
// act in the window between a run's admission and the end of Start.
type blockingCreate struct {
	orchestrator.Store
	question string
	created  chan *orchestrator.Run
	release  chan struct{}
}

func (b *blockingCreate) CreateRun(ctx context.Context, r *orchestrator.Run) error {
	b.hold(r)
	return b.Store.CreateRun(ctx, r)
}

func (b *blockingCreate) CreateRunWith(ctx context.Context, s *orchestrator.Session, r *orchestrator.Run, tail orchestrator.RunTail, locks ...orchestrator.NewLock) error {
	b.hold(r)
	return b.Store.CreateRunWith(ctx, s, r, tail, locks...)
}

func (b *blockingCreate) hold(r *orchestrator.Run) {
	if r.Question == b.question {
		b.created <- r
		<-b.release
	}
}

// Shutdown that begins while Start is still storing a run: Start is refused
// (503), the stored run is ended as failed with a final event rather than
// left queued forever, and nothing of it outlives Close (goleak in TestMain
// checks the goroutines).
func TestCloseDuringStartLeavesNoStrandedRun(t *testing.T) {
	store := &blockingCreate{Store: orchestratortest.NewMemStore(), question: "late", created: make(chan *orchestrator.Run, 1), release: make(chan struct{})}
	h := newHarness(t, harnessOpts{store: store, turns: []orchestratortest.Turn{{Content: "x"}}})
	done := make(chan error, 1)
	go func() {
		_, err := h.o.Start(context.Background(), orchestrator.RunRequest{UserID: "u", Question: "late"})
		done <- err
	}()
	run := <-store.created // being stored, not yet admitted
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := h.o.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	close(store.release)
	if err := <-done; !errors.Is(err, orchestrator.ErrUnavailable) {
		t.Fatalf("Start during shutdown: %v, want ErrUnavailable", err)
	}
	r, err := store.GetRun(t.Context(), run.ID)
	if err != nil || r.State != orchestrator.RunFailed || !strings.Contains(r.Error, "not admitted") {
		t.Fatalf("stored run = %+v, %v", r, err)
	}
	evs, err := store.ListEvents(t.Context(), run.ID, 0, 0)
	if err != nil || len(evs) != 1 || evs[0].Type != orchestrator.EventFinal {
		t.Fatalf("events of the refused run = %v, %v", evs, err)
	}
	// Its locks are free: the same user may run again elsewhere.
	if err := store.AcquireLock(t.Context(), "user:u#0", "someone", time.Minute); err != nil {
		t.Fatalf("user lock still held: %v", err)
	}
}

// Start stores a run's question with the run: a run still queued when
// Start returns has its question, attachments included, in the session's
// history (a process dying now leaves it to be resumed, not lost). A run
// that continues a session finds its question in the history it loads and
// sends it to the model once.
func TestStartStoresTheQuestionWithTheRun(t *testing.T) {
	release := make(chan struct{})
	h := newHarness(t, harnessOpts{opts: orchestrator.Options{MaxActiveRuns: 1},
		turns: []orchestratortest.Turn{{Content: "first", Wait: release}, {Content: "second"}, {Content: "third"}}})
	busy := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u1", Question: "hold the slot"})
	att := []orchestrator.Attachment{{Type: "text", Name: "notes.txt", Content: "the notes"}}
	queued := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u2", Question: "read my notes", Attachments: att})
	if queued.State != orchestrator.RunQueued {
		t.Fatalf("second run is %s; want queued behind the first", queued.State)
	}
	msgs, err := h.store.ListMessages(t.Context(), queued.SessionID, 0)
	if err != nil || len(msgs) != 1 || msgs[0].RunID != queued.ID || msgs[0].Content != "read my notes" ||
		len(msgs[0].Attachments) != 1 || msgs[0].Attachments[0].Content != "the notes" {
		t.Fatalf("history of the queued run's session = %+v, %v; want its question with the attachment", msgs, err)
	}
	close(release)
	final(t, collect(t, h.o, busy.ID, 0))
	final(t, collect(t, h.o, queued.ID, 0))

	next := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u2", SessionID: queued.SessionID, Question: "and now?"})
	if f := final(t, collect(t, h.o, next.ID, 0)); f.State != orchestrator.RunFinished {
		t.Fatalf("the session's next run: %+v", f)
	}
	reqs := h.model.Requests()
	last := reqs[len(reqs)-1]
	n := 0
	for _, m := range last.Messages {
		if m.Role == orchestrator.RoleUser && strings.Contains(m.Content, "and now?") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the continuing run's question reached the model %d times: %+v", n, last.Messages)
	}
	msgs, _ = h.store.ListMessages(t.Context(), queued.SessionID, 0)
	if len(msgs) != 4 || msgs[2].Content != "and now?" || msgs[3].Role != orchestrator.RoleAssistant {
		t.Fatalf("history after two runs = %+v; want question, answer, question, answer", msgs)
	}
}
