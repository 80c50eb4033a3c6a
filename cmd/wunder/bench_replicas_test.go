package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/internal/config"
)

// BenchmarkCrossReplica measures what two replicas sharing one PostgreSQL
// see of each other (issue 13's cross-replica targets): each iteration
// starts a run on replica a whose command prints 20 lines 20 ms apart and
// then sleeps, follows it from a (its own live log) and from b (the store,
// woken by LISTEN/NOTIFY), and then cancels it through b.
//
//   - follow-a-p50-ms, follow-b-p50-ms (and p95): from an event's time (set
//     by a when it is emitted) to its arrival at a client of that replica,
//     over the events of every iteration.
//   - cancel-p50-ms, cancel-max-ms: from the cancel sent to b to the final
//     event (cancelled) arriving at b's follower.
//
// The lock TTL is ten minutes, so the heartbeat (every 200 s) and the
// followers' safety-net poll never come within an iteration: every figure
// is the notifications' own. Run it with WUNDER_TEST_POSTGRES_DSN set:
//
//	go test -run '^$' -bench CrossReplica -benchtime 10x ./cmd/wunder
func BenchmarkCrossReplica(b *testing.B) {
	dsn := pgSchema(b)
	shared := func(c *config.Config) {
		c.Storage.Postgres.DSN = dsn
		c.Concurrency.LockTTLSeconds = 600
	}
	ra, rb := startServer(b, shared), startServer(b, shared)
	ca, cb := client.New(ra.url, "", nil), client.New(rb.url, "", nil)
	script := `import time; [(print(i, flush=True), time.sleep(0.02)) for i in range(20)]; time.sleep(300)`
	var onA, onB, cancels []time.Duration
	for i := 0; b.Loop(); i++ {
		ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
		user := fmt.Sprintf("rep%d", i)
		run, err := ca.Submit(ctx, client.RunRequest{UserID: user, Question: `run: python3 -c "` + script + `"`, ToolNames: []string{"execute_command"}})
		if err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		follow := func(c *client.Client, lat *[]time.Duration, cancelAt19 bool) {
			defer wg.Done()
			deltas := 0
			var sent time.Time
			for ev, err := range c.Follow(ctx, user, run.ID, 0, nil) {
				if err != nil {
					b.Errorf("follow: %v", err)
					return
				}
				now := time.Now()
				mu.Lock()
				if ev.Type == "tool_output_delta" {
					*lat = append(*lat, now.Sub(ev.Time))
					deltas++
				}
				mu.Unlock()
				if cancelAt19 && deltas == 20 && sent.IsZero() {
					sent = time.Now()
					if err := c.Cancel(ctx, user, run.ID); err != nil {
						b.Errorf("cancel: %v", err)
						return
					}
				}
				if ev.Type == "final" && !sent.IsZero() {
					mu.Lock()
					cancels = append(cancels, time.Since(sent))
					mu.Unlock()
				}
			}
		}
		wg.Add(2)
		go follow(ca, &onA, false)
		go follow(cb, &onB, true)
		wg.Wait()
		cancel()
	}
	ms := func(d []time.Duration, q float64) float64 {
		if len(d) == 0 {
			return 0
		}
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[int(q*float64(len(s)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(ms(onA, 0.5), "follow-a-p50-ms")
	b.ReportMetric(ms(onA, 0.95), "follow-a-p95-ms")
	b.ReportMetric(ms(onB, 0.5), "follow-b-p50-ms")
	b.ReportMetric(ms(onB, 0.95), "follow-b-p95-ms")
	b.ReportMetric(ms(cancels, 0.5), "cancel-p50-ms")
	b.ReportMetric(ms(cancels, 1), "cancel-max-ms")
}
