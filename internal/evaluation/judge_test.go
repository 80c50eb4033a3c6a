package evaluation

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// The model judge passes when the reply's first word is PASS, fails on
// FAIL (either case, after Markdown emphasis or a heading mark), and is
// an error otherwise, quoting the reply.
func TestModelJudgeVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name string
		turn orchestratortest.Turn
		pass bool
		err  string
	}{
		{"pass", orchestratortest.Turn{Content: "PASS\nThe answer names Canberra."}, true, ""},
		{"fail", orchestratortest.Turn{Content: "FAIL\nIt names Sydney."}, false, ""},
		{"lower case", orchestratortest.Turn{Content: "pass - fine"}, true, ""},
		{"bold", orchestratortest.Turn{Content: "**FAIL** wrong city"}, false, ""},
		{"heading", orchestratortest.Turn{Content: "# PASS"}, true, ""},
		{"leading space", orchestratortest.Turn{Content: "  \n PASS"}, true, ""},
		{"neither", orchestratortest.Turn{Content: "The answer is mostly right."}, false, `starts with neither PASS nor FAIL: "The answer is mostly right."`},
		{"empty", orchestratortest.Turn{Content: ""}, false, "starts with neither PASS nor FAIL"},
		{"model error", orchestratortest.Turn{Err: errors.New("503 from the judge")}, false, "503 from the judge"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := orchestratortest.NewScriptedModel(tc.turn)
			judge := ModelJudge(orchestratortest.Models{Model: model, Settings: orchestrator.ModelSettings{Stream: true, MaxOutput: 64}})
			pass, reason, err := judge(t.Context(), "judge-model", "names the capital", "What is the capital of Australia?", "Canberra")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pass != tc.pass || reason != strings.TrimSpace(tc.turn.Content) {
				t.Errorf("= %v %q, want %v with the reply as the reason", pass, reason, tc.pass)
			}
			reqs := model.Requests()
			if len(reqs) != 1 || len(reqs[0].Messages) != 1 || !reqs[0].Stream || reqs[0].MaxOutput != 64 {
				t.Fatalf("requests = %+v", reqs)
			}
			prompt := reqs[0].Messages[0].Content
			for _, want := range []string{"What is the capital of Australia?", "Canberra", "names the capital", "PASS or FAIL"} {
				if !strings.Contains(prompt, want) {
					t.Errorf("the judge's prompt lacks %q:\n%s", want, prompt)
				}
			}
		})
	}
}

// A judge model that is not configured is an error, not a verdict.
func TestModelJudgeUnknownModel(t *testing.T) {
	judge := ModelJudge(orchestratortest.Models{})
	if _, _, err := judge(context.Background(), "nope", "r", "q", "a"); !errors.Is(err, orchestrator.ErrUnavailable) {
		t.Errorf("err = %v, want the lookup's error", err)
	}
}
