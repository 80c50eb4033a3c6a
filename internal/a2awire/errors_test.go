package a2awire_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// readAs is the row clients read row i as: the first row of its code and
// reason (the table's rule; an alias reads as the row above it).
func readAs(kinds []w.Kind, i int) w.Kind {
	for _, k := range kinds[:i] {
		if k.Code == kinds[i].Code && k.Reason == kinds[i].Reason {
			return k
		}
	}
	return kinds[i]
}

// core is a row's core sentinel.
func core(k w.Kind) error {
	if k.Core != nil {
		return k.Core
	}
	return k.Err
}

// Every row of the table, sent on every binding in both versions, is read
// back by that binding's decoder as the same kind: its sentinel, its core
// sentinel and, where it carries one, its retry delay. An alias is read as
// the row above it of the same code and reason.
func TestEveryKindRoundTripsOnEveryBinding(t *testing.T) {
	kinds := w.Kinds()
	if len(kinds) < 20 {
		t.Fatalf("the table has %d rows", len(kinds))
	}
	const after = 3 * time.Second
	for i, k := range kinds {
		want := readAs(kinds, i)
		decoders := map[string]func() error{
			"jsonrpc/1.0": func() error { return viaJSON(t, k.New(w.V10, "m", after)) },
			"jsonrpc/0.3": func() error { return viaJSON(t, k.New(w.V03, "m", after)) },
			"http+json": func() error {
				st := k.New(w.V10, "m", after).Status()
				if st.Error.Code != k.HTTP || st.Error.Status != k.GRPC.String() {
					t.Errorf("%s: Status %d %s; want the row's %d %s", k.Err, st.Error.Code, st.Error.Status, k.HTTP, k.GRPC)
				}
				b, _ := json.Marshal(st)
				return w.FromHTTP(&http.Response{StatusCode: st.Error.Code, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(b))})
			},
			"grpc": func() error { return w.FromGRPC(int(k.GRPC), "m", k.New(w.V10, "m", after).Data) },
		}
		for name, decode := range decoders {
			t.Run(fmt.Sprintf("%d %s/%s", i, k.Reason, name), func(t *testing.T) {
				err := decode()
				if !errors.Is(err, want.Err) || !errors.Is(err, core(want)) {
					t.Fatalf("%v (sent as %d %s) reads as %v; want %v and %v", k.Err, k.Code, k.Reason, err, want.Err, core(want))
				}
				var e *w.Error
				if !errors.As(err, &e) || e.Kind().Err != want.Err || e.Kind().Reason != want.Reason {
					t.Errorf("Kind() = %+v; want the row of %v %s", e.Kind(), want.Err, want.Reason)
				}
				got, ok := orchestrator.RetryAfter(err)
				if k.Retry && (!ok || got != after) {
					t.Errorf("retry delay %v %v; want %v", got, ok, after)
				}
				if !k.Retry && ok {
					t.Errorf("a retry delay %v on a kind without one", got)
				}
			})
		}
	}
}

// viaJSON sends e as a JSON-RPC response's error and decodes it as a
// client does.
func viaJSON(t *testing.T, e *w.Error) error {
	t.Helper()
	b, err := json.Marshal(w.Response{JSONRPC: "2.0", ID: json.RawMessage("1"), Error: e})
	if err != nil {
		t.Fatal(err)
	}
	var r w.Response
	if err := json.Unmarshal(b, &r); err != nil || r.Error == nil {
		t.Fatalf("%s: %v", b, err)
	}
	return r.Error
}

