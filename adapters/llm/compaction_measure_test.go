package llm_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/internal/testutil/fakemodel"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// measureModel is a scripted conversation partner (the turns of a
// fakemodel.Reply): each question gets a tool call, then an answer; a
// summary request gets a summary. It reports as usage the request's
// cl100k_base count (the ground truth here) and records, per request, that
// truth and the counter's estimate made before the report.
type measureModel struct {
	truth, counter *llm.TokenCounter
	settings       orchestrator.ModelSettings

	// Reply calls turn one request at a time.
	sent, requests      int
	absErr, absErrRaw   float64
	calls, summaryCalls int
}

func (m *measureModel) turn(req *orchestrator.ModelRequest) fakemodel.Turn {
	truth := m.truth.CountTokens(orchestrator.ModelSettings{Name: "truth", ModelID: "gpt-4"}, req)
	m.sent += truth
	var content string
	last := req.Messages[len(req.Messages)-1]
	switch {
	case strings.Contains(req.Messages[0].Content, "## Open items"):
		m.summaryCalls++
		content = "## Goal\nResearch pages for the user.\n## Decisions\n" + words("decided", 120) + "\n## Files touched\nnone\n## Open items\nnone"
	default:
		est := m.counter.CountTokens(m.settings, req)
		raw := orchestrator.EstimateRequestTokens(req)
		m.absErr += math.Abs(float64(est-truth)) / float64(truth)
		m.absErrRaw += math.Abs(float64(raw-truth)) / float64(truth)
		m.requests++
		if strings.HasPrefix(last.Content, "tool_response: ") || strings.Contains(last.Content, "\n\ntool_response: ") {
			content = "Here is what the page says: " + words("finding", 80)
		} else {
			m.calls++
			content = fmt.Sprintf(`<tool_call>{"name":"fetch_page","arguments":{"url":"https://example.com/%d"}}</tool_call>`, m.calls)
		}
	}
	return fakemodel.Turn{Content: content, Usage: &orchestrator.Usage{InputTokens: int64(truth), OutputTokens: 50, TotalTokens: int64(truth) + 50}}
}

func words(w string, n int) string {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "%s-%d ", w, i)
	}
	return sb.String()
}

// TestMeasureCompaction50Turns logs the tokens sent over a 50-turn
// conversation with tools, with and without compaction, and how close the
// calibrated estimate (a non-OpenAI model id, so no tokenizer) comes to
// the reported usage. A measurement: it fails only if the runs fail.
func TestMeasureCompaction50Turns(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	run := func(maxContext int) *measureModel {
		settings := orchestrator.ModelSettings{Name: "other", ModelID: "deepseek-chat", ToolCallMode: orchestrator.ModeToolCall,
			MaxRounds: 4, MaxContext: maxContext, CompactionRatio: 0.8}
		m := &measureModel{truth: llm.NewTokenCounter(), counter: llm.NewTokenCounter(), settings: settings}
		page := orchestratortest.NewTool("fetch_page", true, func(_ context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
			return &orchestrator.ToolResult{Content: "Page " + string(inv.Arguments) + ": " + words("text", 300)}, nil
		})
		reg := orchestrator.NewRegistry("", nil, orchestrator.StaticToolset{SetName: "web", List: []orchestrator.Tool{page}})
		o := orchestrator.New(orchestratortest.NewMemStore(), orchestratortest.Models{Model: fakemodel.Reply(m.turn), Settings: settings}, reg,
			&orchestrator.Options{Tokens: m.counter, Compaction: orchestrator.CompactionOptions{KeepTailTokens: 1000}})
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = o.Close(ctx)
		}()
		session := ""
		for i := range 50 {
			r, err := o.Start(t.Context(), orchestrator.RunRequest{UserID: "u", SessionID: session, ToolNames: []string{"fetch_page"},
				Question: fmt.Sprintf("Turn %d: please read the next page and tell me what it says about topic %d.", i+1, i)})
			if err != nil {
				t.Fatal(err)
			}
			session = r.SessionID
			for _, err := range o.Events(t.Context(), "", r.ID, 0) {
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		return m
	}
	without, with := run(0), run(8000)
	t.Logf("50 turns with tools, tokens sent (cl100k_base): without compaction %d, with compaction (max_context 8000, ratio 0.8) %d (%.0f%%), %d summary calls",
		without.sent, with.sent, 100*float64(with.sent)/float64(without.sent), with.summaryCalls)
	t.Logf("estimate vs reported prompt tokens over %d requests: mean absolute error calibrated %.1f%%, uncalibrated %.1f%%",
		without.requests, 100*without.absErr/float64(without.requests), 100*without.absErrRaw/float64(without.requests))
	if with.sent >= without.sent {
		t.Errorf("compaction sent no fewer tokens: %d >= %d", with.sent, without.sent)
	}
}
