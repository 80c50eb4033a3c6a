package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Planning and replanning (WINS Agent's model): the model keeps a todo
// plan with the plan tool; when a tool keeps failing, the loop asks it to
// replan and records the strategy it picks; an optional goal check after a
// completed step lets the run stop early.

// PlanTool is the canonical name of the plan tool.
const PlanTool = "plan"

// Event types of planning.
const (
	EventPlan      = "plan"
	EventReplan    = "replan"
	EventGoalCheck = "goal_check"
)

// Step states of a plan.
const (
	StepPending   = "pending"
	StepRunning   = "running"
	StepCompleted = "completed"
	StepFailed    = "failed"
	StepSkipped   = "skipped"
)

// Replanning strategies the model picks from.
const (
	StrategyReplaceFailed       = "replace_failed"
	StrategyAlternativeApproach = "alternative_approach"
	StrategySkipFailed          = "skip_failed"
	StrategyAbort               = "abort"
)

// StopAborted ends a run whose model chose the abort strategy.
const StopAborted StopReason = "aborted"

// PlanStep is one step of a plan.
type PlanStep struct {
	Title  string `json:"title"`
	Status string `json:"status"`
}

// PlanData is the data of a plan event: the whole plan as it now is.
type PlanData struct {
	Round int        `json:"round"`
	Steps []PlanStep `json:"steps"`
	// Strategy is set when the update answers a replan request.
	Strategy string `json:"strategy,omitempty"`
	Note     string `json:"note,omitempty"`
}

// ReplanData is the data of a replan event: requested by the loop (Stage
// "requested", with the failing tool) or chosen by the model (Stage
// "chosen", with its strategy).
type ReplanData struct {
	Round    int    `json:"round"`
	Stage    string `json:"stage"`
	Replan   int    `json:"replan"`
	Tool     string `json:"tool,omitempty"`
	Failures int    `json:"failures,omitempty"`
	Error    string `json:"error,omitempty"`
	Strategy string `json:"strategy,omitempty"`
}

// GoalCheckData is the data of a goal_check event.
type GoalCheckData struct {
	Round int    `json:"round"`
	Met   bool   `json:"met"`
	Error string `json:"error,omitempty"`
}

// ReplanPolicy configures replanning and the goal check
// (Options.Replan).
type ReplanPolicy struct {
	// Enabled turns replanning on: when one tool fails MaxRetries times in
	// a row, the model is asked to replan.
	Enabled bool
	// MaxRetries is the streak of failures that asks for a replan.
	// Default 3.
	MaxRetries int
	// MaxReplans bounds the replans of one run; past it failures are left
	// to the model. Default 3.
	MaxReplans int
	// GoalCheck asks the model, after a step is marked completed, whether
	// the goal is already met; if so, the rest of the plan is skipped and
	// the model is told to answer.
	GoalCheck bool
}

func (p ReplanPolicy) withDefaults() ReplanPolicy {
	if p.MaxRetries <= 0 {
		p.MaxRetries = 3
	}
	if p.MaxReplans <= 0 {
		p.MaxReplans = 3
	}
	return p
}

// planTool writes the run's plan. The loop recognises its calls after they
// ran (strategy, goal check); the tool itself validates and emits the plan
// event.
type planTool struct{}

var _ Tool = planTool{}

var stepStates = []string{StepPending, StepRunning, StepCompleted, StepFailed, StepSkipped}

var strategies = []string{StrategyReplaceFailed, StrategyAlternativeApproach, StrategySkipFailed, StrategyAbort}

func (planTool) Spec() ToolSpec { return planSpec }

// planSpec is built once: every run is offered it.
var planSpec = ToolSpec{
	Name:    PlanTool,
	Aliases: []string{"计划面板"},
	Description: "Write or update the task's plan: the whole todo list, each step with its status. Call it at the start of a " +
		"multi-step task and whenever a step starts, finishes or fails. When asked to replan, also give the strategy you choose.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{` +
		`"steps":{"type":"array","minItems":1,"maxItems":50,"items":{"type":"object","properties":{` +
		`"title":{"type":"string","minLength":1,"maxLength":500},` +
		`"status":{"type":"string","enum":["pending","running","completed","failed","skipped"]}},"required":["title","status"]}},` +
		`"strategy":{"type":"string","enum":["replace_failed","alternative_approach","skip_failed","abort"],` +
		`"description":"Only when answering a replan request."},` +
		`"note":{"type":"string","maxLength":2000}},"required":["steps"]}`),
	Source:   SourceBuiltin,
	ReadOnly: true,
	RunOnly:  true,
}