// The A2A rows are the specification's: A2A 1.0 section 5.4 (code, gRPC,
// HTTP) and the ErrorInfo reasons of sections 9.5-11.6 (the error's name
// in UPPER_SNAKE_CASE without "Error"), and JSON-RPC 2.0's own codes.
func TestTableIsTheSpecification(t *testing.T) {
	spec := map[string]struct {
		code int
		grpc string
		http int
	}{
		"TASK_NOT_FOUND":                     {-32001, "NOT_FOUND", 404},
		"TASK_NOT_CANCELABLE":                {-32002, "FAILED_PRECONDITION", 409},
		"PUSH_NOTIFICATION_NOT_SUPPORTED":    {-32003, "UNIMPLEMENTED", 400},
		"UNSUPPORTED_OPERATION":              {-32004, "UNIMPLEMENTED", 400},
		"CONTENT_TYPE_NOT_SUPPORTED":         {-32005, "INVALID_ARGUMENT", 415},
		"INVALID_AGENT_RESPONSE":             {-32006, "INTERNAL", 502},
		"EXTENDED_AGENT_CARD_NOT_CONFIGURED": {-32007, "FAILED_PRECONDITION", 400},
		"EXTENSION_SUPPORT_REQUIRED":         {-32008, "FAILED_PRECONDITION", 400},
		"VERSION_NOT_SUPPORTED":              {-32009, "UNIMPLEMENTED", 400},
		// JSON-RPC 2.0's codes; gRPC and HTTP as a2a-go maps them.
		"PARSE_ERROR":      {-32700, "INVALID_ARGUMENT", 400},
		"INVALID_REQUEST":  {-32600, "INVALID_ARGUMENT", 400},
		"METHOD_NOT_FOUND": {-32601, "UNIMPLEMENTED", 501},
		"INVALID_PARAMS":   {-32602, "INVALID_ARGUMENT", 400},
		"INTERNAL_ERROR":   {-32603, "INTERNAL", 500},
		// Section 3.3.2's examples of authentication and authorization
		// errors; the codes and reasons are a2a-go's.
		"UNAUTHENTICATED": {-31401, "UNAUTHENTICATED", 401},
		"UNAUTHORIZED":    {-31403, "PERMISSION_DENIED", 403},
	}
	// What A2A names no error of: the server error -32000 with wunder's
	// reasons, and the statuses the other front-ends use for the core's
	// sentinels (DESIGN.md: busy 429, unavailable 503).
	own := map[string]struct {
		code int
		grpc string
		http int
	}{
		"BUSY":         {-32000, "RESOURCE_EXHAUSTED", 429},
		"RATE_LIMITED": {-32000, "RESOURCE_EXHAUSTED", 429},
		"UNAVAILABLE":  {-32000, "UNAVAILABLE", 503},
		"CANCELED":     {-32000, "CANCELLED", 499},
	}
	// Where wunder departs from section 5.4, on purpose: these rows' gRPC
	// code is a2a-go v2.4.0's FAILED_PRECONDITION, not the table's
	// UNIMPLEMENTED, because a2a-go's gRPC client reads an ErrorInfo
	// reason only with its own code (grpcutil.FromGRPCError) and reads
	// anything else as an internal error; the interop tests (which raise
	// both through a2a-go's gRPC client) decide. VersionNotSupported,
	// which no a2a-go client raises (each sends its own version), follows
	// the table.
	departs := map[string]string{
		"PUSH_NOTIFICATION_NOT_SUPPORTED": "FAILED_PRECONDITION",
		"UNSUPPORTED_OPERATION":           "FAILED_PRECONDITION",
	}
	for reason, code := range departs {
		s := spec[reason]
		s.grpc = code
		spec[reason] = s
	}
	seen := map[string]bool{}
	for _, k := range w.Kinds() {
		table := spec
		switch k.Domain {
		case w.DomainWunder:
			table = own
		case w.DomainA2A:
		default:
			t.Errorf("%s: domain %q", k.Reason, k.Domain)
		}
		s, ok := table[k.Reason]
		if !ok {
			t.Errorf("%s: not a reason of the specification (or wunder's)", k.Reason)
			continue
		}
		seen[k.Reason] = true
		if k.Code != s.code || k.GRPC.String() != s.grpc || k.HTTP != s.http {
			t.Errorf("%s: %d %s %d; want %d %s %d", k.Reason, k.Code, k.GRPC, k.HTTP, s.code, s.grpc, s.http)
		}
	}
	for reason := range spec {
		if _, isOwn := own[reason]; !seen[reason] && !isOwn {
			t.Errorf("the table has no row of %s", reason)
		}
	}
}

// The server maps each sentinel to the first row that has it, whatever
// wraps it; an error no row names is the internal error.
func TestKindOf(t *testing.T) {
	kinds := w.Kinds()
	for i, k := range kinds {
		got, ok := w.KindOf(fmt.Errorf("outer: %w", orchestrator.WithRetryAfter(fmt.Errorf("%w: detail", k.Err), time.Second)))
		want := k
		for _, prev := range kinds[:i] {
			if prev.Err == k.Err {
				want = prev
				break
			}
		}
		if !ok || got.Err != want.Err || got.Reason != want.Reason {
			t.Errorf("KindOf(%v) = %v %s, %v; want %s", k.Err, got.Err, got.Reason, ok, want.Reason)
		}
	}
	if got, ok := w.KindOf(errors.New("boom")); ok || got.Err != w.ErrInternal {
		t.Errorf("KindOf(unknown) = %v, %v; want the internal error, false", got.Err, ok)
	}
}

