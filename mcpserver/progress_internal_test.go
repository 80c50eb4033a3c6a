package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wunder/wunder/orchestrator"
)

// A progress message names the event and its gist, cut at 200 bytes on a
// rune's boundary; a delta of the model's output comes whole, since one
// delta event may hold many chunks of the answer.
func TestProgressMessage(t *testing.T) {
	event := func(typ string, data any) orchestrator.Event {
		b, err := json.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		return orchestrator.Event{Type: typ, Data: b}
	}
	long := strings.Repeat("word ", 100)
	if got, want := progressMessage(event(orchestrator.EventLLMOutputDelta, orchestrator.LLMDeltaData{Round: 1, Delta: long})), "llm_output_delta: "+long; got != want {
		t.Errorf("a long delta gives %d bytes, want %d: the whole text", len(got), len(want))
	}
	if got, want := progressMessage(event(orchestrator.EventProgress, orchestrator.ProgressData{Stage: "started", Summary: "run started"})), "progress: run started"; got != want {
		t.Errorf("progress gives %q, want %q", got, want)
	}
	// "é" is two bytes; at an odd offset the cut at 200 falls inside one.
	summary := "x" + strings.Repeat("é", 150)
	got := progressMessage(event(orchestrator.EventProgress, orchestrator.ProgressData{Stage: "s", Summary: summary}))
	if len(got) > 200 || len(got) < 199 || !utf8.ValidString(got) || !strings.HasPrefix("progress: "+summary, got) {
		t.Errorf("a long summary gives %d bytes (valid UTF-8: %v); want a prefix of at most 200 bytes, cut between runes", len(got), utf8.ValidString(got))
	}
}
