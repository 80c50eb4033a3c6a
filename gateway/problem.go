package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/wunder/wunder/internal/i18n"
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
	// The run a refusal is about, when it names one: the 429 of a user
	// whose run waits for a person (orchestrator.PausedError) says which
	// run, its state and where to decide it.
	RunID     string `json:"run_id,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	RunState  string `json:"run_state,omitempty"`
	DecideURL string `json:"decide_url,omitempty"`
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
	p := localizedProblem(r, status, code, errorMessage(r, code, err, msg))
	var paused *orchestrator.PausedError
	if errors.As(err, &paused) {
		p.RunID, p.SessionID, p.RunState, p.DecideURL = paused.RunID, paused.SessionID, string(paused.State), decideURL(paused)
		p.Detail = i18n.Messagef(i18n.FromContext(r.Context()), "busy_user_paused_at", paused.UserID, paused.RunID, string(paused.State), p.DecideURL)
	}
	writeLocalizedProblem(w, r, p)
}

// decideURL is where a paused run is decided: its pending approvals
// (GET, then POST …/approvals/{approval_id}), or its question's answer.
func decideURL(p *orchestrator.PausedError) string {
	base := "/wunder/runs/" + url.PathEscape(p.RunID)
	if p.State == orchestrator.RunWaitingInput {
		return base + "/input"
	}
	return base + "/approvals"
}

// errorMessage is the message of err, whose code is code and whose
// English message a client may see is english, in the request's language:
// the core's own sentence when err names one (orchestrator.KeyedError),
// else english localized by code (see localize).
func errorMessage(r *http.Request, code string, err error, english string) string {
	lang := i18n.FromContext(r.Context())
	if lang != i18n.English && code != "internal" {
		if m, ok := i18n.ErrorMessage(lang, err); ok {
			return m
		}
	}
	return localize(r, lang, code, english)
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
	return http.StatusInternalServerError, "internal", internalDetail(r, i18n.English)
}

// internalDetail is the message of an internal error in lang: where its
// detail is (the server log, under the request id).
func internalDetail(r *http.Request, lang string) string {
	return i18n.Messagef(lang, "internal_see_log", requestID(r.Context()))
}

// writeProblem writes a problem document, its title and detail in the
// request's language (i18n.go); detail is in English.
func writeProblem(w http.ResponseWriter, r *http.Request, status int, code, detail string) {
	writeLocalizedProblem(w, r, newProblem(r, status, code, detail))
}

// writeLocalizedProblem writes p as it is.
func writeLocalizedProblem(w http.ResponseWriter, r *http.Request, p Problem) {
	status := p.Status
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(p); err != nil {
		logger(r.Context()).DebugContext(r.Context(), "problem not written", "err", err)
	}
}

// newProblem is the problem of status and code with its title and detail
// in the request's language: in English detail as it is, in another
// language the catalog's sentence for code followed by what detail adds
// (see [i18n.Detail]).
func newProblem(r *http.Request, status int, code, detail string) Problem {
	lang := i18n.FromContext(r.Context())
	return localizedProblem(r, status, code, localize(r, lang, code, detail))
}

// localizedProblem is the problem of status and code with its title in the
// request's language and detail as it is.
func localizedProblem(r *http.Request, status int, code, detail string) Problem {
	return Problem{Type: problemType + code, Title: i18n.Title(i18n.FromContext(r.Context()), status), Status: status,
		Detail: detail, Code: code, RequestID: requestID(r.Context())}
}

// localize is an error message of r in lang: detail with its sentinel's
// text (errorTable's, e.g. "not found: ") given as the catalog's sentence
// for code; an internal error's message translated whole.
func localize(r *http.Request, lang, code, detail string) string {
	if lang == i18n.English || detail == "" {
		return detail
	}
	if code == "internal" && detail == internalDetail(r, i18n.English) {
		return internalDetail(r, lang)
	}
	return i18n.Detail(lang, code, detail, sentinelTexts...)
}

// sentinelTexts are the texts the core's sentinels start an error's
// message with, most specific first.
var sentinelTexts = func() []string {
	texts := make([]string, 0, len(errorTable))
	for _, e := range errorTable {
		texts = append(texts, e.err.Error())
	}
	return texts
}()

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
