package llm_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/orchestrator"
)

func TestTokenCounterEncodingByModel(t *testing.T) {
	for id, want := range map[string]string{
		"gpt-4o-mini": "o200k_base", "openai/gpt-4.1": "o200k_base", "o3-mini": "o200k_base", "gpt-5": "o200k_base",
		"gpt-4-turbo": "cl100k_base", "gpt-3.5-turbo": "cl100k_base", "deepseek-chat": "", "qwen-max": "", "": "",
	} {
		if got := llm.EncodingFor(id); got != want {
			t.Errorf("EncodingFor(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestTokenCounterCountsOfflineWithTiktoken(t *testing.T) {
	// Known counts: "hello world" is 2 tokens in both encodings.
	for _, enc := range []string{"cl100k_base", "o200k_base"} {
		if n, ok := llm.CountText(enc, "hello world"); !ok || n != 2 {
			t.Fatalf("%s: %d, %v", enc, n, ok)
		}
	}
	c := llm.NewTokenCounter()
	req := &orchestrator.ModelRequest{Messages: []orchestrator.Message{
		{Role: "system", Content: "You are helpful."},
		{Role: "user", Content: "hello world"},
	}}
	// 3 priming + (3 + 1 role + 4 content) + (3 + 1 + 2)
	if got := c.CountTokens(orchestrator.ModelSettings{Name: "m", ModelID: "gpt-4o"}, req); got != 17 {
		t.Fatalf("gpt-4o count = %d, want 17", got)
	}
	// Reports do not move an exact count.
	c.ObserveUsage(orchestrator.ModelSettings{Name: "m", ModelID: "gpt-4o"}, req, 1000)
	if got := c.CountTokens(orchestrator.ModelSettings{Name: "m", ModelID: "gpt-4o"}, req); got != 17 {
		t.Fatalf("gpt-4o count after a report = %d, want 17", got)
	}
}

func TestTokenCounterCalibratesOtherModels(t *testing.T) {
	c := llm.NewTokenCounter()
	s := orchestrator.ModelSettings{Name: "ds", ModelID: "deepseek-chat"}
	req := &orchestrator.ModelRequest{Messages: []orchestrator.Message{{Role: "user", Content: strings.Repeat("token ", 500)}}}
	before := c.CountTokens(s, req)
	for range 30 {
		c.ObserveUsage(s, req, before/2)
	}
	after := c.CountTokens(s, req)
	if after > before*55/100 || after < before*45/100 {
		t.Fatalf("calibrated count = %d, want about %d", after, before/2)
	}
}

func TestProbeContextWindowReadsTheListing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, `{"data":[{"id":"other","max_model_len":4096},{"id":"qwen-local","max_model_len":32768},{"id":"plain"}]}`)
	}))
	defer srv.Close()
	probe := func(model string) (int, error) {
		return llm.ProbeContextWindow(t.Context(), llm.Config{Provider: "local", BaseURL: srv.URL + "/v1", APIKey: "k", Model: model})
	}
	if n, err := probe("qwen-local"); err != nil || n != 32768 {
		t.Fatalf("probe = %d, %v", n, err)
	}
	if n, err := probe("plain"); err != nil || n != 0 {
		t.Fatalf("probe of a model without a length = %d, %v", n, err)
	}
	if _, err := llm.ProbeContextWindow(t.Context(), llm.Config{Provider: "local", BaseURL: srv.URL + "/v1", Model: "x"}); err == nil {
		t.Fatal("a refused listing is not an error")
	}
}
