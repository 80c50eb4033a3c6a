package mcpserver

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The standard headers of revision 2026-07-28 (SEP-2243): a request says
// its method in Mcp-Method and, for tools/call, prompts/get and
// resources/read, its tool, prompt or URI in Mcp-Name, so that routing and
// authorization need not parse the body. They must match the body; the
// pass-through checks them as go-sdk's handler does on /wunder/mcp, from
// the envelope it reads anyway, and a mismatch is never forwarded.

// checkStandardHeaders answers a request of revision 2026-07-28 or later
// whose Mcp-Method or Mcp-Name is missing or differs from the body with
// HTTP 400 and JSON-RPC -32020 (go-sdk's answer), and reports whether it
// did. Earlier revisions have no such headers; responses and notifications
// are not checked (go-sdk checks requests only). Mcp-Param-* headers,
// which need the tool's input schema, are left to the upstream.
func checkStandardHeaders(w http.ResponseWriter, r *http.Request, m *message) (refused bool) {
	if v := r.Header.Get(headerProtocol); v < protocolNoServerRequests || m.kind() != kindRequest {
		return false
	}
	problem := ""
	switch method := r.Header.Get(headerMethod); {
	case method == "":
		problem = "missing required Mcp-Method header"
	case method != m.Method:
		problem = fmt.Sprintf("header mismatch: Mcp-Method header value '%s' does not match body value '%s'", method, m.Method)
	default:
		key := map[string]string{"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
			"tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}[m.Method] // tasks: SEP-2663
		if key == "" {
			return false
		}
		var params map[string]json.RawMessage
		var body string
		_ = json.Unmarshal(m.Params, &params)
		_ = json.Unmarshal(params[key], &body)
		switch name := r.Header.Get(headerName); {
		case name == "" && key == "taskId":
			return false // go-sdk v1.8.0 clients, which know no tasks, send none: a mismatch is refused
		case name == "":
			problem = fmt.Sprintf("missing required Mcp-Name header for method %q", m.Method)
		case name != body:
			problem = fmt.Sprintf("header mismatch: Mcp-Name header value '%s' does not match body value '%s'", name, body)
		default:
			return false
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	writeError(w, m.ID, &jsonrpc.Error{Code: mcp.CodeHeaderMismatch, Message: problem})
	return true
}
