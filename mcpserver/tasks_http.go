package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The HTTP side of tasks (tasks.go): what go-sdk's handler would drop or
// not check, done on the request before it.

// taskHeaders is the HTTP side of tasks in front of the SDK's handler: a
// 2025-11-25 session's tools/call with params.task gets it moved into
// _meta (metaTaskParam), which the SDK keeps; a 2026-07-28 tasks/get,
// tasks/update or tasks/cancel whose Mcp-Name is not its taskId is
// refused with HTTP 400 and -32020, as go-sdk refuses a tools/call's
// (SEP-2663's routing header). Other requests pass unread, and a body it
// reads goes on whole (over the size limit: unchanged, the SDK answers).
func (h *Handler) taskHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rev := r.Header.Get(headerProtocol)
		switch {
		case r.Method != http.MethodPost || r.Body == nil:
		case rev >= protocolNoServerRequests:
			switch r.Header.Get(headerMethod) {
			case "tasks/get", "tasks/update", "tasks/cancel":
				body, m, _ := h.peek(r)
				if m != nil && checkStandardHeaders(w, r, m) {
					return
				}
				r.Body = body
			}
		case rev == revisionTasks && r.Header.Get(headerSession) != "":
			body, m, head := h.peek(r)
			if m != nil && m.Method == "tools/call" && m.kind() == kindRequest {
				if b, ok := moveTaskParam(m.Params, head); ok {
					body = io.NopCloser(bytes.NewReader(b))
					r.ContentLength = int64(len(b))
					r.Header.Del("Content-Length")
				}
			}
			r.Body = body
		}
		next.ServeHTTP(w, r)
	})
}

// peek reads a request's body (up to the limit) and its message, nil when
// it is none (a batch, not JSON, too large); the body returned reads it
// all again.
func (h *Handler) peek(r *http.Request) (io.ReadCloser, *message, []byte) {
	limit := h.opts.MaxBodyBytes
	if limit <= 0 {
		limit = mcp.DefaultMaxRequestBodyBytes
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, limit))
	body := readCloser{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	if err != nil || int64(len(head)) >= limit || !bytes.Contains(head, []byte(`"task`)) {
		return body, nil, nil
	}
	m, err := readMessage(head)
	if err != nil {
		return body, nil, nil
	}
	return body, m, head
}

// moveTaskParam moves a tools/call's params.task into params._meta
// (metaTaskParam) and returns the message, body, anew; false when it has
// none.
func moveTaskParam(raw json.RawMessage, body []byte) ([]byte, bool) {
	var params, meta, msg map[string]json.RawMessage
	if json.Unmarshal(raw, &params) != nil || params["task"] == nil || json.Unmarshal(body, &msg) != nil {
		return nil, false
	}
	if m := params["_meta"]; m != nil && json.Unmarshal(m, &meta) != nil {
		return nil, false
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[metaTaskParam] = params["task"]
	delete(params, "task")
	params["_meta"], _ = json.Marshal(meta)
	msg["params"], _ = json.Marshal(params)
	b, err := json.Marshal(msg)
	return b, err == nil
}
