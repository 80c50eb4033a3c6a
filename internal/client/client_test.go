package client_test

import (
	"context"
	"errors"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wunder/wunder/gateway"
	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

func newServer(t *testing.T, turns ...orchestratortest.Turn) (*httptest.Server, *orchestrator.Orchestrator) {
	t.Helper()
	return newServerWith(t, orchestratortest.NewFiles(), nil, turns...)
}

// newServerWith is a gateway (API key "k") over a core with the scripted
// model, the files' tools and opts.
func newServerWith(t *testing.T, files *orchestratortest.Files, opts *orchestrator.Options, turns ...orchestratortest.Turn) (*httptest.Server, *orchestrator.Orchestrator) {
	t.Helper()
	models := orchestratortest.Models{Model: orchestratortest.NewScriptedModel(turns...), Settings: orchestrator.ModelSettings{ToolCallMode: orchestrator.ModeToolCall, Stream: true}}
	o := orchestrator.New(orchestratortest.NewMemStore(), models, orchestrator.NewRegistry("", nil, files.Toolset()), opts)
	srv := httptest.NewServer(gateway.New(o, &gateway.Options{APIKey: "k"}).Handler())
	t.Cleanup(func() {
		srv.Close()
		_ = o.Close(context.Background())
	})
	return srv, o
}

// cutBody ends the stream with an error after n bytes, like a dropped
// connection.
type cutBody struct {
	io.ReadCloser
	left int
}

func (c *cutBody) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errors.New("connection reset (test)")
	}
	if len(p) > c.left {
		p = p[:c.left]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= n
	return n, err
}

// A stream cut in the middle of a run is resumed with Last-Event-ID: every
// event arrives exactly once, in order.
func TestFollowSurvivesADroppedConnection(t *testing.T) {
	gate := make(chan struct{})
	srv, _ := newServer(t,
		orchestratortest.Turn{ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("write_file", `{"path":"a","content":"b"}`)}},
		orchestratortest.Turn{Content: "a long answer that streams in many little deltas", Wait: gate},
	)
	target, _ := url.Parse(srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	var cuts atomic.Int32
	proxy.ModifyResponse = func(resp *http.Response) error {
		if strings.HasSuffix(resp.Request.URL.Path, "/events") && cuts.Add(1) == 1 {
			resp.Body = &cutBody{ReadCloser: resp.Body, left: 900}
		}
		return nil
	}
	front := httptest.NewServer(proxy)
	defer front.Close()

	c := client.New(front.URL, "k", nil)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	run, err := c.Submit(ctx, client.RunRequest{UserID: "u", Question: "q", ToolNames: []string{"write_file"}})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	reconnects := 0
	opts := &client.FollowOptions{OnReconnect: func(error, time.Duration) { reconnects++ }}
	for ev, err := range c.Follow(ctx, "u", run.ID, 0, opts) {
		if err != nil {
			t.Fatalf("after seq %v: %v", seqs, err)
		}
		seqs = append(seqs, ev.Seq)
		if ev.Type == "tool_result" {
			close(gate) // let the answer stream once the cut has happened
		}
	}
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("seqs = %v", seqs)
		}
	}
	if cuts.Load() < 2 || reconnects == 0 {
		t.Fatalf("the stream was never cut and resumed (connections %d, reconnects %d)", cuts.Load(), reconnects)
	}
	final, err := c.GetRun(ctx, "u", run.ID)
	if err != nil || final.LastSeq() != seqs[len(seqs)-1] {
		t.Fatalf("run %+v %v", final, err)
	}
}

func TestFollowUnknownRunAndBadKey(t *testing.T) {
	srv, _ := newServer(t, orchestratortest.Turn{Content: "x"})
	var ce *client.Error
	for _, err := range client.New(srv.URL, "k", nil).Follow(t.Context(), "u", "run_nope", 0, nil) {
		if !errors.As(err, &ce) || ce.Status != 404 {
			t.Fatalf("err = %v", err)
		}
	}
	_, err := client.New(srv.URL, "wrong", nil).Submit(t.Context(), client.RunRequest{UserID: "u", Question: "q"})
	if !errors.As(err, &ce) || ce.Code != "unauthenticated" {
		t.Fatalf("err = %v", err)
	}
}

// failingLog is the server's backend whose event log fails on the first
// stream after two events.
type failingLog struct {
	*orchestrator.Orchestrator
	failed atomic.Bool
}

func (f *failingLog) Events(ctx context.Context, userID, runID string, after int64) iter.Seq2[orchestrator.Event, error] {
	if f.failed.Swap(true) {
		return f.Orchestrator.Events(ctx, userID, runID, after)
	}
	return func(yield func(orchestrator.Event, error) bool) {
		n := 0
		for ev, err := range f.Orchestrator.Events(ctx, userID, runID, after) {
			if n == 2 {
				yield(orchestrator.Event{}, errors.New("log down (test)"))
				return
			}
			if !yield(ev, err) {
				return
			}
			n++
		}
	}
}

// When the server's log fails it writes an error event and ends the
// stream, asking for a resume: Follow yields the error, and when the
// caller goes on, resumes after the last event it yielded.
func TestFollowResumesAfterTheServersErrorEvent(t *testing.T) {
	files := orchestratortest.NewFiles()
	models := orchestratortest.Models{Model: orchestratortest.NewScriptedModel(orchestratortest.Turn{Content: "an answer in a few deltas"}),
		Settings: orchestrator.ModelSettings{ToolCallMode: orchestrator.ModeToolCall, Stream: true}}
	o := orchestrator.New(orchestratortest.NewMemStore(), models, orchestrator.NewRegistry("", nil, files.Toolset()), nil)
	srv := httptest.NewServer(gateway.New(&failingLog{Orchestrator: o}, &gateway.Options{APIKey: "k"}).Handler())
	t.Cleanup(func() {
		srv.Close()
		_ = o.Close(context.Background())
	})
	c := client.New(srv.URL, "k", nil)
	run, err := c.Submit(t.Context(), client.RunRequest{UserID: "u", Question: "q"})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	var streamErrs []string
	for ev, err := range c.Follow(t.Context(), "u", run.ID, 0, nil) {
		if err != nil {
			if ev.Type != "error" || !strings.Contains(err.Error(), "stream_failed") {
				t.Fatalf("after seq %v: %v", seqs, err)
			}
			streamErrs = append(streamErrs, err.Error())
			continue
		}
		seqs = append(seqs, ev.Seq)
	}
	if len(streamErrs) != 1 || len(seqs) < 3 {
		t.Fatalf("errors %q, seqs %v; want one error between the first two events and the rest", streamErrs, seqs)
	}
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("seqs = %v", seqs)
		}
	}
}
