package gateway

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/internal/i18n"
	"github.com/wunder/wunder/orchestrator"
)

// rateLimit limits requests per principal (auth.rate_limit): a user's
// credential counts for its user, the API key for itself, and an anonymous
// caller for its address. It runs after authentication, and open paths and
// CORS preflights are never limited. A refused request gets 429 with
// Retry-After, in the shape of its protocol: RESOURCE_EXHAUSTED with
// RetryInfo on Connect, gRPC and gRPC-Web; A2A's busy error on /a2a; a
// problem document (code rate_limited) elsewhere.
func rateLimit(l Limiter, open []string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if l == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodOptions || isOpenPath(open, r.URL.Path) {
				next.ServeHTTP(w, r)
				return
			}
			ok, after := l.Allow(limitKey(r))
			if ok {
				next.ServeHTTP(w, r)
				return
			}
			writeLimited(w, r, after, "rate_limited", i18n.Messagef(i18n.FromContext(r.Context()), "rate_limited_after", retrySeconds(after)))
		})
	}
}

// limitKey is the bucket a request draws from.
func limitKey(r *http.Request) string {
	p := principal(r.Context())
	switch {
	case p.UserID != "":
		return "user:" + p.UserID
	case p.Kind == orchestrator.CredentialAPIKey:
		return "api_key"
	}
	return "addr:" + clientAddress(r)
}

// clientAddress is who a request comes from, for limits per address: the
// IP of its peer, an IPv6 address cut to its /64 (one subscriber's
// network: its host bits cost nothing to change).
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	if ip = ip.Unmap(); ip.Is6() {
		return netip.PrefixFrom(ip, 64).Masked().String()
	}
	return ip.String()
}

// writeLimited answers a request a limit refused: 429 with Retry-After,
// in the shape of its protocol (code names the problem elsewhere).
func writeLimited(w http.ResponseWriter, r *http.Request, after time.Duration, code, detail string) {
	w.Header().Set("Retry-After", strconv.Itoa(retrySeconds(after)))
	switch {
	case isRPC(r):
		ce := connect.NewError(connect.CodeResourceExhausted, errors.New(detail))
		if d, err := connect.NewErrorDetail(&errdetails.RetryInfo{RetryDelay: durationpb.New(after)}); err == nil {
			ce.AddDetail(d)
		}
		if err := connect.NewErrorWriter().Write(w, r, ce); err != nil {
			logger(r.Context()).DebugContext(r.Context(), "rpc error not written", "err", err)
		}
	case writeA2AError(w, r, a2awire.NewRetryError(a2awire.ReasonRateLimited, detail, after)):
		// A2A's JSON-RPC and HTTP+JSON bindings: their shapes.
	default:
		writeLocalizedProblem(w, r, localizedProblem(r, http.StatusTooManyRequests, code, detail))
	}
}
