package a2a

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// Reading a call for a peer: each binding's request read as wunder's own
// are (the same checks, in the same order, with the same errors), then
// admitted (prepare) and handed to exchange with the peer's URL for it.

// serveJSONRPC answers POST {Path}/{peer}: the JSON-RPC binding.
func (p *passThrough) serveJSONRPC(rw http.ResponseWriter, r *http.Request, peer *Peer) {
	ctx := r.Context()
	hv := requestVersion(r)
	v, vok := w.ParseVersion(hv)
	ev := v // the shape of errors found before the method is known
	if !vok {
		ev = w.V10
	}
	if r.Method != http.MethodPost {
		rw.Header().Set("Allow", http.MethodPost)
		writeError(rw, nil, newError(ctx, ev, w.ErrInvalidRequest, "A2A JSON-RPC needs POST"))
		return
	}
	if !jsonBody(r) {
		writeError(rw, nil, newError(ctx, ev, w.ErrContentTypeNotSupported, contentTypeWanted(r)))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, p.h.opts.MaxBodyBytes))
	if err != nil {
		writeError(rw, nil, newError(ctx, ev, w.ErrInvalidRequest, "request body too large or unreadable"))
		return
	}
	var req w.Request
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(rw, nil, newError(ctx, ev, w.ErrParse, "parse error: "+err.Error()))
		return
	}
	id := req.ID
	if !w.ValidID(id) {
		id = nil
	}
	known := w.Methods10.Has(req.Method) || w.Methods03.Has(req.Method)
	switch {
	case req.JSONRPC == "2.0" && req.Method != "" && !known:
		writeError(rw, id, newError(ctx, ev, w.ErrMethodNotFound, "method not found: "+req.Method))
		return
	case req.JSONRPC != "2.0" || !w.ValidID(req.ID) || req.Method == "":
		writeError(rw, id, newError(ctx, ev, w.ErrInvalidRequest, `invalid request: need jsonrpc "2.0", an id and a method`))
		return
	case !vok:
		writeError(rw, id, newError(ctx, w.V10, w.ErrVersionNotSupported, "A2A-Version "+hv+" is not supported; use 1.0 or 0.3"))
		return
	}
	pc := &passCall{peer: peer, start: time.Now(), call: call{v: w.V03, r: r}}
	if w.Methods10.Has(req.Method) {
		pc.v = w.V10
	}
	if hv != "" && pc.v != v {
		writeError(rw, id, newError(ctx, v, w.ErrVersionNotSupported, "method "+req.Method+" is not part of A2A "+string(v)))
		return
	}
	pc.m = w.Request{JSONRPC: "2.0", ID: req.ID, Method: req.Method, Params: w.ProtoNames(req.Params)}
	pc.sent = req.Params
	hops, ok := p.prepare(rw, pc)
	if !ok {
		return
	}
	iface, ok, err := p.iface(ctx, pc, "JSONRPC")
	switch {
	case err != nil:
		p.failed(rw, pc, err)
		return
	case !ok:
		p.failed(rw, pc, errKind(w.ErrVersionNotSupported, "agent %s offers no JSON-RPC interface of A2A %s", peer.Name, pc.v))
		return
	}
	req.Params = withTenant(req.Params, pc.v, iface.Tenant)
	out, _ := json.Marshal(req)
	ms := w.MethodsOf(pc.v)
	p.exchange(rw, pc, http.MethodPost, iface.URL, out, hops, req.Method == ms.Stream || req.Method == ms.Subscribe)
}

