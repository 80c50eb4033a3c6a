// Command ha checks wunder's high availability end to end, as an operator
// deploys it: three `wunder serve` replicas on one PostgreSQL behind
// HAProxy (round-robin, health checks on /readyz), and users driving runs
// through the balancer while replicas are killed and restarted. It starts
// everything itself — the replicas (bin/wunder) and haproxy as processes,
// a fake OpenAI-compatible model (internal/testutil/fakellm) and a counting
// MCP server in process — and checks, phase by phase:
//
//	a. kill -9 of one replica mid-load, then its restart
//	b. a rolling restart: SIGTERM each replica in turn, under load
//	c. a pending approval on a replica that is then killed, decided
//	   through the balancer
//	d. cancel through the balancer, with its latency
//	e. an MCP session through the balancer (initialize, several tools/call)
//
// Every run of the load makes one tool round on the MCP tool counter@hit
// with a token of its own, so "no tool executed twice for a recorded
// round" is counted, not assumed. It prints the figures and exits 1 when
// an invariant breaks. scripts/ha.sh creates a fresh database and runs it;
// `make ha` runs that at full load, CI at reduced load
// (docs/operations.md#high-availability-tested).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// options are the knobs of a check; flags, defaulted from HA_* variables.
type options struct {
	bin, haproxy, dsn      string
	users, runs            int
	drainDelay             int
	modelFirst, modelChunk time.Duration
	mcpCalls, cancels      int
	keep, hosts, scale     bool
	scaleUsers             int
	scaleFor, cancelLimit  time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.bin, "wunder", "bin/wunder", "the wunder binary the replicas run")
	flag.StringVar(&o.haproxy, "haproxy", envOr("HA_HAPROXY", "/usr/sbin/haproxy"), "the haproxy binary")
	flag.StringVar(&o.dsn, "dsn", os.Getenv("HA_POSTGRES_DSN"), "PostgreSQL DSN of a fresh database (HA_POSTGRES_DSN)")
	flag.IntVar(&o.users, "users", envInt("HA_USERS", 20), "concurrent users (HA_USERS)")
	flag.IntVar(&o.runs, "runs", envInt("HA_RUNS", 400), "runs per load phase (HA_RUNS)")
	flag.IntVar(&o.drainDelay, "drain-delay", envInt("HA_DRAIN_DELAY_S", 2), "server.drain_delay_s of the replicas (above HAProxy's 2 x 500 ms checks)")
	// About 3 s a run (two model calls and a tool round): longer than the
	// drain delay, so a rolling restart meets streams it must end resumably.
	flag.DurationVar(&o.modelFirst, "model-first", 500*time.Millisecond, "the fake model's time to first token")
	flag.DurationVar(&o.modelChunk, "model-chunk", 250*time.Millisecond, "the fake model's delay between chunks")
	flag.IntVar(&o.mcpCalls, "mcp-calls", envInt("HA_MCP_CALLS", 9), "tools/call requests of the MCP phase")
	flag.IntVar(&o.cancels, "cancels", envInt("HA_CANCELS", 5), "runs cancelled in the cancel phase")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (configurations, logs)")
	flag.BoolVar(&o.hosts, "hosts", envInt("HA_HOSTS", 1) == 1, "give each replica a host name of its own (unshare --uts), so a dead one is found by its expired lease (HA_HOSTS=0: by its pid, at once)")
	flag.BoolVar(&o.scale, "scale", envInt("HA_SCALE", 0) == 1, "f. measure throughput with 1, 2 and 3 replicas in rotation, and the store writes per run (HA_SCALE=1)")
	flag.IntVar(&o.scaleUsers, "scale-users", 32, "concurrent callers of the throughput phase")
	flag.DurationVar(&o.scaleFor, "scale-for", 20*time.Second, "how long each step of the throughput phase drives load")
	flag.DurationVar(&o.cancelLimit, "cancel-limit", envDuration("HA_CANCEL_LIMIT", time.Second), "the longest a cancel may take to end its run (HA_CANCEL_LIMIT)")
	flag.Parse()
	if o.dsn == "" {
		fmt.Fprintln(os.Stderr, "ha: set -dsn or HA_POSTGRES_DSN to a fresh PostgreSQL database (scripts/ha.sh makes one)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, o))
}

func run(ctx context.Context, o options) int {
	began := time.Now()
	t, err := start(ctx, o)
	if t != nil {
		defer func() {
			t.stop()
			if o.keep {
				fmt.Println("kept", t.dir)
			} else {
				_ = os.RemoveAll(t.dir)
			}
		}()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ha: start:", err)
		return 1
	}
	fmt.Printf("topology: 3 replicas behind haproxy %s, PostgreSQL, %d users, %d runs per load phase (up in %v)\n",
		t.lbURL, o.users, o.runs, time.Since(began).Round(time.Millisecond))
	if t.cfg.hosts {
		fmt.Println("replicas on hosts of their own (UTS namespaces): a killed one is found dead when its lease expires (lock_ttl_s 15)")
	} else {
		fmt.Println("replicas on one host: a killed one is found dead by its pid, at the survivors' next look")
	}
	c := &check{t: t, o: o}
	for _, p := range []struct {
		name string
		fn   func(context.Context) error
	}{
		{"a. kill -9 under load", c.killPhase},
		{"b. rolling restart under load", c.rollingPhase},
		{"c. approval on a killed replica", c.approvalPhase},
		{"d. cancel through the balancer", c.cancelPhase},
		{"e. MCP session through the balancer", c.mcpPhase},
		{"f. throughput with 1, 2 and 3 replicas", c.scalePhase},
	} {
		if p.fn == nil || strings.HasPrefix(p.name, "f.") && !o.scale {
			continue
		}
		fmt.Printf("\n== %s\n", p.name)
		ps := time.Now()
		if err := p.fn(ctx); err != nil {
			c.breach("%s: %v", p.name, err)
		}
		fmt.Printf("   (%v)\n", time.Since(ps).Round(time.Millisecond))
	}
	fmt.Printf("\n%d invariant(s) broken; logs in %s\n", len(c.broken), t.dir)
	for _, b := range c.broken {
		fmt.Println("BROKEN:", b)
	}
	if len(c.broken) > 0 {
		if !o.keep {
			for _, r := range t.replicas {
				if b, err := os.ReadFile(r.logPath); err == nil {
					fmt.Fprintf(os.Stderr, "--- %s log (last 3000 bytes)\n%s\n", r.name, lastBytes(b, 3000))
				}
			}
		}
		return 1
	}
	fmt.Println("ok")
	return 0
}

func lastBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func envDuration(k string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(k)); err == nil {
		return d
	}
	return def
}

func envInt(k string, def int) int {
	var n int
	if _, err := fmt.Sscan(os.Getenv(k), &n); err == nil {
		return n
	}
	return def
}
