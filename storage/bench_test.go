package storage

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wunder/wunder/orchestrator"
)

// BenchmarkAppendEvents measures one batch of 16 events, the shape the run
// log flushes.
func BenchmarkAppendEvents(b *testing.B) {
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			s, ctx := open(b, be.fresh(b)), b.Context()
			must(b, s.CreateSession(ctx, &orchestrator.Session{ID: "s", UserID: "u"}))
			must(b, s.CreateRun(ctx, &orchestrator.Run{ID: "r", SessionID: "s", State: orchestrator.RunRunning}))
			data := json.RawMessage(`{"round":1,"delta":"some streamed model output, a few dozen bytes long"}`)
			batch := make([]orchestrator.Event, 16)
			var seq int64
			b.ReportAllocs()
			for b.Loop() {
				for i := range batch {
					seq++
					batch[i] = orchestrator.Event{RunID: "r", SessionID: "s", Seq: seq, Type: orchestrator.EventLLMOutputDelta, Data: data}
				}
				if err := s.AppendEvents(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(seq), "ns/event")
		})
	}
}

// BenchmarkCreateEndedRun measures the one write of a short run that ends
// before anything of it was stored: its session, the run, its question and
// answer and the events of one tool round. Run in parallel, it is the
// store's share of the A2A no-tool and one-tool benchmarks.
func BenchmarkCreateEndedRun(b *testing.B) {
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			s, ctx := open(b, be.fresh(b)), b.Context()
			data := json.RawMessage(`{"round":1,"model":"default","usage":{"input_tokens":10,"output_tokens":5,"total_tokens":15}}`)
			types := []string{orchestrator.EventProgress, orchestrator.EventLLMRequest, orchestrator.EventLLMOutput,
				orchestrator.EventTokenUsage, orchestrator.EventToolCall, orchestrator.EventToolResult,
				orchestrator.EventLLMRequest, orchestrator.EventLLMOutput, orchestrator.EventTokenUsage, orchestrator.EventFinal}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					now := time.Now().UTC()
					sess := &orchestrator.Session{ID: newBenchID("sess_"), UserID: "u", CreatedAt: now, UpdatedAt: now}
					r := &orchestrator.Run{ID: newBenchID("run_"), SessionID: sess.ID, UserID: "u", State: orchestrator.RunFinished,
						Question: "#call list_files {}", Answer: "done", CreatedAt: now, LastSeq: int64(len(types))}
					var tail orchestrator.RunTail
					tail.Messages = []orchestrator.Message{
						{Role: orchestrator.RoleUser, Content: r.Question, RunID: r.ID, CreatedAt: now},
						{Role: orchestrator.RoleAssistant, Content: `<tool_call>{"name":"list_files","arguments":{}}</tool_call>`, RunID: r.ID, CreatedAt: now},
						{Role: orchestrator.RoleUser, Content: "tool_response: listing", RunID: r.ID, CreatedAt: now},
						{Role: orchestrator.RoleAssistant, Content: r.Answer, RunID: r.ID, CreatedAt: now},
					}
					for i, t := range types {
						tail.Events = append(tail.Events, orchestrator.Event{RunID: r.ID, SessionID: sess.ID, Seq: int64(i + 1), Type: t, Data: data, Time: now})
					}
					if err := s.CreateEndedRun(ctx, sess, r, tail); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

var benchIDs atomic.Int64

func newBenchID(prefix string) string {
	return fmt.Sprintf("%s%013d%06d", prefix, time.Now().UnixMilli(), benchIDs.Add(1))
}
