package llm

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// Providers. A provider is a set of defaults for [Config]; the wire protocol
// is OpenAI chat completions for all of them except scripted.
const (
	// ProviderOpenAI is api.openai.com. An API key is required.
	ProviderOpenAI = "openai"
	// ProviderLocal is an OpenAI-compatible server on this machine (Ollama,
	// vLLM, LM Studio, llama.cpp). No API key is required.
	ProviderLocal = "local"
	// ProviderDeepSeek is api.deepseek.com. An API key is required.
	ProviderDeepSeek = "deepseek"
	// ProviderQwen is Alibaba DashScope in compatible mode. An API key is
	// required.
	ProviderQwen = "qwen"
	// ProviderScripted replays a [Script] instead of calling a model: for
	// tests and demos. See [NewScripted] and [NewModel].
	ProviderScripted = "scripted"
)

// Defaults that do not depend on the provider.
const (
	DefaultTimeout        = 10 * time.Minute
	DefaultIdleTimeout    = 2 * time.Minute
	DefaultMaxAttempts    = 3
	DefaultInitialBackoff = 500 * time.Millisecond
	DefaultMaxBackoff     = 8 * time.Second
)

// preset holds the defaults of one provider. Presets differ only in these.
type preset struct {
	baseURL      string
	includeUsage bool
	needsKey     bool
}

// presets is read-only.
var presets = map[string]preset{
	ProviderOpenAI:   {baseURL: "https://api.openai.com/v1", includeUsage: true, needsKey: true},
	ProviderLocal:    {baseURL: "http://127.0.0.1:11434/v1", includeUsage: false, needsKey: false},
	ProviderDeepSeek: {baseURL: "https://api.deepseek.com/v1", includeUsage: true, needsKey: true},
	ProviderQwen:     {baseURL: "https://dashscope.aliyuncs.com/compatible-mode/v1", includeUsage: true, needsKey: true},
	ProviderScripted: {},
}

// Config configures one model. The zero value of every field means the
// default stated on it; [Config.WithDefaults] is the single place that fills
// them in, and [New] calls it.
type Config struct {
	// Name identifies the model in errors and logs. Default: Model.
	Name string
	// Provider is openai, local, deepseek, qwen or scripted. Default openai.
	Provider string
	// BaseURL of the OpenAI-compatible API, up to and excluding
	// /chat/completions (a trailing /chat/completions is stripped).
	// Default: the provider's (https://api.openai.com/v1,
	// http://127.0.0.1:11434/v1, https://api.deepseek.com/v1,
	// https://dashscope.aliyuncs.com/compatible-mode/v1).
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" when not empty.
	// Required for openai, deepseek and qwen.
	APIKey string
	// Model is the provider's model id. Required except for scripted.
	Model string
	// Script is the script file of the scripted provider (YAML or JSON, see
	// [LoadScript]); "" = [EchoScript]. Ignored by other providers.
	Script string
	// Temperature is sent when the request has none; nil = the server's
	// default.
	Temperature *float64
	// MaxOutput is sent as max_tokens when the request has none; 0 = the
	// server's default.
	MaxOutput int
	// Timeout bounds one HTTP request (one attempt), from sending it to the
	// end of the response body. Default 10m.
	Timeout time.Duration
	// IdleTimeout bounds, for streamed responses, the wait for the response
	// headers and every wait for more of the body. Default 2m.
	IdleTimeout time.Duration
	// Stream makes every request streamed, even when the [orchestrator.ModelRequest]
	// does not ask for it. A request with Stream set is streamed either way.
	Stream bool
	// StreamIncludeUsage sends stream_options.include_usage on streamed
	// requests, so the server reports token usage in its last chunk. nil =
	// the provider's default: on for openai, deepseek and qwen, off for
	// local. A server that rejects the option is asked again without it,
	// and the client stops sending it.
	StreamIncludeUsage *bool
	// Retry configures retries of transient failures.
	Retry RetryConfig
	// Headers are added to every request (after Authorization, so they can
	// override it).
	Headers map[string]string
	// HTTPClient sends the requests; nil = a client of its own on a clone
	// of http.DefaultTransport (proxy from the environment, HTTP/2). Its
	// Timeout should be 0: Timeout and IdleTimeout bound the requests.
	HTTPClient *http.Client
}

