package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"
)

// outcome is how a run ended.
type outcome struct {
	answer string
	// history are messages the run's end stores with it (the answer).
	history []Message
	stop    StopReason
	state   RunState
	usage   Usage
	errMsg  string
	// pause is what a run that waits stores with its wait (suspendRun).
	pause *pause
	// artifacts and a2ui are the run's, listed in its final event.
	artifacts []ArtifactData
	a2ui      []A2UIData
}

// final is the data of the final event that says how the run ended.
func (out outcome) final() FinalData {
	return FinalData{Answer: out.answer, Usage: out.usage, StopReason: out.stop, State: out.state, Error: out.errMsg, Artifacts: out.artifacts, A2UI: out.a2ui}
}

// execute runs lr's agent loop to its end. It never panics: a panic in the
// loop (or a tool it calls on this goroutine) fails the run.
func (o *Orchestrator) execute(lr *liveRun) (out outcome) {
	l := &loop{o: o, lr: lr, log: lr.log, replan: replanner{p: o.opts.Replan.withDefaults()}, usage: lr.snapshot().Usage}
	defer func() {
		if p := recover(); p != nil {
			o.log.Error("run panicked", "run_id", lr.id, "panic", p, "stack", string(debug.Stack()))
			lr.log.emit(EventError, ErrorData{Code: "internal", Message: "internal error"})
			out = outcome{stop: StopError, state: RunFailed, usage: l.usage, errMsg: "internal error"}
		}
	}()
	if !lr.startStored { // Start stored it running already
		now := o.opts.Now()
		to := RunRunning
		if lr.snapshot().State == RunCancelling {
			to = RunCancelling // asked to stop in the queue: it stops at once
		}
		_, _, err := o.transition(lr.ctx, change{lr: lr, to: to, set: func(r *Run) { r.StartedAt = &now },
			store: func(ctx context.Context, r *Run) error {
				return o.retry(ctx, "store the run's start", func(ctx context.Context) error { return o.store.UpdateRun(ctx, r) })
			}})
		switch {
		case isIllegal(err):
			// Cancelled meanwhile (the live run went cancelling): its
			// context is done, and its end says so.
		case errors.Is(err, ErrConflict):
			lr.markLost()
		case err != nil && lr.ctx.Err() == nil:
			// The run goes on: its end is stored over this state.
			o.log.Warn("run start not stored", "run_id", lr.id, "err", err)
		}
	}
	switch {
	case lr.decided && lr.answered:
		lr.log.emit(EventProgress, ProgressData{Stage: "resumed", Summary: "run resumed after the user answered"})
	case lr.decided:
		lr.log.emit(EventProgress, ProgressData{Stage: "resumed", Summary: "run resumed after its approvals were decided"})
	case lr.resumed:
		lr.log.emit(EventProgress, ProgressData{Stage: "resumed", Summary: "run resumed after its process stopped"})
	default:
		lr.log.emit(EventProgress, ProgressData{Stage: "started", Summary: "run started"})
	}
	return l.run(lr.ctx)
}

// loop is the state of one run's agent loop.
type loop struct {
	o     *Orchestrator
	lr    *liveRun
	log   *runLog
	usage Usage
	round int
	// historyUsage is the prompt tokens the model reported for the last
	// request (the ratio trigger's counter; reset by a compaction as
	// ModelSettings.CompactionReset says).
	historyUsage     int
	compactionFailed bool
	// pp is the run's fixed part of the system prompt; sel is what the
	// current model call offers (the run's selection as the toolsets'
	// contributions adjust it).
	pp  promptParams
	sel *Selection
	// replan tracks failure streaks and replans (plan.go); completed
	// counts the plan's completed steps, for the goal check.
	replan    replanner
	completed int
	// who is the run's user as the policy sees them, read on first use
	// when the round's selection has none (policy.go).
	who *subject
}