// serveREST answers a request under {Path}/{peer}/v1/: the HTTP+JSON
// binding, its routes read as wunder's own are (rest.go).
func (p *passThrough) serveREST(rw http.ResponseWriter, r *http.Request, peer *Peer, sub string) {
	ctx := r.Context()
	pc := &passCall{peer: peer, start: time.Now(), call: call{v: w.V10, r: r, rest: true}}
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, p.h.opts.MaxBodyBytes))
	if err != nil {
		writeRESTError(rw, newError(ctx, w.V10, w.ErrInvalidRequest, "request body too large or unreadable"))
		return
	}
	if r.Method == http.MethodPost && len(body) > 0 && !jsonBody(r) {
		writeRESTError(rw, newError(ctx, w.V10, w.ErrContentTypeNotSupported, contentTypeWanted(r)))
		return
	}
	if err := onlyV10(r); err != nil {
		p.refuse(rw, pc, err)
		return
	}
	// The route as the peer gets it: escaped as it came, without
	// wunder's tenant.
	route := strings.TrimPrefix(r.URL.EscapedPath(), p.h.opts.Path+"/"+peer.Name+"/v1/")
	method, params, tenant, found := matchREST(rw, r, sub, body)
	if !found {
		return
	}
	if tenant != "" {
		_, route, _ = strings.Cut(route, "/") // the peer's route has no tenant of wunder's
	}
	raw := json.RawMessage(body) // not an object: the method's decoder refuses it
	if params != nil {
		if tenant != "" {
			if t, set := params["tenant"]; set && t != tenant {
				p.refuse(rw, pc, errParams("the body's tenant is not the path's, %q", clip(tenant)))
				return
			}
			params["tenant"] = tenant
		}
		// The path names the task; a body naming another is refused,
		// so that the peer acts on the task checked, whichever it reads.
		if id, ok := params["id"].(string); ok && !bodyNames(body, id) {
			p.refuse(rw, pc, errParams("the body's id is not the path's, %q", clip(id)))
			return
		}
		raw, _ = json.Marshal(params)
	}
	pc.m = w.Request{JSONRPC: "2.0", ID: json.RawMessage("1"), Method: method, Params: w.ProtoNames(raw)}
	pc.sent = body
	hops, ok := p.prepare(rw, pc)
	if !ok {
		return
	}
	iface, ok, err := p.iface(ctx, pc, "HTTP+JSON")
	switch {
	case err != nil:
		p.failed(rw, pc, err)
		return
	case !ok:
		p.audit(pc, orchestrator.OutcomeError, "no HTTP+JSON interface")
		writeRESTStatus(rw, http.StatusNotFound, "NOT_FOUND", "agent "+peer.Name+" offers no HTTP+JSON interface; use its JSON-RPC one at "+p.h.opts.Path+"/"+peer.Name, nil)
		return
	}
	target := strings.TrimSuffix(iface.URL, "/")
	if iface.Tenant != "" {
		target += "/" + url.PathEscape(iface.Tenant)
	}
	target += "/" + route
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	if len(body) > 0 && r.Method != http.MethodGet && r.Method != http.MethodDelete {
		body = withoutTenant(body)
	} else {
		body = nil
	}
	ms := w.Methods10
	p.exchange(rw, pc, r.Method, target, body, hops, method == ms.Stream || method == ms.Subscribe)
}

// prepare admits a call (hops, identity, policy), applies the methods'
// rules and checks the owners of what it names. It answers a refusal
// itself and reports false; else it returns the hops so far.
func (p *passThrough) prepare(rw http.ResponseWriter, pc *passCall) (int, bool) {
	hops, err := p.hops(pc.r)
	if err != nil {
		p.refuse(rw, pc, err)
		return 0, false
	}
	if err := p.admit(pc.r, pc); err != nil {
		p.refuse(rw, pc, err)
		return 0, false
	}
	n, err := rules(pc)
	if err != nil {
		p.failed(rw, pc, err)
		return 0, false
	}
	if err := p.checkOwners(pc.r.Context(), pc, n); err != nil {
		p.audit(pc, orchestrator.OutcomeDenied, "names a task or context that is not the caller's")
		p.refuse(rw, pc, err)
		return 0, false
	}
	return hops, true
}

// failed answers and audits a call that failed.
func (p *passThrough) failed(rw http.ResponseWriter, pc *passCall, err error) {
	p.audit(pc, orchestrator.OutcomeError, err.Error())
	p.refuse(rw, pc, err)
}

// bodyNames reports whether an HTTP+JSON body names the task id, or no
// task: its id as wunder reads it (any case) is absent, null or id.
func bodyNames(body []byte, id string) bool {
	var b struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &b) != nil || len(b.ID) == 0 || string(b.ID) == "null" {
		return true
	}
	var s string
	return json.Unmarshal(b.ID, &s) == nil && s == id
}

// dropTenant deletes from o every key wunder reads as the tenant (any
// case, the proto spelling): a peer must not read one the caller gave.
func dropTenant(o map[string]json.RawMessage) (had bool) {
	for k := range o {
		if strings.EqualFold(k, "tenant") {
			delete(o, k)
			had = true
		}
	}
	return had
}

// withTenant sets a 1.0 call's tenant to the peer interface's (none: no
// tenant): wunder's tenant named a wunder user and stays here.
func withTenant(params json.RawMessage, v w.Version, tenant string) json.RawMessage {
	if v != w.V10 {
		return params
	}
	var o map[string]json.RawMessage
	if len(params) == 0 || string(params) == "null" {
		o = map[string]json.RawMessage{}
	} else if json.Unmarshal(params, &o) != nil || o == nil {
		return params
	}
	had := dropTenant(o)
	if !had && tenant == "" {
		return params
	}
	if tenant != "" {
		o["tenant"], _ = json.Marshal(tenant)
	}
	b, err := json.Marshal(o)
	if err != nil {
		return params
	}
	return b
}

// withoutTenant drops the tenant of an HTTP+JSON body (the peer's tenant
// is in the path); a body without one goes as it came.
func withoutTenant(body []byte) []byte {
	var o map[string]json.RawMessage
	if json.Unmarshal(body, &o) != nil || o == nil {
		return body
	}
	if !dropTenant(o) {
		return body
	}
	b, err := json.Marshal(o)
	if err != nil {
		return body
	}
	return b
}
