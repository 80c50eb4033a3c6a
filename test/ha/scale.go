package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"maps"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", for PostgreSQL's statistics

	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/internal/loadtest"
)

// scalePhase measures throughput through the balancer with 1, 2 and 3
// replicas in rotation (the others in HAProxy's maintenance state):
// scaleUsers callers each ask one run after another through POST /wunder
// (SSE, internal/loadtest, as `wunder bench` does), with the fast model
// (no delays), for scaleFor each. It also counts what one run writes to
// PostgreSQL: tuples inserted, updated and deleted per table, and
// transactions, from PostgreSQL's own statistics.
func (c *check) scalePhase(ctx context.Context) error {
	db, err := sql.Open("pgx", c.o.dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	cl := client.New(c.t.lbURL, "", nil)
	var rps []float64
	for n := 1; n <= len(c.t.replicas); n++ {
		for i, r := range c.t.replicas {
			state := "ready"
			if i >= n {
				state = "maint"
			}
			if err := c.t.haproxyCommand(fmt.Sprintf("set server replicas/%s state %s", r.name, state)); err != nil {
				return err
			}
			if err := c.t.waitBalanced(ctx, r, i < n, time.Minute); err != nil {
				return err
			}
		}
		before, err := tableStats(ctx, db, nil)
		if err != nil {
			return err
		}
		lctx, stopListen := context.WithCancel(ctx)
		notes := make(chan int64, 1)
		go func() { notes <- countNotifications(lctx, c.o.dsn) }()
		samples, wall := loadtest.Drive(ctx, loadtest.Plan{Workers: c.o.scaleUsers, Duration: c.o.scaleFor}, func(ctx context.Context, w int) loadtest.Sample {
			return loadtest.Ask(ctx, cl, client.RunRequest{UserID: fmt.Sprintf("scale_%d", w), ModelName: "fast", ToolNames: []string{"counter@hit"},
				Question: fmt.Sprintf(`call counter__hit {"token":%q}`, newToken())}, true)
		})
		stopListen()
		notified := <-notes
		step := loadtest.Summarize(c.o.scaleUsers, samples, wall)
		rps = append(rps, step.RunsPerSec)
		fmt.Printf("   %d replica(s), c=%d: %.1f runs/s, p50 %.0f ms, p95 %.0f ms, %d runs, %d errors %s\n",
			n, c.o.scaleUsers, step.RunsPerSec, step.P50MS, step.P95MS, step.Runs, step.Errors, step.FirstError)
		after, err := tableStats(ctx, db, func(s map[string]stat) bool { return s["runs"].ins-before["runs"].ins >= int64(step.Successes) })
		if err != nil {
			fmt.Printf("   store writes: %v\n", err)
			continue
		}
		if n == 1 && step.Successes > 0 {
			printWrites(before, after, step.Successes)
			fmt.Printf("   NOTIFYs per run (what every replica's LISTEN receives): %.1f\n", float64(notified)/float64(step.Successes))
		}
	}
	if len(rps) == 3 && rps[0] > 0 {
		fmt.Printf("   scaling: 2 replicas %.2fx, 3 replicas %.2fx the throughput of 1\n", rps[1]/rps[0], rps[2]/rps[0])
	}
	for _, r := range c.t.replicas {
		if err := c.t.haproxyCommand("set server replicas/" + r.name + " state ready"); err != nil {
			return err
		}
	}
	return nil
}

// stat is one table's write counters.
type stat struct{ ins, upd, del int64 }

// tableStats reads the write counters of every table, polling until
// done holds and two reads a second apart agree (the counters lag: a
// backend reports them when it goes idle, at most once a second). The
// updates of session_locks are left out of that agreement: the replicas'
// heartbeats renew leases there all the time, per second, not per run.
func tableStats(ctx context.Context, db *sql.DB, done func(map[string]stat) bool) (map[string]stat, error) {
	var out map[string]stat
	read := func() error {
		out = map[string]stat{}
		rows, err := db.QueryContext(ctx, `select relname, n_tup_ins, n_tup_upd, n_tup_del from pg_stat_user_tables`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name string
			var s stat
			if err := rows.Scan(&name, &s.ins, &s.upd, &s.del); err != nil {
				return err
			}
			out[name] = s
		}
		return rows.Err()
	}
	if done == nil {
		return out, read()
	}
	var rerr error
	var prev map[string]stat
	err := pollEvery(ctx, time.Minute, time.Second, "PostgreSQL's statistics to count the runs and settle", func() bool {
		if rerr = read(); rerr != nil || !done(out) {
			return false
		}
		settled := prev != nil && maps.EqualFunc(prev, out, func(a, b stat) bool { return a.ins == b.ins && a.del == b.del })
		for name := range out {
			settled = settled && (name == "session_locks" || prev[name].upd == out[name].upd)
		}
		prev = out
		return settled
	})
	if rerr != nil {
		return nil, rerr
	}
	return out, err
}

// printWrites prints the tuples written per run, by table; the updates
// of session_locks include the heartbeats' renewals over the step.
func printWrites(before, after map[string]stat, runs int) {
	type row struct {
		name          string
		ins, upd, del float64
	}
	var rows []row
	var total float64
	for name, a := range after {
		b := before[name]
		r := row{name, float64(a.ins-b.ins) / float64(runs), float64(a.upd-b.upd) / float64(runs), float64(a.del-b.del) / float64(runs)}
		if r.ins+r.upd+r.del >= 0.01 {
			rows = append(rows, r)
			total += r.ins + r.upd + r.del
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].ins+rows[i].upd+rows[i].del > rows[j].ins+rows[j].upd+rows[j].del })
	var parts []string
	for _, r := range rows {
		parts = append(parts, fmt.Sprintf("%s %.2f/%.2f/%.2f", r.name, r.ins, r.upd, r.del))
	}
	fmt.Printf("   store writes per run (1 replica, %d runs): %.1f tuples (table inserted/updated/deleted: %s)\n",
		runs, total, strings.Join(parts, ", "))
}

// countNotifications LISTENs on the replicas' channel (storage/notify.go:
// named after the schema, public here) and counts what arrives until ctx
// ends.
func countNotifications(ctx context.Context, dsn string) int64 {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return -1
	}
	defer conn.Close(context.Background())
	sum := sha256.Sum256([]byte("public"))
	if _, err := conn.Exec(ctx, "LISTEN wunder_runs_"+hex.EncodeToString(sum[:8])); err != nil {
		return -1
	}
	var n int64
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return n
		}
		n++
	}
}

// haproxyCommand sends one command to HAProxy's runtime API.
func (t *topology) haproxyCommand(cmd string) error {
	conn, err := net.Dial("unix", t.socket)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := fmt.Fprintln(conn, cmd); err != nil {
		return err
	}
	reply, _ := bufio.NewReader(conn).ReadString(0)
	if s := strings.TrimSpace(reply); s != "" {
		return fmt.Errorf("haproxy %q: %s", cmd, s)
	}
	return nil
}
