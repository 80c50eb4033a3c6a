package llm

import (
	"context"
	"errors"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// ConnectionTest is the outcome of [TestConnection].
type ConnectionTest struct {
	// OK: the model answered.
	OK bool `json:"ok"`
	// Reply is the start of the model's answer (at most 200 characters).
	Reply string `json:"reply,omitempty"`
	// LatencyMS is the time from sending the request to its last byte.
	LatencyMS int64 `json:"latency_ms"`
	// Error says why the call failed, as the adapter reports it (the
	// endpoint, the HTTP status and the provider's message); Kind is
	// timeout, unreachable, refused (4xx: key, model or request) or
	// failed (anything else).
	Error string `json:"error,omitempty"`
	Kind  string `json:"kind,omitempty"`
}

// testTimeout bounds [TestConnection]'s one call.
const testTimeout = 20 * time.Second

// TestConnection makes one real chat call with cfg — a short question and
// a small answer, no retry, streamed as runs are — and reports what
// happened: the reply and the latency, or a clear error. It is the models
// admin's "test connection": nothing is recorded.
func TestConnection(ctx context.Context, cfg Config) ConnectionTest {
	cfg.Retry.MaxAttempts = 1
	if cfg.Timeout == 0 || cfg.Timeout > testTimeout {
		cfg.Timeout = testTimeout
	}
	if cfg.IdleTimeout == 0 || cfg.IdleTimeout > testTimeout {
		cfg.IdleTimeout = testTimeout
	}
	m, err := NewModel(cfg)
	if err != nil {
		return ConnectionTest{Error: err.Error(), Kind: "refused"}
	}
	ctx, cancel := context.WithTimeout(ctx, testTimeout)
	defer cancel()
	req := &orchestrator.ModelRequest{Stream: true, MaxOutput: 16, Messages: []orchestrator.Message{
		{Role: orchestrator.RoleUser, Content: "This is a connection test. Reply with the single word OK."},
	}}
	start := time.Now()
	var reply string
	for ev, err := range m.Generate(ctx, req) {
		if err != nil {
			out := ConnectionTest{LatencyMS: time.Since(start).Milliseconds(), Error: err.Error(), Kind: failureKind(ctx, err)}
			return out
		}
		if ev.Response != nil {
			reply = ev.Response.Content
		}
	}
	return ConnectionTest{OK: true, Reply: orchestrator.ClipText(reply, 200), LatencyMS: time.Since(start).Milliseconds()}
}

// failureKind sorts a failed call: the adapter's final errors wrap
// ErrUnavailable for transient failures (with the HTTP status, 0 when the
// server was not reached) and are plain for the others (a 4xx: the key,
// the model or the request).
func failureKind(ctx context.Context, err error) string {
	var se *statusError
	switch {
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case !errors.Is(err, orchestrator.ErrUnavailable):
		return "refused"
	case errors.As(err, &se) && se.status == 0:
		return "unreachable"
	}
	return "failed"
}