// RetryConfig configures retries with exponential backoff and jitter.
type RetryConfig struct {
	// MaxAttempts counts the first attempt too; 1 = no retry. Default 3.
	MaxAttempts int
	// InitialBackoff is the wait before the first retry, doubled for each
	// further one. Default 500ms.
	InitialBackoff time.Duration
	// MaxBackoff caps the wait between attempts. Default 8s.
	MaxBackoff time.Duration
}

// WithDefaults returns c with every unset field set to its default, the
// provider's preset first. Unknown providers are left for [Config.Validate].
func (c Config) WithDefaults() Config {
	if c.Provider == "" {
		c.Provider = ProviderOpenAI
	}
	c.Provider = strings.ToLower(strings.TrimSpace(c.Provider))
	p := presets[c.Provider]
	if c.BaseURL == "" {
		c.BaseURL = p.baseURL
	}
	c.BaseURL = strings.TrimSuffix(strings.TrimRight(c.BaseURL, "/"), "/chat/completions")
	if c.Name == "" {
		c.Name = c.Model
	}
	if c.Name == "" {
		c.Name = c.Provider
	}
	if c.StreamIncludeUsage == nil {
		on := p.includeUsage
		c.StreamIncludeUsage = &on
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.Retry.MaxAttempts == 0 {
		c.Retry.MaxAttempts = DefaultMaxAttempts
	}
	if c.Retry.InitialBackoff == 0 {
		c.Retry.InitialBackoff = DefaultInitialBackoff
	}
	if c.Retry.MaxBackoff == 0 {
		c.Retry.MaxBackoff = DefaultMaxBackoff
	}
	if c.Retry.MaxBackoff < c.Retry.InitialBackoff {
		c.Retry.MaxBackoff = c.Retry.InitialBackoff
	}
	return c
}

// Validate reports the first invalid field of c, which should have passed
// through [Config.WithDefaults]. The error wraps
// [orchestrator.ErrInvalidArgument] and names the field as the config file
// spells it.
func (c Config) Validate() error {
	p, ok := presets[c.Provider]
	switch {
	case !ok:
		return c.invalid("provider", "unknown provider %q (want openai, local, deepseek, qwen or scripted)", c.Provider)
	case c.Provider == ProviderScripted:
		// Needs no endpoint, key or model id.
	case c.BaseURL == "":
		return c.invalid("base_url", "required for provider %s", c.Provider)
	case c.Model == "":
		return c.invalid("model", "required for provider %s", c.Provider)
	case p.needsKey && c.APIKey == "":
		return c.invalid("api_key", "required for provider %s", c.Provider)
	}
	if c.Provider != ProviderScripted {
		u, err := url.Parse(c.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c.invalid("base_url", "%q is not an http(s) URL", c.BaseURL)
		}
	}
	switch {
	case c.Temperature != nil && (*c.Temperature < 0 || *c.Temperature > 2):
		return c.invalid("temperature", "%v is outside 0..2", *c.Temperature)
	case c.MaxOutput < 0:
		return c.invalid("max_output", "must not be negative")
	case c.Timeout < 0:
		return c.invalid("timeout", "must not be negative")
	case c.IdleTimeout < 0:
		return c.invalid("idle_timeout", "must not be negative")
	case c.Retry.MaxAttempts < 0:
		return c.invalid("retry.max_attempts", "must not be negative")
	case c.Retry.InitialBackoff < 0:
		return c.invalid("retry.initial_backoff", "must not be negative")
	case c.Retry.MaxBackoff < 0:
		return c.invalid("retry.max_backoff", "must not be negative")
	}
	for k := range c.Headers {
		if k == "" || strings.ContainsAny(k, " \t\r\n:") {
			return c.invalid("headers", "bad header name %q", k)
		}
	}
	return nil
}

func (c Config) invalid(field, format string, args ...any) error {
	return fmt.Errorf("%w: llm model %q: %s: %s", orchestrator.ErrInvalidArgument, c.Name, field, fmt.Sprintf(format, args...))
}
