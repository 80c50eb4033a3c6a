package llm

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// maxRetryAfter is the longest Retry-After the client waits for. A server
// asking for more fails the call at once, with the hint attached
// ([orchestrator.RetryAfter]), rather than holding a run for minutes.
const maxRetryAfter = time.Minute

// Causes of an attempt's context being cancelled by the client itself.
var (
	errIdle    = errors.New("no data from the server within the idle timeout")
	errTimeout = errors.New("request timed out")
)

// failure is why one attempt did not produce a response.
type failure struct {
	// err is the cause, for the final error message.
	err error
	// status is the HTTP status, 0 when the failure is not one.
	status int
	// retry reports whether another attempt may succeed.
	retry bool
	// retryAfter is the server's hint, 0 when it gave none.
	retryAfter time.Duration
	// usageRejected: a 400 that names stream_options/include_usage.
	usageRejected bool
}

// statusFailure classifies a non-2xx response. body is an excerpt.
func statusFailure(resp *http.Response, body []byte) *failure {
	f := &failure{
		status:     resp.StatusCode,
		retryAfter: retryAfter(resp.Header, time.Now()),
		err:        fmt.Errorf("status %s: %s%s", resp.Status, excerpt(body), statusHint(resp.StatusCode)),
	}
	switch code := resp.StatusCode; {
	case code == http.StatusRequestTimeout, code == http.StatusConflict,
		code == http.StatusTooManyRequests, code >= 500:
		f.retry = true
	case code == http.StatusBadRequest, code == http.StatusUnprocessableEntity:
		lower := strings.ToLower(string(body))
		f.usageRejected = strings.Contains(lower, "stream_options") || strings.Contains(lower, "include_usage")
	}
	// OpenAI's own override, honoured by its SDKs.
	switch resp.Header.Get("X-Should-Retry") {
	case "true":
		f.retry = resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusUnauthorized &&
			resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusNotFound
	case "false":
		f.retry = false
	}
	return f
}

// transportFailure classifies an error of sending the request or reading
// the body. The caller has checked that the parent context is alive, so a
// cancelled attempt context is one of the client's own timeouts.
func transportFailure(actx context.Context, what string, err error) *failure {
	if cause := context.Cause(actx); cause != nil && actx.Err() != nil {
		return &failure{err: fmt.Errorf("%s: %w", what, cause), retry: true}
	}
	var cert *tls.CertificateVerificationError
	if errors.As(err, &cert) {
		return &failure{err: fmt.Errorf("%s: %w", what, err)}
	}
	return &failure{err: fmt.Errorf("%s: %w", what, err), retry: true}
}

// protocolFailure is a response that is not what the protocol promises: a
// malformed chunk, an error event, a stream cut short. These are retried:
// they are what proxies and overloaded servers produce, and a server that
// always does it fails after MaxAttempts all the same.
func protocolFailure(err error) *failure {
	return &failure{err: err, retry: true}
}

// backoff is the wait before retry n (1 = the first retry): exponential from
// InitialBackoff, capped at MaxBackoff, with "equal jitter" (half fixed,
// half random) so concurrent runs spread out.
func (c *Client) backoff(n int) time.Duration {
	d := c.cfg.Retry.InitialBackoff
	for i := 1; i < n && d < c.cfg.Retry.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.cfg.Retry.MaxBackoff)
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// retryAfter reads retry-after-ms (OpenAI) or Retry-After (seconds or an
// HTTP date). It returns 0 when there is no usable hint.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e9 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// maxExcerpt bounds the part of an error body quoted in errors.
const maxExcerpt = 300

// excerpt is a short, single-line rendering of an error body: the message
// of an OpenAI error object when there is one, else the text itself.
func excerpt(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && len(e.Error) > 0 {
		var we wireError
		var s string
		switch {
		case json.Unmarshal(e.Error, &we) == nil && (we.Message != "" || we.Type != ""):
			return clip(we.text())
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return clip(s)
		}
	}
	s := strings.Join(strings.Fields(string(body)), " ")
	if s == "" {
		return "(empty body)"
	}
	return clip(s)
}

func clip(s string) string { return orchestrator.ClipText(s, maxExcerpt) }

// finalError is the error Generate returns for the last failure. Transient
// failures that outlived every attempt wrap [orchestrator.ErrUnavailable]
// (with the server's Retry-After when it gave one); the others (400, 401,
// 403, 404, ...) are plain errors: they are wunder's configuration or
// request, not the caller's fault or a passing state.
func (c *Client) finalError(f *failure, attempts int) error {
	what := fmt.Sprintf("llm %q: POST %s", c.cfg.Name, c.shownEndpoint)
	if !f.retry {
		return fmt.Errorf("%s: %w", what, f.err)
	}
	tries := "1 attempt"
	if attempts > 1 {
		tries = fmt.Sprintf("%d attempts", attempts)
	}
	var err error = &statusError{status: f.status, err: fmt.Errorf("%w: %s: after %s: %w", orchestrator.ErrUnavailable, what, tries, f.err)}
	if f.retryAfter > 0 {
		err = orchestrator.WithRetryAfter(err, f.retryAfter)
	}
	return err
}

// canceled is the error for a cancelled ctx; errors.Is(err,
// context.Canceled) (or DeadlineExceeded) holds.
func (c *Client) canceled(ctx context.Context) error {
	return fmt.Errorf("llm %q: %w", c.cfg.Name, ctx.Err())
}

// statusHint points at the config field a status usually means is wrong.
func statusHint(code int) string {
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden:
		return " (check api_key)"
	case http.StatusNotFound:
		return " (check base_url and model)"
	}
	return ""
}
