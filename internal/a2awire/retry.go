package a2awire

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// Retryable errors. The A2A spec assigns no code to "busy, retry later"
// or "unavailable", and -32603 would tell a peer the agent crashed; so
// they use the implementation-defined server-error code -32000 (a2a-go
// reads it as ErrServerError) with a google.rpc.ErrorInfo whose reason says
// which, and a google.rpc.RetryInfo with the delay. The data has this one
// shape in both versions (0.3 lets data be any value), and the rate
// limiter's refusals use it too.
const (
	CodeServerError = -32000

	ReasonBusy        = "BUSY"
	ReasonUnavailable = "UNAVAILABLE"
	ReasonRateLimited = "RATE_LIMITED"

	retryInfoType = "type.googleapis.com/google.rpc.RetryInfo"
	wunderDomain  = "wunder"
)

// NewRetryError builds the -32000 error of reason with a retry delay.
func NewRetryError(reason, msg string, after time.Duration) *Error {
	after = max(after, time.Second)
	e := &Error{Code: CodeServerError, Message: msg}
	e.Data, _ = json.Marshal([]map[string]any{
		{"@type": errorInfoType, "reason": reason, "domain": wunderDomain,
			"metadata": map[string]string{"retry_after_ms": strconv.FormatInt(after.Milliseconds(), 10)}},
		{"@type": retryInfoType, "retryDelay": strconv.FormatFloat(after.Seconds(), 'f', -1, 64) + "s"},
	})
	return e
}

// retryOf reads the reason and delay of a -32000 error; ok is false when
// the data is not that shape.
func retryOf(e *Error) (reason string, after time.Duration, ok bool) {
	var details []struct {
		Type       string `json:"@type"`
		Reason     string `json:"reason"`
		RetryDelay string `json:"retryDelay"`
	}
	if json.Unmarshal(e.Data, &details) != nil {
		return "", 0, false
	}
	for _, d := range details {
		switch d.Type {
		case errorInfoType:
			reason = d.Reason
		case retryInfoType:
			after, _ = time.ParseDuration(d.RetryDelay)
		}
	}
	return reason, after, reason != ""
}

// RetryDelay reports the retry delay a -32000 error carries.
func RetryDelay(e *Error) (time.Duration, bool) {
	_, after, ok := retryOf(e)
	return after, ok && after > 0
}

// retryable maps a -32000 error back to the core's vocabulary, with its
// retry hint: BUSY and RATE_LIMITED are ErrBusy, UNAVAILABLE (and a
// -32000 without a reason wunder knows) ErrUnavailable.
func (e *Error) retryable() error {
	reason, after, _ := retryOf(e)
	var err error = orchestrator.ErrUnavailable
	if reason == ReasonBusy || reason == ReasonRateLimited {
		err = orchestrator.ErrBusy
	}
	if after > 0 {
		return orchestrator.WithRetryAfter(fmt.Errorf("%w: %s", err, e.Message), after)
	}
	return err
}

// Status is the body of an error of A2A's HTTP+JSON binding: a
// google.rpc.Status under "error" (AIP-193), whose details are the
// ErrorInfo (and RetryInfo) a JSON-RPC error carries as data.
type Status struct {
	Error StatusError `json:"error"`
}

// StatusError is a Status's inner object.
type StatusError struct {
	Code    int             `json:"code"`
	Status  string          `json:"status"`
	Message string          `json:"message"`
	Details json.RawMessage `json:"details,omitempty"`
}