func (l *loop) run(ctx context.Context) outcome {
	lr, o := l.lr, l.o
	var history []Message
	if !lr.freshSession || lr.resumed {
		err := o.retry(ctx, "load history", func(ctx context.Context) (err error) {
			history, err = o.store.ListMessages(ctx, lr.sessionID, o.opts.MaxHistoryItems)
			return err
		})
		if err != nil {
			return l.fail(ctx, "store", fmt.Errorf("load history: %w", err))
		}
	}
	history = fromLastSummary(history)
	// The system prompt is rebuilt before every model call: toolsets that
	// contribute to it (loaded skills) follow the history.
	memory, memoryOff := o.memoryBlock(ctx, lr.userID, lr.language)
	lr.memoryOff.Store(memoryOff)
	l.pp = promptParams{userID: lr.userID, sessionID: lr.sessionID, lang: lr.language, mode: lr.mode,
		workspace: o.workspaceSummary(ctx, lr.userID), memory: memory,
		preload: lr.req.PreloadSkills, sel: lr.sel}
	l.sel = lr.sel
	system := Message{Role: RoleSystem}
	msgs := append([]Message{system}, history...)
	// A resumed run finds its question and stored rounds in the history,
	// and so does a new run of a session it continues: Start stored the
	// question with the run (a new session's history is not read).
	runStart, done := -1, 0
	if lr.resumed || lr.questionStored {
		runStart, done = resumePoint(msgs, lr.id)
	}
	if runStart < 0 {
		question := Message{Role: RoleUser, Content: lr.req.Question, Attachments: lr.req.Attachments, RunID: lr.id, CreatedAt: o.opts.Now()}
		if !lr.questionStored {
			if err := l.save(ctx, question); err != nil {
				return l.fail(ctx, "store", err)
			}
		}
		msgs = append(msgs, question)
		runStart = len(msgs) - 1
	}

	maxRounds := lr.req.MaxRounds
	if maxRounds <= 0 {
		maxRounds = lr.settings.MaxRounds
	}
	if maxRounds <= 0 {
		maxRounds = 8
	}
	var last string
	if p := lr.snapshot().Pending; p != nil && lr.resumed && p.Round == done+1 {
		// The round that waited for approvals: its calls run now, as
		// decided.
		l.round = p.Round
		var stop *outcome
		if msgs, stop = l.finishPending(ctx, msgs, p); stop != nil {
			return *stop
		}
		done = p.Round
		if c := cleanAnswer(p.Content); c != "" {
			last = c
		}
	}
	for l.round = done + 1; l.round <= maxRounds; l.round++ {
		if ctx.Err() != nil {
			return l.cancelled()
		}
		msgs[0].Content, l.sel = o.promptSelection(ctx, l.pp, msgs)
		var err error
		if msgs, runStart, err = l.maybeCompact(ctx, msgs, runStart); err != nil {
			return l.fail(ctx, "store", err)
		}
		resp, err := l.callModel(ctx, msgs)
		if err != nil {
			if ctx.Err() != nil {
				return l.cancelled()
			}
			return l.fail(ctx, "model_error", err)
		}
		calls := l.toolCalls(resp)
		if lr.req.SkipToolCalls {
			calls = nil // skip_tool_calls: the first answer is final
		}
		assistant := Message{Role: RoleAssistant, Content: resp.Content, ReasoningContent: resp.ReasoningContent, RunID: lr.id, CreatedAt: o.opts.Now()}
		if lr.mode == ModeFunctionCall {
			for _, c := range calls {
				assistant.ToolCalls = append(assistant.ToolCalls, c.call)
			}
		}
		if len(calls) == 0 {
			// The answer is stored with the run's end (complete).
			answer := cleanAnswer(resp.Content)
			assistant.Content = answer
			return outcome{answer: answer, history: []Message{assistant}, stop: StopModelResponse, state: RunFinished, usage: l.usage}
		}
		if answer, stop, ok := finalCall(calls); ok {
			msg := Message{Role: RoleAssistant, Content: answer, RunID: lr.id, CreatedAt: o.opts.Now()}
			return outcome{answer: answer, history: []Message{msg}, stop: stop, state: RunFinished, usage: l.usage}
		}
		// A start Start deferred is stored before a round that changes
		// something (a tool that is not read-only) or waits for a person
		// (its approvals refer to the run): the run is on record before it
		// acts. A round that only reads waits for nothing; its start goes
		// with the log's first write, as a run without tools does.
		asks := l.gate(ctx, calls)
		if len(asks) > 0 || !readOnly(calls) {
			if err := l.o.retry(context.WithoutCancel(ctx), "store the run's start", lr.log.storeStart); err != nil {
				return l.fail(ctx, "store", err)
			}
		}
		if len(asks) > 0 {
			return l.suspend(resp, calls, asks)
		}
		var stop *outcome
		if msgs, stop = l.endRound(ctx, msgs, resp, assistant, calls); stop != nil {
			return *stop
		}
		if c := cleanAnswer(resp.Content); c != "" {
			last = c
		}
	}
	answer := last
	if lr.mode == ModeToolCall {
		_, answer = parseTextToolCalls(answer)
	}
	if answer == "" {
		answer = fmt.Sprintf("Stopped after %d rounds without a final answer.", maxRounds)
	}
	return outcome{answer: answer, stop: StopMaxRounds, state: RunFinished, usage: l.usage}
}

