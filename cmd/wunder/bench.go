package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/wunder/wunder/internal/client"
)

type benchFlags struct {
	server, apiKey, question, mode    string
	tools                             []string
	users, runs                       int
	directURL, directModel, directKey string
	timeout                           time.Duration
}

func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Drive N concurrent users against a running server and report runs/s and latencies",
		Long: "Each of --users users asks --runs questions one after another through POST /wunder (SSE), so\n" +
			"the per-user limit is respected. Reports runs/s, latency p50/p95/p99 and time to first event.\n" +
			"With --direct-url the same number of callers also call that OpenAI-compatible endpoint directly\n" +
			"(one chat completion per run, streamed), and the report gives wunder's figures as ratios to it.",
		Example: `  wunder fakellm --addr 127.0.0.1:9100 &
  WUNDER_LLM_PROVIDER=local WUNDER_LLM_BASE_URL=http://127.0.0.1:9100/v1 WUNDER_LLM_MODEL=fake wunder serve &
  wunder bench --users 8 --runs 25 --direct-url http://127.0.0.1:9100/v1 --direct-model fake`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.users < 1 || f.runs < 1 {
				return withCode(exitUsage, errors.New("--users and --runs must be at least 1"))
			}
			return runBench(cmd.Context(), f, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.server, "server", envOr("WUNDER_SERVER", "http://127.0.0.1:8000"), "server URL")
	fl.StringVar(&f.apiKey, "api-key", os.Getenv("WUNDER_API_KEY"), "API key")
	fl.IntVar(&f.users, "users", 8, "concurrent users")
	fl.IntVar(&f.runs, "runs", 10, "runs per user")
	fl.StringVar(&f.question, "question", "hello", "question each run asks")
	fl.StringSliceVar(&f.tools, "tools", nil, "tools to offer")
	fl.StringVar(&f.mode, "mode", "", "tool call mode")
	fl.StringVar(&f.directURL, "direct-url", "", "OpenAI-compatible base URL to call directly for comparison")
	fl.StringVar(&f.directModel, "direct-model", "", "model name for --direct-url")
	fl.StringVar(&f.directKey, "direct-key", "", "API key for --direct-url")
	fl.DurationVar(&f.timeout, "timeout", 2*time.Minute, "timeout of one run")
	return cmd
}

// sample is one measured run.
type sample struct {
	total, first time.Duration
	err          error
}

// load runs fn users×runs times, users in parallel, and measures.
func load(ctx context.Context, users, runs int, fn func(ctx context.Context, user int) sample) ([]sample, time.Duration) {
	var mu sync.Mutex
	var out []sample
	var wg sync.WaitGroup
	start := time.Now()
	for u := range users {
		wg.Go(func() {
			for range runs {
				if ctx.Err() != nil {
					return
				}
				s := fn(ctx, u)
				mu.Lock()
				out = append(out, s)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out, time.Since(start)
}

func runBench(ctx context.Context, f benchFlags, w io.Writer) error {
	c := client.New(f.server, f.apiKey, nil)
	if err := c.Health(ctx); err != nil {
		return withCode(exitFailure, describe(err, f.server))
	}
	wunder, wall := load(ctx, f.users, f.runs, func(ctx context.Context, u int) sample {
		ctx, cancel := context.WithTimeout(ctx, f.timeout)
		defer cancel()
		start := time.Now()
		var s sample
		req := client.RunRequest{UserID: fmt.Sprintf("bench-%d", u), Question: f.question, ToolNames: f.tools, ToolCallMode: f.mode}
		for ev, err := range c.Ask(ctx, req) {
			if err != nil {
				s.err = err
				break
			}
			if s.first == 0 {
				s.first = time.Since(start)
			}
			if ev.Type == "final" {
				var fin client.Final
				_ = json.Unmarshal(ev.Data, &fin)
				if fin.State != "finished" {
					s.err = fmt.Errorf("run %s: %s", fin.State, fin.Error)
				}
			}
		}
		s.total = time.Since(start)
		return s
	})
	rows := []benchRow{summarize("wunder POST /wunder", wunder, wall)}
	if f.directURL != "" {
		direct, dwall := load(ctx, f.users, f.runs, func(ctx context.Context, _ int) sample {
			ctx, cancel := context.WithTimeout(ctx, f.timeout)
			defer cancel()
			return directCall(ctx, f)
		})
		rows = append(rows, summarize("model endpoint directly", direct, dwall))
	}
	printBench(w, f, rows)
	if rows[0].errors == len(wunder) {
		return withCode(exitFailure, fmt.Errorf("every run failed; first error: %v", rows[0].firstErr))
	}
	return nil
}

// directCall makes one streamed chat completion, timing its first chunk.
func directCall(ctx context.Context, f benchFlags) sample {
	start := time.Now()
	body, _ := json.Marshal(map[string]any{
		"model": f.directModel, "stream": true,
		"messages": []map[string]string{{"role": "user", "content": f.question}},
	})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(f.directURL, "/")+"/chat/completions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if f.directKey != "" {
		req.Header.Set("Authorization", "Bearer "+f.directKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return sample{err: err, total: time.Since(start)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return sample{err: fmt.Errorf("status %d", resp.StatusCode), total: time.Since(start)}
	}
	var s sample
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 && s.first == 0 {
			s.first = time.Since(start)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.err = err
			}
			break
		}
	}
	s.total = time.Since(start)
	return s
}

type benchRow struct {
	name                         string
	runs, errors                 int
	perSec                       float64
	p50, p95, p99, f50, f95, f99 time.Duration
	firstErr                     error
}

func summarize(name string, ss []sample, wall time.Duration) benchRow {
	row := benchRow{name: name, runs: len(ss)}
	var totals, firsts []time.Duration
	for _, s := range ss {
		if s.err != nil {
			row.errors++
			if row.firstErr == nil {
				row.firstErr = s.err
			}
			continue
		}
		totals = append(totals, s.total)
		firsts = append(firsts, s.first)
	}
	row.perSec = float64(len(totals)) / wall.Seconds()
	row.p50, row.p95, row.p99 = pct(totals, 50), pct(totals, 95), pct(totals, 99)
	row.f50, row.f95, row.f99 = pct(firsts, 50), pct(firsts, 95), pct(firsts, 99)
	return row
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	i := (len(d)*p + 99) / 100
	return d[min(max(i-1, 0), len(d)-1)]
}

func printBench(w io.Writer, f benchFlags, rows []benchRow) {
	fmt.Fprintf(w, "%d users × %d runs, question %q\n\n", f.users, f.runs, f.question)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\truns\terrors\truns/s\tp50\tp95\tp99\tfirst p50\tfirst p95\tfirst p99\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%v\t%v\t%v\t%v\t%v\t%v\t\n", r.name, r.runs, r.errors, r.perSec,
			ms(r.p50), ms(r.p95), ms(r.p99), ms(r.f50), ms(r.f95), ms(r.f99))
	}
	_ = tw.Flush()
	if len(rows) == 2 && rows[1].p50 > 0 && rows[1].f50 > 0 && rows[0].perSec > 0 {
		a, b := rows[0], rows[1]
		fmt.Fprintf(w, "\nwunder / direct: latency p50 %.2fx, p99 %.2fx; first event p50 %.2fx; throughput %.2fx\n",
			ratio(a.p50, b.p50), ratio(a.p99, b.p99), ratio(a.f50, b.f50), a.perSec/b.perSec)
	}
	for _, r := range rows {
		if r.firstErr != nil {
			fmt.Fprintf(w, "%s: first error: %v\n", r.name, r.firstErr)
		}
	}
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }
