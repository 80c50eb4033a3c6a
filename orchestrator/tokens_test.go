package orchestrator_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/wunder/wunder/orchestrator"
)

// The estimate: a token per 4 bytes of ASCII (rounded up), one per other
// character.
func TestEstimateTextTokens(t *testing.T) {
	cases := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"a", 1},
		{"abcd", 1},
		{"abcde", 2},
		{strings.Repeat("x", 400), 100},
		{"中文", 2},
		{"中文abcd", 3},
		{"é", 1},
	}
	for _, c := range cases {
		if got := orchestrator.EstimateTextTokens(c.in); got != c.want {
			t.Errorf("EstimateTextTokens(%q) = %d; want %d", c.in, got, c.want)
		}
	}
}

// A request's estimate counts every message's framing, its text, its
// reasoning, its calls and its images, and in function_call mode the tool
// specs it offers.
func TestEstimateRequestTokens(t *testing.T) {
	base := &orchestrator.ModelRequest{Messages: []orchestrator.Message{{Role: "user", Content: "abcd"}}}
	n := orchestrator.EstimateRequestTokens(base)
	grow := []struct {
		name string
		req  *orchestrator.ModelRequest
	}{
		{"another message", &orchestrator.ModelRequest{Messages: append(base.Messages, orchestrator.Message{Role: "assistant"})}},
		{"reasoning", &orchestrator.ModelRequest{Messages: []orchestrator.Message{{Role: "user", Content: "abcd", ReasoningContent: "thinking"}}}},
		{"a tool call", &orchestrator.ModelRequest{Messages: []orchestrator.Message{{Role: "user", Content: "abcd",
			ToolCalls: []orchestrator.ToolCall{{Name: "read_file", Arguments: json.RawMessage(`{"path":"a"}`)}}}}}},
		{"an image", &orchestrator.ModelRequest{Messages: []orchestrator.Message{{Role: "user", Content: "abcd",
			Attachments: []orchestrator.Attachment{{Type: orchestrator.AttachmentImage}}}}}},
		{"tool specs", &orchestrator.ModelRequest{Messages: base.Messages,
			Tools: []orchestrator.ToolSpec{{Name: "read_file", Description: "reads a file"}}}},
	}
	for _, g := range grow {
		if got := orchestrator.EstimateRequestTokens(g.req); got <= n {
			t.Errorf("with %s: %d tokens; want more than %d", g.name, got, n)
		}
	}
	img := orchestrator.EstimateRequestTokens(grow[3].req)
	if img-n != orchestrator.ImageTokens {
		t.Errorf("an image adds %d tokens; want ImageTokens (%d)", img-n, orchestrator.ImageTokens)
	}
}

// ClipTokens keeps within n estimated tokens, ellipsis included, on a
// rune boundary; a text that fits is returned as it is.
func TestClipTokens(t *testing.T) {
	texts := []string{
		strings.Repeat("abcdefgh ", 100),
		strings.Repeat("中文字符", 50),
		strings.Repeat("mixed 混合 ", 40),
	}
	for _, s := range texts {
		for _, n := range []int{1, 2, 5, 17, 100} {
			got := orchestrator.ClipTokens(s, n)
			if !utf8.ValidString(got) {
				t.Fatalf("ClipTokens(%.20q…, %d) = %q cuts a rune", s, n, got)
			}
			if tok := orchestrator.EstimateTextTokens(got); tok > n {
				t.Errorf("ClipTokens(%.20q…, %d) costs %d tokens", s, n, tok)
			}
			if !strings.HasSuffix(got, "…") || !strings.HasPrefix(s, strings.TrimSuffix(got, "…")) {
				t.Errorf("ClipTokens(%.20q…, %d) = %q is not a marked prefix", s, n, got)
			}
		}
		if got := orchestrator.ClipTokens(s, 10_000); got != s {
			t.Errorf("a text that fits was changed")
		}
	}
}

// Calibration is clamped (a single absurd report moves the ratio at most
// to 4 or 1/4), ignores reports it cannot use, and is per model.
func TestEstimateCounterClamps(t *testing.T) {
	s := orchestrator.ModelSettings{Name: "m"}
	req := &orchestrator.ModelRequest{Messages: []orchestrator.Message{{Role: "user", Content: strings.Repeat("word ", 200)}}}
	raw := orchestrator.EstimateRequestTokens(req)
	cases := []struct {
		name     string
		reported int
		want     float64
	}{
		{"a hundred times more", raw * 100, 4},
		{"a hundred times less", raw / 100, 0.25},
		{"zero", 0, 1},
		{"negative", -5, 1},
		{"the same", raw, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ec := orchestrator.NewEstimateCounter()
			ec.ObserveUsage(s, req, c.reported)
			if got := ec.Ratio("m"); got != c.want {
				t.Fatalf("ratio after one report of %d (raw %d) = %v; want %v", c.reported, raw, got, c.want)
			}
			if got := ec.Ratio("other"); got != 1 {
				t.Fatalf("another model's ratio = %v; want 1", got)
			}
		})
	}
}

// One counter serves every run at once (run with -race).
func TestEstimateCounterConcurrent(t *testing.T) {
	ec := orchestrator.NewEstimateCounter()
	req := &orchestrator.ModelRequest{Messages: []orchestrator.Message{{Role: "user", Content: strings.Repeat("abcd", 100)}}}
	raw := orchestrator.EstimateRequestTokens(req)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := orchestrator.ModelSettings{Name: []string{"a", "b"}[i%2]}
			for range 200 {
				ec.ObserveUsage(s, req, raw*2)
				if n := ec.CountTokens(s, req); n < raw || n > raw*2 {
					t.Errorf("count %d outside [%d, %d] while calibrating towards 2", n, raw, raw*2)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, m := range []string{"a", "b"} {
		if r := ec.Ratio(m); r < 1.99 || r > 2 {
			t.Errorf("ratio of %s after 800 reports of twice the estimate = %v", m, r)
		}
	}
}
