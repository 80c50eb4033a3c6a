package orchestrator

import (
	"context"
	"strconv"
	"time"
)

// The audit and the usage meter: what operators read of the policy's
// decisions (policy.go) and of each user's consumption. Both are for
// admins: the front-end checks the principal; UserID filters, it does not
// scope.

// AuditFilter selects audit records (tool logs). Empty fields select all.
type AuditFilter struct {
	UserID string
	Tool   string
	// Outcome is OutcomeAllowed, OutcomeDenied or OutcomeError.
	Outcome string
	// Via is ViaRun, ViaCatalog, ViaPassthrough or ViaProbe.
	Via string
	// Since keeps records at or after it.
	Since time.Time
	// Page: newest first; After an [AuditKey] reads only that page.
	Page Page
}

// AuditKey is where a listing of the audit goes on after l.
func AuditKey(l *ToolLog) *PageKey {
	return &PageKey{At: l.CreatedAt, ID: strconv.FormatInt(l.ID, 10)}
}

// Audit lists the decisions f selects, newest first, including those
// still waiting to be written (it writes them first).
func (o *Orchestrator) Audit(ctx context.Context, f AuditFilter) ([]*ToolLog, error) {
	if f.UserID != "" {
		if err := validUserID(f.UserID); err != nil {
			return nil, err
		}
	}
	switch f.Outcome {
	case "", OutcomeAllowed, OutcomeDenied, OutcomeError:
	default:
		return nil, invalidf("outcome must be %q, %q or %q, got %q", OutcomeAllowed, OutcomeDenied, OutcomeError, f.Outcome)
	}
	switch f.Via {
	case "", ViaRun, ViaCatalog, ViaPassthrough, ViaProbe:
	default:
		return nil, invalidf("via must be %q, %q, %q or %q, got %q", ViaRun, ViaCatalog, ViaPassthrough, ViaProbe, f.Via)
	}
	if f.Page.After != nil {
		if _, err := strconv.ParseInt(f.Page.After.ID, 10, 64); err != nil {
			return nil, invalidf("the cursor was not issued by the audit")
		}
	}
	if err := o.toolLogs.flush(ctx); err != nil {
		return nil, err
	}
	return o.store.ListToolLogs(ctx, f)
}

// UsageFilter selects the window and users of [Orchestrator.Usage].
type UsageFilter struct {
	UserID string
	// Since keeps runs created, and tool calls made, at or after it.
	Since time.Time
}

// UserUsage is one user's consumption in a window.
type UserUsage struct {
	UserID string `json:"user_id"`
	// Runs counts the runs created; RunSeconds sums their execution time
	// (from start to end, or to now for runs still going).
	Runs       int64   `json:"runs"`
	RunSeconds float64 `json:"run_seconds"`
	// InputTokens and OutputTokens are what the model reported.
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// ToolCalls counts the calls the policy allowed (ok or failed);
	// DeniedCalls those it refused.
	ToolCalls   int64 `json:"tool_calls"`
	DeniedCalls int64 `json:"denied_calls"`
}

// Usage returns each user's consumption in f's window, the biggest
// token users first.
func (o *Orchestrator) Usage(ctx context.Context, f UsageFilter) ([]UserUsage, error) {
	if f.UserID != "" {
		if err := validUserID(f.UserID); err != nil {
			return nil, err
		}
	}
	if err := o.toolLogs.flush(ctx); err != nil {
		return nil, err
	}
	return o.store.Usage(ctx, f, o.opts.Now())
}
