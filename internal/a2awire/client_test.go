package a2awire_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
)

// askAgent is an a2a-go agent: "done ..." completes with an artifact
// echoing the text; anything else asks for input after the artifact.
// Cancel cancels.
type askAgent struct{}

func (askAgent) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[sdk.Event, error] {
	return func(yield func(sdk.Event, error) bool) {
		text := ""
		for _, p := range ec.Message.Parts {
			text += p.Text()
		}
		if ec.StoredTask == nil && !yield(sdk.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if !yield(sdk.NewStatusUpdateEvent(ec, sdk.TaskStateWorking, nil), nil) {
			return
		}
		if !yield(sdk.NewArtifactEvent(ec, sdk.NewTextPart("echo: "+text)), nil) {
			return
		}
		if strings.HasPrefix(text, "done") {
			yield(sdk.NewStatusUpdateEvent(ec, sdk.TaskStateCompleted, nil), nil)
			return
		}
		yield(sdk.NewStatusUpdateEvent(ec, sdk.TaskStateInputRequired,
			sdk.NewMessageForTask(sdk.MessageRoleAgent, ec, sdk.NewTextPart("which one?"))), nil)
	}
}

func (askAgent) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[sdk.Event, error] {
	return func(yield func(sdk.Event, error) bool) {
		yield(sdk.NewStatusUpdateEvent(ec, sdk.TaskStateCanceled, nil), nil)
	}
}

// recorded is what a peer saw of one request.
type recorded struct {
	method, version, accept, auth string
	id                            json.RawMessage
	params                        map[string]any
}

// peer serves h and records each JSON-RPC request's method and headers.
type peer struct {
	url  string
	mu   sync.Mutex
	seen []recorded
}

func (p *peer) requests() []recorded {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]recorded(nil), p.seen...)
}

func startPeer(t *testing.T, h http.Handler) *peer {
	p := &peer{}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params map[string]any  `json:"params"`
		}
		_ = json.Unmarshal(b, &req)
		p.mu.Lock()
		p.seen = append(p.seen, recorded{req.Method, r.Header.Get("A2A-Version"), r.Header.Get("Accept"), r.Header.Get("Authorization"), req.ID, req.Params})
		p.mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		h.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

func userMessage(text string) w.Message {
	return w.Message{MessageID: "m-" + text, Role: w.RoleUser, Parts: []w.Part{w.TextPart(text)}}
}

// wunder's client drives an a2a-go agent through a whole task in each
// version: a blocking send, a stream that ends at input-required, a get,
// a cancel; each request names its version and method.
func TestClientDrivesA2AGoAgent(t *testing.T) {
	for _, v := range []w.Version{w.V10, w.V03} {
		t.Run(string(v), func(t *testing.T) {
			var h http.Handler = a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(askAgent{}))
			if v == w.V03 {
				h = a2av0.NewJSONRPCHandler(a2asrv.NewHandler(askAgent{}))
			}
			p := startPeer(t, h)
			c := &w.Client{URL: p.url, Version: v, Header: http.Header{"Authorization": {"Bearer peer-token"}}}
			m := w.MethodsOf(v)

			ev, err := c.Send(t.Context(), &w.SendRequest{Message: userMessage("done now"), Blocking: true})
			if err != nil {
				t.Fatal(err)
			}
			if ev.Task == nil || ev.Task.Status.State != w.StateCompleted || len(ev.Task.Artifacts) != 1 || ev.Task.Artifacts[0].Text() != "echo: done now" {
				t.Fatalf("blocking send: %+v", ev.Task)
			}

			var got []string
			var taskID string
			for ev, err := range c.Stream(t.Context(), &w.SendRequest{Message: userMessage("pick")}) {
				if err != nil {
					t.Fatalf("stream after %v: %v", got, err)
				}
				got = append(got, summary(ev))
				if ev.Task != nil {
					taskID = ev.Task.ID
				}
			}
			want := []string{"task submitted", "status working false", "artifact echo: pick", fmt.Sprintf("status input-required %v", v == w.V03)}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("stream = %q; want %q", got, want)
			}

			task, err := c.GetTask(t.Context(), taskID)
			if err != nil || task.Status.State != w.StateInputRequired || task.Status.Message.Text() != "which one?" {
				t.Fatalf("get: %+v %v", task, err)
			}
			// a2a-go cancels an input-required task while its execution is
			// still being wound up, and refuses once it is (-32002, "task
			// cannot be canceled"): which one this is depends on its
			// goroutines. Either answer must come back decoded.
			task, err = c.CancelTask(t.Context(), taskID)
			switch {
			case err == nil && task.Status.State == w.StateCanceled:
			case err != nil && errors.Is(err, w.ErrTaskNotCancelable) && errors.Is(err, orchestrator.ErrConflict):
			default:
				t.Fatalf("cancel: %+v %v; want canceled, or not cancelable decoded as such", task, err)
			}
			_, err = c.GetTask(t.Context(), "no-such-task")
			if !errors.Is(err, orchestrator.ErrNotFound) {
				t.Errorf("get of an unknown task: %v; want not found", err)
			}

			reqs := p.requests()
			wantMethods := []string{m.Send, m.Stream, m.Get, m.Cancel, m.Get}
			if len(reqs) != len(wantMethods) {
				t.Fatalf("%d requests; want %d", len(reqs), len(wantMethods))
			}
			for i, r := range reqs {
				wantAccept := "application/json"
				if r.method == m.Stream {
					wantAccept = "text/event-stream"
				}
				if r.method != wantMethods[i] || r.version != string(v) || r.accept != wantAccept || r.auth != "Bearer peer-token" {
					t.Errorf("request %d: %+v; want %s, A2A-Version %s, Accept %s, the header", i, r, wantMethods[i], v, wantAccept)
				}
				if string(r.id) != fmt.Sprint(i+1) {
					t.Errorf("request %d has id %s; want %d", i, r.id, i+1)
				}
			}
			// How each version says "wait" and "don't wait".
			cfgSend, cfgStream := reqs[0].params["configuration"].(map[string]any), reqs[1].params["configuration"].(map[string]any)
			if v == w.V10 && (cfgSend["returnImmediately"] != false || cfgStream["returnImmediately"] != true || cfgSend["blocking"] != nil) {
				t.Errorf("1.0 configurations %v %v", cfgSend, cfgStream)
			}
			if v == w.V03 && (cfgSend["blocking"] != true || cfgStream["blocking"] != false || cfgSend["returnImmediately"] != nil) {
				t.Errorf("0.3 configurations %v %v", cfgSend, cfgStream)
			}
		})
	}
}

