package a2a

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"connectrpc.com/connect"

	w "github.com/wunder/wunder/internal/a2awire"
)

// The gRPC binding of the pass-through. A gRPC request's path is the
// service's (/lf.a2a.v1.A2AService/{Method}): it cannot name a peer. The
// card of a published peer therefore lists wunder's gRPC endpoint with
// the tenant "peers/{peer}" (w.PeerTenantPrefix), which A2A 1.0 clients
// send in every request's tenant field, and a gRPC request whose tenant
// has that prefix is the peer's. It is served as a JSON-RPC 1.0 call to
// the peer through /a2a/{peer} would be: the method of the RPC's name, its
// params the request message in ProtoJSON without the tenant (a peer
// tenant names no wunder user: the caller is named by its credentials or
// X-Wunder-User metadata), through the same admission, owner checks,
// forwarding (to the peer's JSON-RPC 1.0 interface), claims and audit; the
// peer's result fills the response message, its stream items become
// StreamResponses, its errors and wunder's Connect errors with the gRPC
// code and ErrorInfo of the error table (connectError). A tenant naming
// no published peer is NOT_FOUND, as a path naming none is.

// grpcPeerCall is the call of a gRPC request for the published peer name,
// and serve, which forwards it.
func (h *Handler) grpcPeerCall(r *http.Request, m w.Request, name string) (*call, func(http.Header), error) {
	var peer *Peer
	found := false
	if h.pass != nil {
		peer, found = h.pass.opts.Peers.Peer(name)
	}
	if !found {
		return nil, nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("no A2A agent %q is published here (tenant %s{name})", clip(name), w.PeerTenantPrefix))
	}
	if int64(len(m.Params)) > h.opts.MaxBodyBytes {
		return nil, nil, connectError(newError(r.Context(), w.V10, w.ErrInvalidRequest, "request body too large or unreadable"))
	}
	m.Params = withTenant(m.Params, w.V10, "")
	pc := &passCall{peer: peer, start: time.Now(), call: call{v: w.V10, r: r, m: m}, sent: m.Params}
	return &pc.call, func(hdr http.Header) { h.pass.serveGRPC(pc, hdr) }, nil
}

// serveGRPC forwards a gRPC call to the peer's JSON-RPC 1.0 interface;
// the answer goes to the call (call.grpc, call.sink), its headers to hdr.
func (p *passThrough) serveGRPC(pc *passCall, hdr http.Header) {
	rw := headerOnly(hdr)
	hops, ok := p.prepare(rw, pc)
	if !ok {
		return
	}
	iface, ok, err := p.iface(pc.r.Context(), pc, "JSONRPC")
	switch {
	case err != nil:
		p.failed(rw, pc, err)
		return
	case !ok:
		p.failed(rw, pc, errKind(w.ErrVersionNotSupported, "agent %s offers no JSON-RPC interface of A2A 1.0, through which wunder forwards gRPC", pc.peer.Name))
		return
	}
	out, _ := json.Marshal(w.Request{JSONRPC: "2.0", ID: pc.m.ID, Method: pc.m.Method, Params: withTenant(pc.m.Params, w.V10, iface.Tenant)})
	ms := w.Methods10
	p.exchange(rw, pc, http.MethodPost, iface.URL, out, hops, pc.m.Method == ms.Stream || pc.m.Method == ms.Subscribe)
}

// headerOnly is the http.ResponseWriter of a gRPC call through the
// pass-through: the headers of the peer's answer go into the gRPC
// response's; the answer itself goes to the call (call.grpc, call.sink),
// never to the writer.
type headerOnly http.Header

func (h headerOnly) Header() http.Header { return http.Header(h) }

func (headerOnly) Write([]byte) (int, error) {
	return 0, errors.New("a2a: a gRPC call's answer is not written to a response")
}

func (headerOnly) WriteHeader(int) {}

// deliver hands a unary answer of the peer's to a gRPC call: the
// response message, or, for a stream the peer answered in one piece, its
// one item. An answer that does not fit its message is the peer's.
func (p *passThrough) deliver(pc *passCall, result json.RawMessage) error {
	var err error
	if pc.sink != nil {
		err = pc.sink(result, nil)
	} else {
		err = pc.grpc.fill(result)
	}
	if errors.Is(err, errNoFit) {
		return fmt.Errorf("%w: agent %s answered %s with a result that is no gRPC %s answer: %w", w.ErrInvalidAgentResponse, pc.peer.Name, pc.m.Method, pc.m.Method, err)
	}
	return err
}
