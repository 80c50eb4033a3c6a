package gateway_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// untilBlank reads r up to and including the first blank line: the first
// event block of a stream.
func untilBlank(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	var b strings.Builder
	for {
		line, err := r.ReadString('\n')
		b.WriteString(line)
		if err != nil {
			t.Fatalf("stream ended before its first event: %q, %v", b.String(), err)
		}
		if line == "\n" {
			return b.String()
		}
	}
}

// Drain ends a follower's stream at once, resumably: a retry: hint, no
// error event; a stream opened after it replays what is stored and ends
// the same way; and the run goes on, to be read elsewhere.
func TestDrainEndsStreamsResumably(t *testing.T) {
	gate, started := make(chan struct{}), make(chan struct{})
	e := newEnv(t, envOpts{turns: []orchestratortest.Turn{{Content: "slow", Wait: gate, Started: started}}})
	resp := e.do(t, "POST", "/wunder/runs", `{"user_id":"bob","question":"q"}`)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("submit: %d", resp.StatusCode)
	}
	var run orchestrator.Run
	if err := json.NewDecoder(resp.Body).Decode(&run); err != nil {
		t.Fatal(err)
	}
	<-started
	follow := e.do(t, "GET", "/wunder/runs/"+run.ID+"/events?user_id=bob", "")
	br := bufio.NewReader(follow.Body)
	first := untilBlank(t, br) // the stream is open and has sent an event
	e.gw.Drain()
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatalf("reading the drained stream: %v", err)
	}
	whole := first + string(rest)
	if !strings.HasSuffix(whole, "retry: 1000\n\n") {
		t.Fatalf("a drained stream ends %q; want the retry hint", whole[max(0, len(whole)-80):])
	}
	var last int64
	for ev, err := range sse.Read(strings.NewReader(whole)) {
		if err != nil {
			t.Fatalf("the drained stream does not parse: %v", err)
		}
		if ev.Type == orchestrator.EventError || ev.Type == orchestrator.EventFinal {
			t.Fatalf("a drained stream sent %s: %s", ev.Type, ev.Data)
		}
		if ev.ID != "" {
			if last, err = strconv.ParseInt(ev.ID, 10, 64); err != nil {
				t.Fatal(err)
			}
		}
	}
	if last == 0 {
		t.Fatalf("no event id before the drain: %q", whole)
	}

	// Opened after the drain: it ends at once, the same way, with no
	// event (the balancer has taken this replica out; the client resumes
	// on another).
	again := e.do(t, "GET", "/wunder/runs/"+run.ID+"/events?user_id=bob", "", "Last-Event-ID", "0")
	body, _ := io.ReadAll(again.Body)
	if again.StatusCode != http.StatusOK || string(body) != "retry: 1000\n\n" {
		t.Fatalf("a stream opened while draining: %d %q; want only the retry hint", again.StatusCode, body)
	}

	// The run itself goes on to its end.
	close(gate)
	var end orchestrator.Event
	for ev, err := range e.o.Events(t.Context(), "bob", run.ID, last) {
		if err != nil {
			t.Fatal(err)
		}
		end = ev
	}
	if end.Type != orchestrator.EventFinal {
		t.Fatalf("the run's last event is %s; want final", end.Type)
	}
}