// sseItems writes each JSON-RPC result or error as one SSE event, then
// blocks until the client goes (or returns, with hold false).
func ssePeer(t *testing.T, items []string, hold bool) *peer {
	return startPeer(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/event-stream")
		for _, it := range items {
			fmt.Fprintf(rw, "data: %s\n\n", it)
		}
		rw.(http.Flusher).Flush()
		if hold {
			<-r.Context().Done()
		}
	}))
}

func result(s string) string { return `{"jsonrpc":"2.0","id":1,"result":` + s + `}` }

// A stream ends at the first terminal or interrupted status (0.3: or a
// final flag) and at a message, without reading what the peer sends
// after; a peer that closes ends it too, without an error. Each case
// holds the connection open after its items, so a client that read on
// would hang instead of passing.
func TestClientStreamStops(t *testing.T) {
	working := result(`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working"},"final":false}`)
	after := result(`{"kind":"artifact-update","taskId":"t","contextId":"c","artifact":{"artifactId":"late","parts":[{"kind":"text","text":"late"}]}}`)
	for name, tc := range map[string]struct {
		items []string
		hold  bool
		want  []string
	}{
		"0.3 final flag": {[]string{working, result(`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working"},"final":true}`), after}, true,
			[]string{"status working false", "status working true"}},
		"1.0 terminal status": {[]string{result(`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_FAILED"}}}`), after}, true,
			[]string{"status failed false"}},
		"1.0 auth required": {[]string{result(`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_AUTH_REQUIRED"}}}`), after}, true,
			[]string{"status auth-required false"}},
		"a message answers": {[]string{result(`{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}`), after}, true,
			[]string{"message agent hi"}},
		"the peer closes": {[]string{working}, false, []string{"status working false"}},
		"a task in a terminal state does not end it": {[]string{result(`{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`), result(`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`)}, true,
			[]string{"task completed", "status completed false"}},
	} {
		t.Run(name, func(t *testing.T) {
			p := ssePeer(t, tc.items, tc.hold)
			var got []string
			for ev, err := range (&w.Client{URL: p.url, Version: w.V10}).Stream(t.Context(), &w.SendRequest{Message: userMessage("x")}) {
				if err != nil {
					t.Fatalf("after %q: %v", got, err)
				}
				got = append(got, summary(ev))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("stream = %q; want %q", got, tc.want)
			}
		})
	}
}

// A consumer that stops early stops the stream: the iterator returns and
// the connection is released.
func TestClientStreamBreak(t *testing.T) {
	working := result(`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`)
	p := ssePeer(t, []string{working, working, working}, true)
	n := 0
	for _, err := range (&w.Client{URL: p.url, Version: w.V10}).Subscribe(t.Context(), "t") {
		if err != nil {
			t.Fatal(err)
		}
		n++
		break
	}
	if n != 1 {
		t.Fatalf("%d events", n)
	}
	if r := p.requests(); len(r) != 1 || r[0].method != "SubscribeToTask" || r[0].params["id"] != "t" {
		t.Errorf("requests %+v", r)
	}
}