// What stands in front of a binding (the gateway, a proxy) answers with
// an HTTP status and whatever body: FromHTTP reads the status when the
// body names no reason, and a reason that contradicts the status yields
// to it.
func TestFromHTTPStatusAlone(t *testing.T) {
	for _, tc := range []struct {
		status int
		header http.Header
		body   string
		want   error
		after  time.Duration
	}{
		{401, nil, `{"type":"about:blank","status":401,"detail":"missing credentials"}`, orchestrator.ErrUnauthenticated, 0},
		{403, nil, "forbidden", orchestrator.ErrPermissionDenied, 0},
		{429, http.Header{"Retry-After": {"7"}}, "slow down", orchestrator.ErrBusy, 7 * time.Second},
		{503, nil, "", orchestrator.ErrUnavailable, 0},
		{502, nil, "<html>bad gateway</html>", orchestrator.ErrUnavailable, 0},
		{404, nil, `{"error":{"code":404,"status":"NOT_FOUND","message":"no route"}}`, orchestrator.ErrNotFound, 0},
		{405, nil, `{"error":{"code":405,"status":"UNIMPLEMENTED","message":"use POST"}}`, w.ErrMethodNotFound, 0},
		{413, nil, "too large", w.ErrInvalidRequest, 0},
		// An older wunder sent auth failures with reason INVALID_REQUEST.
		{401, nil, `{"error":{"code":401,"status":"UNAUTHENTICATED","message":"unauthenticated","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_REQUEST","domain":"a2a-protocol.org"}]}}`, orchestrator.ErrUnauthenticated, 0},
	} {
		h := tc.header
		if h == nil {
			h = http.Header{}
		}
		err := w.FromHTTP(&http.Response{StatusCode: tc.status, Header: h, Body: io.NopCloser(strings.NewReader(tc.body))})
		if !errors.Is(err, tc.want) {
			t.Errorf("HTTP %d %q: %v; want %v", tc.status, tc.body, err, tc.want)
		}
		if after, _ := orchestrator.RetryAfter(err); after != tc.after {
			t.Errorf("HTTP %d: retry delay %v; want %v", tc.status, after, tc.after)
		}
	}
}

// wunder's JSON-RPC client reads a refusal in front of the endpoint by
// its status when the status says something of the caller (credentials,
// limits), as unavailable otherwise (no agent answered), and an answer it
// cannot read as an invalid agent response (which is unavailable too, so
// the caller reads the card again).
func TestClientReadsHTTPRefusals(t *testing.T) {
	for _, tc := range []struct {
		status      int
		ctype, body string
		want        []error
	}{
		{401, "application/problem+json", `{"title":"Unauthorized","status":401,"detail":"missing credentials"}`, []error{orchestrator.ErrUnauthenticated}},
		{403, "text/plain", "no", []error{orchestrator.ErrPermissionDenied}},
		{429, "text/plain", "slow down", []error{orchestrator.ErrBusy}},
		{404, "text/html", "<html>not here</html>", []error{orchestrator.ErrUnavailable}},
		{200, "application/json", "not json", []error{w.ErrInvalidAgentResponse, orchestrator.ErrUnavailable}},
		{200, "application/json", `{"jsonrpc":"2.0","id":1,"result":{"id":7}}`, []error{w.ErrInvalidAgentResponse, orchestrator.ErrUnavailable}},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
			rw.Header().Set("Content-Type", tc.ctype)
			rw.WriteHeader(tc.status)
			_, _ = io.WriteString(rw, tc.body)
		}))
		for _, v := range []w.Version{w.V10, w.V03} {
			_, err := (&w.Client{URL: srv.URL, Version: v}).GetTask(t.Context(), "t")
			for _, want := range tc.want {
				if !errors.Is(err, want) {
					t.Errorf("%s: HTTP %d %q: %v; want %v", v, tc.status, tc.body, err, want)
				}
			}
		}
		srv.Close()
	}
}

// A peer's JSON-RPC error that wunder's reasons do not qualify: -32000
// without a reason (a2a-go's ErrServerError) is unavailable, a code the
// table does not have an internal error (unavailable too), and a 0.3 error
// without data is the row of its code.
func TestJSONRPCErrorsOfOtherPeers(t *testing.T) {
	for _, tc := range []struct {
		body string
		want []error
	}{
		{`{"code":-32000,"message":"server error"}`, []error{orchestrator.ErrUnavailable}},
		{`{"code":-32000,"message":"x","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"SOMETHING","domain":"example.com"}]}`, []error{orchestrator.ErrUnavailable}},
		{`{"code":-32099,"message":"odd"}`, []error{w.ErrInternal, orchestrator.ErrUnavailable}},
		{`{"code":-32002,"message":"ended"}`, []error{w.ErrTaskNotCancelable, orchestrator.ErrConflict}},
		{`{"code":-31401,"message":"who are you"}`, []error{orchestrator.ErrUnauthenticated}},
	} {
		var e w.Error
		if err := json.Unmarshal([]byte(tc.body), &e); err != nil {
			t.Fatal(err)
		}
		for _, want := range tc.want {
			if !errors.Is(&e, want) {
				t.Errorf("%s reads as %v; want %v", tc.body, e.Kind().Err, want)
			}
		}
		if errors.Is(&e, orchestrator.ErrBusy) {
			t.Errorf("%s reads as busy", tc.body)
		}
	}
}