// planArgs are the plan tool's arguments, checked.
func planArgs(raw json.RawMessage) (*PlanData, error) {
	var a PlanData
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("plan needs {\"steps\":[{\"title\",\"status\"}], \"strategy\"?}: %v", err)
	}
	if len(a.Steps) == 0 || len(a.Steps) > 50 {
		return nil, fmt.Errorf("plan needs 1 to 50 steps, got %d", len(a.Steps))
	}
	for i, s := range a.Steps {
		if strings.TrimSpace(s.Title) == "" || len(s.Title) > 500 {
			return nil, fmt.Errorf("step %d needs a title of 1 to 500 characters", i+1)
		}
		if !slices.Contains(stepStates, s.Status) {
			return nil, fmt.Errorf("step %d has status %q; use one of %s", i+1, s.Status, strings.Join(stepStates, ", "))
		}
	}
	if a.Strategy != "" && !slices.Contains(strategies, a.Strategy) {
		return nil, fmt.Errorf("strategy %q is not one of %s", a.Strategy, strings.Join(strategies, ", "))
	}
	if len(a.Note) > 2000 {
		return nil, fmt.Errorf("note is longer than 2000 characters")
	}
	return &a, nil
}

func (planTool) Call(_ context.Context, inv *ToolInvocation) (*ToolResult, error) {
	a, err := planArgs(inv.Arguments)
	if err != nil {
		return ErrorResult(err.Error()), nil
	}
	inv.Emit(EventPlan, a)
	done := 0
	for _, s := range a.Steps {
		if s.Status == StepCompleted || s.Status == StepSkipped {
			done++
		}
	}
	return &ToolResult{Content: fmt.Sprintf("Plan updated: %d of %d steps done.", done, len(a.Steps)), Data: a}, nil
}

// replanner tracks a run's failure streaks and replans.
type replanner struct {
	p       ReplanPolicy
	streak  map[string]int // tool -> failures in a row
	replans int
	// asked is set while a replan request awaits the model's strategy.
	asked bool
}

// observe records a round's results and returns the replan request to add
// to the conversation, if one is due.
func (r *replanner) observe(calls []pendingCall, results []*ToolResult) (tool string, failures int, lastErr string, due bool) {
	if !r.p.Enabled {
		return "", 0, "", false
	}
	if r.streak == nil {
		r.streak = map[string]int{}
	}
	for i, c := range calls {
		name := c.call.Name
		if name == PlanTool {
			continue
		}
		if !results[i].IsError {
			r.streak[name] = 0
			continue
		}
		r.streak[name]++
		if r.streak[name] >= r.p.MaxRetries && r.replans < r.p.MaxReplans && !due {
			tool, failures, lastErr, due = name, r.streak[name], results[i].Content, true
			r.streak[name] = 0
		}
	}
	if due {
		r.replans++
		r.asked = true
	}
	return tool, failures, lastErr, due
}

// Texts of the loop's planning messages, by language.
var planTexts = map[string]struct{ replan, goalSystem, goalMet string }{
	"en": {
		replan: "[Replan needed] The tool %s failed %d times in a row. Last error: %s\n" +
			"Update the plan with the plan tool and choose a strategy in its \"strategy\" field: replace_failed (replace the failing step), " +
			"alternative_approach (reach the goal another way), skip_failed (skip the step and go on) or abort (stop the task and explain why).",
		goalSystem: "You check progress. Given the conversation, answer only \"yes\" if the user's goal is already fully met, otherwise only \"no\".",
		goalMet:    "[Goal met] The goal is already met: the remaining steps are skipped. Give the final answer now.",
	},
	"zh": {
		replan: "[需要重新规划] 工具 %s 已连续失败 %d 次。最后的错误：%s\n" +
			"请用 plan 工具更新计划，并在 \"strategy\" 字段中选择策略：replace_failed（替换失败的步骤）、alternative_approach（换一种方法达成目标）、" +
			"skip_failed（跳过该步骤继续）或 abort（停止任务并说明原因）。",
		goalSystem: "你负责检查进度。根据对话，如果用户的目标已经完全达成，只回答 \"yes\"，否则只回答 \"no\"。",
		goalMet:    "[目标已达成] 目标已经达成，其余步骤已跳过。请现在给出最终答复。",
	},
}

func planText(lang string) struct{ replan, goalSystem, goalMet string } {
	if t, ok := planTexts[lang]; ok {
		return t
	}
	return planTexts["en"]
}

// planCalls returns the plan updates of a round that the tool accepted.
func planCalls(calls []pendingCall, results []*ToolResult) []*PlanData {
	var out []*PlanData
	for i, c := range calls {
		if c.call.Name != PlanTool || results[i].IsError {
			continue
		}
		if a, ok := results[i].Data.(*PlanData); ok {
			out = append(out, a)
		}
	}
	return out
}

