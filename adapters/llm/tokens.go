package llm

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/wunder/wunder/orchestrator"
)

// TokenCounter implements [orchestrator.TokenCounter]: exact counts with
// tiktoken (o200k_base or cl100k_base, by model id) for OpenAI-family
// models, and for other models the orchestrator's estimate calibrated by
// the prompt tokens they report. The BPE files are embedded
// (tiktoken-go-loader): nothing is downloaded. Safe for concurrent use.
type TokenCounter struct {
	est *orchestrator.EstimateCounter
}

// NewTokenCounter returns a counter whose estimates start uncalibrated.
func NewTokenCounter() *TokenCounter {
	return &TokenCounter{est: orchestrator.NewEstimateCounter()}
}

var (
	loaderOnce sync.Once
	encMu      sync.Mutex
	encodings  = map[string]*tiktoken.Tiktoken{}
)

// EncodingFor names the tiktoken encoding of an OpenAI-family model id
// ("" for other models). A provider prefix ("openai/gpt-4o") is ignored.
func EncodingFor(modelID string) string {
	id := strings.ToLower(modelID)
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	switch {
	case strings.HasPrefix(id, "gpt-4o"), strings.HasPrefix(id, "gpt-4.1"), strings.HasPrefix(id, "gpt-4.5"),
		strings.HasPrefix(id, "gpt-5"), strings.HasPrefix(id, "chatgpt-4o"), strings.HasPrefix(id, "gpt-oss"),
		strings.HasPrefix(id, "o1"), strings.HasPrefix(id, "o3"), strings.HasPrefix(id, "o4"):
		return tiktoken.MODEL_O200K_BASE
	case strings.HasPrefix(id, "gpt-4"), strings.HasPrefix(id, "gpt-3.5"):
		return tiktoken.MODEL_CL100K_BASE
	}
	return ""
}

// encoding returns the named encoding, loaded once from the embedded
// files; nil when it cannot be loaded.
func encoding(name string) *tiktoken.Tiktoken {
	loaderOnce.Do(func() { tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader()) })
	encMu.Lock()
	defer encMu.Unlock()
	if e, ok := encodings[name]; ok {
		return e
	}
	e, err := tiktoken.GetEncoding(name)
	if err != nil {
		e = nil
	}
	encodings[name] = e
	return e
}

// CountText counts s with the named encoding; ok is false when the
// encoding is unknown.
func CountText(encodingName, s string) (n int, ok bool) {
	e := encoding(encodingName)
	if e == nil {
		return 0, false
	}
	return len(e.Encode(s, nil, nil)), true
}

// CountTokens implements [orchestrator.TokenCounter]. For OpenAI models it
// counts as OpenAI documents chat requests: 3 tokens of framing per
// message, its role, content and tool calls, 3 to prime the reply, and
// the tool specs' JSON.
func (c *TokenCounter) CountTokens(s orchestrator.ModelSettings, req *orchestrator.ModelRequest) int {
	name := EncodingFor(s.ModelID)
	e := encoding(name)
	if name == "" || e == nil {
		return c.est.CountTokens(s, req)
	}
	count := func(t string) int { return len(e.Encode(t, nil, nil)) }
	n := 3
	for _, m := range req.Messages {
		n += 3 + count(m.Role) + count(m.Content)
		for _, a := range m.Attachments {
			if a.Type == orchestrator.AttachmentImage {
				n += orchestrator.ImageTokens
			}
		}
		if m.Name != "" {
			n += 1 + count(m.Name)
		}
		for _, tc := range m.ToolCalls {
			n += 3 + count(tc.Name) + count(string(tc.Arguments))
		}
	}
	if len(req.Tools) > 0 {
		b, _ := json.Marshal(req.Tools)
		n += count(string(b))
	}
	return n
}

// ObserveUsage implements [orchestrator.TokenCounter]: it calibrates the
// estimate of models counted without a tokenizer.
func (c *TokenCounter) ObserveUsage(s orchestrator.ModelSettings, req *orchestrator.ModelRequest, promptTokens int) {
	if EncodingFor(s.ModelID) == "" {
		c.est.ObserveUsage(s, req, promptTokens)
	}
}

var _ orchestrator.TokenCounter = (*TokenCounter)(nil)