// What goes wrong in a stream is an error of the table's kinds: the
// peer's JSON-RPC error as it is, an answer wunder cannot read as an
// invalid agent response (unavailable too).
func TestClientStreamErrors(t *testing.T) {
	working := result(`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`)
	for name, tc := range map[string]struct {
		h      http.HandlerFunc
		events int
		want   []error
	}{
		"an error item mid-stream": {h: sseHandler(working, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"gone"}}`), events: 1,
			want: []error{orchestrator.ErrNotFound}},
		"an item that is not JSON": {h: sseHandler(working, `{not json`), events: 1,
			want: []error{w.ErrInvalidAgentResponse, orchestrator.ErrUnavailable}},
		"an item that is no event": {h: sseHandler(result(`{"foo":1}`)),
			want: []error{w.ErrInvalidAgentResponse, orchestrator.ErrUnavailable}},
		"a JSON-RPC error instead of a stream": {h: jsonHandler(200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32004,"message":"no streaming"}}`),
			want: []error{w.ErrUnsupportedOperation, orchestrator.ErrInvalidArgument}},
		"a JSON result instead of a stream": {h: jsonHandler(200, result(`{"task":{"id":"t"}}`)),
			want: []error{w.ErrInvalidAgentResponse, orchestrator.ErrUnavailable}},
		"a 429 in JSON-RPC's shape keeps its retry hint": {h: jsonHandler(429, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"slow down","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RATE_LIMITED","domain":"wunder"},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"4s"}]}}`),
			want: []error{orchestrator.ErrBusy}},
		"a 500 page": {h: jsonHandler(500, `<html>oops</html>`),
			want: []error{orchestrator.ErrUnavailable}},
	} {
		t.Run(name, func(t *testing.T) {
			p := startPeer(t, tc.h)
			var events int
			var last error
			for _, err := range (&w.Client{URL: p.url, Version: w.V10}).Stream(t.Context(), &w.SendRequest{Message: userMessage("x")}) {
				if err != nil {
					last = err
					continue
				}
				if last != nil {
					t.Fatal("an event after an error")
				}
				events++
			}
			if events != tc.events {
				t.Errorf("%d events before the error; want %d", events, tc.events)
			}
			for _, want := range tc.want {
				if !errors.Is(last, want) {
					t.Errorf("error %v; want %v", last, want)
				}
			}
			if name == "a 429 in JSON-RPC's shape keeps its retry hint" {
				if after, ok := orchestrator.RetryAfter(last); !ok || after != 4*time.Second {
					t.Errorf("retry after %v %v; want 4s", after, ok)
				}
			}
		})
	}
}

func sseHandler(items ...string) http.HandlerFunc {
	return func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "text/event-stream")
		for _, it := range items {
			fmt.Fprintf(rw, "data: %s\n\n", it)
		}
	}
}

func jsonHandler(status int, body string) http.HandlerFunc {
	return func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(status)
		_, _ = io.WriteString(rw, body)
	}
}

// No peer at all is unavailable (the caller may retry or re-read the
// card), for calls and streams alike.
func TestClientNoPeer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c := &w.Client{URL: url, Version: w.V03}
	if _, err := c.Send(t.Context(), &w.SendRequest{Message: userMessage("x")}); !errors.Is(err, orchestrator.ErrUnavailable) {
		t.Errorf("send: %v", err)
	}
	for _, err := range c.Stream(t.Context(), &w.SendRequest{Message: userMessage("x")}) {
		if !errors.Is(err, orchestrator.ErrUnavailable) {
			t.Errorf("stream: %v", err)
		}
	}
	if _, err := c.Call(t.Context(), "x", func() {}); err == nil {
		t.Error("params that are not JSON were sent")
	}
}

// Call hands back the raw result, or the peer's error as an *Error whose
// code, message and data are the peer's.
func TestClientCall(t *testing.T) {
	p := startPeer(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var req w.Request
		_ = json.NewDecoder(r.Body).Decode(&req)
		if req.Method == "Echo" {
			_ = json.NewEncoder(rw).Encode(w.Response{JSONRPC: "2.0", ID: req.ID, Result: req.Params})
			return
		}
		_ = json.NewEncoder(rw).Encode(w.Response{JSONRPC: "2.0", ID: req.ID, Error: w.NewError(w.V10, w.CodeMethodNotFound, "no "+req.Method)})
	}))
	c := &w.Client{URL: p.url, Version: w.V10}
	raw, err := c.Call(t.Context(), "Echo", map[string]int{"n": 7})
	if err != nil || string(raw) != `{"n":7}` {
		t.Fatalf("Echo: %s %v", raw, err)
	}
	_, err = c.Call(t.Context(), "Nope", nil)
	var e *w.Error
	if !errors.As(err, &e) || e.Code != w.CodeMethodNotFound || e.Message != "no Nope" || !errors.Is(err, w.ErrMethodNotFound) {
		t.Fatalf("Nope: %#v", err)
	}
	if !strings.Contains(string(e.Data), "METHOD_NOT_FOUND") {
		t.Errorf("1.0 error data %s lacks its ErrorInfo", e.Data)
	}
}
