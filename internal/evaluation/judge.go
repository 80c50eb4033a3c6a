package evaluation

import (
	"context"
	"fmt"
	"strings"

	"github.com/wunder/wunder/orchestrator"
)

// judgePrompt asks for a verdict on its first line.
const judgePrompt = `You are grading an AI assistant's answer against a rubric.

Question:
%s

Answer:
%s

Rubric:
%s

Reply with PASS or FAIL on the first line, then one sentence saying why.`

// ModelJudge is a [Judge] asking a configured model: it passes when the
// reply's first word is PASS.
func ModelJudge(models orchestrator.Models) Judge {
	return func(ctx context.Context, name, rubric, question, answer string) (bool, string, error) {
		model, settings, err := models.Lookup(name)
		if err != nil {
			return false, "", err
		}
		req := &orchestrator.ModelRequest{Stream: settings.Stream, MaxOutput: settings.MaxOutput, Messages: []orchestrator.Message{
			{Role: orchestrator.RoleUser, Content: fmt.Sprintf(judgePrompt, question, answer, rubric)},
		}}
		var text strings.Builder
		for ev, err := range model.Generate(ctx, req) {
			if err != nil {
				return false, "", err
			}
			if ev.Retry != nil {
				text.Reset()
			}
			if ev.Response != nil {
				text.Reset()
				text.WriteString(ev.Response.Content)
			} else {
				text.WriteString(ev.Delta)
			}
		}
		reply := strings.TrimSpace(text.String())
		verdict := strings.ToUpper(strings.TrimLeft(reply, "*# "))
		switch {
		case strings.HasPrefix(verdict, "PASS"):
			return true, reply, nil
		case strings.HasPrefix(verdict, "FAIL"):
			return false, reply, nil
		}
		return false, "", fmt.Errorf("the judge's reply starts with neither PASS nor FAIL: %.200q", reply)
	}
}
