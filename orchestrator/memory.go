package orchestrator

import "context"

// Long-term memory as runs meet it (docs/memory.md). Package memory keeps
// it: each user's switch and records, the queue of sessions to summarise
// and its workers. The core asks it for the [Long-term Memory] block of a
// run's prompt and tells it of a run that ended finished; cmd/wunder wires
// it as Options.Memory. Without one, runs have no memory.

// Memory is long-term memory as the core uses it.
type Memory interface {
	// PromptBlock returns the [Long-term Memory] block of a prompt of the
	// user in lang ("" = none). off reports that the user's switch was
	// read and is off: the run's end then does not call RunFinished (what
	// was not remembered going in is not remembered going out).
	PromptBlock(ctx context.Context, userID, lang string) (block string, off bool)
	// RunFinished is told of a run that ended finished and whose prompt
	// did not find memory off, on the run's goroutine, before its final
	// event is visible: a client that saw the run end finds its session
	// queued. ctx carries no deadline; the implementation bounds its work.
	RunFinished(ctx context.Context, r FinishedRun)
	// ForgetUser drops what it keeps of the user besides the store, whose
	// data was just deleted ([Orchestrator.DeleteUserData]; the store
	// deletes the user's memory with the rest).
	ForgetUser(userID string)
}

// FinishedRun is a run that ended finished, as [Memory.RunFinished] is
// told it.
type FinishedRun struct {
	ID        string
	SessionID string
	UserID    string
	// Language is the run's prompt language.
	Language string
}

// memoryBlock is the run's [Long-term Memory] block (see
// [Memory.PromptBlock]); "" without memory.
func (o *Orchestrator) memoryBlock(ctx context.Context, userID, lang string) (block string, off bool) {
	if o.opts.Memory == nil {
		return "", false
	}
	return o.opts.Memory.PromptBlock(ctx, userID, lang)
}

// queueMemory tells memory that the run ended finished, unless its
// prompt found memory off.
func (o *Orchestrator) queueMemory(lr *liveRun) {
	if o.opts.Memory == nil || lr.memoryOff.Load() {
		return
	}
	o.opts.Memory.RunFinished(context.Background(), FinishedRun{ID: lr.id, SessionID: lr.sessionID, UserID: lr.userID, Language: lr.language})
}
