package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/wunder/wunder/orchestrator"
)

// Problem is an RFC 9457 problem document with a stable machine-readable
// code. Every error wunder's HTTP API returns has this shape.
type Problem struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail,omitempty"`
	Code      string `json:"code"`
	RequestID string `json:"request_id,omitempty"`
}

// problemType is the URI prefix of problem types; the code completes it.
const problemType = "https://github.com/wunder/wunder/blob/main/docs/http.md#"

// errorTable is the one mapping from the core's sentinels to HTTP. The
// first match wins, so more specific sentinels come first.
var errorTable = []struct {
	err    error
	status int
	code   string
}{
	{orchestrator.ErrToolNotFound, http.StatusBadRequest, "tool_not_found"},
	{orchestrator.ErrInvalidArgument, http.StatusBadRequest, "invalid_argument"},
	{orchestrator.ErrNotFound, http.StatusNotFound, "not_found"},
	{orchestrator.ErrConflict, http.StatusConflict, "conflict"},
	{orchestrator.ErrBusy, http.StatusTooManyRequests, "busy"},
	{orchestrator.ErrUnavailable, http.StatusServiceUnavailable, "unavailable"},
	{orchestrator.ErrUnauthenticated, http.StatusUnauthorized, "unauthenticated"},
	{orchestrator.ErrPermissionDenied, http.StatusForbidden, "permission_denied"},
	{orchestrator.ErrCanceled, 499, "canceled"},
}

// writeError maps err through errorTable and writes it as a problem. An
// error outside the table is an internal error: the client gets a generic
// message and the detail goes to the log with the request id.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, code, msg := classify(r, err)
	if after, ok := orchestrator.RetryAfter(err); ok && status != http.StatusInternalServerError {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(after.Seconds()))))
	}
	writeProblem(w, r, status, code, msg)
}

// classify maps err through errorTable to a status, a code and the message
// a client may see; an internal error is logged with the request id and
// gets a generic message. It is writeError's table for answers that report
// several outcomes in one body (the workspace batch).
func classify(r *http.Request, err error) (status int, code, msg string) {
	for _, e := range errorTable {
		if errors.Is(err, e.err) {
			return e.status, e.code, err.Error()
		}
	}
	logger(r.Context()).ErrorContext(r.Context(), "internal error", "err", err)
	return http.StatusInternalServerError, "internal", "internal error; see the server log for request " + requestID(r.Context())
}

// writeProblem writes a problem document.
func writeProblem(w http.ResponseWriter, r *http.Request, status int, code, detail string) {
	title := http.StatusText(status)
	if status == 499 {
		title = "Client Closed Request"
	}
	p := Problem{Type: problemType + code, Title: title, Status: status, Detail: detail, Code: code, RequestID: requestID(r.Context())}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(p); err != nil {
		logger(r.Context()).DebugContext(r.Context(), "problem not written", "err", err)
	}
}

// writeJSON writes v as JSON with status.
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		logger(r.Context()).DebugContext(r.Context(), "response not written", "err", err)
	}
}
