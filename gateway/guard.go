package gateway

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"connectrpc.com/connect"

	"github.com/wunder/wunder/internal/i18n"
)

// The browser guard: what a web page the user visits must not be able to
// do with the server on their machine or network (docs/security.md,
// "Browsers"). Two checks, for every route of every front-end, before
// anything else reads the request:
//
//   - Host: a request names a host the server serves. DNS rebinding points
//     a name the attacker owns at 127.0.0.1, after which the victim's
//     browser sends that name as Host; refusing unknown names ends it. The
//     loopback names, IP literals (a browser only sends one when the page
//     itself came from that address), the host of server.public_url and
//     server.allowed_hosts are served.
//   - Origin: a request a browser sends on a page's behalf carries the
//     page's origin; it must be one the server trusts: a loopback origin,
//     the request's own host (same site), an allowed host, or one
//     cors.allow_origins names. Requests without Origin (command-line
//     clients, SDKs, agents) pass: a browser always sends one cross-site.
//
// The third defence, a body's media type, belongs to each protocol's
// decoder (decodeJSON here, the A2A and Connect handlers theirs), since
// each answers in its own error shape.

// HostOptions say which hosts the server answers for; a zero value serves
// the loopback names and IP literals only.
type HostOptions struct {
	// Allowed are further host names (server.allowed_hosts), without port:
	// "wunder.example.com", "*.example.com" for its subdomains, or "*" for
	// every host (the check is off; configuration allows it only with an
	// API key).
	Allowed []string
	// PublicURL (server.public_url), when set, adds its host.
	PublicURL string
}

// hostPolicy is HostOptions ready for the guard.
type hostPolicy struct {
	exact    []string // lower case, no trailing dot
	suffixes []string // ".example.com" for "*.example.com"
	any      bool
}

func newHostPolicy(o HostOptions) *hostPolicy {
	p := &hostPolicy{}
	add := func(h string) {
		h = normHost(h)
		switch {
		case h == "":
		case h == "*":
			p.any = true
		case strings.HasPrefix(h, "*."):
			p.suffixes = append(p.suffixes, h[1:])
		default:
			p.exact = append(p.exact, h)
		}
	}
	for _, h := range o.Allowed {
		add(h)
	}
	if u, err := url.Parse(o.PublicURL); err == nil && o.PublicURL != "" {
		add(u.Hostname())
	}
	return p
}

// normHost lower-cases a host name and drops a trailing dot and IPv6
// brackets.
func normHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}

// hostOnly is the host of a Host header or URL authority, without port.
func hostOnly(authority string) string {
	if h, _, err := net.SplitHostPort(authority); err == nil {
		return normHost(h)
	}
	return normHost(authority)
}

// isLoopbackName reports whether h (normalised) names this machine:
// localhost, a name under .localhost (RFC 6761), or a loopback IP.
func isLoopbackName(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// named reports whether the configuration names h (public URL, allowed
// hosts); loopback names and IP literals are decided by the callers.
func (p *hostPolicy) named(h string) bool {
	if p.any || slices.Contains(p.exact, h) {
		return true
	}
	return slices.ContainsFunc(p.suffixes, func(s string) bool { return strings.HasSuffix(h, s) && len(h) > len(s) })
}

// hostAllowed is the Host rule. An empty host (HTTP/1.0 probes) passes:
// no browser sends one.
func (p *hostPolicy) hostAllowed(host string) bool {
	h := hostOnly(host)
	return h == "" || isLoopbackName(h) || net.ParseIP(h) != nil || p.named(h)
}

// originAllowed is the Origin rule for a request to host.
func (p *hostPolicy) originAllowed(origin, host string, c *corsPolicy) bool {
	if c != nil && (slices.Contains(c.o.AllowOrigins, origin) || slices.Contains(c.o.AllowOrigins, "*")) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // "null" (sandboxed frames, file:), or not an origin at all
	}
	h := hostOnly(u.Host)
	return isLoopbackName(h) || h == hostOnly(host) || p.named(h)
}

// probePaths answer whatever the Host: load balancers and orchestrators
// probe them by address or by a name of their own.
var probePaths = []string{"/healthz", "/readyz"}

// guard applies the Host and Origin rules, and marks every answer nosniff
// (a browser must never guess an answer's type: a JSON error echoing input
// must not become a page).
func guard(hosts *hostPolicy, cors func() *corsPolicy) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Content-Type-Options", "nosniff")
			if slices.Contains(probePaths, r.URL.Path) {
				next.ServeHTTP(w, r)
				return
			}
			if !hosts.hostAllowed(r.Host) {
				refuse(w, r, http.StatusMisdirectedRequest, "host_not_allowed", fmt.Sprintf(
					"this server does not answer for host %q: add it to server.allowed_hosts (WUNDER_ALLOWED_HOSTS) or set server.public_url", hostOnly(r.Host)))
				return
			}
			if o := r.Header.Get("Origin"); o != "" && !hosts.originAllowed(o, r.Host, cors()) {
				refuse(w, r, http.StatusForbidden, "origin_not_allowed", fmt.Sprintf(
					"requests from origin %q are refused: add it to cors.allow_origins, or its host to server.allowed_hosts", o))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// refuse answers a guard refusal: problem JSON, or the RPC protocol's
// PERMISSION_DENIED for Connect, gRPC and gRPC-Web requests.
func refuse(w http.ResponseWriter, r *http.Request, status int, code, detail string) {
	if isRPC(r) {
		detail = localize(r, i18n.FromContext(r.Context()), code, detail)
		if werr := connect.NewErrorWriter().Write(w, r, connect.NewError(connect.CodePermissionDenied, errors.New(detail))); werr != nil {
			logger(r.Context()).DebugContext(r.Context(), "rpc error not written", "err", werr)
		}
		return
	}
	writeProblem(w, r, status, code, detail)
}
