package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wunder/wunder/adapters/builtin"
	"github.com/wunder/wunder/internal/telemetry"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
	"github.com/wunder/wunder/storage"
)

// BenchmarkLoopRound measures the loop's own cost per round: a scripted
// model (no network) asks for a real built-in tool (list_files) each round,
// with the event log persisted to each store. ns/op is per round.
func BenchmarkLoopRound(b *testing.B) {
	stores := benchStores()
	for _, name := range []string{"memory", "sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			store := stores[name](b)
			defer store.Close()
			tools, err := builtin.New(&builtin.Options{Root: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			const rounds = 10
			turns := make([]orchestratortest.Turn, 0, rounds)
			for range rounds - 1 {
				turns = append(turns, orchestratortest.Turn{Content: "looking", ToolCalls: []orchestrator.ToolCall{orchestratortest.Call("list_files", `{}`)}})
			}
			turns = append(turns, orchestratortest.Turn{Content: "done"})
			reg := orchestrator.NewRegistry("", nil, tools)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				// A fresh script per run: the scripted model plays turns in order.
				models := orchestratortest.Models{Model: orchestratortest.NewScriptedModel(turns...), Settings: orchestrator.ModelSettings{ToolCallMode: orchestrator.ModeFunctionCall, MaxRounds: rounds}}
				o := orchestrator.New(store, models, reg, nil)
				b.StartTimer()
				run, err := o.Start(context.Background(), orchestrator.RunRequest{UserID: fmt.Sprintf("u%d", i), Question: "q", ToolNames: []string{"list_files"}})
				if err != nil {
					b.Fatal(err)
				}
				for _, err := range o.Events(context.Background(), "", run.ID, 0) {
					if err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				_ = o.Close(context.Background())
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rounds), "ns/round")
		})
	}
}

// BenchmarkConcurrentRuns measures whole no-tool runs (one model answer,
// every event persisted) with 8 and 32 runs at once through the core and a
// store, without HTTP: the store's share of a run's cost. On SQLite it
// reports the group-commit writer's writes per commit.
//
//	go test -run '^$' -bench ConcurrentRuns -benchtime 2000x ./cmd/wunder/
func BenchmarkConcurrentRuns(b *testing.B) {
	stores := benchStores()
	for _, name := range []string{"memory", "sqlite", "postgres"} {
		for _, c := range []int{8, 32} {
			b.Run(fmt.Sprintf("%s/c=%d", name, c), func(b *testing.B) {
				store := stores[name](b)
				defer store.Close()
				benchRuns(b, store, nil, (c+1)/2) // GOMAXPROCS is 2 here: c goroutines
				if ws, ok := store.(interface{ WriteStats() (int64, int64) }); ok {
					if commits, writes := ws.WriteStats(); commits > 0 {
						b.ReportMetric(float64(writes)/float64(commits), "writes/commit")
					}
				}
			})
		}
	}
}

// benchRuns runs whole no-tool runs (one model answer, every event
// persisted) on store, par goroutines per GOMAXPROCS at once, and reports
// runs/s.
func benchRuns(b *testing.B, store orchestrator.Store, obs orchestrator.Observer, par int) {
	b.Helper()
	o := benchOrchestrator(store, obs)
	defer func() { _ = o.Close(context.Background()) }()
	var n atomic.Int64
	b.SetParallelism(par)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := benchRun(o, fmt.Sprintf("u%d", n.Add(1))); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
}

// benchOrchestrator is the core benchRuns drives: a scripted model that
// answers "hello" at once, no tools.
func benchOrchestrator(store orchestrator.Store, obs orchestrator.Observer) *orchestrator.Orchestrator {
	models := orchestratortest.Models{Model: orchestratortest.NewScriptedModel(orchestratortest.Turn{Content: "hello"}),
		Settings: orchestrator.ModelSettings{Name: "m", ToolCallMode: orchestrator.ModeToolCall, MaxRounds: 2, Stream: true}}
	return orchestrator.New(store, models, orchestrator.NewRegistry("", nil), &orchestrator.Options{MaxActiveRuns: 64, QueueSize: 1024, Observer: obs})
}

// benchRun starts one run of user and follows it to its final event.
func benchRun(o *orchestrator.Orchestrator, user string) error {
	run, err := o.Start(context.Background(), orchestrator.RunRequest{UserID: user, Question: "q", Caller: orchestrator.CallerAgent})
	if err != nil {
		return err
	}
	for _, err := range o.Events(context.Background(), "", run.ID, 0) {
		if err != nil {
			return err
		}
	}
	return nil
}

