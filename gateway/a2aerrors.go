package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/wunder/wunder/internal/a2awire"
)

// writeA2AError writes a refusal of the gateway's own (401, 429) to a
// request of A2A's JSON-RPC or HTTP+JSON binding in that binding's shape,
// through the one A2A error table (internal/a2awire): a JSON-RPC error
// object (with the request's id when it can be read: rpcID) or a
// google.rpc.Status, with the HTTP status of e's
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
		body = a2awire.Response{JSONRPC: "2.0", ID: rpcID(r), Error: e}
	default:
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(st.Error.Code)
	_ = json.NewEncoder(w).Encode(body)
	return true
}

// maxIDPeek bounds what rpcID reads of a refused request's body.
const maxIDPeek = 64 << 10

// rpcID is the id of r's JSON-RPC request, read from at most the first
// maxIDPeek bytes of its body (which the refusal leaves unread), so that
// a client matching answers to requests by id can match the gateway's
// refusal: null when there is none to read (a batch, a body past the
// bound, an id that is no string or number).
func rpcID(r *http.Request) json.RawMessage {
	null := json.RawMessage("null")
	if r.Body == nil {
		return null
	}
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.NewDecoder(io.LimitReader(r.Body, maxIDPeek)).Decode(&m) != nil || len(m.ID) == 0 {
		return null
	}
	if c := m.ID[0]; c == '"' || c == '-' || (c >= '0' && c <= '9') {
		return m.ID
	}
	return null
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
