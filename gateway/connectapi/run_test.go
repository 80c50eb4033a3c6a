package connectapi_test

import (
	"context"
	"errors"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	wunderv1 "github.com/wunder/wunder/gen/wunder/v1"
	"github.com/wunder/wunder/orchestrator"
	ot "github.com/wunder/wunder/orchestrator/orchestratortest"
)

// collect drains a server stream of events.
func collect[T any, PT interface {
	*T
	GetEvent() *wunderv1.Event
}](t *testing.T, s *connect.ServerStreamForClient[T]) []*wunderv1.Event {
	t.Helper()
	var evs []*wunderv1.Event
	for s.Receive() {
		evs = append(evs, PT(s.Msg()).GetEvent())
	}
	if err := s.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	return evs
}

func checkDense(t *testing.T, evs []*wunderv1.Event, from int64) {
	t.Helper()
	for i, ev := range evs {
		if ev.GetSeq() != from+int64(i) {
			t.Fatalf("event %d (%s) has seq %d, want %d", i, ev.GetType(), ev.GetSeq(), from+int64(i))
		}
	}
}

func final(t *testing.T, evs []*wunderv1.Event) map[string]any {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].GetType() != orchestrator.EventFinal {
		t.Fatalf("the stream does not end with a final event: %d events", len(evs))
	}
	return evs[len(evs)-1].GetData().AsMap()
}

// A streamed run with a tool call, over each protocol: every event arrives
// in order with its seq, the tool's result and the final answer included,
// and the run is an agent caller's.
func TestRunStreamsEvents(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			e := newEnv(t, envOpts{turns: []ot.Turn{
				{ToolCalls: []orchestrator.ToolCall{ot.Call("write_file", `{"path":"a.txt","content":"hi"}`)}},
				{Content: "done: wrote a.txt"},
			}})
			c := e.clients(p)
			s, err := c.runs.Run(t.Context(), connect.NewRequest(&wunderv1.RunRequest{
				UserId: "alice", Question: "write a.txt", ToolNames: []string{"write_file"},
			}))
			if err != nil {
				t.Fatal(err)
			}
			evs := collect(t, s)
			checkDense(t, evs, 1)
			f := final(t, evs)
			if f["answer"] != "done: wrote a.txt" || f["state"] != "finished" || f["stop_reason"] != "model_response" {
				t.Fatalf("final = %v", f)
			}
			runID := evs[0].GetRunId()
			if got := s.ResponseHeader().Get("Wunder-Run-Id"); got != runID {
				t.Errorf("Wunder-Run-Id = %q, events say %q", got, runID)
			}
			var sawResult bool
			for _, ev := range evs {
				if ev.GetRunId() != runID || ev.GetSessionId() == "" || ev.GetTime() == nil {
					t.Fatalf("event %d lacks ids or time: %v", ev.GetSeq(), ev)
				}
				if ev.GetType() == orchestrator.EventToolResult {
					d := ev.GetData().AsMap()
					sawResult = d["name"] == "write_file" && d["is_error"] == false
				}
			}
			if !sawResult {
				t.Error("no successful write_file tool_result event")
			}
			if got, _ := e.files.Get("alice", "a.txt"); got != "hi" {
				t.Errorf("a.txt = %q", got)
			}
			run, err := c.runs.GetRun(t.Context(), connect.NewRequest(&wunderv1.GetRunRequest{UserId: "alice", RunId: runID}))
			if err != nil {
				t.Fatal(err)
			}
			r := run.Msg.GetRun()
			if r.GetState() != wunderv1.RunState_RUN_STATE_FINISHED || r.GetLastSeq() != evs[len(evs)-1].GetSeq() ||
				r.GetStopReason() != wunderv1.StopReason_STOP_REASON_MODEL_RESPONSE || r.GetFinishTime() == nil {
				t.Errorf("GetRun = %v", r)
			}
		})
	}
}