// planning applies a round's plan updates and failures: it records the
// strategy the model chose for a replan (abort ends the run: stop is set),
// runs the goal check after a newly completed step, and asks for a replan
// when a tool keeps failing. It returns the messages to add to the
// conversation after the round's results.
func (l *loop) planning(ctx context.Context, msgs []Message, resp *ModelResponse, calls []pendingCall, results []*ToolResult) (add []Message, stop *outcome) {
	texts := planText(l.lr.language)
	msg := func(text string) Message {
		return Message{Role: RoleUser, Content: text, RunID: l.lr.id, CreatedAt: l.o.opts.Now()}
	}
	if plans := planCalls(calls, results); len(plans) > 0 {
		last := plans[len(plans)-1]
		if last.Strategy != "" && l.replan.asked {
			l.replan.asked = false
			l.log.emit(EventReplan, ReplanData{Round: l.round, Stage: "chosen", Replan: l.replan.replans, Strategy: last.Strategy})
			if last.Strategy == StrategyAbort {
				answer := strings.TrimSpace(last.Note)
				if answer == "" {
					answer = cleanAnswer(resp.Content)
				}
				if answer == "" {
					answer = "The task was stopped: a step kept failing and the plan was abandoned."
				}
				return nil, &outcome{answer: answer, stop: StopAborted, state: RunFinished, usage: l.usage}
			}
		}
		if m, ok := l.goalCheck(ctx, msgs, last, texts.goalSystem, texts.goalMet); ok {
			add = append(add, msg(m))
		}
	}
	if tool, n, lastErr, due := l.replan.observe(calls, results); due {
		l.log.emit(EventReplan, ReplanData{Round: l.round, Stage: "requested", Replan: l.replan.replans, Tool: tool, Failures: n, Error: clip(lastErr, 1000)})
		add = append(add, msg(fmt.Sprintf(texts.replan, tool, n, clip(lastErr, 1000))))
	}
	return add, nil
}

// goalCheck asks the model, when the plan's completed steps grew and some
// remain, whether the goal is already met. If so it marks the rest
// skipped (a plan event) and returns the message that tells the model to
// answer.
func (l *loop) goalCheck(ctx context.Context, msgs []Message, plan *PlanData, system, metText string) (string, bool) {
	done, open := 0, 0
	for _, s := range plan.Steps {
		switch s.Status {
		case StepCompleted:
			done++
		case StepPending, StepRunning:
			open++
		}
	}
	grew := done > l.completed
	l.completed = done
	if !l.replan.p.GoalCheck || !grew || open == 0 {
		return "", false
	}
	met, err := l.askGoal(ctx, msgs, system)
	if err != nil {
		if ctx.Err() == nil {
			l.log.emit(EventGoalCheck, GoalCheckData{Round: l.round, Error: err.Error()})
		}
		return "", false
	}
	l.log.emit(EventGoalCheck, GoalCheckData{Round: l.round, Met: met})
	if !met {
		return "", false
	}
	skipped := &PlanData{Round: l.round, Note: "goal met"}
	for _, s := range plan.Steps {
		if s.Status == StepPending || s.Status == StepRunning {
			s.Status = StepSkipped
		}
		skipped.Steps = append(skipped.Steps, s)
	}
	l.log.emit(EventPlan, skipped)
	return metText, true
}

// askGoal is the goal check's model call: the conversation so far, and a
// yes or no.
func (l *loop) askGoal(ctx context.Context, msgs []Message, system string) (bool, error) {
	var sb strings.Builder
	for _, m := range renderMessages(msgs[1:], ModeToolCall, l.o.tools, false) {
		fmt.Fprintf(&sb, "%s: %s\n\n", m.Role, clip(m.Content, 2000))
	}
	req := &ModelRequest{Messages: []Message{{Role: RoleSystem, Content: system}, {Role: RoleUser, Content: sb.String()}}, Stream: l.streamed()}
	for ev, err := range l.lr.model.Generate(ctx, req) {
		if err != nil {
			return false, fmt.Errorf("goal check: %w", err)
		}
		if r := ev.Response; r != nil {
			if r.Usage != nil {
				l.usage.Add(*r.Usage)
			}
			answer := strings.ToLower(strings.TrimSpace(cleanAnswer(r.Content)))
			return strings.HasPrefix(answer, "yes") || strings.HasPrefix(answer, "是"), nil
		}
	}
	return false, fmt.Errorf("goal check: the model ended without a response")
}

// Plan returns a run's plan as its last plan event left it, with the run
// scoped to userID ("" = any user); a run without a plan has no steps.
func (o *Orchestrator) Plan(ctx context.Context, userID, runID string) (*PlanData, error) {
	if _, err := o.GetRun(ctx, userID, runID); err != nil {
		return nil, err
	}
	evs, err := o.store.ListEvents(ctx, runID, 0, 0)
	if err != nil {
		return nil, err
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type != EventPlan {
			continue
		}
		var p PlanData
		if err := json.Unmarshal(evs[i].Data, &p); err != nil {
			return nil, fmt.Errorf("plan event %d of run %s: %w", evs[i].Seq, runID, err)
		}
		return &p, nil
	}
	return &PlanData{Steps: []PlanStep{}}, nil
}
