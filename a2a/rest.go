package a2a

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	w "github.com/wunder/wunder/internal/a2awire"
)

// The HTTP+JSON binding of A2A 1.0 (spec section 11): REST routes under
// Options.RESTPath (default /a2a/v1), served by the same methods as
// JSON-RPC. Each route becomes the 1.0 method and params it stands for,
// goes through the one dispatcher, and its result is written bare (no
// JSON-RPC envelope), its errors as google.rpc.Status with the HTTP status
// of AIP-193, streams as SSE whose data are bare StreamResponses.
//
//	POST   message:send                           SendMessage
//	POST   message:stream                         SendStreamingMessage
//	GET    tasks                                  ListTasks (query params)
//	GET    tasks/{id}                             GetTask (?historyLength)
//	POST   tasks/{id}:cancel                      CancelTask
//	POST   tasks/{id}:subscribe (or GET)          SubscribeToTask
//	POST   tasks/{id}/pushNotificationConfigs     CreateTaskPushNotificationConfig
//	GET    tasks/{id}/pushNotificationConfigs     ListTaskPushNotificationConfigs
//	GET    tasks/{id}/pushNotificationConfigs/{c} GetTaskPushNotificationConfig
//	DELETE tasks/{id}/pushNotificationConfigs/{c} DeleteTaskPushNotificationConfig
//	GET    extendedAgentCard                      GetExtendedAgentCard

// DefaultRESTPath is where the HTTP+JSON binding is served.
const DefaultRESTPath = "/a2a/v1"

// onlyV10 refuses a request of the HTTP+JSON and gRPC bindings whose
// A2A-Version is not 1.0, the one version they serve (absent: 1.0).
func onlyV10(r *http.Request) error {
	hv := requestVersion(r)
	if v, ok := w.ParseVersion(hv); hv != "" && (!ok || v != w.V10) {
		return errKind(w.ErrVersionNotSupported, "A2A-Version %s is not supported here; use 1.0", hv)
	}
	return nil
}

// matchREST finds the route of an HTTP+JSON request's path sub (after
// /v1/), also under a tenant's prefix (/a2a/v1/{tenant}/..., tenant.go),
// and returns its method, params and the tenant the path named ("" =
// none). No route is a 404, and a route without r's method a 405 naming
// the allowed one: both written to rw, found false.
func matchREST(rw http.ResponseWriter, r *http.Request, sub string, body json.RawMessage) (method string, params map[string]any, tenant string, found bool) {
	method, params, allow, ok := restRoute(r, sub, body)
	if t, rest, isTenant := splitTenant(sub); method == "" && isTenant {
		if method, params, allow, ok = restRoute(r, rest, body); method != "" {
			tenant = t
		}
	}
	switch {
	case method == "":
		writeRESTStatus(rw, http.StatusNotFound, "NOT_FOUND", "no A2A route "+r.Method+" "+r.URL.Path, nil)
		return "", nil, "", false
	case !ok:
		rw.Header().Set("Allow", allow)
		writeRESTStatus(rw, http.StatusMethodNotAllowed, "UNIMPLEMENTED", r.Method+" is not allowed here; use "+allow, nil)
		return "", nil, "", false
	}
	return method, params, tenant, true
}

// restRoute maps a request under the REST path to its 1.0 method and
// params; ok is false when no route matches (404), allow lists the
// methods of a route the request's method is not one of (405).
func restRoute(r *http.Request, sub string, body json.RawMessage) (method string, params map[string]any, allow string, ok bool) {
	params = map[string]any{}
	if len(body) > 0 && r.Method != http.MethodGet && r.Method != http.MethodDelete {
		if json.Unmarshal(body, &params) != nil || params == nil {
			params = nil // not an object: the method's decoder says so
		}
	}
	set := func(k string, v any) {
		if params != nil {
			params[k] = v
		}
	}
	is := func(methods ...string) bool {
		for _, m := range methods {
			if r.Method == m {
				return true
			}
		}
		allow = strings.Join(methods, ", ")
		return false
	}
	ms := w.Methods10
	switch {
	case sub == "message:send":
		return ms.Send, params, allow, is(http.MethodPost)
	case sub == "message:stream":
		return ms.Stream, params, allow, is(http.MethodPost)
	case sub == "extendedAgentCard":
		return ms.ExtendedCard, params, allow, is(http.MethodGet)
	case sub == "tasks":
		listQuery(r, params)
		return ms.List, params, allow, is(http.MethodGet)
	}
	rest, found := strings.CutPrefix(sub, "tasks/")
	if !found || rest == "" {
		return "", nil, "", false
	}
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) == 1:
		id, action, _ := strings.Cut(parts[0], ":")
		set("id", id)
		switch action {
		case "":
			if h := r.URL.Query().Get("historyLength"); h != "" {
				set("historyLength", number(h))
			}
			return ms.Get, params, allow, is(http.MethodGet)
		case "cancel":
			return ms.Cancel, params, allow, is(http.MethodPost)
		case "subscribe":
			return ms.Subscribe, params, allow, is(http.MethodPost, http.MethodGet)
		}
	case len(parts) == 2 && parts[1] == "pushNotificationConfigs":
		set("taskId", parts[0])
		if r.Method == http.MethodPost {
			return ms.PushSet, params, allow, true
		}
		return ms.PushList, params, allow, is(http.MethodGet, http.MethodPost)
	case len(parts) == 3 && parts[1] == "pushNotificationConfigs":
		set("taskId", parts[0])
		set("id", parts[2])
		if r.Method == http.MethodDelete {
			return ms.PushDelete, params, allow, true
		}
		return ms.PushGet, params, allow, is(http.MethodGet, http.MethodDelete)
	}
	return "", nil, "", false
}

