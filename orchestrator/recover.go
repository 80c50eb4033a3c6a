package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Recovery. A run is orphaned when it is not terminal and the instance that
// owns it is dead (see instance.go for how that is decided) — or when this
// instance owns it but no longer executes it (its final write failed). The
// reaper claims such a run in the store (Store.ClaimRun: of several
// replicas exactly one wins, and the dead owner's late writes are fenced
// off), frees its locks, and ends it: failed with stop reason
// "interrupted", or cancelled when a cancel had been requested, with a
// final event after the last stored one. Because events become visible
// only once stored (eventlog.go), that final never takes a seq a client
// has seen.
//
// The reaper runs once when an instance starts (cmd/wunder calls
// RecoverOrphans before serving) and then every ReapInterval while it
// lives (every LockTTL/3, with the renewal of the instance's lease), so a
// replica takes over the runs of one that died without waiting for a
// restart.

// activeStates are the states a run can still leave.
var activeStates = ActiveStates()

// orphanMessage is the error of a run ended by the reaper.
const orphanMessage = "interrupted: the process running it stopped"

func instanceKey(id string) string { return "instance:" + id }

// reapPage is how many active runs the reaper reads at a time; it reads
// them all, page after page.
var reapPage = 1000

// RecoverOrphans takes over (resumes, or ends) the runs dead instances left
// unfinished and returns how many. It is safe to call concurrently, in
// this process and in every replica sharing the store.
func (o *Orchestrator) RecoverOrphans(ctx context.Context) (int, error) {
	dead := map[string]bool{} // owner -> verdict, for this pass
	n := 0
	var after *PageKey
	for {
		runs, err := o.store.ListRuns(ctx, RunFilter{States: activeStates, Page: Page{Limit: reapPage, After: after}})
		if err != nil {
			return n, err
		}
		m, err := o.recoverPage(ctx, runs, dead)
		if n += m; err != nil || len(runs) < reapPage {
			return n, err
		}
		after = RunKey(runs[len(runs)-1])
	}
}

// recoverPage takes over the orphans among runs, one page of active runs.
func (o *Orchestrator) recoverPage(ctx context.Context, runs []*Run, dead map[string]bool) (int, error) {
	n := 0
	for _, r := range runs {
		if o.executes(r.ID) {
			continue
		}
		if r.State.Waiting() {
			// Not an orphan: it waits for a person, executed nowhere.
			// Decisions that are complete (or expired) resume it.
			if err := o.resumeIfReady(ctx, r.ID); err != nil && !errors.Is(err, ErrNotFound) {
				o.log.Warn("waiting run not resumed", "run_id", r.ID, "err", err)
			}
			continue
		}
		if r.Owner == "" {
			// A run of a version before owners: the session lock decides.
			ok, err := o.legacyOrphan(ctx, r)
			if err != nil {
				return n, err
			}
			if !ok {
				continue
			}
		} else {
			verdict, seen := dead[r.Owner]
			if !seen {
				var err error
				if verdict, err = o.ownerDead(ctx, r.Owner); err != nil {
					return n, err
				}
				dead[r.Owner] = verdict
			}
			if !verdict {
				continue
			}
		}
		if err := o.recoverRun(ctx, r); err != nil {
			if errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound) {
				continue // another reaper won, or the run ended meanwhile
			}
			return n, err
		}
		n++
	}
	return n, nil
}

// recoverRun claims an orphan and resumes or ends it. While it does, the
// run counts as executed here, so no other pass of this instance takes it.
func (o *Orchestrator) recoverRun(ctx context.Context, r *Run) error {
	o.setStoring(r.ID, true)
	defer o.setStoring(r.ID, false)
	if err := o.store.ClaimRun(ctx, r.ID, r.Owner, o.instance); err != nil {
		return err
	}
	r.Owner = o.instance
	if ok, err := o.resuspend(ctx, r); err != nil {
		o.log.Warn("run that was suspending cannot wait again; ending it", "run_id", r.ID, "err", err)
	} else if ok {
		o.log.Warn("run interrupted while it suspended for approval waits again", "run_id", r.ID)
		return nil
	}
	if err := o.store.ReleaseLocksOf(ctx, r.ID); err != nil {
		return err
	}
	if o.opts.ResumeInterrupted && r.State != RunCancelling {
		err := o.resume(ctx, r)
		if err == nil {
			o.log.Warn("interrupted run resumed", "run_id", r.ID)
			return nil
		}
		o.log.Warn("interrupted run cannot be resumed; ending it", "run_id", r.ID, "err", err)
	}
	if err := o.endStored(ctx, r, orphanOutcome(r), nil); err != nil {
		return err
	}
	o.closeApprovals(ctx, r.ID, "the run was interrupted")
	o.log.Warn("orphaned run ended", "run_id", r.ID, "state", r.State, "stop_reason", r.StopReason)
	return nil
}

