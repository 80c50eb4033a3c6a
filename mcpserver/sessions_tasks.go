package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// servedTask serves a session's tasks/* request (tasks.go) in front of its
// transport, and reports whether it did. The session front connects its
// transports itself (Server.Connect), and go-sdk tells a transport of its
// server's custom methods only in its own handler: the transport would
// refuse tasks/* with a 400 before any middleware saw it. The answer is
// the one JSON-RPC response, as JSON; a tasks/result that asks the client
// for approvals meanwhile asks on the session's standalone stream.
func (f *sessionFront) servedTask(w http.ResponseWriter, r *http.Request, s *localSession) bool {
	body, err := io.ReadAll(r.Body)
	r.Body = readCloser{io.MultiReader(bytes.NewReader(body), errReader{err}), r.Body}
	if err != nil || !bytes.Contains(body, []byte(`"tasks/`)) {
		return false
	}
	msg, err := jsonrpc.DecodeMessage(body)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok || !req.IsCall() || !slices.Contains(taskMethods, req.Method) {
		return false
	}
	resp := &jsonrpc.Response{ID: req.ID}
	p := &taskParams{}
	if len(req.Params) > 0 && json.Unmarshal(req.Params, p) != nil {
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params of " + req.Method}
	} else {
		sr := &mcp.ServerRequest[*taskParams]{Session: s.ss, Params: p,
			Extra: &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(r.Context()), Header: r.Header}}
		res, err := f.h.serveTask(r.Context(), req.Method, sr)
		switch {
		case err != nil:
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) {
				rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
			}
			resp.Error = rpcErr
		default:
			if resp.Result, err = json.Marshal(res); err != nil {
				resp.Result, resp.Error = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
			}
		}
	}
	data, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
	return true
}
