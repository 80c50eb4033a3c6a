// Package llm implements [orchestrator.Model] for OpenAI-compatible chat
// completion APIs (OpenAI, DeepSeek, Qwen/DashScope, and local servers such
// as Ollama, vLLM and LM Studio), plus the scripted provider for tests and
// demos, and the [Registry] that serves the configured models to the core
// as [orchestrator.Models].
//
// It is a lean client of its own on net/http rather than an SDK, so fields
// only some servers send (reasoning_content, reasoning, object-valued
// arguments, usage chunks with no choices) survive. The composition root
// wires it:
//
//	m, err := llm.NewModel(llm.Config{Provider: llm.ProviderDeepSeek, Model: "deepseek-chat", APIKey: key})
//	...
//	models := llm.NewRegistry("deepseek", map[string]llm.Entry{"deepseek": {Model: m, Settings: settings}})
//
// # Requests and responses
//
// One request is POST {base_url}/chat/completions. A streamed answer is
// read as server-sent events (internal/sse, wunder's one reader): deltas
// are yielded as they come (content and reasoning), tool call fragments
// are merged by index, and usage is taken from the last chunk that has it
// (stream_options.include_usage). A server answering a stream request
// with a plain JSON completion is understood too.
// If a server rejects stream_options with a 400 that names it, the request
// is sent again at once without it, and the [Client] never sends it again.
//
// Chunks and responses are decoded with github.com/segmentio/encoding/json
// (which the MCP SDK uses too) instead of encoding/json: a streamed answer
// is a decode per chunk, and it decodes a stream in about 0.57× the time
// with a third of the allocations (BenchmarkStreamDecode).
// FuzzChunkDecodersAgree holds it to encoding/json's results on any input.
//
// # Retries
//
// An attempt is retried from scratch, after an event with Retry set (the
// loop voids the deltas seen so far), when it fails with 408, 409, 429 or
// 5xx, a connection error, the Timeout or IdleTimeout, or a protocol
// failure: a stream that ends without [DONE] or a finish_reason (cut before
// or after some content), a chunk that is not JSON, an error event. Protocol
// failures are what proxies and overloaded servers produce; a server that
// always does it fails after MaxAttempts all the same. 400, 401, 403, 404
// and other client errors are never retried. The wait is exponential
// backoff with jitter, or the server's Retry-After (retry-after-ms,
// Retry-After seconds or date) when it gives one; a Retry-After above one
// minute fails the call at once with the hint attached
// ([orchestrator.WithRetryAfter]). Transient failures that outlive
// MaxAttempts wrap [orchestrator.ErrUnavailable]; the final error names the
// model, the endpoint, the status and an excerpt of the body.
//
// # Cancellation and goroutines
//
// Generate runs in its consumer's goroutine and starts none of its own
// beyond timer callbacks and one [context.AfterFunc] per attempt that closes
// the response body when the context ends, so a cancelled run stops
// reading at once. Waits between attempts end with the context. A
// cancelled call returns an error wrapping ctx.Err(), so errors.Is(err,
// context.Canceled) holds. Breaking out of the iteration closes the body.
package llm
