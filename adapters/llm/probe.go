package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// ProbeContextWindow asks the provider's model listing (GET {base}/models)
// for c's model and returns the context length it reports, or 0 when it
// reports none (OpenAI's own listing never does; vLLM, LM Studio,
// OpenRouter and some others do, under one of contextFields). The scripted
// provider has no listing: 0.
func ProbeContextWindow(ctx context.Context, c Config) (int, error) {
	c = c.WithDefaults()
	if c.Provider == ProviderScripted {
		return 0, nil
	}
	if err := c.Validate(); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL+"/models", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	c.setHeaders(req.Header)
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("model listing: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return 0, fmt.Errorf("model listing: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("model listing: HTTP %d", resp.StatusCode)
	}
	var list struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return 0, errors.New("model listing: not an OpenAI-style list")
	}
	for _, m := range list.Data {
		if id, _ := m["id"].(string); id != c.Model {
			continue
		}
		return contextLength(m), nil
	}
	return 0, nil
}

// contextFields are where listings put a model's context length.
var contextFields = []string{"context_length", "max_model_len", "max_context_length", "context_window", "max_context"}

func contextLength(m map[string]any) int {
	for _, f := range contextFields {
		if v, ok := m[f].(float64); ok && v > 0 {
			return int(v)
		}
	}
	if tp, ok := m["top_provider"].(map[string]any); ok { // OpenRouter
		return contextLength(tp)
	}
	return 0
}
