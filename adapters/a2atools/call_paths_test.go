package a2atools_test

import (
	"bytes"
	"context"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/wunder/wunder/adapters/a2atools"
)

// The ways a delegation's answer arrives from an a2a-go v2.4.0 agent,
// beyond the one-artifact echo: an artifact streamed in chunks while the
// task is followed on a subscription, a plain message instead of a task,
// and a peer that stops answering (its card is read again next time).

// chunky answers in two chunks of one artifact, says it is working, and
// completes only once released (gate), so that the send returns a task
// still running and the call goes on to follow it.
type chunky struct{ gate chan struct{} }

func (c chunky) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[sdk.Event, error] {
	return func(yield func(sdk.Event, error) bool) {
		if ec.StoredTask == nil && !yield(sdk.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		first := sdk.NewArtifactEvent(ec, sdk.NewTextPart("part one"))
		if !yield(first, nil) {
			return
		}
		working := sdk.NewStatusUpdateEvent(ec, sdk.TaskStateWorking, sdk.NewMessageForTask(sdk.MessageRoleAgent, ec, sdk.NewTextPart("thinking")))
		if !yield(working, nil) {
			return
		}
		select {
		case <-c.gate:
		case <-ctx.Done():
			return
		}
		if !yield(sdk.NewArtifactUpdateEvent(ec, first.Artifact.ID, sdk.NewTextPart(" and two")), nil) {
			return
		}
		yield(sdk.NewStatusUpdateEvent(ec, sdk.TaskStateCompleted, nil), nil)
	}
}

func (chunky) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[sdk.Event, error] {
	return func(yield func(sdk.Event, error) bool) {
		yield(sdk.NewStatusUpdateEvent(ec, sdk.TaskStateCanceled, nil), nil)
	}
}

// replier answers with a message and no task.
type replier struct{}

func (replier) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[sdk.Event, error] {
	return func(yield func(sdk.Event, error) bool) {
		m := sdk.NewMessage(sdk.MessageRoleAgent, sdk.NewTextPart("a direct answer"))
		m.ContextID = ec.ContextID
		yield(m, nil)
	}
}

func (replier) Cancel(context.Context, *a2asrv.ExecutorContext) iter.Seq2[sdk.Event, error] {
	return func(func(sdk.Event, error) bool) {}
}

// agentServer serves exec over JSON-RPC with its card; onRPC, when set,
// sees each JSON-RPC body first and may answer the request itself
// (returning true). cards counts the card's reads.
type agentServer struct {
	url   string
	cards atomic.Int32
}

func serveAgent(t *testing.T, exec a2asrv.AgentExecutor, streaming bool, onRPC func(w http.ResponseWriter, body string) bool) *agentServer {
	t.Helper()
	a := &agentServer{}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	a.url = srv.URL
	card := &sdk.AgentCard{Name: "agent", Description: "a test agent", Version: "1",
		SupportedInterfaces: []*sdk.AgentInterface{sdk.NewAgentInterface(srv.URL+"/rpc", sdk.TransportProtocolJSONRPC)},
		Capabilities:        sdk.AgentCapabilities{Streaming: streaming},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"}}
	rpc := a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(exec))
	mux.HandleFunc("/rpc", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		if onRPC != nil && onRPC(w, string(b)) {
			return
		}
		rpc.ServeHTTP(w, r)
	})
	cardH := a2asrv.NewStaticAgentCardHandler(card)
	mux.HandleFunc("/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		a.cards.Add(1)
		cardH.ServeHTTP(w, r)
	})
	return a
}

