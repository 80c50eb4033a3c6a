package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// seedRun stores a session and a running run owned by owner, with one
// event, as a process that died mid-run leaves them, and the locks that
// process held.
func seedRun(t *testing.T, store orchestrator.Store, id, owner string, lockTTL time.Duration) *orchestrator.Run {
	t.Helper()
	ctx, now := t.Context(), time.Now()
	sess := &orchestrator.Session{ID: "sess_" + id, UserID: "u_" + id, CreatedAt: now, UpdatedAt: now}
	run := &orchestrator.Run{ID: id, SessionID: sess.ID, UserID: sess.UserID, State: orchestrator.RunRunning, Owner: owner, LastSeq: 1, CreatedAt: now}
	for _, err := range []error{
		store.CreateSession(ctx, sess),
		store.CreateRun(ctx, run),
		store.AppendEvents(ctx, []orchestrator.Event{{RunID: id, SessionID: sess.ID, Seq: 1, Type: "progress", Data: []byte(`{}`), Time: now}}),
		store.AcquireLock(ctx, "session:"+sess.ID, id, lockTTL),
		store.AcquireLock(ctx, "user:"+sess.UserID+"#0", id, lockTTL),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return run
}

// deadPid returns the pid and start time of a process that has exited.
func deadProcessOwner(t *testing.T) string {
	t.Helper()
	host, _ := os.Hostname()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("no process to spawn: %v", err)
	}
	// Its start time cannot be read any more; any non-zero one marks the
	// id as checkable.
	return fmt.Sprintf("%s:%d:%d:dead", strings.ReplaceAll(host, ":", "_"), cmd.Process.Pid, 12345)
}

func wantInterrupted(t *testing.T, o *orchestrator.Orchestrator, store orchestrator.Store, run *orchestrator.Run) {
	t.Helper()
	evs := collect(t, o, run.ID, 0)
	assertDense(t, evs, 1)
	f := final(t, evs)
	if f.State != orchestrator.RunFailed || f.StopReason != orchestrator.StopInterrupted || f.Error == "" {
		t.Fatalf("final of the interrupted run = %+v", f)
	}
	r, err := store.GetRun(t.Context(), run.ID)
	if err != nil || r.State != orchestrator.RunFailed || r.StopReason != orchestrator.StopInterrupted || r.LastSeq != evs[len(evs)-1].Seq {
		t.Fatalf("stored run = %+v, %v", r, err)
	}
}

// A server restarted on the same host within the lock TTL recognises its
// predecessor's runs at once: the predecessor's process is gone, so its
// lease (still valid) does not protect them. The user's next run in the
// same session is accepted straight after.
func TestRecoverRunsOfADeadProcessAtOnce(t *testing.T) {
	store := orchestratortest.NewMemStore()
	owner := deadProcessOwner(t)
	// The dead process's lease has not expired.
	if err := store.AcquireLock(t.Context(), "instance:"+owner, owner, time.Hour); err != nil {
		t.Fatal(err)
	}
	run := seedRun(t, store, "run_dead", owner, time.Hour)
	h := newHarness(t, harnessOpts{store: store, turns: []orchestratortest.Turn{{Content: "next answer"}}})
	n, err := h.o.RecoverOrphans(t.Context())
	if err != nil || n != 1 {
		t.Fatalf("RecoverOrphans = %d, %v; want 1", n, err)
	}
	wantInterrupted(t, h.o, store, run)
	next := mustStart(t, h.o, orchestrator.RunRequest{UserID: run.UserID, SessionID: run.SessionID, Question: "again"})
	if f := final(t, collect(t, h.o, next.ID, 0)); f.State != orchestrator.RunFinished {
		t.Fatalf("next run = %+v", f)
	}
}

// A replica whose lease has expired is dead wherever it ran; the reaper of
// a living replica ends its runs by itself, within the lock TTL, without a
// restart. A cancel requested meanwhile ends the run cancelled.
func TestReaperTakesOverRunsOfAnExpiredReplica(t *testing.T) {
	store := orchestratortest.NewMemStore()
	ttl := 300 * time.Millisecond
	owner := "otherhost:4242:777:abc"
	if err := store.AcquireLock(t.Context(), "instance:"+owner, owner, ttl); err != nil {
		t.Fatal(err)
	}
	run := seedRun(t, store, "run_far", owner, ttl)
	cancelled := seedRun(t, store, "run_far_cancel", owner, ttl)
	h := newHarness(t, harnessOpts{store: store, opts: orchestrator.Options{LockTTL: ttl, FollowInterval: 10 * time.Millisecond}})
	if _, err := h.o.Cancel(t.Context(), "", cancelled.ID); err != nil {
		t.Fatalf("Cancel of a run of another instance: %v", err)
	}
	// No RecoverOrphans call: the background reaper must do it.
	wantInterrupted(t, h.o, store, run)
	if f := final(t, collect(t, h.o, cancelled.ID, 0)); f.State != orchestrator.RunCancelled {
		t.Fatalf("cancelled orphan ended %+v", f)
	}
}

