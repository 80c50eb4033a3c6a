package gateway_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// POST /wunder's stream stores a short run on a new session in one write
// (RunRequest.IDsWithEvents): its start waits for its first events. So
// the ids in the response's headers must not reach the client before the
// run is stored: the headers go out with the first event, and the
// session they name is there for whoever asks. The model is held, so the
// run cannot end; its first events are stored once the stream's delay
// passes. Sent at once, the headers named a session the store did not
// have yet (404).
func TestWunderStreamSendsIDsOnceStored(t *testing.T) {
	gate := make(chan struct{})
	e := newEnv(t, envOpts{
		orch:  orchestrator.Options{OneProcess: true, Events: orchestrator.EventPolicy{StreamDelay: orchestrator.DelayOf(100 * time.Millisecond)}},
		turns: []orchestratortest.Turn{{Content: "late", Wait: gate}},
	})
	resp := e.do(t, "POST", "/wunder", `{"user_id":"alice","question":"q"}`)
	sessionID := resp.Header.Get("X-Session-Id")
	if resp.StatusCode != 200 || sessionID == "" || resp.Header.Get("X-Run-Id") == "" {
		t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Header)
	}
	got := e.do(t, "GET", "/wunder/sessions/"+sessionID+"?user_id=alice", "")
	body, _ := io.ReadAll(got.Body)
	close(gate)
	if got.StatusCode != 200 {
		t.Fatalf("GET the session named by the stream's headers: %d %s; want it stored", got.StatusCode, body)
	}
	evs := readSSE(t, resp.Body)
	if len(evs) == 0 || evs[len(evs)-1].typ != "final" {
		t.Fatalf("stream = %+v; want it to end with the final event", evs)
	}
}

// POST /wunder/runs answers the run's ids at once, so its run is stored
// before it answers even when the body says "stream": false (which made
// it a blocking run, whose start may wait for its end).
func TestSubmitStoresTheRunBeforeItAnswers(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	e := newEnv(t, envOpts{
		orch:  orchestrator.Options{OneProcess: true, Events: orchestrator.EventPolicy{BlockingDelay: orchestrator.DelayOf(time.Hour), StreamDelay: orchestrator.DelayOf(time.Hour)}},
		turns: []orchestratortest.Turn{{Content: "late", Wait: gate}},
	})
	for _, body := range []string{`{"user_id":"alice","question":"q","stream":false}`, `{"user_id":"bob","question":"q"}`} {
		resp := e.do(t, "POST", "/wunder/runs", body)
		var run orchestrator.Run
		if err := json.NewDecoder(resp.Body).Decode(&run); err != nil || resp.StatusCode != 202 || run.SessionID == "" {
			t.Fatalf("%s: %d %+v %v", body, resp.StatusCode, run, err)
		}
		got := e.do(t, "GET", "/wunder/sessions/"+run.SessionID+"?user_id="+run.UserID, "")
		if b, _ := io.ReadAll(got.Body); got.StatusCode != 200 || !strings.Contains(string(b), run.SessionID) {
			t.Fatalf("%s: GET the session answered: %d %s; want it stored", body, got.StatusCode, b)
		}
	}
}

// writeLog records a response's writes and flushes, in order.
type writeLog struct {
	header http.Header
	ops    []string // "flush", or the bytes of a write
}

func (w *writeLog) Header() http.Header         { return w.header }
func (w *writeLog) WriteHeader(int)             {}
func (w *writeLog) Write(b []byte) (int, error) { w.ops = append(w.ops, string(b)); return len(b), nil }
func (w *writeLog) FlushError() error           { w.ops = append(w.ops, "flush"); return nil }

// A stream does not flush after the final event: the handler returns at
// once, and net/http sends the rest with the response's end in one write
// (a short run's whole stream, never flushed, goes with a Content-Length).
// Flushed, the final event and the end of the chunked body were two writes.
func TestStreamLeavesTheFinalEventToTheResponsesEnd(t *testing.T) {
	e := newEnv(t, envOpts{turns: []orchestratortest.Turn{{Content: "done"}}})
	resp := e.do(t, "POST", "/wunder", `{"user_id":"alice","question":"q","stream":false}`)
	runID := resp.Header.Get("X-Run-Id")
	if resp.StatusCode != 200 || runID == "" {
		t.Fatalf("POST /wunder: %d, headers %v", resp.StatusCode, resp.Header)
	}
	req := httptest.NewRequestWithContext(t.Context(), "GET", "http://localhost/wunder/runs/"+runID+"/events?user_id=alice", nil)
	req.RemoteAddr = "127.0.0.1:50000"
	w := &writeLog{header: http.Header{}}
	e.h.ServeHTTP(w, req)
	final := -1
	for i, op := range w.ops {
		if strings.Contains(op, "event: final\n") {
			final = i
		}
	}
	if final < 0 {
		t.Fatalf("the replay has no final event: %q", w.ops)
	}
	if rest := w.ops[final+1:]; slices.Contains(rest, "flush") {
		t.Fatalf("the stream flushed after its final event: %q", w.ops)
	}
}