// resume executes an interrupted run again on this instance, as it was
// asked, from its last stored round: its history holds the question and
// every round whose tool results were stored, so no tool whose result was
// stored runs again. Its event log goes on after the last stored event,
// with a "resumed" progress event.
func (o *Orchestrator) resume(ctx context.Context, r *Run) error {
	req, x, base, err := o.resumable(ctx, r)
	if err != nil {
		return err
	}
	locks, _, err := o.acquireLocks(ctx, req, r.SessionID, r.ID, false)
	if err != nil {
		return err
	}
	lr := o.newLiveRun(req, x, locks, *r, base)
	lr.resumed = true
	o.loadArtifacts(ctx, lr, base)
	o.observeRun(ctx, lr)
	return o.admitResumed(lr)
}

// resumable rebuilds what a stored run executes with: its request, its
// model and tools, and the seq its log goes on after.
func (o *Orchestrator) resumable(ctx context.Context, r *Run) (RunRequest, execution, int64, error) {
	if r.Spec == nil {
		return RunRequest{}, execution{}, 0, errors.New("the run was stored without its request")
	}
	sp := r.Spec
	req := RunRequest{UserID: r.UserID, SessionID: r.SessionID, Question: r.Question, ToolNames: sp.ToolNames, PreloadSkills: sp.PreloadSkills,
		ExcludeTools: sp.ExcludeTools, ModelName: sp.ModelName, ToolCallMode: sp.ToolCallMode, Language: sp.Language,
		Caller: sp.Caller, MaxRounds: sp.MaxRounds, Temperature: sp.Temperature, MaxOutput: sp.MaxOutput, SkipToolCalls: sp.SkipToolCalls,
		Metadata: sp.Metadata, ApprovalMode: sp.ApprovalMode, Frontend: sp.Frontend}
	x, err := o.prepare(ctx, req)
	if err != nil {
		return req, x, 0, err
	}
	base, err := o.lastStoredSeq(ctx, r)
	return req, x, base, err
}

// admitResumed admits a resumed run: a slot, or the queue.
func (o *Orchestrator) admitResumed(lr *liveRun) error {
	startNow, pos, err := o.admit(lr, false)
	if err != nil {
		o.discard(lr)
		return err
	}
	o.startHeartbeat(lr)
	o.follow.wake(lr.id)
	if startNow {
		o.launch(lr)
	} else {
		lr.log.emit(EventProgress, ProgressData{Stage: "queued", Summary: "resumed run waiting for a free slot, position " + strconv.Itoa(pos)})
	}
	return nil
}

// lastStoredSeq is the seq of the run's last stored event.
func (o *Orchestrator) lastStoredSeq(ctx context.Context, r *Run) (int64, error) {
	var last []Event
	err := o.retry(ctx, "read the last event", func(ctx context.Context) (err error) {
		last, err = o.store.ListEvents(ctx, r.ID, max(r.LastSeq-1, 0), 0)
		return err
	})
	if n := len(last); err == nil && n > 0 {
		return last[n-1].Seq, nil
	}
	return r.LastSeq, err
}

// ownerDead reports whether instance id is dead: this instance (the run
// is not executing here any more), a process of this host that is gone, or
// an instance whose lease has expired.
func (o *Orchestrator) ownerDead(ctx context.Context, id string) (bool, error) {
	if id == o.instance || processGone(o.instance, id) {
		return true, nil
	}
	probe := o.instance + "#probe"
	err := o.store.AcquireLock(ctx, instanceKey(id), probe, o.opts.LockTTL)
	if errors.Is(err, ErrBusy) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	// Expired or never taken: the instance is dead. Leave no lease behind.
	return true, o.store.ReleaseLock(ctx, instanceKey(id), probe)
}

// legacyOrphan decides for a run without an owner: orphaned when nobody
// holds its session lock.
func (o *Orchestrator) legacyOrphan(ctx context.Context, r *Run) (bool, error) {
	key, probe := "session:"+r.SessionID, "recover:"+r.ID
	err := o.store.AcquireLock(ctx, key, probe, o.opts.LockTTL)
	if errors.Is(err, ErrBusy) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, o.store.ReleaseLock(ctx, key, probe)
}

func orphanOutcome(r *Run) outcome {
	if r.State == RunCancelling {
		return outcome{stop: StopCancelled, state: RunCancelled, usage: r.Usage}
	}
	return outcome{stop: StopInterrupted, state: RunFailed, usage: r.Usage, errMsg: orphanMessage}
}