// Runs of a living replica are never touched, however often the reaper
// of another looks.
func TestReaperLeavesLiveReplicasAlone(t *testing.T) {
	store := orchestratortest.NewMemStore()
	started, gate := make(chan struct{}), make(chan struct{})
	a := newHarness(t, harnessOpts{store: store, turns: []orchestratortest.Turn{{Content: "a", Wait: gate, Started: started}}})
	b := newHarness(t, harnessOpts{store: store})
	run := mustStart(t, a.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	<-started
	for range 3 {
		if n, err := b.o.RecoverOrphans(t.Context()); err != nil || n != 0 {
			t.Fatalf("RecoverOrphans on a replica = %d, %v; want 0", n, err)
		}
	}
	close(gate)
	if f := final(t, collect(t, a.o, run.ID, 0)); f.State != orchestrator.RunFinished {
		t.Fatalf("run of the living replica ended %+v", f)
	}
}

// An instance taken for dead (its lease lost) whose run was claimed by a
// reaper stops that run and writes nothing more of it; its followers get
// the end the reaper stored.
func TestTakenOverRunIsFencedOff(t *testing.T) {
	store := orchestratortest.NewMemStore()
	started := make(chan struct{})
	h := newHarness(t, harnessOpts{store: store, opts: orchestrator.Options{LockTTL: 150 * time.Millisecond, FollowInterval: 10 * time.Millisecond},
		turns: []orchestratortest.Turn{{Content: "never", Wait: make(chan struct{}), Started: started}}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	<-started
	ctx := t.Context()
	// What a reaper of another instance does.
	if err := store.ClaimRun(ctx, run.ID, h.o.InstanceID(), "reaper"); err != nil {
		t.Fatal(err)
	}
	stored, _ := store.GetRun(ctx, run.ID)
	// The events before the model call (started, llm_request) are flushed
	// in the background: the reaper's final goes after the last of them.
	var evs []orchestrator.Event
	deadline := time.Now().Add(10 * time.Second)
	for !slices.ContainsFunc(evs, func(e orchestrator.Event) bool { return e.Type == orchestrator.EventLLMRequest }) {
		if time.Now().After(deadline) {
			t.Fatalf("llm_request never stored: %v", types(evs))
		}
		time.Sleep(time.Millisecond)
		evs, _ = store.ListEvents(ctx, run.ID, 0, 0)
	}
	last := int64(len(evs))
	fin := orchestrator.Event{RunID: run.ID, SessionID: run.SessionID, Seq: last + 1, Type: orchestrator.EventFinal, Time: time.Now(),
		Data: []byte(`{"answer":"","usage":{},"stop_reason":"interrupted","state":"failed","error":"taken over"}`)}
	if err := store.AppendEvents(ctx, []orchestrator.Event{fin}); err != nil {
		t.Fatal(err)
	}
	stored.State, stored.StopReason, stored.LastSeq = orchestrator.RunFailed, orchestrator.StopInterrupted, last+1
	if err := store.UpdateRun(ctx, stored); err != nil {
		t.Fatal(err)
	}
	got := collect(t, h.o, run.ID, 0)
	assertDense(t, got, 1)
	if f := final(t, got); f.State != orchestrator.RunFailed || f.Error != "taken over" {
		t.Fatalf("follower of the fenced run got %+v", f)
	}
	// The old owner's loop has stopped, and wrote nothing over the end.
	r, _ := store.GetRun(ctx, run.ID)
	if r.State != orchestrator.RunFailed || r.Owner != "reaper" || r.LastSeq != last+1 {
		t.Fatalf("stored run after the old owner stopped = %+v", r)
	}
}

// A terminal run whose final event was never stored (the process stopped
// between the two writes) still ends for its followers: the run's row says
// what the final event said.
func TestFollowerGetsTheFinalARunRowImplies(t *testing.T) {
	store := orchestratortest.NewMemStore()
	run := seedRun(t, store, "run_rowonly", "somebody", time.Minute)
	fin := time.Now()
	run.State, run.StopReason, run.Answer, run.LastSeq, run.FinishedAt = orchestrator.RunFinished, orchestrator.StopModelResponse, "42", 2, &fin
	if err := store.UpdateRun(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessOpts{store: store})
	evs := collect(t, h.o, run.ID, 0)
	assertDense(t, evs, 1)
	if f := final(t, evs); f.State != orchestrator.RunFinished || f.Answer != "42" {
		t.Fatalf("final = %+v", f)
	}
	if again := collect(t, h.o, run.ID, 2); len(again) != 0 {
		t.Fatalf("resuming after the final gave %v", types(again))
	}
}

func TestInstanceIDNamesThisProcess(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	parts := strings.Split(h.o.InstanceID(), ":")
	if len(parts) != 4 || parts[1] != strconv.Itoa(os.Getpid()) || parts[2] == "0" {
		t.Fatalf("InstanceID = %q; want host:%d:<start>:<random>", h.o.InstanceID(), os.Getpid())
	}
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	collect(t, h.o, run.ID, 0)
	r, err := h.store.GetRun(t.Context(), run.ID)
	if err != nil || r.Owner != h.o.InstanceID() {
		t.Fatalf("stored owner = %q, %v", r.Owner, err)
	}
}

var errStoreDown = errors.New("store is down")

// flakyStore fails chosen writes while down is set.
type flakyStore struct {
	orchestrator.Store
	down       func(op string) bool
	appendWait chan struct{} // when set, AppendEvents waits for it
}

func (f *flakyStore) AppendEvents(ctx context.Context, evs []orchestrator.Event) error {
	if f.appendWait != nil {
		select {
		case <-f.appendWait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if f.down("events") {
		return errStoreDown
	}
	return f.Store.AppendEvents(ctx, evs)
}

// EndRun fails as a store that cannot write the messages or events of
// its tail would: the whole write.
func (f *flakyStore) EndRun(ctx context.Context, r *orchestrator.Run, at time.Time, keys []string, tail orchestrator.RunTail) error {
	if len(tail.Events) > 0 && f.appendWait != nil {
		select {
		case <-f.appendWait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if len(tail.Messages) > 0 && f.down("messages") || len(tail.Events) > 0 && f.down("events") {
		return errStoreDown
	}
	return f.Store.EndRun(ctx, r, at, keys, tail)
}

func (f *flakyStore) AppendMessages(ctx context.Context, id string, msgs []orchestrator.Message) error {
	if f.down("messages") {
		return errStoreDown
	}
	return f.Store.AppendMessages(ctx, id, msgs)
}

// With ResumeInterrupted, the run of a dead process goes on where it
// stopped: its events continue after the last stored one with a
// "resumed" progress event, the model gets the stored round (so the tool
// whose result was stored does not run again), and the run finishes.
func TestResumeInterruptedRun(t *testing.T) {
	store := orchestratortest.NewMemStore()
	ctx, now := t.Context(), time.Now()
	owner := deadProcessOwner(t)
	sess := &orchestrator.Session{ID: "sess_resume", UserID: "u", CreatedAt: now, UpdatedAt: now}
	run := &orchestrator.Run{ID: "run_resume", SessionID: sess.ID, UserID: "u", State: orchestrator.RunRunning, Owner: owner,
		Question: "write a note", LastSeq: 3, CreatedAt: now,
		Spec: &orchestrator.RunSpec{ToolNames: []string{"write_file"}, MaxRounds: 4}}
	call := orchestrator.ToolCall{ID: "call_1_1", Name: "write_file", Arguments: []byte(`{"path":"a.txt","content":"x"}`)}
	history := []orchestrator.Message{
		{Role: orchestrator.RoleUser, Content: "write a note", RunID: run.ID, CreatedAt: now},
		{Role: orchestrator.RoleAssistant, Content: "", ToolCalls: []orchestrator.ToolCall{call}, RunID: run.ID, CreatedAt: now},
		{Role: orchestrator.RoleTool, Content: "wrote a.txt (stored before the crash)", ToolCallID: call.ID, Name: "write_file", RunID: run.ID, CreatedAt: now},
	}
	var evs []orchestrator.Event
	for i, typ := range []string{"progress", "llm_request", "tool_result"} {
		evs = append(evs, orchestrator.Event{RunID: run.ID, SessionID: sess.ID, Seq: int64(i + 1), Type: typ, Data: []byte(`{}`), Time: now})
	}
	for _, err := range []error{
		store.CreateSession(ctx, sess), store.CreateRun(ctx, run),
		store.AppendMessages(ctx, sess.ID, history), store.AppendEvents(ctx, evs),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, harnessOpts{store: store, mode: orchestrator.ModeFunctionCall,
		opts:  orchestrator.Options{ResumeInterrupted: true},
		turns: []orchestratortest.Turn{{Content: "the note is written"}}})
	if n, err := h.o.RecoverOrphans(ctx); err != nil || n != 1 {
		t.Fatalf("RecoverOrphans = %d, %v", n, err)
	}
	got := collect(t, h.o, run.ID, 0)
	assertDense(t, got, 1)
	if got[3].Type != orchestrator.EventProgress || !strings.Contains(string(got[3].Data), `"stage":"resumed"`) {
		t.Fatalf("event 4 = %s %s; want progress resumed", got[3].Type, got[3].Data)
	}
	if f := final(t, got); f.State != orchestrator.RunFinished || f.Answer != "the note is written" {
		t.Fatalf("final = %+v", f)
	}
	if _, wrote := h.files.Get("u", "a.txt"); wrote {
		t.Fatal("the tool whose result was stored ran again")
	}
	reqs := h.model.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls; want 1", len(reqs))
	}
	var sawResult bool
	for _, m := range reqs[0].Messages {
		sawResult = sawResult || strings.Contains(m.Content, "stored before the crash")
	}
	if !sawResult {
		t.Fatal("the resumed model call lacks the stored round")
	}
	stored, _ := store.GetRun(ctx, run.ID)
	if stored.State != orchestrator.RunFinished || stored.Owner != h.o.InstanceID() {
		t.Fatalf("stored run = %+v", stored)
	}
	msgs, _ := store.ListMessages(ctx, sess.ID, 0)
	if len(msgs) != 4 || msgs[3].Content != "the note is written" {
		t.Fatalf("history after the resume has %d messages: %+v", len(msgs), msgs)
	}
}

// A run that cannot be resumed (stored before runs kept their request) is
// ended as interrupted instead.
func TestResumeWithoutSpecEndsTheRun(t *testing.T) {
	store := orchestratortest.NewMemStore()
	run := seedRun(t, store, "run_nospec", deadProcessOwner(t), time.Hour)
	h := newHarness(t, harnessOpts{store: store, opts: orchestrator.Options{ResumeInterrupted: true}})
	if n, err := h.o.RecoverOrphans(t.Context()); err != nil || n != 1 {
		t.Fatalf("RecoverOrphans = %d, %v", n, err)
	}
	wantInterrupted(t, h.o, store, run)
}

// A run whose session lock another run took (its process stalled past the
// lease) stops instead of running beside that run, and ends failed with
// the reason, as stored and as told.
func TestRunThatLostItsLockStops(t *testing.T) {
	store := orchestratortest.NewMemStore()
	started := make(chan struct{})
	h := newHarness(t, harnessOpts{store: store, opts: orchestrator.Options{LockTTL: 150 * time.Millisecond},
		turns: []orchestratortest.Turn{{Content: "never", Wait: make(chan struct{}), Started: started}}})
	run := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "q"})
	<-started
	ctx, key := t.Context(), "session:"+run.SessionID
	if err := store.ReleaseLock(ctx, key, run.ID); err != nil {
		t.Fatal(err)
	}
	if err := store.AcquireLock(ctx, key, "another-run", time.Hour); err != nil {
		t.Fatal(err)
	}
	evs := collect(t, h.o, run.ID, 0)
	f := final(t, evs)
	if f.State != orchestrator.RunFailed || !strings.Contains(f.Error, "lost to another run") {
		t.Fatalf("final = %+v; want failed, lock lost", f)
	}
	if r, _ := store.GetRun(ctx, run.ID); r.State != orchestrator.RunFailed || r.Error != f.Error {
		t.Fatalf("stored run = %+v; the client was told %+v", r, f)
	}
	// The other run keeps its lock.
	if err := store.AcquireLock(ctx, key, "third", time.Hour); !errors.Is(err, orchestrator.ErrBusy) {
		t.Fatalf("the intruder's lock was released: %v", err)
	}
}

// The reaper reads every active run, page after page: orphans beyond the
// first page (more active runs than a page, across a big cluster) are
// taken over too.
func TestReaperReadsEveryPage(t *testing.T) {
	defer orchestrator.SetReapPageForTest(2)()
	store := orchestratortest.NewMemStore()
	owner := deadProcessOwner(t)
	var runs []*orchestrator.Run
	for i := range 5 {
		runs = append(runs, seedRun(t, store, fmt.Sprintf("run_page_%d", i), owner, time.Hour))
	}
	h := newHarness(t, harnessOpts{store: store})
	if n, err := h.o.RecoverOrphans(t.Context()); err != nil || n != len(runs) {
		t.Fatalf("RecoverOrphans = %d, %v; want %d", n, err, len(runs))
	}
	for _, r := range runs {
		wantInterrupted(t, h.o, store, r)
	}
}