// listQuery puts ListTasks' query parameters into params, typed.
func listQuery(r *http.Request, params map[string]any) {
	for k, vs := range r.URL.Query() {
		v := vs[0]
		switch k {
		case "pageSize", "page_size", "historyLength", "history_length":
			params[k] = number(v)
		case "includeArtifacts", "include_artifacts":
			params[k] = v == "true" || v == "1"
		default:
			params[k] = v
		}
	}
}

// number keeps a numeric query value a JSON number, anything else a
// string (which the decoder then refuses with a clear message).
func number(v string) any {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n
	}
	return v
}

// serveREST serves one request of the HTTP+JSON binding.
func (h *Handler) serveREST(rw http.ResponseWriter, r *http.Request, sub string) {
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, h.opts.MaxBodyBytes))
	if err != nil {
		writeRESTError(rw, newError(r.Context(), w.V10, w.ErrInvalidRequest, "request body too large or unreadable"))
		return
	}
	// A body must say it is JSON; the bodiless POSTs (cancel, subscribe)
	// need no type, and SDK clients send them without one.
	if r.Method == http.MethodPost && len(body) > 0 && !jsonBody(r) {
		writeRESTError(rw, newError(r.Context(), w.V10, w.ErrContentTypeNotSupported, contentTypeWanted(r)))
		return
	}
	if err := onlyV10(r); err != nil {
		writeRESTError(rw, h.toError(r.Context(), w.V10, err))
		return
	}
	method, params, tenant, found := matchREST(rw, r, sub, body)
	if !found {
		return
	}
	var raw json.RawMessage
	if params != nil {
		if tenant != "" {
			if t, set := params["tenant"]; set && t != tenant {
				writeRESTError(rw, h.toError(r.Context(), w.V10, errParams("the body's tenant is not the path's, %q", clip(tenant))))
				return
			}
			params["tenant"] = tenant
		}
		raw, _ = json.Marshal(params)
	} else {
		raw = body // not an object: the method's decoder refuses it
	}
	c := call{v: w.V10, r: r, rest: true, m: w.Request{JSONRPC: "2.0", ID: json.RawMessage("1"), Method: method, Params: w.ProtoNames(raw)}}
	if err := h.identify(r, &c); err != nil {
		c.fail(rw, h.toError(r.Context(), c.v, err))
		return
	}
	h.dispatch(rw, r, &c)
}

// writeRESTError writes e as the HTTP+JSON binding's error: the
// google.rpc.Status of its row of the error table (HTTP status, code name,
// the ErrorInfo and RetryInfo of its data as details), with Retry-After
// when it carries a retry delay.
func writeRESTError(rw http.ResponseWriter, e *w.Error) {
	if after, ok := w.RetryDelay(e); ok {
		rw.Header().Set("Retry-After", strconv.Itoa(max(1, int((after+time.Second-1)/time.Second))))
	}
	st := e.Status()
	writeRESTStatus(rw, st.Error.Code, st.Error.Status, st.Error.Message, st.Error.Details)
}

func writeRESTStatus(rw http.ResponseWriter, code int, status, msg string, details json.RawMessage) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(code)
	_ = json.NewEncoder(rw).Encode(w.Status{Error: w.StatusError{Code: code, Status: status, Message: msg, Details: details}})
}

func writeRESTResult(rw http.ResponseWriter, result any) {
	if result == nil {
		result = struct{}{}
	}
	raw, err := json.Marshal(result)
	if err != nil {
		writeRESTError(rw, w.NewError(w.V10, w.CodeInternal, "internal error"))
		return
	}
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(http.StatusOK)
	_, _ = rw.Write(append(raw, '\n'))
}
