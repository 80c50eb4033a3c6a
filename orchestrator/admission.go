package orchestrator

// Admission: a stored run takes an execution slot (the global limit,
// concurrency.max_active_runs) or a place in the bounded FIFO queue; a
// run's end or pause hands its slot to the head of the queue.

import "time"

// admissible reports whether a run could be admitted now.
func (o *Orchestrator) admissible() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.refusalLocked()
}

// refusalLocked is why no run can be admitted now, or nil.
func (o *Orchestrator) refusalLocked() error {
	switch {
	case o.closed:
		return shuttingDown()
	case o.active < o.opts.MaxActiveRuns || len(o.queue) < o.opts.QueueSize:
		return nil
	default:
		return WithRetryAfter(messagef(ErrUnavailable, "queue_full", "%d runs active and the queue of %d is full", o.active, o.opts.QueueSize), o.opts.QueueRetryAfter)
	}
}

// shuttingDown is the refusal of a process that is stopping: another
// replica takes the run at once, so the hint is short.
func shuttingDown() error {
	return WithRetryAfter(messagef(ErrUnavailable, "shutting_down", "shutting down"), shutdownRetryAfter)
}

// shutdownRetryAfter is the retry hint of a stopping process's refusals.
const shutdownRetryAfter = time.Second

// reserveSlot takes an execution slot for a run Start is about to store,
// when one is free and no run waits in the queue for one (which would be
// passed over).
func (o *Orchestrator) reserveSlot() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || len(o.queue) > 0 || o.active >= o.opts.MaxActiveRuns {
		return false
	}
	o.active++
	return true
}

// releaseSlot gives back a slot reserveSlot took for a run that was not
// stored, to the head of the queue if any.
func (o *Orchestrator) releaseSlot() {
	o.mu.Lock()
	o.active--
	next := o.nextLocked()
	o.mu.Unlock()
	if next != nil {
		o.launch(next)
	}
}

// admit takes an execution slot or a queue place for lr; reserved: it
// holds a slot already (reserveSlot), and only shutdown refuses it.
func (o *Orchestrator) admit(lr *liveRun, reserved bool) (startNow bool, pos int, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if reserved {
		if o.closed {
			return false, 0, shuttingDown()
		}
		o.live[lr.id] = lr
		return true, 0, nil
	}
	if err := o.refusalLocked(); err != nil {
		return false, 0, err
	}
	o.live[lr.id] = lr
	if o.active < o.opts.MaxActiveRuns {
		o.active++
		return true, 0, nil
	}
	o.queue = append(o.queue, lr)
	return false, len(o.queue), nil
}

func (o *Orchestrator) removeQueuedLocked(lr *liveRun) bool {
	for i, q := range o.queue {
		if q == lr {
			o.queue = append(o.queue[:i], o.queue[i+1:]...)
			return true
		}
	}
	return false
}

// nextLocked hands a free slot to the head of the queue.
func (o *Orchestrator) nextLocked() *liveRun {
	if o.closed || len(o.queue) == 0 || o.active >= o.opts.MaxActiveRuns {
		return nil
	}
	next := o.queue[0]
	o.queue = o.queue[1:]
	o.active++
	return next
}

// launch starts executing an admitted run.
func (o *Orchestrator) launch(lr *liveRun) {
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		out := o.execute(lr)
		if out.state.Waiting() {
			o.suspendRun(lr, out)
			return
		}
		o.finish(lr, out)
	}()
}
