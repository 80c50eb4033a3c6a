package orchestrator_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

func TestCompactionReplacesOldTurnsWithASummary(t *testing.T) {
	// About 1,250 estimated tokens each: two turns fit in the budget of
	// 3,000 with the system prompt, three do not.
	long := strings.Repeat("word ", 1000)
	h := newHarness(t, harnessOpts{
		settings: &orchestrator.ModelSettings{MaxRounds: 4, Stream: true, MaxContext: 6000, CompactionRatio: 0.5},
		turns: []orchestratortest.Turn{
			{Content: "first answer " + long},                                      // run 1
			{Content: "second answer " + long},                                     // run 2
			{Content: "SUMMARY: the user asked twice"},                             // run 3: the summary call
			{Content: "third answer", Usage: &orchestrator.Usage{InputTokens: 60}}, // run 3: the real call
			{Content: "fourth answer"},                                             // run 4, from the summary
		},
	})
	var session string
	ask := func(q string) []orchestrator.Event {
		r := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: q, SessionID: session})
		session = r.SessionID
		return collect(t, h.o, r.ID, 0)
	}
	ask("one " + long)
	if evs := ask("two"); len(ofType(evs, orchestrator.EventCompaction)) != 0 {
		t.Fatalf("compacted too early: %v", types(evs))
	}
	evs := ask("three")
	comp := ofType(evs, orchestrator.EventCompaction)
	if len(comp) != 1 {
		t.Fatalf("compaction events = %d: %v", len(comp), types(evs))
	}
	var d orchestrator.CompactionData
	_ = json.Unmarshal(comp[0].Data, &d)
	if d.Messages != 4 || d.TokensAfter >= d.TokensBefore || d.Error != "" {
		t.Fatalf("compaction = %+v", d)
	}
	if f := final(t, evs); f.Answer != "third answer" {
		t.Fatalf("final = %+v", f)
	}
	reqs := h.model.Requests()
	summaryReq, mainReq := reqs[2], reqs[3]
	if !strings.Contains(summaryReq.Messages[0].Content, "Summarise") || !strings.Contains(summaryReq.Messages[1].Content, "first answer") {
		t.Fatalf("summary request = %+v", summaryReq.Messages)
	}
	// Consecutive user messages travel as one: the summary, then the question.
	wantRoles(t, mainReq.Messages, "system", "user:[Summary")
	if !strings.HasSuffix(mainReq.Messages[1].Content, "SUMMARY: the user asked twice\n\nthree") {
		t.Fatalf("summary and question = %q", mainReq.Messages[1].Content)
	}
	// The next run starts from the stored summary, not from the old turns.
	ask("four")
	next := h.model.Requests()[4].Messages
	wantRoles(t, next, "system", "user:[Summary", "assistant:third answer", "user:four")
	if !strings.HasSuffix(next[1].Content, "\n\nthree") {
		t.Fatalf("summary and question = %q", next[1].Content)
	}
	// The session's history still has every message for people to read.
	hist, _ := h.o.History(t.Context(), "u", session, 0)
	if len(hist) != 9 {
		t.Fatalf("history has %d messages, want 9 (8 turns and the summary)", len(hist))
	}
}

func TestCompactionFailureIsReportedAndTheRunGoesOn(t *testing.T) {
	long := strings.Repeat("word ", 200)
	h := newHarness(t, harnessOpts{
		settings: &orchestrator.ModelSettings{MaxRounds: 4, Stream: true, MaxContext: 300, CompactionRatio: 0.5},
		turns: []orchestratortest.Turn{
			{Content: "first " + long},
			{Err: errors.New("summary model down")},
			{Content: "answered anyway"},
		},
	})
	r1 := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "one"})
	collect(t, h.o, r1.ID, 0)
	r2 := mustStart(t, h.o, orchestrator.RunRequest{UserID: "u", Question: "two", SessionID: r1.SessionID})
	evs := collect(t, h.o, r2.ID, 0)
	comp := ofType(evs, orchestrator.EventCompaction)
	if len(comp) != 1 || !strings.Contains(string(comp[0].Data), "summary model down") {
		t.Fatalf("compaction events: %v", types(evs))
	}
	if f := final(t, evs); f.Answer != "answered anyway" {
		t.Fatalf("final = %+v", f)
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