// Follow resumes from any seq with no gap and no duplicate, and equals the
// tail of the full log.
func TestFollowResumesFromSeq(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			e := newEnv(t, envOpts{turns: []ot.Turn{{Content: "a fairly long answer, streamed in several deltas"}}})
			c := e.clients(p)
			sub, err := c.runs.Submit(t.Context(), connect.NewRequest(&wunderv1.SubmitRequest{UserId: "bob", Question: "hi"}))
			if err != nil {
				t.Fatal(err)
			}
			runID := sub.Msg.GetRun().GetRunId()
			follow := func(after int64) []*wunderv1.Event {
				s, err := c.runs.Follow(t.Context(), connect.NewRequest(&wunderv1.FollowRequest{UserId: "bob", RunId: runID, AfterSeq: after}))
				if err != nil {
					t.Fatal(err)
				}
				return collect(t, s)
			}
			all := follow(0)
			checkDense(t, all, 1)
			final(t, all)
			for _, after := range []int64{1, int64(len(all)) / 2, int64(len(all)) - 1} {
				tail := follow(after)
				checkDense(t, tail, after+1)
				if len(tail) != len(all)-int(after) {
					t.Fatalf("after %d: %d events, want %d", after, len(tail), len(all)-int(after))
				}
				for i, ev := range tail {
					if !proto.Equal(ev, all[int(after)+i]) {
						t.Fatalf("after %d: event %d differs:\n%v\n%v", after, ev.GetSeq(), ev, all[int(after)+i])
					}
				}
			}
		})
	}
}

// Cancel reaches a run whose model call is in progress: the stream that
// started it goes on to a final event in state cancelled.
func TestCancelMidStream(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			started := make(chan struct{})
			e := newEnv(t, envOpts{turns: []ot.Turn{{Content: "never", Wait: make(chan struct{}), Started: started}}})
			c := e.clients(p)
			s, err := c.runs.Run(t.Context(), connect.NewRequest(&wunderv1.RunRequest{UserId: "carol", Question: "wait"}))
			if err != nil {
				t.Fatal(err)
			}
			if !s.Receive() {
				t.Fatalf("no first event: %v", s.Err())
			}
			runID := s.Msg().GetEvent().GetRunId()
			<-started
			res, err := c.runs.Cancel(t.Context(), connect.NewRequest(&wunderv1.CancelRequest{UserId: "carol", RunId: runID}))
			if err != nil {
				t.Fatal(err)
			}
			if st := res.Msg.GetRun().GetState(); st != wunderv1.RunState_RUN_STATE_CANCELLING && st != wunderv1.RunState_RUN_STATE_CANCELLED {
				t.Errorf("Cancel answered state %v", st)
			}
			evs := append([]*wunderv1.Event{s.Msg().GetEvent()}, collect(t, s)...)
			checkDense(t, evs, 1)
			if f := final(t, evs); f["state"] != "cancelled" || f["stop_reason"] != "cancelled" {
				t.Fatalf("final = %v", f)
			}
			// Cancelling again is a conflict with the run's state.
			_, err = c.runs.Cancel(t.Context(), connect.NewRequest(&wunderv1.CancelRequest{UserId: "carol", RunId: runID}))
			if connect.CodeOf(err) != connect.CodeFailedPrecondition {
				t.Fatalf("second Cancel: %v, want FailedPrecondition", err)
			}
		})
	}
}

// A client that leaves mid-stream does not stop the run; Follow picks it
// up where the client left.
func TestDisconnectDoesNotStopRun(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	e := newEnv(t, envOpts{turns: []ot.Turn{{Content: "finished anyway", Wait: release, Started: started}}})
	c := e.clients(protocols[1])
	ctx, cancel := context.WithCancel(t.Context())
	s, err := c.runs.Run(ctx, connect.NewRequest(&wunderv1.RunRequest{UserId: "dave", Question: "go"}))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Receive() {
		t.Fatal(s.Err())
	}
	first := s.Msg().GetEvent()
	<-started
	cancel()
	for s.Receive() {
	}
	if code := connect.CodeOf(s.Err()); code != connect.CodeCanceled {
		t.Fatalf("after the client cancelled: %v, want Canceled", s.Err())
	}
	close(release)
	f, err := c.runs.Follow(t.Context(), connect.NewRequest(&wunderv1.FollowRequest{UserId: "dave", RunId: first.GetRunId(), AfterSeq: first.GetSeq()}))
	if err != nil {
		t.Fatal(err)
	}
	evs := collect(t, f)
	checkDense(t, evs, first.GetSeq()+1)
	if fin := final(t, evs); fin["answer"] != "finished anyway" {
		t.Fatalf("final = %v", fin)
	}
}

