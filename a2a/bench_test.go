package a2a_test

import (
	"context"
	"iter"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	sdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/wunder/wunder/a2a"
	w "github.com/wunder/wunder/internal/a2awire"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
)

// goEcho is the a2a-go v2.4.0 agent of the comparison: a task, an artifact
// "pong", completed — the same work wunder does with the scripted model.
type goEcho struct{}

func (goEcho) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[sdk.Event, error] {
	return func(yield func(sdk.Event, error) bool) {
		if ec.StoredTask == nil && !yield(sdk.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		if !yield(sdk.NewArtifactEvent(ec, sdk.NewTextPart("pong")), nil) {
			return
		}
		yield(sdk.NewStatusUpdateEvent(ec, sdk.TaskStateCompleted, nil), nil)
	}
}

func (goEcho) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[sdk.Event, error] {
	return func(yield func(sdk.Event, error) bool) {
		yield(sdk.NewStatusUpdateEvent(ec, sdk.TaskStateCanceled, nil), nil)
	}
}

// BenchmarkA2A compares, in one run, message/send and message/stream (1.0
// SendMessage / SendStreamingMessage) through wunder (core + scripted
// model + in-memory store) with an a2a-go v2.4.0 server doing the same
// echo work. One client (internal/a2awire) drives both. Reported: ops/s
// and p99 latency per operation.
//
//	go test -run '^$' -bench A2A -benchtime 3s ./a2a/
func BenchmarkA2A(b *testing.B) {
	model := orchestratortest.NewScriptedModel(orchestratortest.Turn{Content: "pong"})
	o := orchestrator.New(orchestratortest.NewMemStore(), orchestratortest.Models{Model: model,
		Settings: orchestrator.ModelSettings{Name: "scripted", ToolCallMode: orchestrator.ModeToolCall, MaxRounds: 2, Stream: true}},
		orchestrator.NewRegistry("", nil), &orchestrator.Options{MaxActiveRuns: 64, QueueSize: 1024})
	h := a2a.New(o, nil)
	wunder := httptest.NewServer(h)
	goSrv := httptest.NewServer(a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(goEcho{})))
	b.Cleanup(func() {
		wunder.Close()
		goSrv.Close()
		h.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = o.Close(ctx)
	})
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	for _, srv := range []struct{ name, url string }{{"wunder", wunder.URL + "/a2a"}, {"a2a-go", goSrv.URL}} {
		c := &w.Client{HTTP: hc, URL: srv.url, Version: w.V10}
		for _, op := range []string{"send", "stream"} {
			b.Run(srv.name+"/"+op, func(b *testing.B) {
				var mu sync.Mutex
				var lat []time.Duration
				b.SetParallelism(4)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					var mine []time.Duration
					for pb.Next() {
						start := time.Now()
						req := &w.SendRequest{Message: w.Message{MessageID: "m", Role: w.RoleUser, Parts: []w.Part{w.TextPart("ping")}}, Blocking: true}
						var state w.State
						if op == "send" {
							ev, err := c.Send(context.Background(), req)
							if err != nil || ev.Task == nil {
								b.Errorf("send: %v", err)
								return
							}
							state = ev.Task.Status.State
						} else {
							for ev, err := range c.Stream(context.Background(), req) {
								if err != nil {
									b.Errorf("stream: %v", err)
									return
								}
								if ev.Status != nil {
									state = ev.Status.Status.State
								}
							}
						}
						if state != w.StateCompleted {
							b.Errorf("%s ended %q", op, state)
							return
						}
						mine = append(mine, time.Since(start))
					}
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
				})
				b.StopTimer()
				if len(lat) > 0 {
					slices.Sort(lat)
					b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
				}
			})
		}
	}
}
