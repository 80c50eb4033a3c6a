package gateway

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/wunder/wunder/internal/a2awire"
)

// writeA2AError writes a refusal of the gateway's own (401, 429) to a
// request of A2A's JSON-RPC or HTTP+JSON binding in that binding's shape,
// through the one A2A error table (internal/a2awire): a JSON-RPC error
// object (id null) or a google.rpc.Status, with the HTTP status of e's
// row. So an A2A client reads the same kind as from the handler. It
// reports false, writing nothing, for a request of no A2A binding (gRPC's
// is answered in the RPC protocols' shape before this).
func writeA2AError(w http.ResponseWriter, r *http.Request, e *a2awire.Error) bool {
	st := e.Status()
	var body any
	switch p := r.URL.Path; {
	case a2aREST(p):
		body = st
	case p == "/a2a" || strings.HasPrefix(p, "/a2a/"):
		body = a2awire.Response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: e}
	default:
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(st.Error.Code)
	_ = json.NewEncoder(w).Encode(body)
	return true
}

// a2aVersion is the A2A version of r's error shapes: 1.0 on the HTTP+JSON
// binding, which serves 1.0 alone (no header means 1.0 there); else its
// A2A-Version header's (none means 0.3 on JSON-RPC), 1.0 when the header
// names none wunder knows.
func a2aVersion(r *http.Request) a2awire.Version {
	if a2aREST(r.URL.Path) {
		return a2awire.V10
	}
	if v, ok := a2awire.ParseVersion(r.Header.Get("A2A-Version")); ok {
		return v
	}
	return a2awire.V10
}

// a2aREST reports whether p is answered in the HTTP+JSON binding's shape:
// the binding's routes (/a2a/v1/...), a published peer's
// (/a2a/{peer}/v1/...) and a published peer's card.
func a2aREST(p string) bool {
	sub, ok := strings.CutPrefix(p, "/a2a/")
	if !ok {
		return false
	}
	peer, rest, _ := strings.Cut(sub, "/")
	return strings.HasPrefix(sub, "v1/") || (peer != "" && (strings.HasPrefix(rest, "v1/") || rest == ".well-known/agent-card.json"))
}
