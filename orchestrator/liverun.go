package orchestrator

// The live state of a run this process admitted (queued or executing).

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// liveRun is a run admitted by this process, queued or executing.
type liveRun struct {
	id, userID, sessionID string
	// artifacts are the ones the run attached (artifact.go).
	artifacts kept[ArtifactData]
	// a2ui are the A2UI batches the run sent (a2ui.go).
	a2ui     kept[A2UIData]
	req      RunRequest
	sel      *Selection
	model    Model
	settings ModelSettings
	mode     string
	language string
	log      *runLog
	locks    []string
	// memoryOff is set when the run's prompt found its user's memory
	// switch off (queueMemory).
	memoryOff atomic.Bool

	// ctx is the run's context: cancelling it stops the loop, the running
	// tool and the lock heartbeat.
	ctx    context.Context
	cancel context.CancelFunc

	// mu guards run and lost.
	mu  sync.Mutex
	run Run
	// lost is set when a reaper took the run over (this instance was
	// taken for dead): nothing of it may be written any more.
	lost bool
	// resumed marks a run taken over after a crash and executed again
	// from its stored history (Options.ResumeInterrupted).
	resumed bool
	// aborted, when set, is why the run was stopped by the orchestrator
	// (not by a cancel): it ends failed with this error.
	aborted error
	// slotFolded marks a run whose user slot (locks[1]) is stored with
	// the run (persistNew), not taken before it (acquireLocks).
	slotFolded bool
	// freshSession marks a run that created its session: the session has
	// no history to load (it holds the session's lock, and nobody knew the
	// session before it was stored).
	freshSession bool
	// decided marks a run resumed after its approvals were decided: its
	// loop first finishes the suspended round (Run.Pending); answered,
	// when a question of that round was among them.
	decided, answered bool
	// asked is set before a round's approvals are stored (loop.suspend).
	// A run started here that has not asked has none: Approvals answers
	// without reading the store (noApprovals).
	asked atomic.Bool
	// startStored marks a run Start stored as running, in a slot it
	// reserved: its start needs no write of its own.
	startStored bool
	// questionStored marks a run whose question Start stored with it
	// (persistNew): the loop finds it in the history rather than saving it.
	questionStored bool
	// hbDone is closed when the heartbeat has stopped.
	hbDone chan struct{}
	// suspended, set under mu when suspendRun begins, is closed once the
	// suspension is settled (stored waiting, or ended because a cancel
	// came meanwhile): a cancel that comes in between waits for it rather
	// than answering "cancelling".
	suspended chan struct{}
	// tools are the calls executing now, in start order (the monitor's
	// current tool); guarded by mu.
	tools []string
	// obs is the run's observation (observe.go), nil without an
	// Observer; set with obsInfo before the run can be launched.
	obs     *runObservation
	obsInfo RunInfo
}

// toolStarted and toolEnded track the calls executing now.
func (lr *liveRun) toolStarted(callID, name string) {
	lr.mu.Lock()
	lr.tools = append(lr.tools, callID+"\x00"+name)
	lr.mu.Unlock()
}

func (lr *liveRun) toolEnded(callID, name string) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if i := slices.Index(lr.tools, callID+"\x00"+name); i >= 0 {
		lr.tools = slices.Delete(lr.tools, i, i+1)
	}
}

// currentTool is the call started last of those executing, or "".
func (lr *liveRun) currentTool() string {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if n := len(lr.tools); n > 0 {
		_, name, _ := strings.Cut(lr.tools[n-1], "\x00")
		return name
	}
	return ""
}

// abort stops the run; it ends failed with err.
func (lr *liveRun) abort(err error) {
	lr.mu.Lock()
	if lr.aborted == nil {
		lr.aborted = err
	}
	lr.mu.Unlock()
	lr.cancel()
}

func (lr *liveRun) abortErr() error {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return lr.aborted
}

func (lr *liveRun) snapshot() *Run {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	r := lr.run
	r.LastSeq = lr.log.visibleSeq()
	return &r
}

// markLost records that the run was taken over and stops it.
func (lr *liveRun) markLost() {
	lr.mu.Lock()
	lr.lost = true
	lr.mu.Unlock()
	lr.cancel()
}

func (lr *liveRun) isLost() bool {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return lr.lost
}

func (lr *liveRun) update(f func(r *Run)) Run {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	f(&lr.run)
	return lr.run
}
