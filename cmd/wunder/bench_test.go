package main

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/wunder/wunder/adapters/builtin"
	"github.com/wunder/wunder/orchestrator"
	"github.com/wunder/wunder/orchestrator/orchestratortest"
	"github.com/wunder/wunder/storage"
)

// BenchmarkLoopRound measures the loop's own cost per round: a scripted
// model (no network) asks for a real built-in tool (list_files) each round,
// with the event log persisted to each store. ns/op is per round.
func BenchmarkLoopRound(b *testing.B) {
	stores := map[string]func(b *testing.B) orchestrator.Store{
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