// endStored ends a run in the store alone (it is not executing here, or
// its log broke): a final event after the last stored one and the run's
// terminal state in one write (Store.EndRun, fenced by r.Owner), which also
// frees keys, the run's locks, so a client that sees the final event never
// meets them. When a final event is already stored, only the run row is
// brought in line with it.
func (o *Orchestrator) endStored(ctx context.Context, r *Run, out outcome, keys []string) error {
	seq, err := o.lastStoredSeq(ctx, r)
	if err != nil {
		return err
	}
	var last []Event
	if seq > 0 {
		if last, err = o.store.ListEvents(ctx, r.ID, seq-1, 1); err != nil {
			return err
		}
	}
	now := o.opts.Now()
	var tail RunTail
	to, set := out.state, func(r *Run) {
		r.StopReason, r.Answer, r.Error, r.Usage = out.stop, out.answer, out.errMsg, out.usage
		r.FinishedAt = &now
	}
	if n := len(last); n > 0 && last[n-1].Type == EventFinal {
		// The final event made it; only the run row did not.
		set = func(r *Run) { r.StopReason, r.Error, r.FinishedAt = out.stop, out.errMsg, &now }
		if r.State.Terminal() {
			to, set = r.State, nil // it is stored as it ended: written again
		}
	} else {
		seq++
		tail.Events = []Event{{RunID: r.ID, SessionID: r.SessionID, Seq: seq, Type: EventFinal, Time: now,
			Data: rawJSON(out.final())}}
	}
	_, _, err = o.transition(ctx, change{run: r, to: to, set: func(r *Run) {
		if set != nil {
			set(r)
		}
		r.LastSeq = seq
	}, store: func(ctx context.Context, r *Run) error {
		return o.retry(ctx, "store the run's end", func(ctx context.Context) error { return o.store.EndRun(ctx, r, now, keys, tail) })
	}})
	if err != nil && len(tail.Events) > 0 {
		return fmt.Errorf("final event of run %s: %w", r.ID, err)
	}
	return err
}

// startReaper renews this instance's lease and runs RecoverOrphans every
// LockTTL/3, until Close.
func (o *Orchestrator) startReaper() {
	o.reaperWG.Go(func() {
		t := time.NewTicker(o.opts.LockTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-o.reaperStop:
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), o.opts.LockTTL)
			if err := o.renewLease(ctx); err != nil {
				o.log.Warn("instance lease not renewed", "instance", o.instance, "err", err)
			}
			if n, err := o.RecoverOrphans(ctx); err != nil {
				o.log.Warn("orphan recovery failed", "err", err)
			} else if n > 0 {
				o.log.Info("took over orphaned runs (resumed, or ended)", "count", n)
			}
			cancel()
		}
	})
}

// ensureLease takes this instance's lease before its first run is stored,
// so no reaper can mistake the run's owner for a dead instance.
func (o *Orchestrator) ensureLease(ctx context.Context) error {
	o.leaseMu.Lock()
	defer o.leaseMu.Unlock()
	if o.leased {
		return nil
	}
	if err := o.store.AcquireLock(ctx, instanceKey(o.instance), o.instance, o.opts.LockTTL); err != nil {
		return fmt.Errorf("instance lease: %w", err)
	}
	o.leased = true
	return nil
}

// renewLease extends the lease; a lease lost meanwhile (this instance was
// taken for dead) is taken again, and the runs reapers claimed meanwhile
// notice at their next heartbeat that they are no longer theirs.
func (o *Orchestrator) renewLease(ctx context.Context) error {
	o.leaseMu.Lock()
	leased := o.leased
	o.leaseMu.Unlock()
	if !leased {
		return nil
	}
	err := o.store.RenewLock(ctx, instanceKey(o.instance), o.instance, o.opts.LockTTL)
	if errors.Is(err, ErrNotFound) {
		o.log.Error("instance lease was lost; runs of this instance may have been taken over", "instance", o.instance)
		err = o.store.AcquireLock(ctx, instanceKey(o.instance), o.instance, o.opts.LockTTL)
	}
	return err
}

// InstanceID returns the id of this instance, the owner of its runs.
func (o *Orchestrator) InstanceID() string { return o.instance }

// Instances is what work other than runs (an evaluation, a load test)
// needs to be recovered as runs are: the instance that records it, its
// lease, and whether the instance that recorded some is gone.
// *Orchestrator implements it.
type Instances interface {
	InstanceID() string
	HoldLease(ctx context.Context) error
	InstanceGone(ctx context.Context, id string) (bool, error)
}

var _ Instances = (*Orchestrator)(nil)

// Orphaned reports whether work recorded as instance recorded's (an
// evaluation, a load test), and not run by this server, has no server any
// more: it names no instance (it was stored before instances were
// recorded), names this one (its end was not stored), or names one that
// is gone. With inst nil only the first holds.
func Orphaned(ctx context.Context, inst Instances, recorded string) (bool, error) {
	switch {
	case recorded == "":
		return true, nil
	case inst == nil:
		return false, nil
	case recorded == inst.InstanceID():
		return true, nil
	}
	return inst.InstanceGone(ctx, recorded)
}

// HoldLease takes this instance's lease in the store, if it has not yet:
// call it before recording work of the instance's other than runs (an
// evaluation, a load test) that others judge with [Orchestrator.InstanceGone].
func (o *Orchestrator) HoldLease(ctx context.Context) error { return o.ensureLease(ctx) }

// InstanceGone reports whether instance id is gone: a process of this
// host that has exited, or an instance whose lease in the store has
// expired or was never taken. Work recorded as a gone instance's is
// orphaned. This instance is never gone.
func (o *Orchestrator) InstanceGone(ctx context.Context, id string) (bool, error) {
	if id == o.instance {
		return false, nil
	}
	return o.ownerDead(ctx, id)
}
