package orchestrator

import (
	"encoding/json"
	"math"
	"sync"
	"unicode/utf8"
)

// TokenCounter counts the prompt tokens of a model request. The loop asks
// it before every model call (the compaction triggers compare its count
// with the model's budget) and tells it what the model reported after the
// call, so that an estimating counter can correct itself.
//
// adapters/llm has one that counts exactly with the tokenizer of
// OpenAI-family models and falls back to [EstimateCounter] for others;
// [Options.Tokens] defaults to an [EstimateCounter].
type TokenCounter interface {
	// CountTokens returns the prompt tokens req costs on the model s
	// describes (s.ModelID picks a tokenizer, s.Name keys calibration).
	CountTokens(s ModelSettings, req *ModelRequest) int
	// ObserveUsage tells the counter that the model reported promptTokens
	// for req.
	ObserveUsage(s ModelSettings, req *ModelRequest, promptTokens int)
}

// EstimateCounter is a calibrated estimate: a token per 4 bytes of ASCII
// and one per other character, times a per-model ratio learnt from the
// prompt tokens the model reports (smoothed; 1 until the first report).
// It is safe for concurrent use.
type EstimateCounter struct {
	mu     sync.Mutex
	ratios map[string]float64
}

// NewEstimateCounter returns an uncalibrated [EstimateCounter].
func NewEstimateCounter() *EstimateCounter {
	return &EstimateCounter{ratios: map[string]float64{}}
}

// calibrationWeight is the share of a new observation in the smoothed
// ratio; ratios are clamped to [minRatio, maxRatio] so one odd report
// cannot make the estimate absurd.
const (
	calibrationWeight = 0.3
	minRatio          = 0.25
	maxRatio          = 4
)

// CountTokens implements [TokenCounter].
func (c *EstimateCounter) CountTokens(s ModelSettings, req *ModelRequest) int {
	raw := EstimateRequestTokens(req)
	return int(math.Ceil(float64(raw) * c.Ratio(s.Name)))
}

// ObserveUsage implements [TokenCounter].
func (c *EstimateCounter) ObserveUsage(s ModelSettings, req *ModelRequest, promptTokens int) {
	raw := EstimateRequestTokens(req)
	if promptTokens <= 0 || raw <= 0 {
		return
	}
	r := min(max(float64(promptTokens)/float64(raw), minRatio), maxRatio)
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.ratios[s.Name]; ok {
		r = old*(1-calibrationWeight) + r*calibrationWeight
	}
	c.ratios[s.Name] = r
}

// Ratio is the model's calibration ratio (1 before any report).
func (c *EstimateCounter) Ratio(model string) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.ratios[model]; ok {
		return r
	}
	return 1
}

// EstimateRequestTokens is the uncalibrated estimate of req: its messages
// and, in function_call mode, its tool specs.
func EstimateRequestTokens(req *ModelRequest) int {
	n := estimateTokens(req.Messages) + 3
	if len(req.Tools) > 0 {
		b, _ := json.Marshal(req.Tools)
		n += textTokens(string(b))
	}
	return n
}

// ImageTokens is what one image part is counted as: OpenAI's price of a
// 1024x1024 picture in high detail (85 + 4 tiles of 170). Providers
// differ; the calibration by reported usage corrects the estimate.
const ImageTokens = 765

// imageCount counts the image attachments of a message (in a
// [ModelRequest], the image parts sent to a model with vision).
func imageCount(m Message) int {
	n := 0
	for _, a := range m.Attachments {
		if a.Type == AttachmentImage {
			n++
		}
	}
	return n
}

// estimateTokens is a cheap, deliberately generous estimate: a token per 4
// bytes of ASCII and one per other character (CJK text is about one token
// per character), plus 4 per message for its role and framing.
func estimateTokens(msgs []Message) int {
	n := 0
	count := func(s string) {
		ascii := 0
		for _, r := range s {
			if r < utf8.RuneSelf {
				ascii++
			} else {
				n++
			}
		}
		n += (ascii + 3) / 4
	}
	for _, m := range msgs {
		n += 4 // role and framing
		n += ImageTokens * imageCount(m)
		count(m.Content)
		count(m.ReasoningContent)
		for _, c := range m.ToolCalls {
			count(c.Name)
			count(string(c.Arguments))
		}
	}
	return n
}

// textTokens is estimateTokens for one text.
func textTokens(s string) int {
	return estimateTokens([]Message{{Content: s}}) - 4
}

// EstimateTextTokens is the uncalibrated estimate of one text (the
// counting of [EstimateCounter]: a token per 4 bytes of ASCII and one per
// other character).
func EstimateTextTokens(s string) int { return textTokens(s) }

// ClipTokens cuts s to about n estimated tokens, on a rune boundary, with
// an ellipsis; s itself when it fits.
func ClipTokens(s string, n int) string { return clipTokens(s, n) }

// clipTokens is [ClipTokens].
func clipTokens(s string, n int) string {
	if textTokens(s) <= n {
		return s
	}
	cost, cut := 0, 0
	ascii := 0
	for i, r := range s {
		if r < utf8.RuneSelf {
			ascii++
			if ascii%4 == 1 {
				cost++
			}
		} else {
			cost++
		}
		if cost > n-1 {
			break
		}
		cut = i + utf8.RuneLen(r)
	}
	return s[:cut] + "…"
}