// ListRuns pages with tokens; a token used with another filter is refused.
func TestListRunsPages(t *testing.T) {
	e := newEnv(t, envOpts{turns: []ot.Turn{{Content: "ok"}}})
	c := e.clients(protocols[0])
	var want []string
	for range 5 {
		s, err := c.runs.Run(t.Context(), connect.NewRequest(&wunderv1.RunRequest{UserId: "erin", Question: "q"}))
		if err != nil {
			t.Fatal(err)
		}
		evs := collect(t, s)
		want = append([]string{evs[0].GetRunId()}, want...) // newest first
	}
	var got []string
	token := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("too many pages")
		}
		res, err := c.runs.ListRuns(t.Context(), connect.NewRequest(&wunderv1.ListRunsRequest{UserId: "erin", PageSize: 2, PageToken: token}))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Msg.GetRuns() {
			got = append(got, r.GetRunId())
		}
		if token = res.Msg.GetNextPageToken(); token == "" {
			break
		}
		// The same token with another filter is refused.
		_, err = c.runs.ListRuns(t.Context(), connect.NewRequest(&wunderv1.ListRunsRequest{UserId: "someone-else", PageSize: 2, PageToken: token}))
		if connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Fatalf("token with another filter: %v", err)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("listed %v, want %v", got, want)
		}
	}
	res, err := c.runs.ListRuns(t.Context(), connect.NewRequest(&wunderv1.ListRunsRequest{
		UserId: "erin", States: []wunderv1.RunState{wunderv1.RunState_RUN_STATE_RUNNING},
	}))
	if err != nil || len(res.Msg.GetRuns()) != 0 {
		t.Fatalf("running runs: %v %v", res, err)
	}
}

func errorInfoReason(err error) string {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return ""
	}
	for _, d := range ce.Details() {
		v, derr := d.Value()
		if derr != nil {
			continue
		}
		if m, ok := v.(interface{ GetReason() string }); ok {
			return m.GetReason()
		}
	}
	return ""
}

// Runs started through Connect are agent callers: with the default limits
// (one run per user for people, the global limit for agents) one user runs
// two tasks side by side in two sessions.
func TestRunsAreAgentCallers(t *testing.T) {
	started, wait := make(chan struct{}), make(chan struct{})
	e := newEnv(t, envOpts{turns: []ot.Turn{{Content: "one", Wait: wait, Started: started}, {Content: "two"}}})
	c := e.clients(protocols[0])
	first, err := c.runs.Submit(t.Context(), connect.NewRequest(&wunderv1.SubmitRequest{UserId: "ivy", Question: "first"}))
	if err != nil {
		t.Fatal(err)
	}
	<-started
	s, err := c.runs.Run(t.Context(), connect.NewRequest(&wunderv1.RunRequest{UserId: "ivy", Question: "second"}))
	if err != nil {
		t.Fatal(err)
	}
	if f := final(t, collect(t, s)); f["answer"] != "two" {
		t.Fatalf("second run of the same user while the first runs: final = %v", f)
	}
	close(wait)
	f, err := c.runs.Follow(t.Context(), connect.NewRequest(&wunderv1.FollowRequest{RunId: first.Msg.GetRun().GetRunId()}))
	if err != nil {
		t.Fatal(err)
	}
	if fin := final(t, collect(t, f)); fin["answer"] != "one" {
		t.Fatalf("first run: final = %v", fin)
	}
}