// endRound runs a round's calls and stores the round: the model's
// message, the results, and what planning adds. It returns the history
// with the round, or the outcome that ends the run.
func (l *loop) endRound(ctx context.Context, msgs []Message, resp *ModelResponse, assistant Message, calls []pendingCall) ([]Message, *outcome) {
	results := l.runTools(ctx, calls)
	if ctx.Err() != nil {
		out := l.cancelled()
		return msgs, &out
	}
	round := append([]Message{assistant}, l.resultMessages(calls, results)...)
	add, stop := l.planning(ctx, msgs, resp, calls, results)
	round = append(round, add...)
	msgs = append(msgs, round...)
	if err := l.keep(round...); err != nil {
		out := l.fail(ctx, "store", err)
		return msgs, &out
	}
	return msgs, stop
}

// resumePoint finds run's question in msgs and counts its stored rounds
// (one assistant message each); -1 when the question was never stored.
func resumePoint(msgs []Message, run string) (question, rounds int) {
	question = -1
	for i, m := range msgs {
		switch {
		case m.RunID != run || m.Name == compactionName:
		case question < 0 && m.Role == RoleUser:
			question = i
		case question >= 0 && m.Role == RoleAssistant:
			rounds++
		}
	}
	return question, rounds
}

// callModel sends one request and turns the model's stream into events.
func (l *loop) callModel(ctx context.Context, msgs []Message) (*ModelResponse, error) {
	lr := l.lr
	req := l.request(msgs)
	l.log.emit(EventLLMRequest, LLMRequestData{Round: l.round, Model: lr.settings.Name, Messages: len(req.Messages), Tools: len(l.sel.order), Mode: lr.mode})
	resp, err := l.generate(ctx, req)
	if err != nil {
		return nil, err
	}
	l.log.emit(EventLLMOutput, LLMOutputData{Round: l.round, Content: resp.Content, ReasoningContent: resp.ReasoningContent, ToolCalls: resp.ToolCalls, FinishReason: resp.FinishReason})
	if resp.Usage != nil {
		l.historyUsage = int(resp.Usage.InputTokens)
		if resp.Model == "" || resp.Model == lr.settings.Name {
			l.o.opts.Tokens.ObserveUsage(lr.settings, req, l.historyUsage)
		}
		l.usage.Add(*resp.Usage)
		model := resp.Model
		if model == "" {
			model = lr.settings.Name
		}
		l.log.emit(EventTokenUsage, TokenUsageData{Round: l.round, Model: model, Usage: *resp.Usage, Total: l.usage})
	}
	return resp, nil
}

// generate calls the model (observed) and turns its stream into events.
func (l *loop) generate(ctx context.Context, req *ModelRequest) (resp *ModelResponse, err error) {
	octx, end := l.observeModelCall(ctx)
	defer func() { end(resp, err) }()
	for ev, err := range l.lr.model.Generate(octx, req) {
		if err != nil {
			return nil, err
		}
		switch {
		case ev.Retry != nil:
			l.log.emit(EventLLMStreamRetry, LLMRetryData{Round: l.round, Attempt: ev.Retry.Attempt, DelayMS: ev.Retry.Delay.Milliseconds(), Reason: ev.Retry.Reason})
		case ev.Response != nil:
			l.observeFirstOutput(ctx)
			resp = ev.Response
		case ev.Delta != "" || ev.ReasoningDelta != "":
			l.observeFirstOutput(ctx)
			l.log.emitDelta(LLMDeltaData{Round: l.round, Delta: ev.Delta, ReasoningDelta: ev.ReasoningDelta})
		}
	}
	if resp == nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errors.New("the model ended its answer without a response")
	}
	return resp, nil
}