// A streaming agent whose task is still working when the send returns:
// the call follows it on a subscription (the agent completes once the
// subscription is asked for) and answers with the artifact its chunks
// made, the working status announced on the way.
func TestCallFollowsChunkedArtifact(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	var once sync.Once
	agent := serveAgent(t, chunky{gate: gate}, true, func(_ http.ResponseWriter, body string) bool {
		if strings.Contains(body, "Subscribe") || strings.Contains(body, "resubscribe") {
			once.Do(func() { close(gate) })
		}
		return false
	})
	t.Cleanup(func() { once.Do(func() { close(gate) }) })
	s := newSet(t, a2atools.Service{Name: "chunky", URL: agent.url})
	rec := &recorder{}
	res, err := toolNamed(t, s, "a2a@chunky").Call(t.Context(), invocation(`{"message":"go"}`, rec, nil))
	if err != nil || res.IsError {
		t.Fatalf("result %+v, %v", res, err)
	}
	if !strings.HasPrefix(res.Content, "part one and two\n\n(task ") {
		t.Errorf("content %q; want the artifact's two chunks joined, then the task", res.Content)
	}
	rec.mu.Lock()
	evs := strings.Join(rec.evs, "\n")
	rec.mu.Unlock()
	if !strings.Contains(evs, `"state":"TASK_STATE_COMPLETED"`) && !strings.Contains(evs, `"state":"completed"`) {
		t.Errorf("no completed status among the events:\n%s", evs)
	}
	last := rec.evs[len(rec.evs)-1]
	if !strings.HasPrefix(last, "a2a_result ") || strings.Count(last, `"artifact_id"`) != 1 {
		t.Errorf("last event %s; want the result with one artifact", last)
	}
}

// An agent that answers with a message and no task: the message is the
// answer, the state completed, and no task is named.
func TestCallMessageAnswer(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		agent := serveAgent(t, replier{}, streaming, nil)
		s := newSet(t, a2atools.Service{Name: "replier", URL: agent.url})
		res, err := toolNamed(t, s, "a2a@replier").Call(t.Context(), invocation(`{"message":"hi"}`, &recorder{}, nil))
		if err != nil || res.IsError {
			t.Fatalf("streaming %v: %+v, %v", streaming, res, err)
		}
		if !strings.HasPrefix(res.Content, "a direct answer") || strings.Contains(res.Content, "(task ,") {
			t.Errorf("streaming %v: content %q; want the message, and no empty task id", streaming, res.Content)
		}
	}
}

// A peer whose JSON-RPC endpoint fails (503) is an error result, and the
// card is read again on the next call, which then goes through: a peer
// that moved or restarted is found anew.
func TestCallRereadsCardAfterUnavailable(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	down.Store(true)
	agent := serveAgent(t, goEcho{}, false, func(w http.ResponseWriter, _ string) bool {
		if down.Load() {
			http.Error(w, "restarting", http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	s := newSet(t, a2atools.Service{Name: "flaky", URL: agent.url})
	tool := toolNamed(t, s, "a2a@flaky")
	res, err := tool.Call(t.Context(), invocation(`{"message":"one"}`, &recorder{}, nil))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "503") {
		t.Fatalf("call to a failing peer: %+v, %v", res, err)
	}
	if n := agent.cards.Load(); n != 1 {
		t.Fatalf("card read %d times before the failure, want 1", n)
	}
	down.Store(false)
	res, err = tool.Call(t.Context(), invocation(`{"message":"two"}`, &recorder{}, nil))
	if err != nil || res.IsError || !strings.HasPrefix(res.Content, "echo: two") {
		t.Fatalf("call after the peer came back: %+v, %v", res, err)
	}
	if n := agent.cards.Load(); n != 2 {
		t.Errorf("card read %d times, want 2: once more after the failure", n)
	}
	// A working peer's card is not read again.
	if _, err := tool.Call(t.Context(), invocation(`{"message":"three"}`, &recorder{}, nil)); err != nil || agent.cards.Load() != 2 {
		t.Errorf("third call: %v, card reads %d", err, agent.cards.Load())
	}
}

// Arguments the tool cannot use are an error result the model reads, not
// a call to the peer.
func TestCallBadArguments(t *testing.T) {
	t.Parallel()
	agent := serveAgent(t, goEcho{}, true, nil)
	s := newSet(t, a2atools.Service{Name: "g", URL: agent.url})
	for _, args := range []string{`{}`, `{"message":"   "}`, `{"message":7}`, `[]`, `not json`} {
		res, err := toolNamed(t, s, "a2a@g").Call(t.Context(), invocation(args, &recorder{}, nil))
		if err != nil || !res.IsError || !strings.Contains(res.Content, `{"message": "..."}`) {
			t.Errorf("arguments %s: %+v, %v", args, res, err)
		}
	}
	if n := agent.cards.Load(); n != 0 {
		t.Errorf("bad arguments read the card %d times", n)
	}
}
