package a2awire_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// NewRetryError builds wunder's -32000 of a reason with a retry delay of
// at least a second, in the ErrorInfo's metadata and a RetryInfo; a reason
// that is none of wunder's is unavailable.
func TestNewRetryError(t *testing.T) {
	for _, tc := range []struct {
		reason     string
		after      time.Duration
		want       error
		wantReason string
		wantAfter  time.Duration
	}{
		{w.ReasonBusy, 2500 * time.Millisecond, orchestrator.ErrBusy, w.ReasonBusy, 2500 * time.Millisecond},
		{w.ReasonRateLimited, 0, orchestrator.ErrBusy, w.ReasonRateLimited, time.Second},
		{w.ReasonUnavailable, 10 * time.Millisecond, orchestrator.ErrUnavailable, w.ReasonUnavailable, time.Second},
		{"NO_SUCH_REASON", 3 * time.Second, orchestrator.ErrUnavailable, w.ReasonUnavailable, 3 * time.Second},
	} {
		e := w.NewRetryError(tc.reason, "later", tc.after)
		if e.Code != w.CodeServerError || e.Message != "later" || !errors.Is(e, tc.want) || e.Kind().Reason != tc.wantReason {
			t.Errorf("%s: %+v (kind %s)", tc.reason, e, e.Kind().Reason)
		}
		if got, ok := w.RetryDelay(e); !ok || got != tc.wantAfter {
			t.Errorf("%s: retry delay %v %v; want %v", tc.reason, got, ok, tc.wantAfter)
		}
		var details []map[string]any
		if err := json.Unmarshal(e.Data, &details); err != nil || len(details) != 2 {
			t.Fatalf("%s: data %s", tc.reason, e.Data)
		}
		ms := details[0]["metadata"].(map[string]any)["retry_after_ms"]
		if ms != itoa(tc.wantAfter.Milliseconds()) {
			t.Errorf("%s: retry_after_ms %v; want %d", tc.reason, ms, tc.wantAfter.Milliseconds())
		}
		if after, ok := orchestrator.RetryAfter(e); !ok || after != tc.wantAfter {
			t.Errorf("%s: orchestrator.RetryAfter %v %v", tc.reason, after, ok)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// NewError builds the first row of a code; a code the table lacks is an
// internal error, under the caller's message.
func TestNewError(t *testing.T) {
	for code, want := range map[int]error{
		w.CodeInvalidParams: orchestrator.ErrInvalidArgument, w.CodeTaskNotFound: orchestrator.ErrNotFound,
		w.CodeVersionNotSupported: w.ErrVersionNotSupported, w.CodeParseError: w.ErrParse,
		-32050: w.ErrInternal, 42: w.ErrInternal,
	} {
		e := w.NewError(w.V10, code, "msg")
		if !errors.Is(e, want) || e.Message != "msg" {
			t.Errorf("NewError(%d) = %+v; want %v", code, e, want)
		}
		if e.Code != code && !errors.Is(want, w.ErrInternal) {
			t.Errorf("NewError(%d) has code %d", code, e.Code)
		}
		if errors.Is(want, w.ErrInternal) && e.Code != w.CodeInternal {
			t.Errorf("NewError(%d) = code %d; want the internal error's", code, e.Code)
		}
	}
}

// The A2A rows carry their ErrorInfo in 1.0 and no data in 0.3, where
// A2A's own codes say enough; wunder's rows carry it in both.
func TestErrorDataByVersion(t *testing.T) {
	for _, k := range w.Kinds() {
		for _, v := range []w.Version{w.V10, w.V03} {
			e := k.New(v, "m", 0)
			wantData := v == w.V10 || k.Domain == w.DomainWunder
			if (len(e.Data) > 0) != wantData {
				t.Errorf("%s in %s: data %s", k.Reason, v, e.Data)
			}
			if wantData && !strings.Contains(string(e.Data), `"reason":"`+k.Reason+`"`) {
				t.Errorf("%s in %s: data %s lacks the reason", k.Reason, v, e.Data)
			}
			if got := e.Error(); !strings.Contains(got, "m") || !strings.HasPrefix(got, "a2a error ") {
				t.Errorf("Error() = %q", got)
			}
		}
	}
}

// The gRPC decoder: the reason picks among the rows of a code, a reason
// that contradicts the code yields to the code, and an unknown code is
// internal.
func TestFromGRPCEdges(t *testing.T) {
	info := func(reason, domain string) json.RawMessage {
		b, _ := json.Marshal([]map[string]string{{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": domain}})
		return b
	}
	for _, tc := range []struct {
		name    string
		code    int
		details json.RawMessage
		want    error
		reason  string
	}{
		{"rate limited, not busy", int(w.GRPCResourceExhausted), info(w.ReasonRateLimited, w.DomainWunder), orchestrator.ErrBusy, w.ReasonRateLimited},
		{"busy by code alone", int(w.GRPCResourceExhausted), nil, orchestrator.ErrBusy, w.ReasonBusy},
		{"reason of another code", int(w.GRPCNotFound), info("INVALID_PARAMS", w.DomainA2A), orchestrator.ErrNotFound, "TASK_NOT_FOUND"},
		{"reason of another domain", int(w.GRPCFailedPrecondition), info("TASK_NOT_CANCELABLE", "example.com"), w.ErrTaskNotCancelable, "TASK_NOT_CANCELABLE"},
		{"push not supported", int(w.GRPCFailedPrecondition), info("PUSH_NOTIFICATION_NOT_SUPPORTED", w.DomainA2A), w.ErrPushNotSupported, "PUSH_NOTIFICATION_NOT_SUPPORTED"},
		{"version not supported", int(w.GRPCUnimplemented), info("VERSION_NOT_SUPPORTED", w.DomainA2A), w.ErrVersionNotSupported, "VERSION_NOT_SUPPORTED"},
		{"version not supported as a2a-go sends it", int(w.GRPCFailedPrecondition), info("VERSION_NOT_SUPPORTED", w.DomainA2A), w.ErrVersionNotSupported, "VERSION_NOT_SUPPORTED"},
		{"unimplemented alone is an unknown method", int(w.GRPCUnimplemented), nil, w.ErrMethodNotFound, "METHOD_NOT_FOUND"},
		{"unknown code", 2, nil, w.ErrInternal, "INTERNAL_ERROR"},
		{"details not JSON", int(w.GRPCUnauthenticated), json.RawMessage(`{oops`), orchestrator.ErrUnauthenticated, "UNAUTHENTICATED"},
	} {
		e := w.FromGRPC(tc.code, "msg", tc.details)
		if !errors.Is(e, tc.want) || e.Kind().Reason != tc.reason || e.Message != "msg" {
			t.Errorf("%s: %+v reads as %v %s; want %v %s", tc.name, e, e.Kind().Err, e.Kind().Reason, tc.want, tc.reason)
		}
	}
	if got := w.GRPCCode(2).String(); got != "UNKNOWN" {
		t.Errorf("GRPCCode(2) = %q", got)
	}
	if got := w.GRPCCanceled.String(); got != "CANCELLED" {
		t.Errorf("GRPCCanceled = %q", got)
	}
}

// A row whose HTTP status wunder moved to section 5.4's (409, 415, 502) is
// still read from the status it had before, which a2a-go v2.4.0's servers
// and older wunders send, when the ErrorInfo reason names it; without the
// reason the old status reads as its own row.
func TestFromHTTPStatusThatWas(t *testing.T) {
	body := func(status int, reason string) io.ReadCloser {
		b, _ := json.Marshal(w.Status{Error: w.StatusError{Code: status, Status: "", Message: "m",
			Details: json.RawMessage(`[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"a2a-protocol.org","reason":"` + reason + `"}]`)}})
		return io.NopCloser(bytes.NewReader(b))
	}
	for _, tc := range []struct {
		status int
		reason string
		want   error
	}{
		{409, "TASK_NOT_CANCELABLE", w.ErrTaskNotCancelable},
		{400, "TASK_NOT_CANCELABLE", w.ErrTaskNotCancelable},
		{415, "CONTENT_TYPE_NOT_SUPPORTED", w.ErrContentTypeNotSupported},
		{400, "CONTENT_TYPE_NOT_SUPPORTED", w.ErrContentTypeNotSupported},
		{502, "INVALID_AGENT_RESPONSE", w.ErrInvalidAgentResponse},
		{500, "INVALID_AGENT_RESPONSE", w.ErrInvalidAgentResponse},
		{400, "", orchestrator.ErrInvalidArgument},
	} {
		var rc io.ReadCloser = io.NopCloser(strings.NewReader(""))
		if tc.reason != "" {
			rc = body(tc.status, tc.reason)
		}
		e := w.FromHTTP(&http.Response{StatusCode: tc.status, Header: http.Header{}, Body: rc})
		if !errors.Is(e, tc.want) {
			t.Errorf("%d %s reads as %v (%s); want %v", tc.status, tc.reason, e.Kind().Err, e.Kind().Reason, tc.want)
		}
	}
}
