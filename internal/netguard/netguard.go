// Package netguard is wunder's one SSRF guard, for outbound HTTP to
// addresses that callers choose: A2A push webhooks and the files of A2A
// messages given by URL (package a2a), and users' own MCP servers
// (adapters/usertools, wired in cmd/wunder).
//
// A target passes when its URL is absolute http(s) and none of the
// addresses its host names is private, loopback, link-local, unspecified,
// multicast or carrier-grade NAT ([Blocked]). The check runs twice: once
// when the URL is accepted ([CheckURL], which resolves the host), and again
// for every connection at dial time ([Dialer]), on the address actually
// dialled, so a name that resolves to a public address when checked and to
// a private one when used (DNS rebinding) gains nothing. An opt-out
// (allowPrivate) turns both off, for tests and for deployments whose
// targets live on a private network.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Errors of [CheckURL] and of dials refused by [Dialer]; test them with
// errors.Is.
var (
	// ErrNotHTTP: the URL is not an absolute http:// or https:// URL.
	ErrNotHTTP = errors.New("not an absolute http(s) URL")
	// ErrBlocked: the host is, or resolves to, an address the guard
	// refuses.
	ErrBlocked = errors.New("targets a private, loopback or link-local address")
	// ErrUnresolved: the host name does not resolve.
	ErrUnresolved = errors.New("host does not resolve")
)

// ResolveTimeout bounds the DNS look-up of [CheckURL].
const ResolveTimeout = 5 * time.Second

var cgnat = &net.IPNet{IP: net.IPv4(100, 64, 0, 0), Mask: net.CIDRMask(10, 32)}

// Blocked reports whether ip is an address the guard refuses: loopback,
// private (RFC 1918, fc00::/7), link-local, unspecified, multicast or
// carrier-grade NAT (100.64.0.0/10).
func Blocked(ip net.IP) bool {
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() || cgnat.Contains(ip)
}

// CheckURL checks raw when it is accepted: an absolute http(s) URL and,
// unless allowPrivate, a host that is not "localhost" and whose every
// address passes [Blocked]. A host name is resolved, bounded by ctx and
// [ResolveTimeout]. Errors wrap [ErrNotHTTP], [ErrBlocked] or
// [ErrUnresolved].
func CheckURL(ctx context.Context, raw string, allowPrivate bool) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ErrNotHTTP
	}
	if allowPrivate {
		return nil
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); ip != nil {
		if Blocked(ip) {
			return fmt.Errorf("%w (%s)", ErrBlocked, host)
		}
		return nil
	}
	if lh := strings.ToLower(host); lh == "localhost" || strings.HasSuffix(lh, ".localhost") {
		return fmt.Errorf("%w (%s)", ErrBlocked, host)
	}
	rctx, cancel := context.WithTimeout(ctx, ResolveTimeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupIPAddr(rctx, host)
	if err != nil || len(addrs) == 0 {
		return fmt.Errorf("%w (%s)", ErrUnresolved, host)
	}
	for _, a := range addrs {
		if Blocked(a.IP) {
			return fmt.Errorf("%w (%s is %s)", ErrBlocked, host, a.IP)
		}
	}
	return nil
}

// Dialer returns a dialer with the given connect timeout that, unless
// allowPrivate, refuses to connect to a blocked address: the check runs on
// the resolved address of each connection, after DNS. A refused dial's
// error wraps [ErrBlocked].
func Dialer(timeout time.Duration, allowPrivate bool) *net.Dialer {
	d := &net.Dialer{Timeout: timeout}
	if !allowPrivate {
		d.Control = control
	}
	return d
}

func control(_, address string, _ syscall.RawConn) error {
	host, _, _ := net.SplitHostPort(address)
	if ip := net.ParseIP(host); ip == nil || Blocked(ip) {
		return fmt.Errorf("%w (%s)", ErrBlocked, host)
	}
	return nil
}

// Transport returns an HTTP transport that dials through [Dialer] and uses
// no proxy (a proxy would dial on the guard's behalf, unchecked).
func Transport(timeout time.Duration, allowPrivate bool) *http.Transport {
	return &http.Transport{
		DialContext: Dialer(timeout, allowPrivate).DialContext, Proxy: nil,
		MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second,
		TLSHandshakeTimeout: timeout, ForceAttemptHTTP2: true,
	}
}