// pendingCall is a tool call as the loop will execute it: resolved to a
// tool, or carrying the error the model will read instead.
type pendingCall struct {
	call ToolCall // Name canonical when resolved
	tool Tool
	err  string
	// preset is the call's result without running it (a rejected call,
	// or one an earlier execution ran); approval marks an approved call,
	// run exactly once (callApproved); note prefixes the result the model
	// reads.
	preset   *ToolResult
	approval *Approval
	note     string
	// denied: the policy or a person refused the call (the audit's
	// outcome); err or preset says why.
	denied bool
}

// toolCalls reads the calls out of a response, resolving names through the
// selection and assigning ids where the model gave none.
func (l *loop) toolCalls(resp *ModelResponse) []pendingCall {
	var raw []textCall
	if l.lr.mode == ModeFunctionCall {
		for _, c := range resp.ToolCalls {
			args, err := normalizeArgs(c.Arguments)
			tc := textCall{call: ToolCall{ID: c.ID, Name: c.Name, Arguments: args}}
			if err != nil {
				tc.err = err.Error()
			}
			raw = append(raw, tc)
		}
	} else {
		raw, _ = parseTextToolCalls(resp.Content)
	}
	out := make([]pendingCall, 0, len(raw))
	for i, tc := range raw {
		pc := pendingCall{call: tc.call, err: tc.err}
		if pc.call.ID == "" {
			pc.call.ID = fmt.Sprintf("call_%d_%d", l.round, i+1)
		}
		if pc.err == "" {
			if t, ok := l.sel.Lookup(pc.call.Name); ok {
				pc.tool = t
				pc.call.Name = t.Spec().Name
			} else {
				pc.err = fmt.Sprintf("unknown tool %q; available tools: %s", pc.call.Name, strings.Join(l.sel.Names(), ", "))
			}
		}
		out = append(out, pc)
	}
	return out
}

// finalCall reports the answer of a well-formed final_response (or
// reply) call, and the stop reason it ends the run with.
func finalCall(calls []pendingCall) (string, StopReason, bool) {
	for _, c := range calls {
		if c.tool == nil {
			continue
		}
		stop := StopFinalTool
		switch c.call.Name {
		case FinalResponseTool:
		case ReplyTool:
			stop = StopReply
		default:
			continue
		}
		if answer, err := finalAnswer(c.call.Arguments); err == nil {
			return answer, stop, true
		}
	}
	return "", "", false
}

// resultMessages renders a round's results for the next model request.
func (l *loop) resultMessages(calls []pendingCall, results []*ToolResult) []Message {
	now := l.o.opts.Now()
	if l.lr.mode == ModeFunctionCall {
		out := make([]Message, len(calls))
		for i, c := range calls {
			content := c.note + results[i].Content
			if results[i].IsError {
				content = "Error: " + content
			}
			out[i] = Message{Role: RoleTool, Content: content, ToolCallID: c.call.ID, Name: c.call.Name, RunID: l.lr.id, CreatedAt: now}
		}
		return out
	}
	lines := make([]string, len(calls))
	for i, c := range calls {
		res := results[i]
		if c.note != "" {
			res = &ToolResult{Content: c.note + res.Content, IsError: res.IsError}
		}
		lines[i] = renderTextResult(c.call.Name, res)
	}
	return []Message{{Role: RoleUser, Content: strings.Join(lines, "\n"), RunID: l.lr.id, CreatedAt: now}}
}

