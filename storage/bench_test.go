package storage

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
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

// BenchmarkCreateEndedRun measures CreateRunWith of a run as it ended: the one write of a short run that ends
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
					if err := s.CreateRunWith(ctx, sess, r, tail); err != nil {
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

// BenchmarkDeepPage lists one page of 50 of a user's sessions and of every
// run, at the top of the list and deep in it, after the key of the item
// before the page: it costs the top page's however deep (issue 13: lists
// stay O(page); pages by offset, which cost their depth, are gone).
// WUNDER_BENCH_DEEP_SESSIONS sets the seeded sessions (20,000), all of one
// user.
func BenchmarkDeepPage(b *testing.B) {
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("WUNDER_BENCH_DEEP_SESSIONS")); err == nil && v > 0 {
		n = v
	}
	depth := n * 9 / 10
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) {
			s, ctx := open(b, be.fresh(b)), b.Context()
			must(b, s.Seed(ctx, SeedOptions{Sessions: n, Events: 3 * n, Users: 1, Prefix: "deep"}))
			sessions, err := s.ListSessions(ctx, "deep_user_000000", orchestrator.Page{Limit: depth})
			must(b, err)
			runs, err := s.ListRuns(ctx, orchestrator.RunFilter{Page: orchestrator.Page{Limit: depth}})
			must(b, err)
			if len(sessions) != depth || len(runs) != depth {
				b.Fatalf("seeded %d sessions and %d runs of the %d asked for", len(sessions), len(runs), depth)
			}
			for _, c := range []struct {
				name string
				list func(orchestrator.Page) (int, error)
				key  *orchestrator.PageKey
			}{
				{"sessions", func(p orchestrator.Page) (int, error) {
					l, err := s.ListSessions(ctx, "deep_user_000000", p)
					return len(l), err
				}, orchestrator.SessionKey(sessions[depth-1])},
				{"runs", func(p orchestrator.Page) (int, error) {
					l, err := s.ListRuns(ctx, orchestrator.RunFilter{Page: p})
					return len(l), err
				}, orchestrator.RunKey(runs[depth-1])},
			} {
				for _, p := range []struct {
					name string
					page orchestrator.Page
				}{
					{"top", orchestrator.Page{Limit: 50}},
					{fmt.Sprintf("after-key@%d", depth), orchestrator.Page{Limit: 50, After: c.key}},
				} {
					b.Run(c.name+"/"+p.name, func(b *testing.B) {
						for b.Loop() {
							if got, err := c.list(p.page); err != nil || got != 50 {
								b.Fatalf("%d items, %v", got, err)
							}
						}
					})
				}
			}
		})
	}
}
