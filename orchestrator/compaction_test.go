package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// pageTool returns size bytes of text naming its argument.
func pageTool(size int) orchestrator.Toolset {
	tool := orchestratortest.NewTool("fetch_page", true, func(_ context.Context, inv *orchestrator.ToolInvocation) (*orchestrator.ToolResult, error) {
		var a struct{ URL string }
		_ = json.Unmarshal(inv.Arguments, &a)
		body := "PAGE " + a.URL + " " + strings.Repeat("lorem ipsum ", size/12)
		return &orchestrator.ToolResult{Content: body}, nil
	})
	return orchestrator.StaticToolset{SetName: "web", List: []orchestrator.Tool{tool}}
}

func fetch(url string) []orchestrator.ToolCall {
	return []orchestrator.ToolCall{orchestratortest.Call("fetch_page", `{"url":"`+url+`"}`)}
}

func compactionEvents(t *testing.T, evs []orchestrator.Event) []orchestrator.CompactionData {
	t.Helper()
	var out []orchestrator.CompactionData
	for _, e := range ofType(evs, orchestrator.EventCompaction) {
		var d orchestrator.CompactionData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// isSummaryRequest tells the summary call from the run's calls.
func isSummaryRequest(r *orchestrator.ModelRequest) bool {
	return len(r.Messages) > 0 && strings.Contains(r.Messages[0].Content, "## Open items")
}

// session asks questions in one session.
type session struct {
	t  *testing.T
	h  *harness
	id string
}

func (s *session) ask(q string, tools ...string) []orchestrator.Event {
	s.t.Helper()
	r := mustStart(s.t, s.h.o, orchestrator.RunRequest{UserID: "u", Question: q, SessionID: s.id, ToolNames: tools})
	s.id = r.SessionID
	return collect(s.t, s.h.o, r.ID, 0)
}

// The ratio trigger fires on the usage the model reports; the older turns
// are summarised with the handoff template, the recent tail is kept
// verbatim without reasoning, and the next run starts from the stored
// summary and the same tail.
func TestCompactionRatioTriggerSummarisesAndKeepsTheTail(t *testing.T) {
	long := strings.Repeat("word ", 1000) // about 1,250 estimated tokens
	h := newHarness(t, harnessOpts{
		opts:     orchestrator.Options{Compaction: orchestrator.CompactionOptions{KeepTailTokens: 100}},
		toolsets: []orchestrator.Toolset{pageTool(100)},
		// ratio trigger at 6,000 tokens; budget 8,976
		settings: &orchestrator.ModelSettings{MaxRounds: 4, Stream: true, MaxContext: 10000, CompactionRatio: 0.6},
		turns: []orchestratortest.Turn{
			{Content: "a1 " + long},                                                // run 1
			{Content: "a2 short", Reasoning: "SECRET-THOUGHT"},                     // run 2
			{ToolCalls: fetch("x"), Usage: &orchestrator.Usage{InputTokens: 6500}}, // run 3, round 1
			{Content: "## Goal\nSUMMARY-TEXT"},                                     // run 3: the summary call
			{Content: "a3 done"},                                                   // run 3, round 2
			{Content: "a4 done"},                                                   // run 4
		},
	})
	s := &session{t: t, h: h}
	s.ask("q1 " + long)
	if evs := s.ask("q2"); len(compactionEvents(t, evs)) != 0 {
		t.Fatalf("compacted too early: %v", types(evs))
	}
	evs := s.ask("q3", "fetch_page")
	comp := compactionEvents(t, evs)
	if len(comp) != 1 {
		t.Fatalf("compaction events = %+v", comp)
	}
	d := comp[0]
	if d.Strategy != orchestrator.StrategySummary || d.Trigger != orchestrator.TriggerRatio || d.Messages != 2 || d.Kept != 2 ||
		d.TokensBefore < 6500 || d.TokensAfter >= 3000 || d.Error != "" || d.Round != 2 {
		t.Fatalf("compaction = %+v", d)
	}
	if f := final(t, evs); f.Answer != "a3 done" {
		t.Fatalf("final = %+v", f)
	}
	reqs := h.model.Requests()
	sumReq, main := reqs[3], reqs[4]
	if !isSummaryRequest(sumReq) || !strings.Contains(sumReq.Messages[0].Content, "## Files touched") {
		t.Fatalf("summary system prompt = %q", sumReq.Messages[0].Content)
	}
	in := sumReq.Messages[1].Content
	if !strings.Contains(in, "q1 word") || !strings.Contains(in, "a1 word") || strings.Contains(in, "q2") {
		t.Fatalf("summary input has the wrong turns: %q", clipTo(in, 200))
	}
	if sumReq.MaxOutput != 1024 {
		t.Fatalf("summary max output = %d, want the cap 1024", sumReq.MaxOutput)
	}
	wantRoles(t, main.Messages, "system", "system:[Context Summary]", "user:q2", "assistant:a2 short", "user:q3", "assistant", "user:tool_response")
	if !strings.Contains(main.Messages[1].Content, "SUMMARY-TEXT") {
		t.Fatalf("summary message = %q", main.Messages[1].Content)
	}
	if main.Messages[3].ReasoningContent != "" {
		t.Fatalf("reasoning kept in the tail: %q", main.Messages[3].ReasoningContent)
	}
	// The next run starts from the stored summary and the same tail.
	s.ask("q4")
	next := h.model.Requests()[5].Messages
	wantRoles(t, next, "system", "system:[Context Summary]", "user:q2", "assistant:a2 short", "user:q3", "assistant", "user:tool_response", "assistant:a3 done", "user:q4")
	hist, _ := h.o.History(t.Context(), "u", s.id, 0)
	if len(hist) != 11 {
		t.Fatalf("history has %d messages, want 11 (10 turns and the summary)", len(hist))
	}
}

// Over the safe budget, the results of completed tool calls are trimmed
// before anything else: no summary is asked for when that is enough.
func TestCompactionBudgetTriggerTrimsToolResultsFirst(t *testing.T) {
	h := newHarness(t, harnessOpts{
		toolsets: []orchestrator.Toolset{pageTool(3000)}, // about 750 tokens a page
		// budget: min(0.9 × 4000, 4000 − 500 − 1024) = 2476; ratio off.
		settings: &orchestrator.ModelSettings{MaxRounds: 6, Stream: true, MaxContext: 4000, MaxOutput: 500},
		turns: []orchestratortest.Turn{
			{Content: "hello"}, // run 1: history a summary could fold
			{ToolCalls: fetch("p1")},
			{ToolCalls: fetch("p2")},
			{ToolCalls: fetch("p3")},
			{ToolCalls: fetch("p4")},
			{Content: "read them all"},
		},
	})
	s := &session{t: t, h: h}
	s.ask("hi")
	evs := s.ask("read four pages", "fetch_page")
	comp := compactionEvents(t, evs)
	if len(comp) == 0 {
		t.Fatalf("no compaction: %v", types(evs))
	}
	d := comp[0]
	if d.Trigger != orchestrator.TriggerBudget || d.Strategy != orchestrator.StrategyTrimTools || d.ToolsTrimmed == 0 ||
		d.Budget != 2476 || d.TokensBefore <= d.Budget || d.TokensAfter > d.Budget || d.Messages != 0 {
		t.Fatalf("compaction = %+v", d)
	}
	if f := final(t, evs); f.Answer != "read them all" {
		t.Fatalf("final = %+v", f)
	}
	reqs := h.model.Requests()
	for _, r := range reqs {
		if isSummaryRequest(r) {
			t.Fatal("a summary was asked for although trimming tool results was enough")
		}
	}
	last := reqs[len(reqs)-1].Messages
	all := ""
	for _, m := range last {
		all += m.Content + "\n"
	}
	if !strings.Contains(all, "[tool result trimmed: fetch_page, ") || strings.Contains(all, "PAGE p1 lorem") {
		t.Fatalf("older results not trimmed: %q", clipTo(all, 400))
	}
	if !strings.Contains(all, "PAGE p4 lorem") {
		t.Fatal("the latest round's result was trimmed")
	}
	// The history the user reads keeps the full results.
	hist, _ := h.o.History(t.Context(), "u", s.id, 0)
	for _, m := range hist {
		if strings.HasPrefix(m.Content, "[tool result trimmed") {
			t.Fatal("a trimmed result was stored")
		}
	}
}

// A failing or slow summary falls back to a placeholder plus trimming and
// the run goes on; nothing of the fallback is stored.
func TestCompactionFallbackOnFailingSummary(t *testing.T) {
	never := make(chan struct{})
	for _, tc := range []struct {
		name    string
		summary orchestratortest.Turn
		err     string
	}{
		{"error", orchestratortest.Turn{Err: errors.New("summary model down")}, "summary model down"},
		{"timeout", orchestratortest.Turn{Wait: never}, "timed out after 50ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			long := strings.Repeat("word ", 1600)
			h := newHarness(t, harnessOpts{
				opts:     orchestrator.Options{Compaction: orchestrator.CompactionOptions{KeepTailTokens: 50, SummaryTimeout: 50 * time.Millisecond}},
				settings: &orchestrator.ModelSettings{MaxRounds: 4, Stream: true, MaxContext: 6000, CompactionRatio: 0.5},
				turns: []orchestratortest.Turn{
					{Content: "first " + long},
					tc.summary,
					{Content: "answered anyway"},
					{Content: "later"},
				},
			})
			s := &session{t: t, h: h}
			s.ask("one " + long)
			evs := s.ask("two")
			comp := compactionEvents(t, evs)
			if len(comp) != 1 {
				t.Fatalf("compaction events: %v", types(evs))
			}
			d := comp[0]
			if d.Strategy != orchestrator.StrategyFallback || !strings.Contains(d.Error, tc.err) || d.Messages != 2 || d.TokensAfter >= d.TokensBefore {
				t.Fatalf("compaction = %+v", d)
			}
			if f := final(t, evs); f.Answer != "answered anyway" {
				t.Fatalf("final = %+v", f)
			}
			main := h.model.Requests()[2].Messages
			wantRoles(t, main, "system", "system:[Context Summary]", "user:two")
			if !strings.Contains(main[1].Content, "could not be summarised") {
				t.Fatalf("placeholder = %q", main[1].Content)
			}
			// The placeholder is not stored: the next run sees the whole
			// history (and compacts again with a summary it may get).
			hist, _ := h.o.History(t.Context(), "u", s.id, 0)
			if len(hist) != 4 {
				t.Fatalf("history has %d messages, want 4", len(hist))
			}
		})
	}
}

// history_compaction_reset: after a compaction in a run whose model stops
// reporting usage, "keep" leaves the counter over the ratio (a second
// compaction), "zero" and "current" do not.
func TestCompactionResetModes(t *testing.T) {
	for _, tc := range []struct {
		reset string
		want  int
	}{{"", 1}, {orchestrator.ResetZero, 1}, {orchestrator.ResetCurrent, 1}, {orchestrator.ResetKeep, 2}} {
		t.Run("reset="+tc.reset, func(t *testing.T) {
			h := newHarness(t, harnessOpts{
				opts:     orchestrator.Options{Compaction: orchestrator.CompactionOptions{KeepTailTokens: 100}},
				toolsets: []orchestrator.Toolset{pageTool(100)},
				settings: &orchestrator.ModelSettings{MaxRounds: 5, Stream: true, MaxContext: 10000, CompactionRatio: 0.5, CompactionReset: tc.reset},
				turns: []orchestratortest.Turn{
					{Content: "a1 " + strings.Repeat("word ", 400)},
					{ToolCalls: fetch("x"), Usage: &orchestrator.Usage{InputTokens: 6000}},
					{Content: "SUMMARY-1"},
					{ToolCalls: fetch("y")}, // no usage reported
					{Content: "SUMMARY-2"},
					{Content: "done"},
				},
			})
			s := &session{t: t, h: h}
			s.ask("q1 " + strings.Repeat("word ", 400))
			evs := s.ask("q2", "fetch_page")
			if got := len(compactionEvents(t, evs)); got != tc.want {
				t.Fatalf("compactions = %d, want %d: %v", got, tc.want, types(evs))
			}
		})
	}
}

// Calibration: the estimate moves towards what the model reports.
func TestCompactionEstimateCounterCalibrates(t *testing.T) {
	c := orchestrator.NewEstimateCounter()
	s := orchestrator.ModelSettings{Name: "m"}
	req := &orchestrator.ModelRequest{Messages: []orchestrator.Message{{Role: "user", Content: strings.Repeat("abcd ", 400)}}}
	raw := c.CountTokens(s, req)
	for range 20 {
		c.ObserveUsage(s, req, raw*2)
	}
	if got := c.CountTokens(s, req); got < raw*19/10 || got > raw*2 {
		t.Fatalf("calibrated count = %d, want about %d", got, raw*2)
	}
	if got := c.CountTokens(orchestrator.ModelSettings{Name: "other"}, req); got != raw {
		t.Fatalf("another model's count = %d, want the raw %d", got, raw)
	}
}

// wantRoles checks messages against "role" or "role:content prefix".
func wantRoles(t *testing.T, msgs []orchestrator.Message, want ...string) {
	t.Helper()
	if len(msgs) != len(want) {
		var got []string
		for _, m := range msgs {
			got = append(got, m.Role+":"+clipTo(m.Content, 20))
		}
		t.Fatalf("messages = %q, want %q", got, want)
	}
	for i, w := range want {
		role, prefix, _ := strings.Cut(w, ":")
		if msgs[i].Role != role || !strings.HasPrefix(msgs[i].Content, prefix) {
			t.Fatalf("message %d = %s:%q, want %s", i, msgs[i].Role, clipTo(msgs[i].Content, 40), w)
		}
	}
}

func clipTo(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// summaryRefusingStore refuses to store a compaction summary, and only that.
type summaryRefusingStore struct{ orchestrator.Store }

func (s summaryRefusingStore) AppendMessages(ctx context.Context, id string, msgs []orchestrator.Message) error {
	if hasSummary(msgs) {
		return errStoreDown
	}
	return s.Store.AppendMessages(ctx, id, msgs)
}

func (s summaryRefusingStore) EndRun(ctx context.Context, r *orchestrator.Run, at time.Time, keys []string, tail orchestrator.RunTail) error {
	if hasSummary(tail.Messages) {
		return errStoreDown
	}
	return s.Store.EndRun(ctx, r, at, keys, tail)
}

func hasSummary(msgs []orchestrator.Message) bool {
	return slices.ContainsFunc(msgs, func(m orchestrator.Message) bool { return strings.HasPrefix(m.Content, "[Context Summary]") })
}

// A summary that cannot be stored fails the run, as any unstorable history
// does: the run is never reported finished on a summary the session does
// not hold. (The summary is stored with the events that follow it or with
// the run's end, so the next model call does not wait for it.)
func TestCompactionUnstorableSummaryFailsTheRun(t *testing.T) {
	long := strings.Repeat("word ", 1600)
	h := newHarness(t, harnessOpts{
		store:    summaryRefusingStore{orchestratortest.NewMemStore()},
		opts:     orchestrator.Options{StoreRetry: 100 * time.Millisecond, Compaction: orchestrator.CompactionOptions{KeepTailTokens: 50}},
		settings: &orchestrator.ModelSettings{MaxRounds: 4, Stream: true, MaxContext: 6000, CompactionRatio: 0.5},
		turns: []orchestratortest.Turn{
			{Content: "first " + long},
			{Content: "## Goal\nSUMMARY-TEXT"},
			{Content: "never asked"},
		},
	})
	s := &session{t: t, h: h}
	s.ask("one " + long)
	evs := s.ask("two")
	if f := final(t, evs); f.State != orchestrator.RunFailed || !strings.Contains(f.Error, errStoreDown.Error()) {
		t.Fatalf("final = %+v", f)
	}
	msgs, err := h.store.ListMessages(t.Context(), s.id, 0)
	if err != nil || hasSummary(msgs) {
		t.Fatalf("history = %+v, %v; want no summary", msgs, err)
	}
}
