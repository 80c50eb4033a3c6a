package storage

import (
	"encoding/json"
	"testing"

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