// save appends messages to the session's history, retrying within the
// store budget. It is not cancelled with the run: a round that ran is
// recorded. Its error fails the run: a run whose history was not stored
// is not reported finished.
func (l *loop) save(ctx context.Context, msgs ...Message) error {
	err := l.o.retry(context.WithoutCancel(ctx), "save history", func(ctx context.Context) error {
		return l.o.store.AppendMessages(ctx, l.lr.sessionID, msgs)
	})
	if err != nil {
		return fmt.Errorf("save history: %w", err)
	}
	return nil
}

// keep appends messages to the session's history through the run's log
// (runLog.keep): stored in order before the events that follow them, or
// with the run's end, without the run waiting for the write. A write that
// fails breaks the log, which fails the run: a run whose history was not
// stored is not reported finished.
func (l *loop) keep(msgs ...Message) error {
	if err := l.log.keep(msgs); err != nil {
		return fmt.Errorf("save history: %w", err)
	}
	return nil
}

func (l *loop) cancelled() outcome {
	return outcome{stop: StopCancelled, state: RunCancelled, usage: l.usage}
}

func (l *loop) fail(ctx context.Context, code string, err error) outcome {
	if ctx.Err() != nil {
		return l.cancelled()
	}
	l.o.log.Warn("run failed", "run_id", l.lr.id, "code", code, "err", err)
	l.log.emit(EventError, ErrorData{Code: code, Message: err.Error()})
	return outcome{stop: StopError, state: RunFailed, usage: l.usage, errMsg: err.Error()}
}

// renderMessages converts stored history into the request form of a mode.
// History is stored in the form of the mode that produced it; a tool_call
// request turns function-call turns into text, a function_call request
// encodes tool names for the wire. Attachments become text, and images
// parts for a model with vision (withAttachments).
func renderMessages(msgs []Message, mode string, reg *Registry, vision bool) []Message {
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		switch {
		case m.Role == RoleUser && len(m.Attachments) > 0:
			out = append(out, withAttachments(m, vision))
		case mode == ModeToolCall && m.Role == RoleAssistant && len(m.ToolCalls) > 0:
			var sb strings.Builder
			sb.WriteString(m.Content)
			for _, c := range m.ToolCalls {
				sb.WriteString("\n")
				sb.WriteString(renderTextCall(c))
			}
			out = append(out, Message{Role: RoleAssistant, Content: strings.TrimSpace(sb.String())})
		case mode == ModeToolCall && m.Role == RoleTool:
			res := &ToolResult{Content: strings.TrimPrefix(m.Content, "Error: "), IsError: strings.HasPrefix(m.Content, "Error: ")}
			out = append(out, Message{Role: RoleUser, Content: renderTextResult(m.Name, res)})
		case mode == ModeFunctionCall && len(m.ToolCalls) > 0:
			calls := make([]ToolCall, len(m.ToolCalls))
			for i, c := range m.ToolCalls {
				calls[i] = ToolCall{ID: c.ID, Name: reg.WireName(c.Name), Arguments: c.Arguments}
			}
			m.ToolCalls = calls
			out = append(out, m)
		case mode == ModeFunctionCall && m.Role == RoleTool:
			m.Name = reg.WireName(m.Name)
			out = append(out, m)
		default:
			out = append(out, m)
		}
	}
	return mergeUserTurns(out)
}

// mergeUserTurns joins consecutive user messages (a cancelled run leaves
// its question without an answer); some servers reject two in a row.
func mergeUserTurns(msgs []Message) []Message {
	out := msgs[:0:0]
	for _, m := range msgs {
		if n := len(out); n > 0 && m.Role == RoleUser && out[n-1].Role == RoleUser {
			out[n-1].Content += "\n\n" + m.Content
			out[n-1].Attachments = append(out[n-1].Attachments[:len(out[n-1].Attachments):len(out[n-1].Attachments)], m.Attachments...)
			continue
		}
		out = append(out, m)
	}
	return out
}

// since returns milliseconds elapsed since t.
func since(t time.Time) int64 { return time.Since(t).Milliseconds() }

// readOnly reports whether a round's calls change nothing: each is a
// read-only tool, or none (an unknown tool, whose result is an error).
func readOnly(calls []pendingCall) bool {
	for _, c := range calls {
		if c.tool != nil && !c.tool.Spec().ReadOnly {
			return false
		}
	}
	return true
}