// warmRuns runs n whole runs on store, c at once, outside any measurement:
// a store just opened over a large history answers its first runs from
// cold caches (SQLite's page cache, PostgreSQL's shared buffers), and a
// comparison of throughput is of the steady state.
func warmRuns(b *testing.B, store orchestrator.Store, n, c int) {
	b.Helper()
	o := benchOrchestrator(store, nil)
	defer func() { _ = o.Close(context.Background()) }()
	var next atomic.Int64
	errs := make([]error, c)
	var wg sync.WaitGroup
	for w := range c {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n) && errs[w] == nil; i = next.Add(1) {
				errs[w] = benchRun(o, fmt.Sprintf("warm%d", i))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
}

// benchStores opens each store the benchmarks compare: memory, SQLite in a
// temp dir, and PostgreSQL when WUNDER_TEST_POSTGRES_DSN is set.
func benchStores() map[string]func(b *testing.B) orchestrator.Store {
	return map[string]func(b *testing.B) orchestrator.Store{
		"memory": func(*testing.B) orchestrator.Store { return orchestratortest.NewMemStore() },
		"sqlite": func(b *testing.B) orchestrator.Store {
			s, err := storage.Open(context.Background(), storage.Options{SQLitePath: b.TempDir() + "/w.db", AutoMigrate: true})
			if err != nil {
				b.Fatal(err)
			}
			return s
		},
		"postgres": func(b *testing.B) orchestrator.Store {
			dsn := os.Getenv("WUNDER_TEST_POSTGRES_DSN")
			if dsn == "" {
				b.Skip("WUNDER_TEST_POSTGRES_DSN not set")
			}
			s, err := storage.Open(context.Background(), storage.Options{Backend: "postgres", PostgresDSN: dsn, AutoMigrate: true})
			if err != nil {
				b.Fatal(err)
			}
			return s
		},
	}
}

// BenchmarkConcurrentRunsTelemetry is BenchmarkConcurrentRuns (8 runs at
// once) with telemetry as `wunder serve` wires it when no collector is
// configured (metrics on, traces off: the observer, the store hook) and
// without any: the price of the metrics, and that traces off costs
// nothing more.
//
//	go test -run '^$' -bench ConcurrentRunsTelemetry -benchtime 2000x -count 5 ./cmd/wunder/
func BenchmarkConcurrentRunsTelemetry(b *testing.B) {
	for _, name := range []string{"memory", "sqlite"} {
		for _, withTel := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/telemetry=%v", name, withTel), func(b *testing.B) {
				var tel *telemetry.Telemetry
				var obs orchestrator.Observer
				var observe storage.OpFunc
				if withTel {
					var err error
					if tel, err = telemetry.New(context.Background(), telemetry.Options{Getenv: func(string) string { return "" }}); err != nil {
						b.Fatal(err)
					}
					obs, observe = tel, tel.StoreOp
				}
				var store orchestrator.Store = orchestratortest.NewMemStore()
				if name == "sqlite" {
					s, err := storage.Open(context.Background(), storage.Options{SQLitePath: b.TempDir() + "/w.db", AutoMigrate: true, Observe: observe})
					if err != nil {
						b.Fatal(err)
					}
					defer s.Close()
					store = s
				}
				benchRuns(b, store, obs, 4)
			})
		}
	}
}

// BenchmarkConcurrentRunsSeeded is BenchmarkConcurrentRuns at c=32 on a
// store that already holds a history, beside an empty store of the same
// backend (issue 13: the same throughput within 10% with a million events
// and a hundred thousand sessions stored). WUNDER_BENCH_SEED_SESSIONS and
// WUNDER_BENCH_SEED_EVENTS size the history (default 100,000 and
// 1,000,000). The stores are built once and each warmed by
// WUNDER_BENCH_WARM_RUNS runs (2,000), which keep what a store's first runs
// pay (cold caches) out of the figure: without them the seeded store's
// first pass of 2,000 runs ran at 0.78-0.86x its next two. Then
// WUNDER_BENCH_ROUNDS rounds (3) each measure the empty store and the
// seeded one in turn, so that a machine whose speed drifts slows both of a
// pair alike, and log the pair's ratio (`-count` would run every pass of
// one store before any of the other's):
//
//	go test -run '^$' -bench ConcurrentRunsSeeded -benchtime 4000x -v ./cmd/wunder
func BenchmarkConcurrentRunsSeeded(b *testing.B) {
	sessions, events := envInt("WUNDER_BENCH_SEED_SESSIONS", 100_000), envInt("WUNDER_BENCH_SEED_EVENTS", 1_000_000)
	warm, rounds := envInt("WUNDER_BENCH_WARM_RUNS", 2000), envInt("WUNDER_BENCH_ROUNDS", 3)
	open := func(name string) orchestrator.Store {
		if name == "sqlite" {
			return benchStores()[name](b)
		}
		// A schema of its own each: the shared database holds the other
		// tests' rows, which an empty store must not.
		s, err := storage.Open(context.Background(), storage.Options{Backend: "postgres", PostgresDSN: pgSchema(b), AutoMigrate: true})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	for _, name := range []string{"sqlite", "postgres"} {
		empty := open(name)
		seeded := open(name)
		b.Cleanup(func() { empty.Close(); seeded.Close() })
		start := time.Now()
		if err := seeded.(*storage.Store).Seed(context.Background(), storage.SeedOptions{Sessions: sessions, Events: events}); err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: seeded %d sessions and %d events in %v", name, sessions, events, time.Since(start).Round(time.Millisecond))
		for _, s := range []orchestrator.Store{empty, seeded} {
			warmRuns(b, s, warm, 32)
		}
		pair := []struct {
			name  string
			store orchestrator.Store
			rate  float64 // runs/s of the round's pass
		}{{name: "empty", store: empty}, {name: "seeded", store: seeded}}
		for r := 1; r <= rounds; r++ {
			for i := range pair {
				p := &pair[i]
				b.Run(name+"/"+p.name, func(b *testing.B) {
					benchRuns(b, p.store, nil, 16)
					p.rate = float64(b.N) / b.Elapsed().Seconds()
				})
			}
			if e, s := pair[0].rate, pair[1].rate; e > 0 {
				b.Logf("%s round %d: seeded / empty %.2fx (%.0f / %.0f runs/s)", name, r, s/e, s, e)
			}
		}
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
