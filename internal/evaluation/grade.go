package evaluation

// Grading a case: the checks a case names, and the judge model's verdict.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

func (m *Manager) grade(ctx context.Context, run *Run, c Case, it *Item) {
	if reason, err := m.missing(ctx, it.UserID, c); err != nil {
		it.Status, it.Error = StatusError, err.Error()
		return
	} else if reason != "" {
		it.Status, it.SkipReason = StatusSkipped, reason
		return
	}
	defer func() {
		if err := m.ws.Remove(it.UserID); err != nil {
			m.opts.Logger.Warn("evaluation workspace not removed", "user_id", it.UserID, "err", err)
		}
	}()
	for _, f := range c.Files {
		if err := m.ws.WriteFile(it.UserID, f.Path, []byte(f.Content)); err != nil {
			it.Status, it.Error = StatusError, fmt.Sprintf("setup file %s: %v", f.Path, err)
			return
		}
	}
	cctx, cancel := context.WithTimeout(ctx, m.opts.CaseTimeout)
	defer cancel()
	answer, err := m.ask(cctx, run.ModelName, c, it)
	switch {
	case ctx.Err() != nil:
		it.Status, it.Error = StatusCancelled, "the evaluation was cancelled"
		return
	case errors.Is(err, context.DeadlineExceeded):
		it.Status, it.Error = StatusError, fmt.Sprintf("the case took longer than %s (evaluation.case_timeout_s)", m.opts.CaseTimeout)
		return
	case err != nil:
		it.Status, it.Error = StatusError, err.Error()
		return
	}
	it.Answer = answer
	judgeModel := m.opts.JudgeModel
	if judgeModel == "" {
		judgeModel = run.ModelName
	}
	g := &grader{question: c.Question, answer: answer, model: judgeModel, judge: m.opts.Judge,
		readFile: func(p string) ([]byte, error) { return m.ws.ReadFile(it.UserID, p) }}
	it.Status = StatusPassed
	for _, ch := range c.Checks {
		res := g.run(cctx, ch)
		it.Checks = append(it.Checks, res)
		if !res.Passed {
			it.Status = StatusFailed
		}
	}
}

// missing says which prerequisite of c is not configured ("" = none).
func (m *Manager) missing(ctx context.Context, user string, c Case) (string, error) {
	specs, err := m.b.Tools(ctx, user)
	if err != nil {
		return "", err
	}
	tools, mcp, skills, kbs := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, s := range specs {
		tools[s.Name] = true
		for _, a := range s.Aliases {
			tools[a] = true
		}
		switch s.Source {
		case orchestrator.SourceMCP:
			server, _, _ := strings.Cut(s.Name, "@")
			mcp[server] = true
		case orchestrator.SourceSkill:
			skills[s.Name] = true
		case orchestrator.SourceKnowledge:
			kbs[s.Name] = true
		}
	}
	for _, need := range []struct {
		what  string
		names []string
		have  map[string]bool
	}{
		{"MCP server", c.Requires.MCPServers, mcp}, {"skill", c.Requires.Skills, skills},
		{"knowledge base", c.Requires.Knowledge, kbs}, {"tool", append(slices.Clone(c.Tools), c.Requires.Tools...), tools},
	} {
		for _, n := range need.names {
			if !need.have[n] {
				return fmt.Sprintf("needs %s %q, which is not configured", need.what, n), nil
			}
		}
	}
	return "", nil
}

// ask runs the case's question and returns the answer.
func (m *Manager) ask(ctx context.Context, model string, c Case, it *Item) (string, error) {
	r, err := m.b.Start(ctx, orchestrator.RunRequest{UserID: it.UserID, Question: c.Question, ToolNames: c.Tools, ModelName: model})
	if err != nil {
		return "", err
	}
	it.SessionID, it.CoreRunID = r.SessionID, r.ID
	follow := func(ctx context.Context) (string, bool, error) {
		for ev, err := range m.b.Events(ctx, it.UserID, r.ID, 0) {
			if err != nil {
				return "", false, err
			}
			switch ev.Type {
			case orchestrator.EventToolCall:
				var tc orchestrator.ToolCallData
				if json.Unmarshal(ev.Data, &tc) == nil {
					it.ToolCalls = append(it.ToolCalls, tc.Name)
				}
			case orchestrator.EventFinal:
				var fin orchestrator.FinalData
				if err := json.Unmarshal(ev.Data, &fin); err != nil {
					return "", true, err
				}
				if fin.State != orchestrator.RunFinished {
					return fin.Answer, true, fmt.Errorf("the run ended %s: %s", fin.State, fin.Error)
				}
				return fin.Answer, true, nil
			}
		}
		return "", false, ctx.Err()
	}
	answer, final, err := follow(ctx)
	if !final && ctx.Err() != nil {
		// Cancelled or timed out: end the core run, and wait (bounded) for
		// it to end before its workspace goes.
		bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_, _ = m.b.Cancel(bg, it.UserID, r.ID)
		_, _, _ = follow(bg)
		return "", ctx.Err()
	}
	return answer, err
}
