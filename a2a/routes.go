package a2a

import (
	"net/http"
	"strings"

	w "github.com/wunder/wunder/internal/a2awire"
)

// The A2A namespace. The handler owns every path under Options.Path:
//
//	POST {Path} and {Path}/           JSON-RPC (both versions)
//	{RESTPath}/...                     the HTTP+JSON binding (rest.go)
//	anything else under {Path}/        404, a google.rpc.Status NOT_FOUND
//
// The gRPC binding lives at GRPCServicePath, outside the namespace. A path
// segment a binding uses directly under {Path}/ (the REST binding's "v1",
// and every v<digits> a later version may take) is reserved: a peer
// published at {Path}/{peer} may not be named so (internal/config refuses
// such a2a.services names), so no peer can shadow a binding.

// DefaultPath is where the JSON-RPC binding is served.
const DefaultPath = "/a2a"

// jsonRPCPath reports whether JSON-RPC answers at p: the endpoint itself
// (with or without its trailing slash), or any path outside the namespace
// (a handler mounted elsewhere, as tests do, serves JSON-RPC where it is
// mounted). Another path under {Path}/ is nobody's.
func (h *Handler) jsonRPCPath(p string) bool {
	sub, under := strings.CutPrefix(p, h.opts.Path+"/")
	return !under || sub == ""
}

// requestVersion is the A2A version a request asks for: its A2A-Version
// header, else its A2A-Version query parameter (specification section
// 3.6.1: "Clients MAY provide the A2A-Version as a request parameter
// instead of a header"); "" when it names none. A value longer than any
// version is cut at maxVersionLen (it is refused all the same, and
// errors echo it).
func requestVersion(r *http.Request) string {
	v := r.Header.Get(w.VersionHeader)
	if v == "" {
		v = r.URL.Query().Get(w.VersionHeader)
	}
	if len(v) > maxVersionLen {
		v = v[:maxVersionLen] + "..."
	}
	return v
}

const maxVersionLen = 32
