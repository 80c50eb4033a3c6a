package llm_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/adapters/llm"
	"github.com/wunder/wunder/orchestrator"
)

func TestPresets(t *testing.T) {
	t.Parallel()
	cases := []struct {
		provider, baseURL string
		usage             bool
	}{
		{"", "https://api.openai.com/v1", true},
		{llm.ProviderOpenAI, "https://api.openai.com/v1", true},
		{llm.ProviderLocal, "http://127.0.0.1:11434/v1", false},
		{llm.ProviderDeepSeek, "https://api.deepseek.com/v1", true},
		{llm.ProviderQwen, "https://dashscope.aliyuncs.com/compatible-mode/v1", true},
	}
	for _, tc := range cases {
		c := llm.Config{Provider: tc.provider, Model: "m"}.WithDefaults()
		if c.BaseURL != tc.baseURL || *c.StreamIncludeUsage != tc.usage {
			t.Errorf("provider %q: base_url %q, include_usage %v; want %q, %v",
				tc.provider, c.BaseURL, *c.StreamIncludeUsage, tc.baseURL, tc.usage)
		}
		if c.Name != "m" || c.Timeout != llm.DefaultTimeout || c.IdleTimeout != llm.DefaultIdleTimeout ||
			c.Retry != (llm.RetryConfig{MaxAttempts: 3, InitialBackoff: 500 * time.Millisecond, MaxBackoff: 8 * time.Second}) {
			t.Errorf("provider %q: defaults %+v", tc.provider, c)
		}
	}
}

func TestWithDefaultsKeepsSetFields(t *testing.T) {
	t.Parallel()
	off := false
	c := llm.Config{
		Provider: "DeepSeek", BaseURL: "http://proxy:8080/v1/chat/completions/", Model: "m", Name: "ds",
		StreamIncludeUsage: &off, Timeout: time.Second, Retry: llm.RetryConfig{MaxAttempts: 1},
	}.WithDefaults()
	if c.Provider != "deepseek" || c.BaseURL != "http://proxy:8080/v1" || c.Name != "ds" ||
		*c.StreamIncludeUsage || c.Timeout != time.Second || c.Retry.MaxAttempts != 1 {
		t.Errorf("WithDefaults overrode set fields: %+v", c)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	hot := 2.5
	cases := []struct {
		cfg   llm.Config
		field string
	}{
		{llm.Config{Provider: "anthropic", Model: "m"}, "provider"},
		{llm.Config{Provider: llm.ProviderOpenAI, Model: "m"}, "api_key"},
		{llm.Config{Provider: llm.ProviderQwen, Model: "m"}, "api_key"},
		{llm.Config{Provider: llm.ProviderDeepSeek, APIKey: "k"}, "model"},
		{llm.Config{Provider: llm.ProviderLocal, Model: "m", BaseURL: "localhost:11434"}, "base_url"},
		{llm.Config{Provider: llm.ProviderLocal, Model: "m", Temperature: &hot}, "temperature"},
		{llm.Config{Provider: llm.ProviderLocal, Model: "m", MaxOutput: -1}, "max_output"},
		{llm.Config{Provider: llm.ProviderLocal, Model: "m", Retry: llm.RetryConfig{MaxAttempts: -1}}, "retry.max_attempts"},
		{llm.Config{Provider: llm.ProviderLocal, Model: "m", Timeout: -time.Second}, "timeout"},
		{llm.Config{Provider: llm.ProviderLocal, Model: "m", Headers: map[string]string{"Bad Name": "x"}}, "headers"},
	}
	for _, tc := range cases {
		err := tc.cfg.WithDefaults().Validate()
		if err == nil || !strings.Contains(err.Error(), ": "+tc.field+": ") || !errors.Is(err, orchestrator.ErrInvalidArgument) {
			t.Errorf("Validate(%+v) = %v, want an invalid-argument error naming %s", tc.cfg, err, tc.field)
		}
		if _, err := llm.New(tc.cfg); err == nil {
			t.Errorf("New(%+v) accepted an invalid config", tc.cfg)
		}
	}
	for _, ok := range []llm.Config{
		{Provider: llm.ProviderLocal, Model: "llama3"},
		{Provider: llm.ProviderOpenAI, Model: "gpt-4o", APIKey: "k"},
		{Provider: llm.ProviderScripted},
	} {
		if err := ok.WithDefaults().Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v", ok, err)
		}
	}
}

func TestNewModel(t *testing.T) {
	t.Parallel()
	m, err := llm.NewModel(llm.Config{Provider: llm.ProviderScripted})
	if _, ok := m.(*llm.Scripted); err != nil || !ok {
		t.Errorf("NewModel(scripted) = %T, %v; want *llm.Scripted", m, err)
	}
	m, err = llm.NewModel(llm.Config{Provider: llm.ProviderLocal, Model: "m"})
	if _, ok := m.(*llm.Client); err != nil || !ok {
		t.Errorf("NewModel(local) = %T, %v; want *llm.Client", m, err)
	}
	if _, err := llm.NewModel(llm.Config{Provider: llm.ProviderScripted, Script: "/does/not/exist.yaml"}); err == nil {
		t.Errorf("NewModel accepted a missing script")
	}
	if _, err := llm.New(llm.Config{Provider: llm.ProviderScripted}); err == nil {
		t.Errorf("New(scripted) returned an HTTP client")
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		header http.Header
		want   time.Duration
	}{
		{http.Header{}, 0},
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After": {"-3"}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {"Sun, 01 Nov 2026 12:00:30 GMT"}}, 30 * time.Second},
		{http.Header{"Retry-After": {"Sun, 01 Nov 2026 11:00:00 GMT"}}, 0},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
	}
	for _, tc := range cases {
		if got := llm.ParseRetryAfter(tc.header, now); got != tc.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	c, err := llm.New(llm.Config{Provider: llm.ProviderLocal, Model: "m",
		Retry: llm.RetryConfig{InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	for n, base := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 30: time.Second} {
		for range 50 {
			if d := c.Backoff(n); d < base/2 || d > base {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", n, d, base/2, base)
			}
		}
	}
}
