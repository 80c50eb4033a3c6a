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
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/wunder/wunder/internal/client"
	"github.com/wunder/wunder/internal/loadtest"
	"github.com/wunder/wunder/internal/sse"
	"github.com/wunder/wunder/storage"
)

type benchFlags struct {
	server, apiKey, question, mode    string
	tools                             []string
	users, runs                       int
	directURL, directModel, directKey string
	timeout                           time.Duration
}

func newBenchCmd(rf *rootFlags) *cobra.Command {
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
	cmd.AddCommand(newBenchSeedCmd(rf))
	return cmd
}

// newBenchSeedCmd is `wunder bench seed`: a synthetic history in the
// configured store, to measure a server that has been in use (issue 13's
// scale figures: a million events, a hundred thousand sessions).
func newBenchSeedCmd(rf *rootFlags) *cobra.Command {
	var o storage.SeedOptions
	cmd := &cobra.Command{
		Use:   "seed",
		Short: "Write a synthetic history (finished runs, their messages and events) into the configured store",
		Long: "Adds --sessions sessions, each with one finished run and its two messages, and --events events\n" +
			"spread over those runs, dated over the past 30 days, owned by --users users named <prefix>_user_N.\n" +
			"Ids start with --prefix, so a second seed with another prefix adds to the first. Run it against a\n" +
			"store no server is writing to, then start the server and drive it with `wunder bench`.",
		Example: `  wunder bench seed --sessions 100000 --events 1000000`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Sessions < 1 || o.Events < 0 || o.Users < 0 {
				return withCode(exitUsage, errors.New("--sessions must be at least 1, --events and --users not negative"))
			}
			return withStore(cmd, rf, func(ctx context.Context, st *storage.Store) error {
				out := cmd.OutOrStdout()
				start := time.Now()
				o.Progress = func(n int) {
					if n%10_000 == 0 || n == o.Sessions {
						fmt.Fprintf(out, "%d/%d sessions (%v)\n", n, o.Sessions, time.Since(start).Round(time.Second))
					}
				}
				if err := st.Seed(ctx, o); err != nil {
					return err
				}
				fmt.Fprintf(out, "seeded %d sessions and %d events in %v\n", o.Sessions, max(o.Events, 3*o.Sessions), time.Since(start).Round(time.Millisecond))
				return nil
			})
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&o.Sessions, "sessions", 100_000, "sessions to add (one finished run each)")
	fl.IntVar(&o.Events, "events", 1_000_000, "events to add in all (at least three a run)")
	fl.IntVar(&o.Users, "users", 0, "users owning the sessions (default sessions/10)")
	fl.StringVar(&o.Prefix, "prefix", "seed", "prefix of every id and user id")
	return cmd
}

func runBench(ctx context.Context, f benchFlags, w io.Writer) error {
	c := client.New(f.server, f.apiKey, nil)
	c.SetLanguage(cliLanguage(os.Getenv))
	if err := c.Health(ctx); err != nil {
		return withCode(exitFailure, describe(err, f.server))
	}
	plan := loadtest.Plan{Workers: f.users, Runs: f.runs}
	wunder, wall := loadtest.Drive(ctx, plan, func(ctx context.Context, u int) loadtest.Sample {
		ctx, cancel := context.WithTimeout(ctx, f.timeout)
		defer cancel()
		req := client.RunRequest{UserID: fmt.Sprintf("bench-%d", u), Question: f.question, ToolNames: f.tools, ToolCallMode: f.mode}
		return loadtest.Ask(ctx, c, req, true)
	})
	rows := []benchRow{{"wunder POST /wunder", loadtest.Summarize(f.users, wunder, wall)}}
	if f.directURL != "" {
		direct, dwall := loadtest.Drive(ctx, plan, func(ctx context.Context, _ int) loadtest.Sample {
			ctx, cancel := context.WithTimeout(ctx, f.timeout)
			defer cancel()
			return directCall(ctx, f)
		})
		rows = append(rows, benchRow{"model endpoint directly", loadtest.Summarize(f.users, direct, dwall)})
	}
	printBench(w, f, rows)
	if rows[0].Errors == len(wunder) {
		return withCode(exitFailure, fmt.Errorf("every run failed; first error: %v", rows[0].FirstError))
	}
	return nil
}

// directCall makes one streamed chat completion, timing its first chunk.
func directCall(ctx context.Context, f benchFlags) loadtest.Sample {
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
		return loadtest.Sample{Err: err, Total: time.Since(start)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return loadtest.Sample{Err: fmt.Errorf("status %d", resp.StatusCode), Total: time.Since(start)}
	}
	var s loadtest.Sample
	for ev, err := range sse.Read(resp.Body) {
		if err != nil {
			s.Err = err
			break
		}
		if s.First == 0 {
			s.First = time.Since(start)
		}
		if s.FirstOutput != 0 {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal(ev.Data, &chunk) == nil && len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
			s.FirstOutput = time.Since(start)
		}
	}
	s.Total = time.Since(start)
	return s
}

// benchRow is one line of the report: a target and its step.
type benchRow struct {
	name string
	loadtest.Step
}

func printBench(w io.Writer, f benchFlags, rows []benchRow) {
	fmt.Fprintf(w, "%d users × %d runs, question %q\n\n", f.users, f.runs, f.question)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\truns\terrors\truns/s\tp50\tp95\tp99\tfirst p50\tfirst p95\tfirst p99\toutput p50\toutput p95\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.1fms\t%.1fms\t%.1fms\t%.1fms\t%.1fms\t%.1fms\t%.1fms\t%.1fms\t\n", r.name, r.Runs, r.Errors, r.RunsPerSec,
			r.P50MS, r.P95MS, r.P99MS, r.FirstP50MS, r.FirstP95MS, r.FirstP99MS, r.FirstOutputP50MS, r.FirstOutputP95MS)
	}
	_ = tw.Flush()
	if len(rows) == 2 && rows[1].P50MS > 0 && rows[1].P99MS > 0 && rows[1].FirstP50MS > 0 && rows[1].RunsPerSec > 0 {
		a, b := rows[0], rows[1]
		fmt.Fprintf(w, "\nwunder / direct: latency p50 %.2fx, p99 %.2fx; first event p50 %.2fx; throughput %.2fx\n",
			a.P50MS/b.P50MS, a.P99MS/b.P99MS, a.FirstP50MS/b.FirstP50MS, a.RunsPerSec/b.RunsPerSec)
		if a.FirstOutputP50MS > 0 && b.FirstOutputP50MS > 0 {
			fmt.Fprintf(w, "first model output (wunder's first llm_output_delta / the model's first content chunk): p50 %.2fx, p95 %.2fx\n",
				a.FirstOutputP50MS/b.FirstOutputP50MS, a.FirstOutputP95MS/b.FirstOutputP95MS)
		}
	}
	for _, r := range rows {
		if r.FirstError != "" {
			fmt.Fprintf(w, "%s: first error: %s\n", r.name, r.FirstError)
		}
	}
}
