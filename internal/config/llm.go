package config

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// LLM configures the models wunder can call.
type LLM struct {
	// Default names the model used when a request names none. "" = the only
	// enabled model; with several enabled models it must be set.
	Default string `yaml:"default"`
	// Models maps a model name (what requests send as model_name) to its
	// settings. A new entry starts from the model defaults of defaults.go.
	Models map[string]Model `yaml:"models"`
	// CircuitOpenSeconds (circuit_open_s): a model that failed over is
	// skipped for this long by every run, >= 1. Default 30.
	CircuitOpenSeconds int `yaml:"circuit_open_s"`
	// RequestOverrides are the model settings a POST /wunder request may
	// set in config_overrides: temperature, max_rounds, tool_call_mode,
	// max_output. Default all of them; [] = none.
	RequestOverrides []string `yaml:"request_overrides"`
}

// CircuitOpen is circuit_open_s as a duration.
func (l LLM) CircuitOpen() time.Duration { return seconds(l.CircuitOpenSeconds) }

// Providers.
const (
	ProviderOpenAI   = "openai"
	ProviderLocal    = "local"
	ProviderDeepSeek = "deepseek"
	ProviderQwen     = "qwen"
	// ProviderScripted replays a script instead of calling a model: for
	// tests and demos, no network needed.
	ProviderScripted = "scripted"
)

// Tool call modes (the same strings as the orchestrator's).
const (
	ToolCallMode     = "tool_call"
	FunctionCallMode = "function_call"
)

// Model is one entry of llm.models.
type Model struct {
	// Enabled models can be chosen. Default true. (The original spelling
	// "enable" is accepted with a warning.)
	Enabled bool `yaml:"enabled"`
	// Provider is openai, local, deepseek, qwen or scripted. Default openai.
	Provider string `yaml:"provider"`
	// BaseURL of the OpenAI-compatible API; "" = the provider's default
	// (required for local). Env WUNDER_LLM_BASE_URL for the default model.
	BaseURL string `yaml:"base_url"`
	// APIKey for the provider. Env WUNDER_LLM_API_KEY for the default model.
	// Masked by [Config.Redacted].
	APIKey string `yaml:"api_key" secret:"true"`
	// Model is the provider's model id; required unless the provider is
	// scripted. Env WUNDER_LLM_MODEL for the default model.
	Model string `yaml:"model"`
	// Script is the scripted provider's script file; "" = the built-in echo
	// script. Only for provider scripted.
	Script string `yaml:"script"`
	// Temperature, 0..2; nil = the provider's default.
	Temperature *float64 `yaml:"temperature"`
	// TimeoutSeconds (timeout_s) bounds one model call. Default 120.
	TimeoutSeconds int `yaml:"timeout_s"`
	// MaxRounds bounds the model calls of one run, >= 1. Default 8.
	MaxRounds int `yaml:"max_rounds"`
	// MaxContext is the context window in tokens; 0 = unknown.
	MaxContext int `yaml:"max_context"`
	// HistoryCompactionRatio: when the history usage (the request's token
	// count, or the prompt tokens the model last reported) reaches this
	// share of max_context, the older part of the conversation is
	// compacted (a compaction event). 0 turns this trigger off; the safe
	// budget trigger stays on whenever max_context is set. Default 0.8.
	HistoryCompactionRatio float64 `yaml:"history_compaction_ratio"`
	// HistoryCompactionReset is what becomes of the history usage counter
	// after a compaction: zero, current (the compacted request's count) or
	// keep. Default zero.
	HistoryCompactionReset string `yaml:"history_compaction_reset"`
	// MaxOutput caps output tokens per call; 0 = the server's default.
	MaxOutput int `yaml:"max_output"`
	// Stream asks for streamed responses when the run's caller reads the
	// answer as it grows (SSE, message/stream, Connect, a progress token).
	// Default true.
	Stream bool `yaml:"stream"`
	// StreamAlways (stream_always) streams every call of the model when
	// Stream is on: also for callers that wait for the whole answer
	// (blocking A2A sends, POST /wunder without stream, wunder@run
	// without a progress token), so followers of their runs see the
	// answer grow, and for memory summaries and reranking. Default false:
	// those calls ask for the whole answer, which costs the model server
	// and wunder less.
	StreamAlways bool `yaml:"stream_always"`
	// StreamIncludeUsage asks for usage in the last streamed chunk.
	// Default true.
	StreamIncludeUsage bool `yaml:"stream_include_usage"`
	// ToolCallMode is tool_call or function_call. Default tool_call; env
	// WUNDER_LLM_TOOL_CALL_MODE for the default model.
	ToolCallMode string `yaml:"tool_call_mode"`
	// Stop sequences.
	Stop []string `yaml:"stop"`
	// Retry configures retries of failed calls.
	Retry Retry `yaml:"retry"`
	// SupportVision: the model takes images; image attachments are sent to
	// it as image_url parts, and described as a note to a model without
	// it. Default false.
	SupportVision bool `yaml:"support_vision"`
	// Fallbacks name the enabled models a call moves to, in order, when
	// this one fails after its retries on a server failure (5xx, timeout,
	// connection), not on a 4xx. Default [].
	Fallbacks []string `yaml:"fallbacks"`
}

// Timeout is timeout_s as a duration.
func (m Model) Timeout() time.Duration { return seconds(m.TimeoutSeconds) }

// Retry configures retries of a failed model call with exponential backoff.
type Retry struct {
	// MaxAttempts counts the first call too; 1 = no retry. Default 3.
	MaxAttempts int `yaml:"max_attempts"`
	// InitialBackoffMillis (initial_backoff_ms). Default 500.
	InitialBackoffMillis int `yaml:"initial_backoff_ms"`
	// MaxBackoffMillis (max_backoff_ms). Default 8000.
	MaxBackoffMillis int `yaml:"max_backoff_ms"`
}

// InitialBackoff is initial_backoff_ms as a duration.
func (r Retry) InitialBackoff() time.Duration { return millis(r.InitialBackoffMillis) }

// MaxBackoff is max_backoff_ms as a duration.
func (r Retry) MaxBackoff() time.Duration { return millis(r.MaxBackoffMillis) }

// DefaultModelName is the model used when a request names none: llm.default
// when set, else the only enabled model. It is "" when no model is enabled,
// and when several are enabled and llm.default is unset ([Config.Validate]
// rejects that case).
func (c *Config) DefaultModelName() string {
	name, _ := c.defaultModel()
	return name
}

// defaultModel returns the default model's name, or "" and the reason there
// is none.
func (c *Config) defaultModel() (string, error) {
	if c.LLM.Default != "" {
		return c.LLM.Default, nil
	}
	enabled := c.EnabledModelNames()
	switch len(enabled) {
	case 0:
		return "", fmt.Errorf("no model is enabled")
	case 1:
		return enabled[0], nil
	default:
		return "", fmt.Errorf("must be set when more than one model is enabled (%s)", strings.Join(enabled, ", "))
	}
}

// EnabledModelNames lists the enabled models, sorted by name.
func (c *Config) EnabledModelNames() []string {
	var names []string
	for name, m := range c.LLM.Models {
		if m.Enabled {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
